/* REVERSE_V2: a remap (layout.cl) that reads the reversed axis from its
 * end with stride -1. */
#include "ops/op_table.h"
#include "model/tflite_builtins.h"

typedef struct ReverseParams {
  int axis; /* BHWC axis to reverse */
} ReverseParams;

/* The one parse, shared by check and lower (OpDef.parse). */
static int parse_reverse(const NodeInfo* ni, void* out) {
  ReverseParams* p = out;
  if (check_io(ni, 2, 1)) return -1;
  int dims[8], axis[8], count;
  int rank = mv_dims(ni->mv, ni_input(ni, 0), dims, 8);
  if (rank < 1 || rank > 4) return reason(ni, "input 0 must have rank 1-4, has %d", rank);
  /* TFLite's kernel refuses an int64 axis. */
  if (check_const_input(ni, 1, "axis", kTfLiteInt32)) return -1;
  char err[200];
  if (mv_const_ints(ni->mv, ni_input(ni, 1), axis, 8, &count, err, sizeof(err))) return reason(ni, "axis: %s", err);
  /* TFLite 2.x's kernel reverses only the first of several axes, LiteRT's
   * only contiguous ones (and none segfaults 2.x): one axis is what both
   * runtimes agree on. */
  if (count != 1) return reason(ni, "the axis tensor holds %d values; exactly 1 is supported", count);
  if (axis[0] < -rank || axis[0] >= rank) return reason(ni, "axis %d is outside [%d, %d)", axis[0], -rank, rank);
  p->axis = axis_to_bhwc(axis[0] < 0 ? axis[0] + rank : axis[0], rank);
  return 0;
}

static int lower_reverse(Lowering* lw, const NodeInfo* ni) {
  const ReverseParams* p = ni->params;
  int in = lower_tensor(lw, ni_input(ni, 0));
  int out = in < 0 ? -1 : lower_tensor(lw, ni_output(ni, 0));
  if (out < 0) return -1;
  GNode* n = lower_remap_node(lw, in, out, REMAP_SLICE);
  if (!n) return -1;
  n->p.remap.begin[p->axis] = lw->g->tensors[in].shape[p->axis] - 1;
  n->p.remap.stride[p->axis] = -1;
  return 0;
}

/* The TFLite ops this file runs (op_table.c lists them). */
const OpDef kOpReverseV2 = {.builtin_code = kBuiltinReverseV2, .max_version = 2,
    .parse = parse_reverse, .params_size = sizeof(ReverseParams), .infer = infer_input_shape,
    .lower = lower_reverse,
    .constraints = "constant int32 axis tensor of exactly 1 axis (negative allowed) of a rank 1-4 input; several axes stay "
     "on the CPU (the TFLite 2.x kernel reverses only the first, LiteRT's only contiguous ones)"};
