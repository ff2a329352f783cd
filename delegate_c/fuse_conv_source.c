/* See fuse_conv_source.h. */
#include "fuse_conv_source.h"

#include <string.h>

#include "tflite_builtins.h"

/* A 1x1, stride-1, unpadded convolution that reads its source plainly. */
static int takes_source_op(const GNode* n) {
  return n->op == &kGOpConv2d && n->p.conv.kh == 1 && n->p.conv.kw == 1 && n->p.conv.sx == 1 &&
         n->p.conv.sy == 1 && n->p.conv.pad_x == 0 && n->p.conv.pad_y == 0 && !n->p.conv.scale_input &&
         !n->p.conv.src_via && n->num_inputs < GD_MAX_NODE_INPUTS;
}

/* Node c, a 1x1 that alone reads tensor t (written by node k), reads it as
 * its source only, on the same storage: the conv can take k's work. */
static int reads_as_source_only(const Graph* g, int c, int k, int t) {
  const GNode* pw = &g->nodes[c];
  for (int j = 1; j < pw->num_inputs; ++j)
    if (pw->inputs[j] == t) return 0;
  return pw->inputs[0] == t && pw->fp32 == g->nodes[k].fp32;
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
    if (c < 0 || !takes_source_op(&g->nodes[c]) || !reads_as_source_only(g, c, k, t)) continue;
    GNode* pw = &g->nodes[c];
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

int fuse_upsampled_source(Graph* g, const int* outputs, int num_outputs, char* dead) {
  int fused = 0;
  for (int k = 0; k < g->num_nodes; ++k) {
    GNode* rs = &g->nodes[k];
    /* Scale 1/2 on both axes: no align_corners, exactly twice the size. */
    if (dead[k] || rs->op != &kGOpResizeBilinear || rs->p.resize.scale_x != 0.5f || rs->p.resize.scale_y != 0.5f ||
        rs->num_inputs != 1 || rs->act != kTfLiteActNone || rs->num_epi || g->tensors[rs->inputs[0]].data)
      continue;
    int t = rs->outputs[0];
    const int* in = g->tensors[rs->inputs[0]].shape;
    const int* out = g->tensors[t].shape;
    if (in[GD_B] != out[GD_B] || in[GD_C] != out[GD_C] || 2 * in[GD_W] != out[GD_W] || 2 * in[GD_H] != out[GD_H])
      continue;
    int c = graph_sole_reader(g, t, dead, outputs, num_outputs);
    if (c < 0 || !takes_source_op(&g->nodes[c]) || !reads_as_source_only(g, c, k, t)) continue;
    GNode* pw = &g->nodes[c];
    pw->inputs[0] = rs->inputs[0];
    pw->p.conv.src_via = EPI_ADD_UP2 | (rs->p.resize.half_pixel_centers ? EPI_UP2_HALF_PIXEL : 0);
    dead[k] = 1;
    rs->num_inputs = 0;
    ++fused;
  }
  return fused;
}
