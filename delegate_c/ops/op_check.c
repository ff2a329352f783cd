/* The support check of one node, which decides what is delegated: the op
 * known (op_table.c) and within its version, the tensor-level gate that
 * every op shares (types, ranks, sizes; OpDef's extra types and index
 * inputs), then the op's own check. */
#include <stdio.h>
#include <string.h>

#include "ops/op_table.h"
#include "model/tflite_builtins.h"

/* A constant the delegate can turn into float32. */
static int const_is_float_convertible(const ModelView* mv, int t) {
  const TfLiteTensor* x = mv_tensor(mv, t);
  if (mv->const_kind[t] == CONST_FOLDED) return 1;
  if (x->type == kTfLiteFloat32 || x->type == kTfLiteFloat16) return 1;
  /* Quantized constants, including the int8 weights of dynamic-range
   * (hybrid) models, are dequantized at prepare whatever ENABLE_QUANT says:
   * upstream's type gate checks runtime tensors only. */
  if ((x->type == kTfLiteInt8 || x->type == kTfLiteUInt8) && x->quantization.type == kTfLiteAffineQuantization)
    return 1;
  return 0;
}

/* Types other than float32 that input/output k of the op may have as a
 * runtime tensor (OpDef.extra_*: bool is one byte, 0/1), or NULL. Inside
 * the partition they are floats; the executor converts them at the
 * partition boundary. */
static const char* extra_types(const OpDef* d, int is_output, int k) {
  if (is_output) return d->extra_output_types;
  return k < 32 && (d->extra_inputs >> k & 1u) ? d->extra_input_types : NULL;
}

/* Is `type` allowed for input/output k of the node (runtime or constant)? */
static int type_allowed(const OpDef* d, int is_output, int k, int type) {
  if (type == kTfLiteFloat32) return 1;
  const char* extra = extra_types(d, is_output, k);
  if (!extra) return 0;
  if (type == kTfLiteBool) return strstr(extra, "BOOL") != NULL;
  if (type == kTfLiteInt32) return strstr(extra, "INT32") != NULL;
  if (type == kTfLiteInt64) return strstr(extra, "INT64") != NULL;
  return 0;
}

/* Tensor-level gate shared by every op: runtime tensors must be float32
 * (or a type in extra_types, or per-tensor quantized int8/uint8 with
 * ENABLE_QUANT) with a static shape of rank <= 4. Constants are checked by
 * each op. */
static int check_tensors(const NodeInfo* ni, const OpDef* d) {
  const ModelView* mv = ni->mv;
  for (int pass = 0; pass < 2; ++pass) {
    int n = pass == 0 ? ni_num_inputs(ni) : ni_num_outputs(ni);
    const char* what = pass == 0 ? "input" : "output";
    for (int k = 0; k < n; ++k) {
      int t = pass == 0 ? ni_input(ni, k) : ni_output(ni, k);
      if (t == kTfLiteOptionalTensor) continue;
      if (t < 0 || t >= mv->num_tensors) return reason(ni, "%s %d refers to tensor %d, which does not exist", what, k, t);
      const TfLiteTensor* x = mv_tensor(mv, t);
      if (!x->dims) return reason(ni, "%s %d has no shape", what, k);
      if (x->dims->size > 4)
        return reason(ni, "%s %d has rank %d; at most 4 is supported", what, k, x->dims->size);
      for (int d = 0; d < x->dims->size; ++d) {
        if (x->dims->data[d] <= 0)
          return reason(ni, "%s %d has a zero-size or unknown dimension (dim %d = %d)", what, k, d, x->dims->data[d]);
      }
      int s[4];
      shape_from_dims(x->dims->data, x->dims->size, s);
      const int64_t s64[4] = {s[0], s[1], s[2], s[3]};
      char which[160];
      snprintf(which, sizeof(which), "%s %d (%s)", what, k, x->name ? x->name : "?");
      if (check_storage(ni, which, s64)) return -1;
      if (pass == 0 && mv_is_const(mv, t)) continue;
      if (pass == 0 && x->type == kTfLiteInt32 && k < 32 && (d->index_inputs >> k & 1u)) continue;
      if (x->type == kTfLiteInt8 || x->type == kTfLiteUInt8) {
        /* Quantized graphs run through a float view (ops_quantize.c). */
        if (!mv->enable_quant)
          return reason(ni, "%s %d (%s) has type %s; quantized runtime tensors run on the GPU only with "
                        "ENABLE_QUANT (option gpu_experimental_enable_quant), which is off", what, k,
                        x->name ? x->name : "?", type_name(x->type));
        const char* problem = quant_tensor_problem(mv, t);
        if (problem) return reason(ni, "%s %d (%s, %s) %s", what, k, x->name ? x->name : "?", type_name(x->type), problem);
        continue;
      }
      if (!type_allowed(d, pass, k, x->type)) {
        const char* extra = extra_types(d, pass, k);
        return reason(ni, "%s %d (%s) has type %s; only FLOAT32%s%s runtime tensors are supported (and "
                      "INT8/UINT8 with ENABLE_QUANT)", what, k, x->name ? x->name : "?", type_name(x->type),
                      extra ? " or " : "", extra ? extra : "");
      }
    }
  }
  return 0;
}

int op_check_node(const NodeInfo* ni) {
  const OpDef* d = op_lookup(ni->reg);
  if (!d || !d->lower) {
    if (ni->reg->builtin_code == kBuiltinCustom)
      return reason(ni, "custom op %s is not supported", ni->reg->custom_name ? ni->reg->custom_name : "?");
    if (d && d->check) return d->check(ni); /* folded ops (DENSIFY, SHAPE): why this one is not */
    return reason(ni, "Operation is not supported.");
  }
  if (ni->reg->version > d->max_version)
    return reason(ni, "Max version supported: %d. Requested version %d.", d->max_version, ni->reg->version);
  if (check_tensors(ni, d)) return -1;
  for (int k = 0; k < ni_num_inputs(ni); ++k) {
    int t = ni_input(ni, k);
    if (t >= 0 && mv_is_const(ni->mv, t) && mv_tensor(ni->mv, t)->type != kTfLiteInt32 &&
        mv_tensor(ni->mv, t)->type != kTfLiteInt64 && !const_is_float_convertible(ni->mv, t) &&
        !(mv_tensor(ni->mv, t)->type == kTfLiteBool && type_allowed(d, 0, k, kTfLiteBool)))
      return reason(ni, "constant input %d has type %s, which cannot be converted to float", k,
                    type_name(mv_tensor(ni->mv, t)->type));
    /* A sparse constant read directly (FULLY_CONNECTED takes sparse weights)
     * is densified when lowered: that must not be able to fail. */
    char why[256];
    if (t >= 0 && ni->mv->const_kind[t] == CONST_MODEL && mv_tensor(ni->mv, t)->sparsity &&
        mv_sparse_check(ni->mv, t, why, sizeof(why)))
      return reason(ni, "constant input %d (%s) has malformed sparsity metadata: %s", k,
                    mv_tensor(ni->mv, t)->name ? mv_tensor(ni->mv, t)->name : "?", why);
  }
  NodeInfo parsed = *ni;
  OpParams params;
  if (op_parse(d, &parsed, &params) || (d->check && d->check(&parsed))) return -1;
  /* The gate, not the op, settles output shapes from an op's infer. */
  for (int k = 0; d->infer && k < ni_num_outputs(&parsed); ++k) {
    int shape[4];
    if (d->infer(&parsed, k, shape) || check_output_shape(&parsed, ni_output(&parsed, k), shape)) return -1;
  }
  return 0;
}

int op_parse(const OpDef* d, NodeInfo* ni, OpParams* buf) {
  ni->params = NULL;
  if (!d->parse) return 0;
  if (d->params_size > sizeof(*buf))
    return reason(ni, "internal error: the op's parameters need %zu bytes, more than OP_PARAMS_MAX", d->params_size);
  memset(buf, 0, sizeof(*buf));
  if (d->parse(ni, buf)) return -1;
  ni->params = buf;
  return 0;
}
