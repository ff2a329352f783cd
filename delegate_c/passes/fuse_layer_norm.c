/* See fuse_layer_norm.h. */
#include "passes/fuse_layer_norm.h"

#include <string.h>

#include "model/tflite_builtins.h"

/* A MEAN over C alone whose output is [B, H, W, 1] of its input's B, H, W. */
static int is_channel_mean(const Graph* g, const GNode* n) {
  if (n->op != GOP_REDUCE || n->p.reduce.op != REDUCE_MEAN || n->num_inputs != 1 || n->num_outputs != 1 ||
      n->num_epi || n->act != kTfLiteActNone)
    return 0;
  const int* r = n->p.reduce.axes;
  const int* in = g->tensors[n->inputs[0]].shape;
  const int* out = g->tensors[n->outputs[0]].shape;
  return !r[GD_B] && !r[GD_H] && !r[GD_W] && r[GD_C] && out[GD_B] == in[GD_B] && out[GD_H] == in[GD_H] &&
         out[GD_W] == in[GD_W] && out[GD_C] == 1;
}

static int is_plain(const GNode* n, GOp op, int inputs) {
  return n->op == op && n->num_inputs == inputs && n->num_outputs == 1 && !n->num_epi && n->act == kTfLiteActNone;
}

/* Does node k (MEAN of x over channels) start the pattern? Fills the four
 * other nodes and eps. */
static int match(const Graph* g, int k, const char* dead, const int* outputs, int num_outputs, int rest[4],
                 float* eps) {
  const GNode* mean = &g->nodes[k];
  if (!is_channel_mean(g, mean)) return 0;
  int x = mean->inputs[0], m = mean->outputs[0];
  /* SQUARED_DIFFERENCE(x, m): m's other readers (the shift) stay. */
  int sq = -1;
  for (int j = k + 1; j < g->num_nodes && sq < 0; ++j) {
    const GNode* n = &g->nodes[j];
    if (!dead[j] && is_plain(n, GOP_BINARY, 2) && n->p.binary.op == BIN_SQDIFF &&
        ((n->inputs[0] == x && n->inputs[1] == m) || (n->inputs[0] == m && n->inputs[1] == x)) &&
        memcmp(g->tensors[n->outputs[0]].shape, g->tensors[x].shape, sizeof(int) * 4) == 0)
      sq = j;
  }
  if (sq < 0) return 0;
  int var = graph_sole_reader(g, g->nodes[sq].outputs[0], dead, outputs, num_outputs);
  if (var < 0 || !is_channel_mean(g, &g->nodes[var])) return 0;
  int add = graph_sole_reader(g, g->nodes[var].outputs[0], dead, outputs, num_outputs);
  if (add < 0 || !is_plain(&g->nodes[add], GOP_BINARY, 2) || g->nodes[add].p.binary.op != BIN_ADD) return 0;
  const GNode* a = &g->nodes[add];
  int c = a->inputs[0] == g->nodes[var].outputs[0] ? a->inputs[1] : a->inputs[0];
  const GTensor* e = &g->tensors[c];
  if (!e->data || e->shape[GD_B] * e->shape[GD_H] * e->shape[GD_W] * e->shape[GD_C] != 1) return 0;
  int rs = graph_sole_reader(g, a->outputs[0], dead, outputs, num_outputs);
  if (rs < 0 || !is_plain(&g->nodes[rs], GOP_UNARY, 1) || g->nodes[rs].p.unary.op != UN_RSQRT) return 0;
  rest[0] = sq, rest[1] = var, rest[2] = add, rest[3] = rs;
  *eps = e->data[0];
  return 1;
}

int fuse_layer_norm(Graph* g, const int* outputs, int num_outputs, char* dead) {
  int removed = 0;
  for (int k = 0; k < g->num_nodes; ++k) {
    int rest[4];
    float eps;
    if (dead[k] || !match(g, k, dead, outputs, num_outputs, rest, &eps)) continue;
    GNode* n = &g->nodes[k];
    n->op = GOP_NORM_STATS;
    n->outputs[1] = g->nodes[rest[3]].outputs[0];
    n->num_outputs = 2;
    n->p.norm.eps = eps;
    for (int j = 0; j < 4; ++j) graph_merge(g, k, rest[j], dead);
    removed += 4;
  }
  return removed;
}
