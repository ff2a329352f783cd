/* See fuse_fc_heads.h. */
#include "passes/fuse_fc_heads.h"

/* A FULLY_CONNECTED from one pixel to one pixel (a single row). */
static int one_row(const Graph* g, const GNode* n) {
  const int* s = g->tensors[n->inputs[0]].shape;
  const int* d = g->tensors[n->outputs[0]].shape;
  return n->op == GOP_FULLY_CONNECTED && n->num_inputs == 1 && n->num_outputs == 1 && !n->num_epi &&
         s[GD_B] * s[GD_H] * s[GD_W] == 1 && d[GD_B] * d[GD_H] * d[GD_W] == 1;
}

int fuse_fc_heads(Graph* g, char* dead) {
  int fused = 0;
  for (int k = 0; k < g->num_nodes; ++k) {
    GNode* a = &g->nodes[k];
    if (dead[k] || !one_row(g, a)) continue;
    int heads = 1, weights[GD_MAX_NODE_OUTPUTS], bias[GD_MAX_NODE_OUTPUTS], act[GD_MAX_NODE_OUTPUTS];
    int outputs[GD_MAX_NODE_OUTPUTS];
    weights[0] = a->p.fc.weights, bias[0] = a->p.fc.bias, act[0] = a->act, outputs[0] = a->outputs[0];
    for (int j = k + 1; j < g->num_nodes && heads < GD_MAX_NODE_OUTPUTS; ++j) {
      GNode* b = &g->nodes[j];
      if (dead[j] || !one_row(g, b) || b->inputs[0] != a->inputs[0] || b->fp32 != a->fp32) continue;
      weights[heads] = b->p.fc.weights, bias[heads] = b->p.fc.bias, act[heads] = b->act;
      outputs[heads++] = b->outputs[0];
      graph_merge(g, k, j, dead);
    }
    if (heads == 1) continue;
    a->op = GOP_FC_HEADS;
    a->num_outputs = heads;
    for (int h = 0; h < heads; ++h) {
      a->outputs[h] = outputs[h];
      a->p.heads.weights[h] = weights[h];
      a->p.heads.bias[h] = bias[h];
      a->p.heads.act[h] = act[h];
    }
    fused += heads - 1;
  }
  return fused;
}
