/* REVERSE_V2: a remap (layout.cl) that reads the reversed axis from its
 * end with stride -1. */
#include "op_table.h"
#include "tflite_builtins.h"

/* The BHWC axis to reverse, or -1 with a reason. */
static int reverse_axis(const NodeInfo* ni) {
  int dims[8], axis[8], count;
  int rank = mv_dims(ni->mv, ni_input(ni, 0), dims, 8);
  if (rank < 1 || rank > 4) return reason(ni, "input 0 must have rank 1-4, has %d", rank);
  /* TFLite's kernel refuses an int64 axis. */
  if (check_const_input(ni, 1, "axis", kTfLiteInt32)) return -1;
  int t = ni_input(ni, 1);
  char err[200];
  if (mv_const_ints(ni->mv, t, axis, 8, &count, err, sizeof(err))) return reason(ni, "axis: %s", err);
  /* TFLite 2.x's kernel reverses only the first of several axes, LiteRT's
   * only contiguous ones (and none segfaults 2.x): one axis is what both
   * runtimes agree on. */
  if (count != 1) return reason(ni, "the axis tensor holds %d values; exactly 1 is supported", count);
  if (axis[0] < -rank || axis[0] >= rank) return reason(ni, "axis %d is outside [%d, %d)", axis[0], -rank, rank);
  return axis_to_bhwc(axis[0] < 0 ? axis[0] + rank : axis[0], rank);
}

int check_reverse(const NodeInfo* ni) {
  if (check_io(ni, 2, 1) || reverse_axis(ni) < 0) return -1;
  int in[4];
  if (ni_shape(ni, ni_input(ni, 0), in) < 0) return reason(ni, "input 0 has no usable shape");
  return check_output_shape(ni, ni_output(ni, 0), in);
}

int lower_reverse(Lowering* lw, const NodeInfo* ni) {
  char why[256];
  NodeInfo quiet = *ni;
  quiet.reason = why;
  quiet.reason_len = sizeof(why);
  int axis = reverse_axis(&quiet);
  if (axis < 0) return lower_error(lw, "%s", why);
  int in = lower_tensor(lw, ni_input(ni, 0));
  int out = in < 0 ? -1 : lower_tensor(lw, ni_output(ni, 0));
  if (out < 0) return -1;
  GNode* n = lower_remap_node(lw, in, out, REMAP_SLICE);
  if (!n) return -1;
  n->p.remap.begin[axis] = lw->g->tensors[in].shape[axis] - 1;
  n->p.remap.stride[axis] = -1;
  return 0;
}
