/* CUMSUM along one constant axis, with the exclusive and reverse flags
 * (opencl_kernels/reduce.cl: one work-item walks each line). */
#include "encode/encode.h"
#include "ops/op_table.h"
#include "model/tflite_builtins.h"
#include "ops/op_kinds.h"

/* The graph ops this file encodes (graph.h: a node points at its op). */
static int encode_cumsum(Encoder* ex, int node);
const GOpDesc kGOpCumsum = {"CUMSUM", encode_cumsum};

typedef struct CumsumParams {
  int axis; /* BHWC axis to scan */
} CumsumParams;

static int parse_cumsum(const NodeInfo* ni, void* out) {
  CumsumParams* p = out;
  if (!ni->node->builtin_data) return reason(ni, "missing parameters");
  if (check_io(ni, 2, 1) || check_const_input(ni, 1, "axis", kTfLiteInt32)) return -1;
  int dims[8];
  int rank = mv_dims(ni->mv, ni_input(ni, 0), dims, 8);
  if (rank < 1 || rank > 4) return reason(ni, "input 0 must have rank 1-4, has %d", rank);
  int axis[8], count;
  char err[200];
  if (mv_const_ints(ni->mv, ni_input(ni, 1), axis, 8, &count, err, sizeof(err)))
    return reason(ni, "axis (input 1): %s", err);
  if (count != 1) return reason(ni, "axis (input 1) must hold one value, holds %d", count);
  if (axis[0] < -rank || axis[0] >= rank) return reason(ni, "axis %d is out of range for rank %d", axis[0], rank);
  p->axis = axis_to_bhwc(axis[0] < 0 ? axis[0] + rank : axis[0], rank);
  return 0;
}

static int lower_cumsum(Lowering* lw, const NodeInfo* ni) {
  const TfLiteCumsumParams* tp = ni->node->builtin_data;
  const CumsumParams* p = ni->params;
  int in = lower_tensor(lw, ni_input(ni, 0));
  int out = in < 0 ? -1 : lower_tensor(lw, ni_output(ni, 0));
  if (out < 0) return -1;
  GNode* n = graph_add_node_io(lw->g, GOP_CUMSUM, in, out);
  if (!n) return lower_error(lw, "out of memory");
  n->p.cumsum.axis = p->axis;
  n->p.cumsum.exclusive = tp->exclusive;
  n->p.cumsum.reverse = tp->reverse;
  return 0;
}

static int encode_cumsum(Encoder* ex, int node) {
  const GNode* n = &ex->g.nodes[node];
  const int* s = ex->g.tensors[n->inputs[0]].shape;
  int lines[4] = {s[0], s[1], s[2], s[3]};
  lines[n->p.cumsum.axis] = 1;
  static const int kAxisCode[4] = {3, 1, 0, 2}; /* GD_B, GD_H, GD_W, GD_C -> the kernel's b, y, x, c */
  size_t items = phwc4_items(lines);
  KernelRef k = ex_dispatch(ex, "reduce.cl", "cumsum", items, node);
  if (!k) return -1;
  KArgs a = {k, 0, CL_SUCCESS, 0};
  karg_mem(&a, ex_tensor_mem(ex, n->inputs[0]));
  karg_mem(&a, ex_tensor_mem(ex, n->outputs[0]));
  karg_shape(&a, s);
  karg_shape(&a, lines);
  karg_int(&a, kAxisCode[n->p.cumsum.axis]);
  karg_int(&a, n->p.cumsum.exclusive);
  karg_int(&a, n->p.cumsum.reverse);
  karg_int(&a, (int)items);
  return karg_done(ex, &a);
}

/* The TFLite ops this file runs (op_table.c lists them). */
const OpDef kOpCumsum = {.builtin_code = kBuiltinCumsum, .max_version = 1,
    .parse = parse_cumsum, .params_size = sizeof(CumsumParams), .infer = infer_input_shape, .lower = lower_cumsum,
    .constraints = "constant int32 axis (any, negative allowed) of a rank 1-4 tensor; exclusive and reverse; float32 sums"};
