#include "op_table.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tflite_builtins.h"

/* Version limits follow upstream 2.14's GPU delegate (model_builder.cc);
 * RESHAPE and PRELU are v1 there too. Upstream sets none for MEAN and
 * DEPTH_TO_SPACE: theirs are the schema's 2.14 versions, whose later ones
 * only add integer types (refused by the tensor check anyway). */
const OpDef kOps[] = {
    {kBuiltinAdd, NULL, 2, check_binary, lower_binary,
     "2 inputs (runtime or constant) with TFLite broadcasting; fused activation"},
    {kBuiltinAveragePool2d, NULL, 2, check_pool, lower_pool, "filter and stride > 0; SAME/VALID; fused activation"},
    {kBuiltinConcatenation, NULL, 2, check_concat, lower_concat,
     "any axis of a rank <= 4 tensor; up to 16 inputs; fused activation"},
    {kBuiltinConv2d, NULL, 6, check_conv2d, lower_conv2d,
     "constant weights (float32, or float16/int8 behind a folded DEQUANTIZE); stride, dilation >= 1; "
     "SAME/VALID; optional bias; fused activation"},
    {kBuiltinDepthwiseConv2d, NULL, 6, check_depthwise, lower_depthwise,
     "constant weights; any depth_multiplier (upstream: 1 unless one input channel); stride, dilation >= 1; "
     "fused activation"},
    {kBuiltinDepthToSpace, NULL, 2, check_depth_to_space, lower_depth_to_space,
     "rank-4 input; block_size > 1 dividing the channels evenly (DCR order)"},
    {kBuiltinDequantize, NULL, 3, NULL, NULL,
     "only of a constant float16 (or int8/uint8 with ENABLE_QUANT) tensor: folded into a float constant at "
     "prepare, never run per invoke"},
    {kBuiltinDensify, NULL, 1, NULL, NULL, "only of a constant sparse tensor: densified once at prepare"},
    {kBuiltinFullyConnected, NULL, 9, check_fully_connected, lower_fully_connected,
     "constant float weights [O,K] (float32, or float16/int8 behind a folded DEQUANTIZE; no hybrid int8 "
     "weights); default weights format; optional bias; input of any rank <= 4 with a multiple of K elements; "
     "keep_num_dims; fused activation"},
    {kBuiltinHardSwish, NULL, 1, check_unary, lower_unary, "1 runtime input"},
    {kBuiltinLogistic, NULL, 2, check_unary, lower_unary, "1 runtime input"},
    {kBuiltinMaxPool2d, NULL, 2, check_pool, lower_pool, "filter and stride > 0; SAME/VALID; fused activation"},
    {kBuiltinMaximum, NULL, 2, check_binary, lower_binary, "2 inputs with broadcasting"},
    {kBuiltinMean, NULL, 3, check_mean, lower_mean,
     "constant int32 axes, any combination of the (up to 4) axes; keep_dims true or false; float32 sums"},
    {kBuiltinMinimum, NULL, 2, check_binary, lower_binary, "2 inputs with broadcasting"},
    {kBuiltinMul, NULL, 3, check_binary, lower_binary, "2 inputs with broadcasting; fused activation"},
    {kBuiltinPad, NULL, 2, check_pad, lower_pad, "constant paddings on any of the (up to 4) axes; zero fill"},
    {kBuiltinPrelu, NULL, 1, check_binary, lower_binary, "alpha constant or runtime, broadcast to the input"},
    {kBuiltinRelu, NULL, 2, check_unary, lower_unary, "1 runtime input"},
    {kBuiltinRelu6, NULL, 2, check_unary, lower_unary, "1 runtime input"},
    {kBuiltinReluN1To1, NULL, 1, check_unary, lower_unary, "1 runtime input"},
    {kBuiltinReshape, NULL, 1, check_reshape, lower_reshape, "same element count; rank <= 4 in and out"},
    {kBuiltinResizeBilinear, NULL, 3, check_resize_bilinear, lower_resize_bilinear,
     "rank-4 input; constant int32 size [2]; align_corners or half_pixel_centers (not both)"},
    {kBuiltinStridedSlice, NULL, 4, check_strided_slice, lower_strided_slice,
     "constant begin/end/strides; begin/end masks; positive strides; ellipsis/new-axis masks 0; "
     "shrink_axis_mask supported"},
    {kBuiltinSub, NULL, 2, check_binary, lower_binary, "2 inputs with broadcasting; fused activation"},
    {kBuiltinTanh, NULL, 2, check_unary, lower_unary, "1 runtime input"},
};
const int kNumOps = sizeof(kOps) / sizeof(kOps[0]);

const OpDef* op_lookup(const TfLiteRegistration* reg) {
  for (int i = 0; i < kNumOps; ++i) {
    const OpDef* d = &kOps[i];
    if (d->builtin_code != reg->builtin_code) continue;
    if (d->custom_name && (!reg->custom_name || strcmp(d->custom_name, reg->custom_name) != 0)) continue;
    return d;
  }
  return NULL;
}

int reason(const NodeInfo* ni, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(ni->reason, ni->reason_len, fmt, ap);
  va_end(ap);
  return -1;
}

int lower_error(Lowering* lw, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(lw->err, lw->errlen, fmt, ap);
  va_end(ap);
  return -1;
}

int ni_num_inputs(const NodeInfo* ni) { return ni->node->inputs ? ni->node->inputs->size : 0; }
int ni_num_outputs(const NodeInfo* ni) { return ni->node->outputs ? ni->node->outputs->size : 0; }
int ni_input(const NodeInfo* ni, int k) { return k < ni_num_inputs(ni) ? ni->node->inputs->data[k] : -1; }
int ni_output(const NodeInfo* ni, int k) { return k < ni_num_outputs(ni) ? ni->node->outputs->data[k] : -1; }

int ni_shape(const NodeInfo* ni, int tensor, int out[4]) {
  int dims[8];
  int rank = mv_dims(ni->mv, tensor, dims, 8);
  if (rank < 0 || shape_from_dims(dims, rank, out)) return -1;
  return rank;
}

int check_activation(const NodeInfo* ni, int act) {
  if (act == kTfLiteActNone || act == kTfLiteActRelu || act == kTfLiteActReluN1To1 || act == kTfLiteActRelu6)
    return 0;
  /* TFLite's CPU kernels clamp with CalculateActivationRange, which ignores
   * TANH and SIGMOID; keeping such nodes on the CPU keeps results identical. */
  if (act == kTfLiteActTanh || act == kTfLiteActSigmoid)
    return reason(ni, "fused activation %s is ignored by the CPU kernels; the node stays on the CPU to match them",
                  act == kTfLiteActTanh ? "TANH" : "SIGMOID");
  return reason(ni, "fused activation %d is not supported (SIGN_BIT or unknown)", act);
}

int check_io(const NodeInfo* ni, int n_in, int n_out) {
  if (ni_num_inputs(ni) != n_in || ni_num_outputs(ni) != n_out)
    return reason(ni, "needs %d input(s) and %d output(s), has %d and %d", n_in, n_out, ni_num_inputs(ni),
                  ni_num_outputs(ni));
  if (ni_input(ni, 0) < 0 || mv_is_const(ni->mv, ni_input(ni, 0)))
    return reason(ni, "input 0 is a constant or missing; a runtime input is required");
  return 0;
}

int check_const_input(const NodeInfo* ni, int k, const char* what, int type) {
  int t = ni_input(ni, k);
  if (t < 0) return reason(ni, "input %d (%s) is missing", k, what);
  if (!mv_is_const(ni->mv, t)) return reason(ni, "input %d (%s) is a runtime tensor; it must be constant", k, what);
  if ((int)mv_tensor(ni->mv, t)->type != type)
    return reason(ni, "input %d (%s) has type %s; %s is required", k, what, type_name(mv_tensor(ni->mv, t)->type),
                  type_name(type));
  return 0;
}

int set_output_dims(const NodeInfo* ni, int tensor, const int* dims, int rank) {
  TfLiteContext* ctx = ni->mv->ctx;
  TfLiteTensor* t = &ctx->tensors[tensor];
  if (ni->mv->inferred) ++*ni->mv->inferred;
  if (t->dims && t->dims->size == rank && memcmp(t->dims->data, dims, (size_t)rank * sizeof(int)) == 0) return 0;
  for (int d = 0; d < rank; ++d)
    if (dims[d] <= 0) return reason(ni, "the new output shape has a zero-size dimension (dim %d = %d)", d, dims[d]);
  /* The runtime frees it with TfLiteIntArrayFree (free). */
  TfLiteIntArray* a = malloc(sizeof(int) * (size_t)(rank + 1));
  if (!a) return reason(ni, "out of memory");
  a->size = rank;
  memcpy(a->data, dims, (size_t)rank * sizeof(int));
  if (ctx->ResizeTensor(ctx, t, a) != kTfLiteOk)
    return reason(ni, "the runtime refused to resize output tensor %s", t->name ? t->name : "?");
  return 0;
}

int check_output_shape(const NodeInfo* ni, int tensor, const int e[4]) {
  int s[4];
  int rank = ni_shape(ni, tensor, s);
  if (rank < 0) return reason(ni, "output has no usable shape");
  if (ni->mv->infer_shapes && ni->mv->inferred && memcmp(s, e, sizeof(s)) == 0) ++*ni->mv->inferred;
  if (ni->mv->infer_shapes && memcmp(s, e, sizeof(s)) != 0) {
    /* Keep the declared rank: BHWC right-aligned, dropped axes must be 1. */
    for (int d = 0; d < 4 - rank; ++d)
      if (e[d] != 1)
        return reason(ni, "the new output shape [%d,%d,%d,%d] does not fit the output's rank %d", e[0], e[1], e[2],
                      e[3], rank);
    return set_output_dims(ni, tensor, e + 4 - rank, rank);
  }
  if (memcmp(s, e, sizeof(s)) != 0)
    return reason(ni, "declared output shape [%d,%d,%d,%d] differs from the computed [%d,%d,%d,%d]", s[0], s[1],
                  s[2], s[3], e[0], e[1], e[2], e[3]);
  return 0;
}

/* A constant the delegate can turn into float32. */
static int const_is_float_convertible(const ModelView* mv, int t) {
  const TfLiteTensor* x = mv_tensor(mv, t);
  if (mv->const_kind[t] == CONST_FOLDED) return 1;
  if (x->type == kTfLiteFloat32 || x->type == kTfLiteFloat16) return 1;
  if ((x->type == kTfLiteInt8 || x->type == kTfLiteUInt8) && mv->enable_quant &&
      x->quantization.type == kTfLiteAffineQuantization)
    return 1;
  return 0;
}

/* Tensor-level gate shared by every op: runtime tensors must be float32
 * with a static shape of rank <= 4. Constants are checked by each op. */
static int check_tensors(const NodeInfo* ni) {
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
      if (pass == 0 && mv_is_const(mv, t)) continue;
      if (x->type != kTfLiteFloat32)
        return reason(ni, "%s %d (%s) has type %s; only FLOAT32 runtime tensors are supported", what, k,
                      x->name ? x->name : "?", type_name(x->type));
    }
  }
  return 0;
}

int op_check_node(const NodeInfo* ni) {
  const OpDef* d = op_lookup(ni->reg);
  if (!d || !d->check) {
    if (ni->reg->builtin_code == kBuiltinCustom)
      return reason(ni, "custom op %s is not supported", ni->reg->custom_name ? ni->reg->custom_name : "?");
    if (ni->reg->builtin_code == kBuiltinDequantize) {
      int in = ni_input(ni, 0);
      const char* type = in >= 0 && in < ni->mv->num_tensors ? type_name(mv_tensor(ni->mv, in)->type) : "?";
      if (in >= 0 && in < ni->mv->num_tensors && !mv_is_const(ni->mv, in))
        return reason(ni, "only DEQUANTIZE of a constant is supported; input 0 (%s) is a runtime tensor", type);
      return reason(ni, "DEQUANTIZE of a %s constant is not supported%s", type,
                    ni->mv->enable_quant ? "" : " (ENABLE_QUANT is off)");
    }
    if (ni->reg->builtin_code == kBuiltinDensify) return reason(ni, "only DENSIFY of a constant sparse tensor");
    return reason(ni, "Operation is not supported.");
  }
  if (ni->reg->version > d->max_version)
    return reason(ni, "Max version supported: %d. Requested version %d.", d->max_version, ni->reg->version);
  if (check_tensors(ni)) return -1;
  for (int k = 0; k < ni_num_inputs(ni); ++k) {
    int t = ni_input(ni, k);
    if (t >= 0 && mv_is_const(ni->mv, t) && mv_tensor(ni->mv, t)->type != kTfLiteInt32 &&
        mv_tensor(ni->mv, t)->type != kTfLiteInt64 && !const_is_float_convertible(ni->mv, t))
      return reason(ni, "constant input %d has type %s, which cannot be converted to float", k,
                    type_name(mv_tensor(ni->mv, t)->type));
  }
  return d->check(ni);
}

int lower_tensor(Lowering* lw, int tflite_index) {
  if (tflite_index < 0 || tflite_index >= lw->mv->num_tensors)
    return lower_error(lw, "tensor index %d out of range", tflite_index);
  if (lw->map[tflite_index] >= 0) return lw->map[tflite_index];
  int dims[8], shape[4];
  int rank = mv_dims(lw->mv, tflite_index, dims, 8);
  if (rank < 0 || shape_from_dims(dims, rank, shape))
    return lower_error(lw, "tensor %d has an unsupported shape", tflite_index);
  int id = graph_add_tensor(lw->g, shape, rank);
  if (id < 0) return lower_error(lw, "out of memory");
  lw->g->tensors[id].tflite_index = tflite_index;
  if (mv_is_const(lw->mv, tflite_index) &&
      mv_const_float(lw->mv, tflite_index, &lw->g->tensors[id].data, lw->err, lw->errlen))
    return -1;
  lw->map[tflite_index] = id;
  return id;
}

int lower_reshape_node(Lowering* lw, int in, int out) {
  GNode* n = graph_add_node(lw->g, GOP_REMAP);
  if (!n) return lower_error(lw, "out of memory");
  n->inputs[0] = in;
  n->num_inputs = 1;
  n->outputs[0] = out;
  n->num_outputs = 1;
  n->p.remap.mode = REMAP_RESHAPE;
  for (int d = 0; d < 4; ++d) n->p.remap.stride[d] = 1;
  return 0;
}

int conv_out_size(int padding, int in, int k, int stride, int dilation) {
  int eff = (k - 1) * dilation + 1;
  if (padding == kTfLitePaddingSame) return (in + stride - 1) / stride;
  return in >= eff ? (in - eff + stride) / stride : 0;
}

int conv_pad_before(int padding, int in, int k, int stride, int dilation) {
  if (padding != kTfLitePaddingSame) return 0;
  int out = conv_out_size(padding, in, k, stride, dilation);
  int total = (out - 1) * stride + (k - 1) * dilation + 1 - in;
  return total > 0 ? total / 2 : 0;
}

size_t op_table_describe(char* buf, size_t size) {
  size_t used = 0;
  for (int i = 0; i < kNumOps; ++i) {
    const OpDef* d = &kOps[i];
    char name[128];
    if (d->custom_name)
      snprintf(name, sizeof(name), "CUSTOM %s", d->custom_name);
    else
      snprintf(name, sizeof(name), "%s", builtin_name(d->builtin_code));
    int n = snprintf(used < size ? buf + used : NULL, used < size ? size - used : 0, "%s\t%d\t1-%d\t%s\n", name,
                     d->builtin_code, d->max_version, d->constraints);
    if (n > 0) used += (size_t)n;
  }
  return used;
}
