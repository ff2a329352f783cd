/* DENSIFY: never lowered. A DENSIFY of a well-formed constant sparse tensor
 * is folded (const_fold.c decides, validating the whole encoding first) and
 * densified once at prepare; this check explains why any other one stays on
 * the CPU. */
#include "ops/op_table.h"
#include "model/tflite_builtins.h"

static int check_densify(const NodeInfo* ni) {
  if (ni_num_inputs(ni) != 1 || ni_num_outputs(ni) != 1)
    return reason(ni, "needs 1 input and 1 output, has %d and %d", ni_num_inputs(ni), ni_num_outputs(ni));
  int in = ni_input(ni, 0);
  if (in < 0 || in >= ni->mv->num_tensors) return reason(ni, "input 0 refers to tensor %d, which does not exist", in);
  const TfLiteTensor* t = mv_tensor(ni->mv, in);
  const char* name = t->name ? t->name : "?";
  if (!mv_is_const(ni->mv, in))
    return reason(ni, "input 0 (%s) is a runtime tensor; only DENSIFY of a constant sparse tensor is supported", name);
  if (!t->sparsity)
    return reason(ni, "input 0 (%s) has no sparsity metadata; only DENSIFY of a constant sparse tensor is supported",
                  name);
  char why[256];
  if (mv_sparse_check(ni->mv, in, why, sizeof(why)))
    return reason(ni, "the sparse constant %s is malformed (%s); the CPU densifies it", name, why);
  /* Folding was refused for a reason the encoding does not show. */
  return reason(ni, "only DENSIFY of a constant sparse tensor whose readers are all delegated");
}

/* The TFLite ops this file runs (op_table.c lists them). */
const OpDef kOpDensify = {.builtin_code = kBuiltinDensify, .max_version = 1, .check = check_densify,
    .constraints = "only of a constant sparse tensor: densified once at prepare"};
