/* See fuse_conv_source.h. */
#include "passes/fuse_conv_source.h"

#include <string.h>

#include "model/tflite_builtins.h"

/* A 1x1, stride-1, unpadded convolution that reads its source plainly. */
static int takes_source_op(const GNode* n) {
  return graph_plain_1x1(n) && n->num_inputs < GD_MAX_NODE_INPUTS;
}

/* Node c, a 1x1 that alone reads tensor t (written by node k), reads it as
 * its source only, on the same storage: the conv can take k's work. */
static int reads_as_source_only(const Graph* g, int c, int k, int t) {
  const GNode* pw = &g->nodes[c];
  for (int j = 1; j < pw->num_inputs; ++j)
    if (pw->inputs[j] == t) return 0;
  return pw->inputs[0] == t && pw->fp32 == g->nodes[k].fp32;
}

/* A plain elementwise node of `op` over two operands (no activation, no
 * epilogue). */
static int plain_binary(const GNode* n, int op) {
  return n->op == GOP_BINARY && n->p.binary.op == op && n->num_inputs == 2 && n->act == kTfLiteActNone &&
         !n->num_epi;
}

/* Node a, the sole reader of the MUL's product t, is an ADD of t and a
 * runtime tensor of t's shape, read by a 1x1 as its source: that
 * tensor, else -1. */
static int addend_of(const Graph* g, int a, int t, const int* outputs, int num_outputs, char* dead, int* conv) {
  const GNode* add = &g->nodes[a];
  if (!plain_binary(add, BIN_ADD) || add->fp32 != g->nodes[*conv].fp32) return -1;
  int r = add->inputs[0] == t ? add->inputs[1] : add->inputs[0];
  if (r == t || g->tensors[r].data || memcmp(g->tensors[r].shape, g->tensors[t].shape, sizeof(int) * 4) != 0)
    return -1;
  int c = graph_sole_reader(g, add->outputs[0], dead, outputs, num_outputs);
  if (c < 0 || !takes_source_op(&g->nodes[c]) || g->nodes[c].num_inputs + 2 > GD_MAX_NODE_INPUTS ||
      !reads_as_source_only(g, c, a, add->outputs[0]))
    return -1;
  *conv = c;
  return r;
}

int fuse_channel_scale(Graph* g, const int* outputs, int num_outputs, char* dead) {
  int fused = 0;
  for (int k = 0; k < g->num_nodes; ++k) {
    GNode* mul = &g->nodes[k];
    if (dead[k] || !plain_binary(mul, BIN_MUL)) continue;
    int t = mul->outputs[0];
    int c = graph_sole_reader(g, t, dead, outputs, num_outputs), add = -1, r = -1;
    if (c < 0) continue;
    /* MUL -> ADD -> 1x1: the 1x1 adds the ADD's other operand too. */
    if (g->nodes[c].op == GOP_BINARY) {
      add = c;
      c = k; /* the storage the ADD must share */
      r = addend_of(g, add, t, outputs, num_outputs, dead, &c);
      if (r < 0) continue;
    } else if (!takes_source_op(&g->nodes[c]) || !reads_as_source_only(g, c, k, t)) {
      continue;
    }
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
      if (add >= 0) {
        pw->p.conv.add_input = pw->num_inputs;
        pw->inputs[pw->num_inputs++] = r;
        graph_merge(g, c, add, dead);
        ++fused;
      }
      graph_merge(g, c, k, dead);
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
    if (dead[k] || rs->op != GOP_RESIZE_BILINEAR || rs->p.resize.scale_x != 0.5f || rs->p.resize.scale_y != 0.5f ||
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
    graph_merge(g, c, k, dead);
    ++fused;
  }
  return fused;
}
