/* Small graphs built in memory for the passes' unit tests (test_pass_*.c):
 * a pass sees nodes by kind (model/graph.h), so its tests link it with
 * model/graph.c alone, no op, encoder or OpenCL. */
#ifndef TFLITE_GPU_TEST_GRAPH_BUILD_H
#define TFLITE_GPU_TEST_GRAPH_BUILD_H

#include <stdlib.h>
#include <string.h>

#include "model/graph.h"

/* A runtime float tensor of shape (b, h, w, c), rank 4. */
static inline int t_runtime(Graph* g, int b, int h, int w, int c) {
  int shape[4] = {b, h, w, c};
  int t = graph_add_tensor(g, shape, 4);
  if (t >= 0) g->tensors[t].dtype = 1; /* kTfLiteFloat32 */
  return t;
}

/* A constant of that shape, filled with v. */
static inline int t_const(Graph* g, int b, int h, int w, int c, float v) {
  int t = t_runtime(g, b, h, w, c);
  size_t n = (size_t)b * h * w * c;
  g->tensors[t].data = malloc((n ? n : 1) * sizeof(float));
  for (size_t i = 0; i < n; ++i) g->tensors[t].data[i] = v;
  return t;
}

/* A node of kind op reading ins[0..n_in) and writing out; tflite_node = its position. */
static inline GNode* n_add(Graph* g, GOp op, const int* ins, int n_in, int out) {
  int pos = g->num_nodes;
  GNode* n = graph_add_node(g, op);
  for (int j = 0; j < n_in; ++j) n->inputs[j] = ins[j];
  n->num_inputs = n_in;
  n->outputs[0] = out;
  n->num_outputs = 1;
  n->tflite_node = pos;
  return n;
}

/* A conv (kind GOP_CONV2D or GOP_DEPTHWISE) of a k x k filter, stride 1, no padding. */
static inline GNode* n_conv(Graph* g, GOp op, int src, int k, int out) {
  int c = g->tensors[src].shape[GD_C];
  int ins[3] = {src, t_const(g, k, k, c, c, 0.5f), t_const(g, 1, 1, 1, c, 0.25f)};
  GNode* n = n_add(g, op, ins, 3, out);
  n->p.conv.kh = n->p.conv.kw = k;
  n->p.conv.sx = n->p.conv.sy = n->p.conv.dx = n->p.conv.dy = 1;
  n->p.conv.multiplier = 1;
  n->p.conv.weights = ins[1];
  n->p.conv.bias = ins[2];
  n->p.conv.mean_of = -1;
  return n;
}

/* Room for g->merged, as the fuse stage gives it (one per node it started with). */
static inline char* g_ready(Graph* g) {
  g->cap_merged = g->num_nodes;
  g->merged = calloc((size_t)g->num_nodes + 1, sizeof(GMerge));
  return calloc((size_t)g->num_nodes + 1, 1);
}

#endif
