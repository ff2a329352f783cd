/* SHAPE: never lowered. Its value depends only on its input's dims, so
 * const_fold.c folds it (int_fold.c), with the integer ops computed from
 * it, whenever every reader is delegated; this check explains why any
 * other SHAPE stays on the CPU. */
#include "model/int_fold.h"
#include "ops/op_table.h"
#include "model/tflite_builtins.h"

static int check_shape(const NodeInfo* ni) {
  if (ni_num_inputs(ni) != 1 || ni_num_outputs(ni) != 1)
    return reason(ni, "needs 1 input and 1 output, has %d and %d", ni_num_inputs(ni), ni_num_outputs(ni));
  int in = ni_input(ni, 0), out = ni_output(ni, 0);
  if (in < 0 || in >= ni->mv->num_tensors || out < 0 || out >= ni->mv->num_tensors)
    return reason(ni, "refers to a tensor that does not exist");
  int dims[INT_FOLD_MAX];
  int rank = mv_dims(ni->mv, in, dims, INT_FOLD_MAX);
  if (rank < 0) return reason(ni, "input 0 has no shape");
  for (int d = 0; d < rank; ++d)
    if (dims[d] < 0) return reason(ni, "input 0 has an unknown dimension %d", d);
  int type = mv_tensor(ni->mv, out)->type;
  if (type != kTfLiteInt32 && type != kTfLiteInt64)
    return reason(ni, "output has type %s; INT32 or INT64 expected", type_name(type));
  if ((size_t)rank != mv_elements(ni->mv, out))
    return reason(ni, "output holds %zu values for a rank-%d input", mv_elements(ni->mv, out), rank);
  return reason(ni, "folded to a constant only when every reader of its output is delegated");
}

/* The TFLite ops this file runs (op_table.c lists them). */
const OpDef kOpShape = {.builtin_code = kBuiltinShape, .max_version = 1, .check = check_shape,
    .constraints = "folded to a constant at prepare (never run per invoke) when every reader is delegated: the "
                   "input's current dims, re-read after a resize; so are the int32/int64 ops computed from it "
                   "(on vectors of at most 64 values, every input constant or folded):" INT_FOLD_OPS_TEXT};
