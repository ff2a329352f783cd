/* See fuse_summed_reduce.h. */
#include "passes/fuse_summed_reduce.h"

#include <string.h>

#include "model/tflite_builtins.h"

int fuse_summed_reduce(Graph* g, const int* outputs, int num_outputs, char* dead) {
  int fused = 0;
  for (int k = 0; k < g->num_nodes; ++k) {
    const GNode* add = &g->nodes[k];
    if (dead[k] || add->op != GOP_BINARY || add->p.binary.op != BIN_ADD || add->num_inputs != 2 ||
        add->act != kTfLiteActNone || add->num_epi)
      continue;
    int t = add->outputs[0], a = add->inputs[0], b = add->inputs[1];
    const int* shape = g->tensors[t].shape;
    if (a == b || g->tensors[a].data || g->tensors[b].data ||
        memcmp(g->tensors[a].shape, shape, sizeof(int) * 4) != 0 ||
        memcmp(g->tensors[b].shape, shape, sizeof(int) * 4) != 0)
      continue;
    int r = graph_sole_reader(g, t, dead, outputs, num_outputs);
    if (r < 0) continue;
    GNode* red = &g->nodes[r];
    if (red->op != GOP_REDUCE || red->num_inputs != 1 || red->inputs[0] != t || red->fp32 != add->fp32) continue;
    red->inputs[0] = a;
    red->inputs[red->num_inputs++] = b;
    graph_merge(g, r, k, dead);
    ++fused;
  }
  return fused;
}
