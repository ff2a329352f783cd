/* See fuse_prelu_source.h. */
#include "passes/fuse_prelu_source.h"

#include <string.h>

#include "model/tflite_builtins.h"

/* A constant of one value per channel of `channels`, or one value. */
static int per_channel_alpha(const GTensor* a, int channels) {
  const int* s = a->shape;
  return a->data && s[GD_B] == 1 && s[GD_H] == 1 && s[GD_W] == 1 && (s[GD_C] == channels || s[GD_C] == 1);
}

int fuse_prelu_source(Graph* g, const int* outputs, int num_outputs, char* dead) {
  int fused = 0;
  for (int k = 0; k < g->num_nodes; ++k) {
    const GNode* pr = &g->nodes[k];
    if (dead[k] || pr->op != GOP_BINARY || pr->p.binary.op != BIN_PRELU || pr->num_inputs != 2 ||
        pr->act != kTfLiteActNone || pr->num_epi)
      continue;
    int x = pr->inputs[0], a = pr->inputs[1], t = pr->outputs[0];
    if (g->tensors[x].data || memcmp(g->tensors[x].shape, g->tensors[t].shape, sizeof(int) * 4) != 0 ||
        !per_channel_alpha(&g->tensors[a], g->tensors[t].shape[GD_C]))
      continue;
    int c = graph_sole_reader(g, t, dead, outputs, num_outputs);
    if (c < 0) continue;
    GNode* conv = &g->nodes[c];
    if (conv->op != GOP_CONV2D || conv->inputs[0] != t || conv->fp32 != pr->fp32 || conv->p.conv.scale_input ||
        conv->p.conv.src_via || conv->p.conv.prelu_input || conv->num_inputs >= GD_MAX_NODE_INPUTS)
      continue;
    int other_read = 0;
    for (int j = 1; j < conv->num_inputs; ++j) other_read |= conv->inputs[j] == t;
    if (other_read) continue;
    conv->inputs[0] = x;
    conv->p.conv.prelu_input = conv->num_inputs;
    conv->inputs[conv->num_inputs++] = a;
    graph_merge(g, c, k, dead);
    ++fused;
  }
  return fused;
}
