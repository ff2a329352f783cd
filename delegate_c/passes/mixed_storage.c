/* Float islands inside an FP16 partition.
 *
 * FP16 storage rounds every activation to 11 bits. Most models do not
 * notice; a few amplify those roundings through large weights into outputs
 * that are wrong (pose_landmark_full's segmentation logits: up to 0.09
 * relative L2, docs/troubleshooting.md). Such nodes run on float storage
 * here while the rest of the partition stays half: a node marked fp32 is
 * built with -DFP32_STORAGE=1 (common.cl), its runtime tensors are float,
 * and a conversion node sits wherever a tensor crosses between the two
 * (half -> float before the first float reader, float -> half after a
 * float producer whose output a half node reads). Constants read by both
 * kinds are duplicated, one per storage type. Which nodes: those that the
 * outputs fp16_guard.c finds too far from float depend on. */
#include "passes/mixed_storage.h"

#include <stdlib.h>
#include <string.h>

#include "model/graph.h"

/* Every tensor slot of a node: inputs, epilogue operands, outputs. */
static int node_refs(GNode* n, int** refs, int* is_out) {
  int m = 0;
  for (int j = 0; j < n->num_inputs; ++j) refs[m] = &n->inputs[j], is_out[m++] = 0;
  for (int e = 0; e < n->num_epi; ++e) {
    if (n->epi[e].tensor >= 0) refs[m] = &n->epi[e].tensor, is_out[m++] = 0;
    if (n->epi[e].op == EPI_AFFINE && n->epi[e].shift >= 0) refs[m] = &n->epi[e].shift, is_out[m++] = 0;
  }
  for (int j = 0; j < n->num_outputs; ++j) refs[m] = &n->outputs[j], is_out[m++] = 1;
  return m;
}
#define GD_MAX_REFS (GD_MAX_NODE_INPUTS + 2 * GD_MAX_EPILOGUE + GD_MAX_NODE_OUTPUTS)

/* A new tensor like t (shape, type), with the given storage. */
static int twin(Graph* g, int t, int fp32) {
  int id = graph_add_tensor(g, g->tensors[t].shape, g->tensors[t].rank);
  if (id < 0) return -1;
  g->tensors[id].dtype = g->tensors[t].dtype;
  g->tensors[id].fp32 = fp32;
  if (g->tensors[t].data) {
    size_t bytes = shape_elements(g->tensors[t].shape) * sizeof(float);
    g->tensors[id].data = malloc(bytes ? bytes : 1);
    if (!g->tensors[id].data) return -1;
    memcpy(g->tensors[id].data, g->tensors[t].data, bytes);
  }
  return id;
}

/* Conversion nodes to insert: `before` a node position, or after it. */
typedef struct Cast {
  int at, after, src, dst;
} Cast;

static void add_cast(GNode* n, const Cast* c, int tflite_node) {
  memset(n, 0, sizeof(*n));
  n->op = GOP_STORAGE_CAST;
  n->name = "STORAGE_CAST";
  n->tflite_node = tflite_node;
  n->inputs[0] = c->src;
  n->num_inputs = 1;
  n->outputs[0] = c->dst;
  n->num_outputs = 1;
}

static int apply(Graph* g, const char* mark, int* num_cast) {
  int nt = g->num_tensors, nn = g->num_nodes;
  int* producer = malloc(sizeof(int) * (size_t)(nt + 1));
  int* to_float = malloc(sizeof(int) * (size_t)(nt + 1)); /* float twin of a half tensor */
  int* to_half = malloc(sizeof(int) * (size_t)(nt + 1));  /* half twin of a float tensor */
  Cast* casts = malloc(sizeof(Cast) * (size_t)(2 * nt + 1));
  int nc = 0, rc = -1;
  if (!producer || !to_float || !to_half || !casts) goto done;
  for (int i = 0; i < nt; ++i) producer[i] = -1, to_float[i] = to_half[i] = -1;
  for (int k = 0; k < nn; ++k)
    for (int j = 0; j < g->nodes[k].num_outputs; ++j) producer[g->nodes[k].outputs[j]] = k;
  /* A tensor's own storage: its producer's; half for partition inputs. */
  for (int k = 0; k < nn; ++k)
    for (int j = 0; j < g->nodes[k].num_outputs; ++j) g->tensors[g->nodes[k].outputs[j]].fp32 = mark[k];
  /* A partition input that only float nodes read arrives on float: no
   * half rounding of it at all. */
  char* half_reader = calloc((size_t)nt + 1, 1);
  if (!half_reader) goto done;
  for (int k = 0; k < nn; ++k)
    for (int j = 0; j < g->nodes[k].num_inputs; ++j)
      if (!mark[k] && g->nodes[k].inputs[j] >= 0) half_reader[g->nodes[k].inputs[j]] = 1;
  for (int t = 0; t < nt; ++t)
    if (producer[t] == -1 && !g->tensors[t].data && !g->tensors[t].is_int32 && !g->tensors[t].bhwc && !half_reader[t])
      g->tensors[t].fp32 = 1;
  free(half_reader);
  for (int k = 0; k < nn; ++k) {
    int* refs[GD_MAX_REFS];
    int is_out[GD_MAX_REFS];
    int m = node_refs(&g->nodes[k], refs, is_out);
    for (int r = 0; r < m; ++r) {
      int t = *refs[r];
      if (is_out[r] || t < 0 || t >= nt) continue;
      /* A constant takes the storage of its first reader. */
      if (g->tensors[t].data && producer[t] == -1) {
        producer[t] = -2 - k; /* seen: storage fixed */
        g->tensors[t].fp32 = mark[k];
      }
      /* Raw inputs (int32 indices, BHWC float32) are read as they are. */
      if (g->tensors[t].is_int32 || g->tensors[t].bhwc || g->tensors[t].fp32 == mark[k]) continue;
      int* twin_of = mark[k] ? to_float : to_half;
      if (twin_of[t] < 0) {
        twin_of[t] = twin(g, t, mark[k]);
        if (twin_of[t] < 0) goto done;
        if (!g->tensors[t].data) {
          /* Half -> float right before this (the first float) reader; float
           * -> half right after the producer. */
          int p = producer[t];
          casts[nc++] = mark[k] ? (Cast){k, 0, t, twin_of[t]} : (Cast){p, 1, t, twin_of[t]};
        }
      }
      *refs[r] = twin_of[t];
    }
  }
  /* Node order with the conversions in place. */
  GNode* nodes = malloc(sizeof(GNode) * (size_t)(nn + nc + 1));
  if (!nodes) goto done;
  int w = 0;
  for (int k = 0; k < nn; ++k) {
    for (int c = 0; c < nc; ++c)
      if (casts[c].at == k && !casts[c].after) add_cast(&nodes[w++], &casts[c], g->nodes[k].tflite_node);
    nodes[w] = g->nodes[k];
    nodes[w++].fp32 = mark[k];
    for (int c = 0; c < nc; ++c)
      if (casts[c].at == k && casts[c].after) add_cast(&nodes[w++], &casts[c], g->nodes[k].tflite_node);
  }
  free(g->nodes);
  g->nodes = nodes;
  g->num_nodes = g->cap_nodes = w;
  *num_cast = nc;
  rc = 0;
done:
  free(producer);
  free(to_float);
  free(to_half);
  free(casts);
  return rc;
}

/* Marks every node that output tensors flagged in float_outputs depend on. */
static int mark_cones(const Graph* g, const int* outputs, int num_outputs, const char* float_outputs, char* mark) {
  char* need = calloc((size_t)g->num_tensors + 1, 1);
  if (!need) return -1;
  for (int i = 0; i < num_outputs; ++i)
    if (float_outputs[i] && outputs[i] >= 0 && outputs[i] < g->num_tensors) need[outputs[i]] = 1;
  int n = 0;
  for (int k = g->num_nodes - 1; k >= 0; --k) {
    const GNode* nd = &g->nodes[k];
    int used = 0;
    for (int j = 0; j < nd->num_outputs; ++j) used |= need[nd->outputs[j]];
    if (!used) continue;
    mark[k] = 1, ++n;
    for (int j = 0; j < nd->num_inputs; ++j)
      if (nd->inputs[j] >= 0) need[nd->inputs[j]] = 1;
    for (int e = 0; e < nd->num_epi; ++e) {
      if (nd->epi[e].tensor >= 0) need[nd->epi[e].tensor] = 1;
      if (nd->epi[e].op == EPI_AFFINE && nd->epi[e].shift >= 0) need[nd->epi[e].shift] = 1;
    }
  }
  free(need);
  return n;
}

int mixed_storage_apply(Graph* g, const int* outputs, int num_outputs, const char* float_outputs, int vm,
                        MixedStorageStats* stats) {
  memset(stats, 0, sizeof(*stats));
  if (g->num_nodes == 0 || !float_outputs) return 0;
  char* mark = calloc((size_t)g->num_nodes, 1);
  if (!mark) return -1;
  int marked = mark_cones(g, outputs, num_outputs, float_outputs, mark);
  if (marked > 0 && vm && 2 * marked >= g->num_nodes) memset(mark, 1, (size_t)(marked = g->num_nodes));
  int rc = marked < 0 ? -1 : 0;
  if (marked > 0) {
    stats->float_nodes = marked;
    rc = apply(g, mark, &stats->casts);
  }
  free(mark);
  return rc;
}
