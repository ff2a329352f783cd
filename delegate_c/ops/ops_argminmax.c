/* ARG_MAX and ARG_MIN over one constant axis (opencl_kernels/argminmax.cl).
 * The index is computed into the input's shape with the axis kept at
 * size 1 and reshaped to TFLite's output (the axis dropped); inside the
 * partition it is a float like every value, and the boundary writes it
 * out as int32 or int64. */
#include <string.h>

#include "encode/encode.h"
#include "ops/op_table.h"
#include "model/tflite_builtins.h"
#include "ops/op_kinds.h"

/* The graph ops this file encodes (graph.h: a node points at its op). */
static int encode_arg_minmax(Encoder* ex, int node);
/* index of the max/min along one axis, as a float: p.arg */
const GOpDesc kGOpArgMinmax = {"ARG_MINMAX", encode_arg_minmax};

/* An index above 2^24 has no exact float. */
#define ARG_MAX_AXIS_SIZE (1 << 24)

typedef struct ArgParams {
  int axis4;                   /* the BHWC axis reduced */
  int out_dims[4], out_rank;   /* TFLite's output dims: the input's without the axis */
} ArgParams;

static int parse_arg_minmax(const NodeInfo* ni, void* out) {
  ArgParams* p = out;
  if (!ni->node->builtin_data) return reason(ni, "missing parameters");
  if (check_io(ni, 2, 1)) return -1;
  int dims[8], axis[8], count;
  int rank = mv_dims(ni->mv, ni_input(ni, 0), dims, 8);
  if (rank < 1 || rank > 4) return reason(ni, "input 0 must have rank 1-4, has %d", rank);
  int t = ni_input(ni, 1);
  if (t < 0 || !mv_is_const(ni->mv, t)) return reason(ni, "the axis (input 1) must be a constant");
  char err[200];
  if (mv_const_ints(ni->mv, t, axis, 8, &count, err, sizeof(err))) return reason(ni, "axis: %s", err);
  if (count != 1) return reason(ni, "the axis holds %d values; 1 expected", count);
  if (axis[0] < -rank || axis[0] >= rank) return reason(ni, "axis %d is outside [%d, %d)", axis[0], -rank, rank);
  int a = axis[0] < 0 ? axis[0] + rank : axis[0];
  if (dims[a] > ARG_MAX_AXIS_SIZE)
    return reason(ni, "the axis has size %d; indices above 2^24 are not exact as the partition's floats", dims[a]);
  p->axis4 = axis_to_bhwc(a, rank);
  p->out_rank = 0;
  for (int d = 0; d < rank; ++d)
    if (d != a) p->out_dims[p->out_rank++] = dims[d];
  return 0;
}

static int check_arg_minmax(const NodeInfo* ni) {
  const ArgParams* p = ni->params;
  int out = ni_output(ni, 0);
  int type = (int)mv_tensor(ni->mv, out)->type;
  if (type != kTfLiteInt32 && type != kTfLiteInt64)
    return reason(ni, "output has type %s; INT32 or INT64 is required", type_name(type));
  /* A delegated GATHER/ONE_HOT reads raw int32 partition inputs, not the
   * float-valued indices this op leaves inside the partition. */
  if (feeds_indices(ni->mv, out))
    return reason(ni, "its output is the indices of a GATHER/ONE_HOT, which read raw int32 partition inputs");
  int declared[8];
  int declared_rank = mv_dims(ni->mv, out, declared, 8);
  if (declared_rank != p->out_rank)
    return reason(ni, "output has rank %d; dropping the axis gives rank %d", declared_rank, p->out_rank);
  return 0;
}

static int infer_arg_minmax(const NodeInfo* ni, int k, int shape[4]) {
  const ArgParams* p = ni->params;
  (void)k;
  return shape_from_dims(p->out_dims, p->out_rank, shape);
}

static int lower_arg_minmax(Lowering* lw, const NodeInfo* ni) {
  const ArgParams* p = ni->params;
  int in = lower_tensor(lw, ni_input(ni, 0));
  int out = in < 0 ? -1 : lower_tensor(lw, ni_output(ni, 0));
  if (out < 0) return -1;
  int kept[4];
  memcpy(kept, lw->g->tensors[in].shape, sizeof(kept));
  kept[p->axis4] = 1;
  int target = out;
  if (memcmp(kept, lw->g->tensors[out].shape, sizeof(kept)) != 0) {
    target = graph_add_tensor(lw->g, kept, 4);
    if (target < 0) return lower_error(lw, "out of memory");
  }
  GNode* n = graph_add_node_io(lw->g, GOP_ARG_MINMAX, in, target);
  if (!n) return lower_error(lw, "out of memory");
  n->p.arg.axis = p->axis4;
  n->p.arg.is_min = ni->reg->builtin_code == kBuiltinArgMin;
  if (target != out) return lower_reshape_node(lw, target, out);
  return 0;
}

static int encode_arg_minmax(Encoder* ex, int node) {
  /* Kernel axis order (x, y, c, b). */
  static const int kToKernel[4] = {3, 1, 0, 2};
  const GNode* n = &ex->g.nodes[node];
  const GTensor* dst = &ex->g.tensors[n->outputs[0]];
  KernelRef k = ex_dispatch(ex, "argminmax.cl", "arg_minmax", phwc4_items(dst->shape), node);
  if (!k) return -1;
  KArgs a = {k, 0, CL_SUCCESS, 0};
  karg_mem(&a, ex_tensor_mem(ex, n->inputs[0]));
  karg_mem(&a, ex_tensor_mem(ex, n->outputs[0]));
  karg_shape(&a, ex->g.tensors[n->inputs[0]].shape);
  karg_shape(&a, dst->shape);
  karg_int(&a, kToKernel[n->p.arg.axis]);
  karg_int(&a, n->p.arg.is_min);
  karg_int(&a, (int)phwc4_items(dst->shape));
  return karg_done(ex, &a);
}

/* The TFLite ops this file runs (op_table.c lists them). */
/* ARG_MAX and ARG_MIN share theirs. */
#define ARG_CONSTRAINTS \
  "constant axis (1 value, int32/int64, negative allowed) of a rank 1-4 input; INT32 or INT64 output, also at a " \
  "partition boundary (not as GATHER/ONE_HOT indices); ties give the first index; the index travels as a float: " \
  "exact to 2^24 (FP16 storage: axes up to 2048)"
const OpDef kOpArgMax = {.builtin_code = kBuiltinArgMax, .max_version = 2,
    .parse = parse_arg_minmax, .params_size = sizeof(ArgParams), .check = check_arg_minmax,
    .infer = infer_arg_minmax, .lower = lower_arg_minmax,
    .extra_output_types = "INT32/INT64",
    .constraints = ARG_CONSTRAINTS};
const OpDef kOpArgMin = {.builtin_code = kBuiltinArgMin, .max_version = 2,
    .parse = parse_arg_minmax, .params_size = sizeof(ArgParams), .check = check_arg_minmax,
    .infer = infer_arg_minmax, .lower = lower_arg_minmax,
    .extra_output_types = "INT32/INT64",
    .constraints = ARG_CONSTRAINTS};
