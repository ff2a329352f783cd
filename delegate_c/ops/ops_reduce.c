/* MEAN, SUM, REDUCE_MAX, REDUCE_MIN and REDUCE_PROD over any set of axes:
 * one kernel with an op switch (opencl_kernels/reduce.cl). The kernel
 * writes the keep_dims form of the result (reduced axes of size 1); where
 * the output tensor drops those axes and so has another BHWC shape, a
 * reshape node follows (row-major order is the same). Global
 * AVERAGE_POOL_2D/MAX_POOL_2D lower to the same node with their fused
 * activation (ops_pool.c). */
#include <string.h>

#include "encode/encode.h"
#include "ops/op_table.h"
#include "select/selectors.h"
#include "model/tflite_builtins.h"
#include "ops/op_kinds.h"

/* The graph ops this file encodes (graph.h: a node points at its op). */
static int encode_reduce(Encoder* ex, int node);
const GOpDesc kGOpReduce = {"REDUCE", encode_reduce};

static int reduce_code(int builtin) {
  switch (builtin) {
    case kBuiltinMean: return REDUCE_MEAN;
    case kBuiltinSum: return REDUCE_SUM;
    case kBuiltinReduceMax: return REDUCE_MAX;
    case kBuiltinReduceMin: return REDUCE_MIN;
    case kBuiltinReduceProd: return REDUCE_PROD;
    default: return -1;
  }
}

typedef struct ReduceParams {
  int reduced[4];              /* BHWC: 1 where reduced */
  int out_dims[4], out_rank;   /* the TFLite output dims the op must declare */
} ReduceParams;

static int parse_reduce(const NodeInfo* ni, void* out) {
  ReduceParams* p = out;
  const TfLiteReducerParams* tp = ni->node->builtin_data;
  if (!tp) return reason(ni, "missing parameters");
  if (check_io(ni, 2, 1) || check_const_input(ni, 1, "axes", kTfLiteInt32)) return -1;
  int dims[8];
  int rank = mv_dims(ni->mv, ni_input(ni, 0), dims, 8);
  if (rank < 1 || rank > 4) return reason(ni, "input 0 must have rank 1-4, has %d", rank);
  int axes[8], count;
  char err[200];
  if (mv_const_ints(ni->mv, ni_input(ni, 1), axes, 8, &count, err, sizeof(err)))
    return reason(ni, "axes (input 1): %s", err);
  int by_dim[4] = {0, 0, 0, 0};
  for (int k = 0; k < count; ++k) {
    if (axes[k] < -rank || axes[k] >= rank) return reason(ni, "axis %d is out of range for rank %d", axes[k], rank);
    by_dim[axes[k] < 0 ? axes[k] + rank : axes[k]] = 1; /* repeats count once, as in TFLite */
  }
  p->out_rank = 0;
  for (int d = 0; d < rank; ++d) {
    p->reduced[axis_to_bhwc(d, rank)] = by_dim[d];
    if (!by_dim[d])
      p->out_dims[p->out_rank++] = dims[d];
    else if (tp->keep_dims)
      p->out_dims[p->out_rank++] = 1;
  }
  return 0;
}

static int check_reduce(const NodeInfo* ni) {
  const ReduceParams* p = ni->params;
  int declared[8];
  int declared_rank = mv_dims(ni->mv, ni_output(ni, 0), declared, 8);
  if (declared_rank != p->out_rank)
    return reason(ni, "output has rank %d; the reduction gives rank %d", declared_rank, p->out_rank);
  return 0;
}

static int infer_reduce(const NodeInfo* ni, int k, int shape[4]) {
  const ReduceParams* p = ni->params;
  (void)k;
  return shape_from_dims(p->out_dims, p->out_rank, shape);
}

static int lower_reduce(Lowering* lw, const NodeInfo* ni) {
  const ReduceParams* p = ni->params;
  int in = lower_tensor(lw, ni_input(ni, 0));
  int out = in < 0 ? -1 : lower_tensor(lw, ni_output(ni, 0));
  if (out < 0) return -1;
  int kept[4];
  for (int d = 0; d < 4; ++d) kept[d] = p->reduced[d] ? 1 : lw->g->tensors[in].shape[d];
  int target = out;
  if (memcmp(kept, lw->g->tensors[out].shape, sizeof(kept)) != 0) {
    target = graph_add_tensor(lw->g, kept, 4);
    if (target < 0) return lower_error(lw, "out of memory");
  }
  GNode* n = graph_add_node_io(lw->g, GOP_REDUCE, in, target);
  if (!n) return lower_error(lw, "out of memory");
  n->p.reduce.op = reduce_code(ni->reg->builtin_code);
  memcpy(n->p.reduce.axes, p->reduced, sizeof(p->reduced));
  if (target != out) return lower_reshape_node(lw, target, out);
  return 0;
}

/* The reduce kernels' first arguments: src, then the addend (src again,
 * unread, when there is none) and the flag. */
static void karg_sources(KArgs* a, cl_mem src, cl_mem addend) {
  karg_mem(a, src);
  karg_mem(a, addend ? addend : src);
}

/* One reduce launch: src (+ addend, or NULL) of shape ss over the axes r
 * into dst (shape ds). */
static int reduce_launch(Encoder* ex, int node, const KernelVariant* v, cl_mem src, cl_mem addend, cl_mem dst,
                         const int ss[4], const int ds[4], const int r[4], int act) {
  KernelRef k = ex_dispatch_variant(ex, v, node);
  if (!k) return -1;
  KArgs a = {k, 0, CL_SUCCESS, (int)v->total};
  karg_sources(&a, src, addend);
  karg_mem(&a, dst);
  karg_shape(&a, ss);
  karg_shape(&a, ds);
  karg_int4(&a, r[GD_W], r[GD_H], r[GD_C], r[GD_B]);
  karg_int(&a, ex->g.nodes[node].p.reduce.op);
  karg_int(&a, act);
  karg_int(&a, addend != NULL);
  karg_int(&a, a.total);
  return karg_done(ex, &a);
}

/* reduce_gpu_part then reduce_gpu_sum (select_reduce_chunks): partials per
 * chunk of each window (FP32: a sum of many halves could overflow half),
 * then their op in a fixed order and the store. */
static int reduce_chunked(Encoder* ex, int node, const KernelVariant* part_v, const KernelVariant* sum_v, int chunk,
                          int chunks, cl_mem src, cl_mem addend, cl_mem dst) {
  const GNode* n = &ex->g.nodes[node];
  const int* ss = ex->g.tensors[n->inputs[0]].shape;
  const int* ds = ex->g.tensors[n->outputs[0]].shape;
  const int* r = n->p.reduce.axes;
  cl_mem part = src && dst ? ex_buffer(ex, CL_MEM_READ_WRITE, part_v->total * 4 * sizeof(float), NULL) : NULL;
  KernelRef k = part ? ex_dispatch_variant(ex, part_v, node) : NULL;
  if (!k) return -1;
  KArgs a = {k, 0, CL_SUCCESS, (int)part_v->total};
  karg_sources(&a, src, addend);
  karg_mem(&a, part);
  karg_shape(&a, ss);
  karg_shape(&a, ds);
  karg_int4(&a, r[GD_W], r[GD_H], r[GD_C], r[GD_B]);
  karg_int(&a, n->p.reduce.op);
  karg_int(&a, addend != NULL);
  karg_int(&a, chunk);
  karg_int(&a, a.total);
  if (karg_done(ex, &a) || !(k = ex_dispatch_variant(ex, sum_v, node))) return -1;
  KArgs b = {k, 0, CL_SUCCESS, (int)sum_v->total};
  karg_mem(&b, part);
  karg_mem(&b, dst);
  karg_shape(&b, ss);
  karg_shape(&b, ds);
  karg_int4(&b, r[GD_W], r[GD_H], r[GD_C], r[GD_B]);
  karg_int(&b, n->p.reduce.op);
  karg_int(&b, n->act);
  karg_int(&b, chunks);
  karg_int(&b, b.total);
  return karg_done(ex, &b);
}

static int encode_reduce(Encoder* ex, int node) {
  const GNode* n = &ex->g.nodes[node];
  const int* ss = ex->g.tensors[n->inputs[0]].shape;
  const int* ds = ex->g.tensors[n->outputs[0]].shape;
  cl_mem src = ex_tensor_mem(ex, n->inputs[0]), dst = ex_tensor_mem(ex, n->outputs[0]);
  /* A second input: the addend of the ADD it reads through (fuse_summed_reduce.c). */
  cl_mem addend = n->num_inputs > 1 ? ex_tensor_mem(ex, n->inputs[1]) : NULL;
  if (n->num_inputs > 1 && !addend) return -1;
  KernelVariant v, sum;
  if (select_reduce_split(&ex->target, &ex->g, n)) {
    /* Over W into a scratch row per (batch, row, slice), then over H. A
     * MEAN of row means is the MEAN (every row has W values); the
     * activation (a global pool's) goes on the second. */
    int mid[4] = {ss[GD_B], ss[GD_H], 1, ss[GD_C]};
    static const int over_w[4] = {0, 0, 1, 0}, over_h[4] = {0, 1, 0, 0};
    cl_mem rows = src && dst ? ex_buffer(ex, CL_MEM_READ_WRITE, phwc4_items(mid) * 4 * sizeof(float), NULL) : NULL;
    if (!rows) return -1;
    v = variant_1d("reduce.cl", "reduce", phwc4_items(mid));
    if (reduce_launch(ex, node, &v, src, addend, rows, ss, mid, over_w, ACT_NONE)) return -1;
    v = variant_1d("reduce.cl", "reduce", phwc4_items(ds));
    return reduce_launch(ex, node, &v, rows, NULL, dst, mid, ds, over_h, n->act);
  }
  int chunk, chunks = select_reduce_chunks(&ex->target, &ex->g, n, &chunk, &v, &sum);
  if (chunks) return reduce_chunked(ex, node, &v, &sum, chunk, chunks, src, addend, dst);
  select_reduce(&ex->target, &ex->g, n, &v);
  /* The activation is NONE but for a global pool's (ops_pool.c). */
  return reduce_launch(ex, node, &v, src, addend, dst, ss, ds, n->p.reduce.axes, n->act);
}

/* The TFLite ops this file runs (op_table.c lists them). */
const OpDef kOpMean = {.builtin_code = kBuiltinMean, .max_version = 3,
    .parse = parse_reduce, .params_size = sizeof(ReduceParams), .check = check_reduce,
    .infer = infer_reduce, .lower = lower_reduce,
    .constraints = "constant int32 axes, any combination of the (up to 4) axes, negative allowed; keep_dims true or false; float32 accumulation"};
const OpDef kOpReduceMax = {.builtin_code = kBuiltinReduceMax, .max_version = 3,
    .parse = parse_reduce, .params_size = sizeof(ReduceParams), .check = check_reduce,
    .infer = infer_reduce, .lower = lower_reduce,
    .constraints = "constant int32 axes, any combination of the (up to 4) axes, negative allowed; keep_dims true or false"};
const OpDef kOpReduceMin = {.builtin_code = kBuiltinReduceMin, .max_version = 3,
    .parse = parse_reduce, .params_size = sizeof(ReduceParams), .check = check_reduce,
    .infer = infer_reduce, .lower = lower_reduce,
    .constraints = "constant int32 axes, any combination of the (up to 4) axes, negative allowed; keep_dims true or false"};
const OpDef kOpReduceProd = {.builtin_code = kBuiltinReduceProd, .max_version = 2,
    .parse = parse_reduce, .params_size = sizeof(ReduceParams), .check = check_reduce,
    .infer = infer_reduce, .lower = lower_reduce,
    .constraints = "constant int32 axes, any combination of the (up to 4) axes, negative allowed; keep_dims true or false; float32 products"};
const OpDef kOpSum = {.builtin_code = kBuiltinSum, .max_version = 2, .parse = parse_reduce, .params_size = sizeof(ReduceParams), .check = check_reduce,
    .infer = infer_reduce, .lower = lower_reduce,
    .constraints = "constant int32 axes, any combination of the (up to 4) axes, negative allowed; keep_dims true or false; float32 sums"};
