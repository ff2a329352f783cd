/* See fold_affine.h. */
#include "passes/fold_affine.h"

#include <stdlib.h>
#include <string.h>

#include "model/tflite_abi.h"
#include "model/tflite_builtins.h"

/* The depthwise's scale s and shift t, or 0 when it is no plain affine map. */
static int affine_of(const Graph* g, const GNode* dw, const float** s, const float** t) {
  if (dw->op != GOP_DEPTHWISE || dw->p.conv.multiplier != 1 || dw->p.conv.kh != 1 || dw->p.conv.kw != 1 ||
      dw->p.conv.sx != 1 || dw->p.conv.sy != 1 || dw->p.conv.pad_x || dw->p.conv.pad_y || dw->act != kTfLiteActNone ||
      dw->num_epi || dw->num_inputs != 1 || !g->tensors[dw->p.conv.weights].data)
    return 0;
  *s = g->tensors[dw->p.conv.weights].data;
  *t = dw->p.conv.bias >= 0 ? g->tensors[dw->p.conv.bias].data : NULL;
  return *s && (dw->p.conv.bias < 0 || *t);
}

/* Every tap of the conv inside its input: no padding, and the last output
 * pixel's window ends inside. */
static int reads_no_padding(const Graph* g, const GNode* n) {
  const int* in = g->tensors[n->inputs[0]].shape;
  const int* out = g->tensors[n->outputs[0]].shape;
  return n->p.conv.pad_x == 0 && n->p.conv.pad_y == 0 &&
         (out[GD_H] - 1) * n->p.conv.sy + (n->p.conv.kh - 1) * n->p.conv.dy < in[GD_H] &&
         (out[GD_W] - 1) * n->p.conv.sx + (n->p.conv.kw - 1) * n->p.conv.dx < in[GD_W];
}

/* A new constant tensor holding `count` floats (owned by the graph). */
static int new_const(Graph* g, const int shape[4], int rank, float** data, size_t count) {
  float* d = malloc(count * sizeof(float) + 1);
  int id = d ? graph_add_tensor(g, shape, rank) : -1;
  if (id < 0) {
    free(d);
    return -1;
  }
  g->tensors[id].data = d;
  g->tensors[id].dtype = kTfLiteFloat32;
  *data = d;
  return id;
}

int fold_channel_affine(Graph* g, const int* outputs, int num_outputs, char* dead) {
  int folded = 0;
  for (int k = 0; k < g->num_nodes; ++k) {
    const float *s, *t;
    if (dead[k] || !affine_of(g, &g->nodes[k], &s, &t)) continue;
    int mid = g->nodes[k].outputs[0];
    int c = graph_sole_reader(g, mid, dead, outputs, num_outputs);
    if (c < 0 || g->nodes[c].op != GOP_CONV2D || g->nodes[c].num_inputs != 1 || g->nodes[c].inputs[0] != mid ||
        g->nodes[c].fp32 != g->nodes[k].fp32 || !reads_no_padding(g, &g->nodes[c]))
      continue;
    int wi = g->nodes[c].p.conv.weights, bi = g->nodes[c].p.conv.bias;
    int ws[4], bs[4] = {1, 1, 1, 0};
    memcpy(ws, g->tensors[wi].shape, sizeof(ws)); /* [O][KH][KW][I] */
    int cout = ws[GD_B], cin = ws[GD_C];
    size_t taps = (size_t)ws[GD_H] * ws[GD_W];
    bs[GD_C] = cout;
    float *w2, *b2;
    int w_new = new_const(g, ws, 4, &w2, (size_t)cout * taps * cin);
    int b_new = w_new < 0 ? -1 : new_const(g, bs, 1, &b2, (size_t)cout);
    if (b_new < 0) return -1;
    /* graph_add_tensor may have moved the tensors: read them only now. */
    const float* w = g->tensors[wi].data;
    const float* b = bi >= 0 ? g->tensors[bi].data : NULL;
    const GNode* dw = &g->nodes[k];
    s = g->tensors[dw->p.conv.weights].data;
    t = dw->p.conv.bias >= 0 ? g->tensors[dw->p.conv.bias].data : NULL;
    for (int o = 0; o < cout; ++o) {
      double acc = b ? b[o] : 0.0;
      for (size_t q = 0; q < taps; ++q)
        for (int i = 0; i < cin; ++i) {
          size_t e = ((size_t)o * taps + q) * cin + i;
          w2[e] = w[e] * s[i];
          if (t) acc += (double)w[e] * t[i];
        }
      b2[o] = (float)acc;
    }
    GNode* conv = &g->nodes[c];
    conv->inputs[0] = g->nodes[k].inputs[0];
    conv->p.conv.weights = w_new;
    conv->p.conv.bias = b_new;
    graph_merge(g, c, k, dead);
    ++folded;
  }
  return folded;
}
