/* MEAN, SUM, REDUCE_MAX, REDUCE_MIN and REDUCE_PROD over any set of axes:
 * one kernel with an op switch (opencl_kernels/reduce.cl). The kernel
 * writes the keep_dims form of the result (reduced axes of size 1); where
 * the output tensor drops those axes and so has another BHWC shape, a
 * reshape node follows (row-major order is the same). */
#include <string.h>

#include "executor.h"
#include "op_table.h"
#include "selectors.h"
#include "tflite_builtins.h"

/* The graph ops this file encodes (graph.h: a node points at its op). */
static int encode_reduce(Executor* ex, int node);
static const GOpDesc kGOpReduce = {"REDUCE", encode_reduce};

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

/* The reduced BHWC axes (1 where reduced) and the TFLite output dims the
 * op must declare. Returns the output rank, or -1 with reason set. */
static int reduced_axes(const NodeInfo* ni, int reduced[4], int out_dims[4]) {
  const TfLiteReducerParams* p = ni->node->builtin_data;
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
  for (int d = 0; d < 4; ++d) reduced[d] = 0;
  int out_rank = 0;
  for (int d = 0; d < rank; ++d) {
    reduced[axis_to_bhwc(d, rank)] = by_dim[d];
    if (!by_dim[d])
      out_dims[out_rank++] = dims[d];
    else if (p->keep_dims)
      out_dims[out_rank++] = 1;
  }
  return out_rank;
}

int check_reduce(const NodeInfo* ni) {
  if (!ni->node->builtin_data) return reason(ni, "missing parameters");
  if (check_io(ni, 2, 1) || check_const_input(ni, 1, "axes", kTfLiteInt32)) return -1;
  int reduced[4], out_dims[4];
  int out_rank = reduced_axes(ni, reduced, out_dims);
  if (out_rank < 0) return -1;
  int declared[8];
  int declared_rank = mv_dims(ni->mv, ni_output(ni, 0), declared, 8);
  if (declared_rank != out_rank)
    return reason(ni, "output has rank %d; the reduction gives rank %d", declared_rank, out_rank);
  int expect[4];
  shape_from_dims(out_dims, out_rank, expect);
  return check_output_shape(ni, ni_output(ni, 0), expect);
}

int lower_reduce(Lowering* lw, const NodeInfo* ni) {
  int reduced[4], out_dims[4];
  char why[256];
  NodeInfo quiet = *ni;
  quiet.reason = why;
  quiet.reason_len = sizeof(why);
  if (reduced_axes(&quiet, reduced, out_dims) < 0) return lower_error(lw, "%s", why);
  int in = lower_tensor(lw, ni_input(ni, 0));
  int out = in < 0 ? -1 : lower_tensor(lw, ni_output(ni, 0));
  if (out < 0) return -1;
  int kept[4];
  for (int d = 0; d < 4; ++d) kept[d] = reduced[d] ? 1 : lw->g->tensors[in].shape[d];
  int target = out;
  if (memcmp(kept, lw->g->tensors[out].shape, sizeof(kept)) != 0) {
    target = graph_add_tensor(lw->g, kept, 4);
    if (target < 0) return lower_error(lw, "out of memory");
  }
  GNode* n = graph_add_node(lw->g, &kGOpReduce);
  if (!n) return lower_error(lw, "out of memory");
  n->inputs[0] = in;
  n->num_inputs = 1;
  n->outputs[0] = target;
  n->num_outputs = 1;
  n->p.reduce.op = reduce_code(ni->reg->builtin_code);
  memcpy(n->p.reduce.axes, reduced, sizeof(reduced));
  if (target != out) return lower_reshape_node(lw, target, out);
  return 0;
}

static int encode_reduce(Executor* ex, int node) {
  const GNode* n = &ex->g.nodes[node];
  const int* r = n->p.reduce.axes;
  KernelVariant v;
  select_reduce(ex->dev, &ex->g, n, &v);
  cl_kernel k = ex_dispatch_variant(ex, &v, node);
  if (!k) return -1;
  KArgs a = {k, 0, CL_SUCCESS, (int)v.total};
  karg_mem(&a, ex_tensor_mem(ex, n->inputs[0]));
  karg_mem(&a, ex_tensor_mem(ex, n->outputs[0]));
  karg_shape(&a, ex->g.tensors[n->inputs[0]].shape);
  karg_shape(&a, ex->g.tensors[n->outputs[0]].shape);
  karg_int4(&a, r[GD_W], r[GD_H], r[GD_C], r[GD_B]);
  karg_int(&a, n->p.reduce.op);
  karg_int(&a, a.total);
  return karg_done(ex, &a);
}
