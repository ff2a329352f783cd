/* Fuses elementwise consumers into the convolution that feeds them, so
 * conv -> PRELU -> ADD(residual) is one kernel: each fused node saves a
 * launch and a full write + read of the activation. */
#include "fuse.h"

#include <stdlib.h>
#include <string.h>

#include "tflite_builtins.h"

/* How many nodes read tensor t. */
static int readers(const Graph* g, int t, int* only_reader) {
  int count = 0;
  for (int k = 0; k < g->num_nodes; ++k)
    for (int j = 0; j < g->nodes[k].num_inputs; ++j)
      if (g->nodes[k].inputs[j] == t) {
        ++count;
        *only_reader = k;
        break;
      }
  return count;
}

/* The node that writes t, or -1 (partition input). */
static int writer(const Graph* g, int t) {
  for (int k = 0; k < g->num_nodes; ++k)
    for (int j = 0; j < g->nodes[k].num_outputs; ++j)
      if (g->nodes[k].outputs[j] == t) return k;
  return -1;
}

/* A constant that varies along channels only (B=H=W=1) and matches C. */
static int per_channel_const(const Graph* g, int t, int channels) {
  const GTensor* x = &g->tensors[t];
  if (!x->data || x->shape[GD_B] != 1 || x->shape[GD_H] != 1 || x->shape[GD_W] != 1) return 0;
  return x->shape[GD_C] == channels || x->shape[GD_C] == 1;
}

/* Can node c (reading t, the output of node p) become an epilogue of p? */
static int try_fuse(Graph* g, int p, int c, int t) {
  GNode* prod = &g->nodes[p];
  GNode* cons = &g->nodes[c];
  if (prod->num_epi == GD_MAX_EPILOGUE) return 0;
  if (cons->op == GOP_QUANTIZE) {
    /* Its params take the alpha operand: not with a fused PReLU. */
    for (int k = 0; k < prod->num_epi; ++k)
      if (prod->epi[k].op == EPI_PRELU || prod->epi[k].op == EPI_QDQ) return 0;
    prod->epi[prod->num_epi++] = (Epilogue){EPI_QDQ, -1, kTfLiteActNone, cons->p.quant.scale,
                                            cons->p.quant.zero_point, cons->p.quant.qmin, cons->p.quant.qmax};
    prod->outputs[0] = cons->outputs[0];
    return 1;
  }
  if (cons->op != GOP_BINARY || cons->num_inputs != 2) return 0;
  const int* out_shape = g->tensors[cons->outputs[0]].shape;
  if (memcmp(out_shape, g->tensors[t].shape, sizeof(int) * 4) != 0) return 0;
  int other = cons->inputs[0] == t ? cons->inputs[1] : cons->inputs[0];
  if (other == t) return 0;
  Epilogue e = {EPI_NONE, other, kTfLiteActNone, 0.0f, 0, 0, 0};
  /* The kernels take one alpha and one residual operand. */
  for (int k = 0; k < prod->num_epi; ++k)
    if (((prod->epi[k].op == EPI_PRELU || prod->epi[k].op == EPI_QDQ) && cons->p.binary.op == BIN_PRELU) ||
        (prod->epi[k].op == EPI_ADD && cons->p.binary.op == BIN_ADD))
      return 0;
  if (cons->p.binary.op == BIN_PRELU && cons->inputs[0] == t && cons->act == kTfLiteActNone &&
      per_channel_const(g, other, out_shape[GD_C])) {
    e.op = EPI_PRELU;
  } else if (cons->p.binary.op == BIN_ADD && !g->tensors[other].data &&
             memcmp(g->tensors[other].shape, out_shape, sizeof(int) * 4) == 0) {
    /* The residual must exist before the producer runs. */
    int w = writer(g, other);
    if (w >= p) return 0;
    e.op = EPI_ADD;
    e.act = cons->act;
    if (prod->num_inputs >= GD_MAX_NODE_INPUTS) return 0;
    prod->inputs[prod->num_inputs++] = other; /* keeps it alive in the memory plan */
  } else {
    return 0;
  }
  prod->epi[prod->num_epi++] = e;
  prod->outputs[0] = cons->outputs[0];
  return 1;
}

int fuse_graph(Graph* g, const int* outputs, int num_outputs) {
  char* dead = calloc((size_t)g->num_nodes + 1, 1);
  if (!dead) return -1;
  int fused = 0;
  for (int p = 0; p < g->num_nodes; ++p) {
    GNode* prod = &g->nodes[p];
    if (dead[p] || (prod->op != GOP_CONV2D && prod->op != GOP_DEPTHWISE)) continue;
    for (;;) {
      int t = prod->outputs[0], c = -1;
      int is_output = 0;
      for (int k = 0; k < num_outputs; ++k) is_output |= outputs[k] == t;
      if (is_output || readers(g, t, &c) != 1 || dead[c] || !try_fuse(g, p, c, t)) break;
      dead[c] = 1;
      g->nodes[c].num_inputs = 0; /* no longer reads anything */
      ++fused;
    }
  }
  int w = 0;
  for (int k = 0; k < g->num_nodes; ++k)
    if (!dead[k]) g->nodes[w++] = g->nodes[k];
  g->num_nodes = w;
  free(dead);
  return fused;
}
