/* See fuse_channel_scale.h. */
#include "fuse_channel_scale.h"

#include <string.h>

#include "tflite_builtins.h"

/* A 1x1, stride-1, unpadded convolution without a source scale yet. */
static int takes_scale(const GNode* n) {
  return n->op == &kGOpConv2d && n->p.conv.kh == 1 && n->p.conv.kw == 1 && n->p.conv.sx == 1 &&
         n->p.conv.sy == 1 && n->p.conv.pad_x == 0 && n->p.conv.pad_y == 0 && !n->p.conv.scale_input &&
         n->num_inputs < GD_MAX_NODE_INPUTS;
}

int fuse_channel_scale(Graph* g, const int* outputs, int num_outputs, char* dead) {
  int fused = 0;
  for (int k = 0; k < g->num_nodes; ++k) {
    GNode* mul = &g->nodes[k];
    if (dead[k] || mul->op != &kGOpBinary || mul->p.binary.op != BIN_MUL || mul->num_inputs != 2 ||
        mul->act != kTfLiteActNone || mul->num_epi)
      continue;
    int t = mul->outputs[0];
    int c = graph_sole_reader(g, t, dead, outputs, num_outputs);
    if (c < 0 || !takes_scale(&g->nodes[c])) continue;
    GNode* pw = &g->nodes[c];
    /* Read as the source only (not also as a residual); same storage. */
    int other_use = 0;
    for (int j = 1; j < pw->num_inputs; ++j) other_use |= pw->inputs[j] == t;
    if (pw->inputs[0] != t || other_use || pw->fp32 != mul->fp32) continue;
    /* Which operand is the activation and which the scale: the scale is a
     * runtime [B, 1, 1, C] of the activation's B and C, the activation the
     * product's shape. */
    const int* out = g->tensors[t].shape;
    for (int j = 0; j < 2; ++j) {
      int x = mul->inputs[j], s = mul->inputs[1 - j];
      const int* xs = g->tensors[x].shape;
      const int* ss = g->tensors[s].shape;
      if (g->tensors[s].data || g->tensors[x].data || memcmp(xs, out, sizeof(int) * 4) != 0 ||
          ss[GD_B] != xs[GD_B] || ss[GD_H] != 1 || ss[GD_W] != 1 || ss[GD_C] != xs[GD_C] || x == s)
        continue;
      pw->inputs[0] = x;
      pw->p.conv.scale_input = pw->num_inputs;
      pw->inputs[pw->num_inputs++] = s;
      dead[k] = 1;
      mul->num_inputs = 0;
      ++fused;
      break;
    }
  }
  return fused;
}
