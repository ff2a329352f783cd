/* Ops driven by integer indices: GATHER (a remap whose gather axis reads
 * the indices) and ONE_HOT (layout.cl `one_hot`). Indices are constant
 * int32/int64 tensors, or runtime int32 tensors that enter the partition
 * raw (GTensor.is_int32: row-major ints in their staging buffer). */
#include <stdlib.h>
#include <string.h>

#include "encode/encode.h"
#include "ops/op_table.h"
#include "model/tflite_builtins.h"
#include "ops/op_kinds.h"

/* The graph ops this file encodes (graph.h: a node points at its op). */
static int encode_one_hot(Encoder* ex, int node);
const GOpDesc kGOpOneHot = {"ONE_HOT", encode_one_hot};

static int lower_indices(Lowering* lw, int t) {
  if (t < 0 || t >= lw->mv->num_tensors) return lower_error(lw, "indices tensor %d out of range", t);
  if (lw->map[t] >= 0) {
    if (!mv_is_const(lw->mv, t) && !lw->g->tensors[lw->map[t]].is_int32)
      return lower_error(lw, "runtime int32 tensor %d is used both as values and as indices", t);
    return lw->map[t];
  }
  if (!mv_is_const(lw->mv, t)) {
    int id = lower_tensor(lw, t);
    if (id >= 0) lw->g->tensors[id].is_int32 = 1;
    return id;
  }
  int dims[8], shape[4], count;
  int rank = mv_dims(lw->mv, t, dims, 8);
  if (rank < 0 || shape_from_dims(dims, rank, shape)) return lower_error(lw, "indices have an unsupported shape");
  size_t n = mv_elements(lw->mv, t);
  int* v = malloc((n ? n : 1) * sizeof(int));
  float* f = malloc((n ? n : 1) * sizeof(float));
  if (!v || !f) {
    free(v);
    free(f);
    return lower_error(lw, "out of memory");
  }
  int rc = mv_const_ints(lw->mv, t, v, (int)n, &count, lw->err, lw->errlen);
  for (int i = 0; rc == 0 && i < count; ++i) f[i] = (float)v[i]; /* exact: indices are < 2^24 */
  free(v);
  int id = rc ? -1 : graph_add_tensor(lw->g, shape, rank);
  if (id < 0) {
    free(f);
    return rc ? -1 : lower_error(lw, "out of memory");
  }
  lw->g->tensors[id].tflite_index = t;
  lw->g->tensors[id].data = f;
  lw->map[t] = id;
  return id;
}

/* Indices input k: constant int32/int64 within [0, limit), or a runtime
 * int32 tensor (values checked by the kernel: outside gives zeros). */
static int check_indices(const NodeInfo* ni, int k, int limit) {
  int t = ni_input(ni, k);
  if (t < 0) return reason(ni, "input %d (indices) is missing", k);
  const TfLiteTensor* x = mv_tensor(ni->mv, t);
  if (!mv_is_const(ni->mv, t)) {
    if (x->type != kTfLiteInt32)
      return reason(ni, "runtime indices (input %d) have type %s; INT32 is required", k, type_name(x->type));
    return 0;
  }
  if (x->type != kTfLiteInt32 && x->type != kTfLiteInt64)
    return reason(ni, "constant indices (input %d) have type %s; INT32 or INT64 is required", k, type_name(x->type));
  size_t n = mv_elements(ni->mv, t);
  int* v = malloc((n ? n : 1) * sizeof(int));
  if (!v) return reason(ni, "out of memory");
  int count, rc = 0;
  char err[200];
  if (mv_const_ints(ni->mv, t, v, (int)n, &count, err, sizeof(err))) rc = reason(ni, "indices: %s", err);
  for (int i = 0; rc == 0 && i < count; ++i)
    if (v[i] < 0 || v[i] >= limit) rc = reason(ni, "index %d is outside [0, %d)", v[i], limit);
  /* Constant indices travel as floats (lower_indices): exact below 2^24. */
  for (int i = 0; rc == 0 && i < count; ++i)
    if (v[i] >= (1 << 24)) rc = reason(ni, "constant index %d is not exact as a float (>= 2^24)", v[i]);
  free(v);
  return rc;
}

/* Row-major strides of the index dims, placed on the output's BHWC axes
 * that hold them (axes4[t] for index dim t); 0 on every other axis. */
static void index_strides(const int* idims, const int* axes4, int q, int stride4[4]) {
  for (int d = 0; d < 4; ++d) stride4[d] = 0;
  for (int t = q - 1, stride = 1; t >= 0; stride *= idims[t--]) stride4[axes4[t]] = stride;
}

/* ---------------- GATHER ---------------- */

static int check_gather(const NodeInfo* ni) {
  const TfLiteGatherParams* p = ni->node->builtin_data;
  if (!p) return reason(ni, "missing parameters");
  if (ni_num_inputs(ni) != 2 || ni_num_outputs(ni) != 1) return reason(ni, "needs 2 inputs and 1 output");
  if (p->batch_dims != 0) return reason(ni, "batch_dims %d is not supported (only 0)", p->batch_dims);
  int params = ni_input(ni, 0), in[4];
  int rank = ni_shape(ni, params, in);
  if (rank < 1) return reason(ni, "input 0 (params) must have rank 1-4");
  if (mv_is_const(ni->mv, params) && mv_is_const(ni->mv, ni_input(ni, 1)))
    return reason(ni, "params and indices are both constant; nothing runs per invoke");
  int a = p->axis < 0 ? p->axis + rank : p->axis;
  if (a < 0 || a >= rank) return reason(ni, "axis %d is out of range for rank %d", p->axis, rank);
  if (check_indices(ni, 1, in[4 - rank + a])) return -1;
  int pdims[8], idims[8], odims[8];
  mv_dims(ni->mv, params, pdims, 8);
  int q = mv_dims(ni->mv, ni_input(ni, 1), idims, 8);
  if (rank + q - 1 > 4) return reason(ni, "output rank %d exceeds 4", rank + q - 1);
  int r = 0, out[4];
  for (int i = 0; i < a; ++i) odims[r++] = pdims[i];
  for (int i = 0; i < q; ++i) odims[r++] = idims[i];
  for (int i = a + 1; i < rank; ++i) odims[r++] = pdims[i];
  shape_from_dims(odims, r, out);
  return check_output_shape(ni, ni_output(ni, 0), out);
}

static int lower_gather(Lowering* lw, const NodeInfo* ni) {
  const TfLiteGatherParams* p = ni->node->builtin_data;
  int params = lower_tensor(lw, ni_input(ni, 0));
  int indices = params < 0 ? -1 : lower_indices(lw, ni_input(ni, 1));
  int out = indices < 0 ? -1 : lower_tensor(lw, ni_output(ni, 0));
  if (out < 0) return -1;
  int rank = lw->g->tensors[params].rank;
  int q = lw->g->tensors[indices].rank;
  int rank_out = rank + q - 1;
  int a = p->axis < 0 ? p->axis + rank : p->axis;
  int idims[8];
  mv_dims(lw->mv, ni_input(ni, 1), idims, 8);
  GNode* n = lower_remap_node(lw, params, out, REMAP_SLICE);
  if (!n) return -1;
  n->inputs[1] = indices;
  n->num_inputs = 2;
  /* Params axis j < a is output axis j; j > a is output axis j + q - 1;
   * leading size-1 axes stay at 0 (stride 0). */
  for (int s = 0; s < 4; ++s) n->p.remap.stride[s] = 0;
  for (int j = 0; j < rank; ++j) {
    if (j == a) continue;
    n->p.remap.stride[4 - rank + j] = 1;
    n->p.remap.perm[4 - rank + j] = 4 - rank_out + (j < a ? j : j + q - 1);
  }
  n->p.remap.gather = 1;
  n->p.remap.gather_axis = 4 - rank + a;
  int axes4[4];
  for (int t = 0; t < q; ++t) axes4[t] = 4 - rank_out + a + t;
  index_strides(idims, axes4, q, n->p.remap.gather_stride);
  return 0;
}

/* ---------------- ONE_HOT ---------------- */

/* A constant scalar input as float (on_value / off_value), or a reason. */
static int const_scalar(const NodeInfo* ni, int k, const char* what) {
  if (check_const_input(ni, k, what, kTfLiteFloat32)) return -1;
  if (mv_elements(ni->mv, ni_input(ni, k)) != 1) return reason(ni, "%s (input %d) must hold 1 value", what, k);
  return 0;
}

static int check_one_hot(const NodeInfo* ni) {
  const TfLiteOneHotParams* p = ni->node->builtin_data;
  if (!p) return reason(ni, "missing parameters");
  if (ni_num_inputs(ni) != 4 || ni_num_outputs(ni) != 1) return reason(ni, "needs 4 inputs and 1 output");
  int t = ni_input(ni, 0);
  if (t < 0 || mv_is_const(ni->mv, t)) return reason(ni, "indices (input 0) must be a runtime tensor");
  int depth, count;
  char err[200];
  if (!mv_is_const(ni->mv, ni_input(ni, 1))) return reason(ni, "depth (input 1) must be constant");
  if (mv_const_ints(ni->mv, ni_input(ni, 1), &depth, 1, &count, err, sizeof(err)) || count != 1)
    return reason(ni, "depth (input 1) must be one int32 value");
  if (depth < 1) return reason(ni, "depth %d must be >= 1", depth);
  if (const_scalar(ni, 2, "on_value") || const_scalar(ni, 3, "off_value") || check_indices(ni, 0, depth)) return -1;
  int idims[8], odims[8], out[4];
  int q = mv_dims(ni->mv, t, idims, 8);
  if (q + 1 > 4) return reason(ni, "output rank %d exceeds 4", q + 1);
  int a = p->axis == -1 ? q : p->axis;
  if (a < 0 || a > q) return reason(ni, "axis %d is out of range for output rank %d", p->axis, q + 1);
  for (int i = 0, r = 0; i <= q; ++i) odims[i] = i == a ? depth : idims[r++];
  shape_from_dims(odims, q + 1, out);
  return check_output_shape(ni, ni_output(ni, 0), out);
}

static int lower_one_hot(Lowering* lw, const NodeInfo* ni) {
  const TfLiteOneHotParams* p = ni->node->builtin_data;
  float *on, *off;
  if (mv_const_float(lw->mv, ni_input(ni, 2), &on, lw->err, lw->errlen)) return -1;
  if (mv_const_float(lw->mv, ni_input(ni, 3), &off, lw->err, lw->errlen)) {
    free(on);
    return -1;
  }
  float on_value = on[0], off_value = off[0];
  free(on);
  free(off);
  int indices = lower_indices(lw, ni_input(ni, 0));
  int out = indices < 0 ? -1 : lower_tensor(lw, ni_output(ni, 0));
  if (out < 0) return -1;
  int idims[8];
  int q = mv_dims(lw->mv, ni_input(ni, 0), idims, 8);
  int rank_out = q + 1;
  int a = p->axis == -1 ? q : p->axis;
  GNode* n = graph_add_node_io(lw->g, GOP_ONE_HOT, indices, out);
  if (!n) return lower_error(lw, "out of memory");
  n->p.one_hot.axis = 4 - rank_out + a;
  n->p.one_hot.on = on_value;
  n->p.one_hot.off = off_value;
  int axes4[4];
  for (int t = 0; t < q; ++t) axes4[t] = 4 - rank_out + (t < a ? t : t + 1);
  index_strides(idims, axes4, q, n->p.one_hot.index_stride);
  return 0;
}

static int encode_one_hot(Encoder* ex, int node) {
  static const int kToKernel[4] = {3, 1, 0, 2};
  static const int kFromKernel[4] = {GD_W, GD_H, GD_C, GD_B};
  const GNode* n = &ex->g.nodes[node];
  const GTensor* dst = &ex->g.tensors[n->outputs[0]];
  const int* st = n->p.one_hot.index_stride;
  cl_mem indices = ex_int_indices(ex, n->inputs[0]);
  if (!indices) return -1;
  size_t items = phwc4_items(dst->shape);
  KernelRef k = ex_dispatch(ex, "layout.cl", "one_hot", items, node);
  if (!k) return -1;
  KArgs a = {k, 0, CL_SUCCESS, (int)items};
  karg_mem(&a, indices);
  karg_mem(&a, ex_tensor_mem(ex, n->outputs[0]));
  karg_shape(&a, dst->shape);
  karg_int(&a, kToKernel[n->p.one_hot.axis]);
  karg_int4(&a, st[kFromKernel[0]], st[kFromKernel[1]], st[kFromKernel[2]], st[kFromKernel[3]]);
  karg_float(&a, n->p.one_hot.on);
  karg_float(&a, n->p.one_hot.off);
  karg_int(&a, a.total);
  return karg_done(ex, &a);
}

/* The TFLite ops this file runs (op_table.c lists them). */
const OpDef kOpGather = {.builtin_code = kBuiltinGather, .max_version = 1, .check = check_gather, .lower = lower_gather,
    .index_inputs = 1u << 1,
    .constraints = "params runtime or constant, any axis (negative too); indices constant int32/int64 (checked in range) or "
     "runtime int32 (out-of-range reads give 0), of any rank with an output rank <= 4 (upstream: 1-D); "
     "batch_dims 0"};
const OpDef kOpOneHot = {.builtin_code = kBuiltinOneHot, .max_version = 1, .check = check_one_hot, .lower = lower_one_hot,
    .index_inputs = 1u << 0,
    .constraints = "runtime int32 indices (of rank <= 3), read as ints at the partition boundary; constant depth; constant "
     "float on/off values; any axis (upstream: last axis, batch/channels only)"};
