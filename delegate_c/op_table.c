#include "op_table.h"

#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tflite_builtins.h"

/* Version limits follow upstream 2.14's GPU delegate (model_builder.cc);
 * RESHAPE and PRELU are v1 there too. Upstream sets none for MEAN,
 * DEPTH_TO_SPACE, SUM, REDUCE_MAX/MIN/PROD, BATCH_MATMUL, PACK, UNPACK,
 * SPLIT, SPLIT_V, TILE and CAST: theirs are the 2.14 runtime's versions,
 * whose later ones only add integer types (refused by the tensor check
 * anyway). LOG_SOFTMAX is not in upstream's table; its v2 is int8. */
/* The six comparisons share their rules. */
#define CMP_CONSTRAINTS \
  "2 float inputs with broadcasting; BOOL output, also at a partition boundary (upstream: only into CAST/SELECT)"

/* ARG_MAX and ARG_MIN share theirs. */
#define ARG_CONSTRAINTS \
  "constant axis (1 value, int32/int64, negative allowed) of a rank 1-4 input; INT32 or INT64 output, also at a " \
  "partition boundary (not as GATHER/ONE_HOT indices); ties give the first index; the index travels as a float: " \
  "exact to 2^24 (FP16 storage: axes up to 2048)"

const OpDef kOps[] = {
    {kBuiltinAbs, NULL, 2, check_unary, lower_unary, "1 runtime input"},
    {kBuiltinAdd, NULL, 2, check_binary, lower_binary,
     "2 inputs (runtime or constant) with TFLite broadcasting; fused activation"},
    {kBuiltinAddN, NULL, 2, check_add_n, lower_add_n,
     "2 or more same-shape inputs (upstream: exactly 2), at least one runtime; summed in input order"},
    {kBuiltinArgMax, NULL, 2, check_arg_minmax, lower_arg_minmax, ARG_CONSTRAINTS},
    {kBuiltinArgMin, NULL, 2, check_arg_minmax, lower_arg_minmax, ARG_CONSTRAINTS},
    {kBuiltinAveragePool2d, NULL, 2, check_pool, lower_pool, "filter and stride > 0; SAME/VALID; fused activation"},
    {kBuiltinBatchMatmul, NULL, 4, check_batch_matmul, lower_batch_matmul,
     "2 inputs of rank 2-4, either one constant (upstream: a constant RHS only if 2-D); adj_x, adj_y; batch "
     "dims broadcast; float32 sums; no hybrid int8 operand"},
    {kBuiltinCast, NULL, 5, check_cast, lower_cast,
     "1 runtime input; FLOAT32, INT32 and BOOL in any combination (upstream: bool<->float, float/int32 among "
     "themselves); the partition holds them as floats: int32 exact to 2^24 (FP16 storage: 2^11)"},
    {kBuiltinConcatenation, NULL, 2, check_concat, lower_concat,
     "any axis of a rank <= 4 tensor; up to 16 inputs; fused activation"},
    {kBuiltinConv2d, NULL, 6, check_conv2d, lower_conv2d,
     "constant weights (float32, or float16/int8 behind a folded DEQUANTIZE); stride, dilation >= 1; "
     "SAME/VALID; optional bias; fused activation"},
    {kBuiltinCos, NULL, 2, check_unary, lower_unary, "1 runtime input"},
    {kBuiltinCumsum, NULL, 1, check_cumsum, lower_cumsum,
     "constant int32 axis (any, negative allowed) of a rank 1-4 tensor; exclusive and reverse; float32 sums"},
    {kBuiltinCustom, "Convolution2DTransposeBias", 1, check_transpose_conv, lower_transpose_conv,
     "MediaPipe: input, constant weights (OHWI) and bias; custom_options = raw TfLiteTransposeConvParams "
     "(padding, stride_w, stride_h); SAME/VALID; stride >= 1"},
    {kBuiltinCustom, "Landmarks2TransformMatrix", 2, check_landmarks_to_matrix, lower_landmarks_to_matrix,
     "MediaPipe: v1 landmarks [1,1,1,3N], v2 [1,N,3] -> [1,4,4] matrix; FlexBuffers options (v1: subset, "
     "input_hw, output_hw, dimensions 3, landmarks_range, bbox_size_multiplier; v2: subset_idxs, "
     "target_rotation_radians, output_height/width, scale_x/y); landmark indices checked against N"},
    {kBuiltinCustom, "MaxPoolingWithArgmax2D", 2, check_pool_argmax, lower_pool_argmax,
     "MediaPipe: 1 input, 2 outputs (values, argmax within the window + 0.1, as float); custom_options = raw "
     "TfLitePoolParams; filter and stride > 0; SAME/VALID; fused activation"},
    {kBuiltinCustom, "MaxUnpooling2D", 1, check_unpool, lower_unpool,
     "MediaPipe: values and indices [B,H,W,C] -> [B,H*kh,W*kw,C]; custom_options = raw TfLitePoolParams; "
     "filter and stride > 0; an index outside its window is dropped (the CPU writes it outside the window)"},
    {kBuiltinCustom, "Resampler", 1, check_resampler, lower_resampler,
     "MediaPipe: source [B,H,W,C] and warp [B,H,W,2] -> [B,H,W,C], bilinear, zeros outside"},
    {kBuiltinCustom, "TransformLandmarks", 2, check_transform_landmarks, lower_transform_landmarks,
     "MediaPipe: landmarks (v1 [1,H,W,C] with options dimensions 2/3 and scale; v2 [1,N,2|3]) and a [1,4,4] "
     "matrix"},
    {kBuiltinCustom, "TransformTensor", 1, check_transform_tensor, lower_transform_tensor,
     "MediaPipe: version 1's registered name of TransformTensorBilinear (options output_size, mode bilinear)"},
    {kBuiltinCustom, "TransformTensorBilinear", 2, check_transform_tensor, lower_transform_tensor,
     "MediaPipe: [1,H,W,C] tensor and [1,4,4] matrix -> [1,OH,OW,C]; options v1 output_size (mode bilinear), "
     "v2 output_height/width (pixel-centre aligned); batch 1"},
    {kBuiltinDensify, NULL, 1, NULL, NULL, "only of a constant sparse tensor: densified once at prepare"},
    {kBuiltinDepthwiseConv2d, NULL, 6, check_depthwise, lower_depthwise,
     "constant weights; any depth_multiplier (upstream: 1 unless one input channel); stride, dilation >= 1; "
     "fused activation"},
    {kBuiltinDepthToSpace, NULL, 2, check_depth_to_space, lower_depth_to_space,
     "rank-4 input; block_size > 1 dividing the channels evenly (DCR order)"},
    {kBuiltinDequantize, NULL, 3, check_dequantize, lower_dequantize,
     "of a constant float16 (or int8/uint8 with ENABLE_QUANT) tensor: folded into a float constant at "
     "prepare, never run per invoke; of a runtime int8/uint8 tensor (ENABLE_QUANT): a copy of its float view"},
    {kBuiltinDiv, NULL, 2, check_binary, lower_binary, "2 inputs with broadcasting; fused activation"},
    {kBuiltinElu, NULL, 2, check_unary, lower_unary, "1 runtime input"},
    {kBuiltinEqual, NULL, 2, check_binary, lower_binary, CMP_CONSTRAINTS},
    {kBuiltinExp, NULL, 2, check_unary, lower_unary, "1 runtime input"},
    {kBuiltinFloor, NULL, 2, check_unary, lower_unary, "1 runtime input"},
    {kBuiltinFloorDiv, NULL, 2, check_binary, lower_binary,
     "2 float inputs with broadcasting; floor of the exact quotient, as the CPU computes it"},
    {kBuiltinFloorMod, NULL, 2, check_binary, lower_binary,
     "2 float inputs with broadcasting; result has the divisor's sign"},
    {kBuiltinFullyConnected, NULL, 9, check_fully_connected, lower_fully_connected,
     "constant weights [O,K] (float32; float16/int8 behind a folded DEQUANTIZE; int8/uint8 quantized, also "
     "hybrid, dequantized at prepare); default weights format; optional bias; input of any rank <= 4 with a multiple of K elements; "
     "keep_num_dims; fused activation"},
    {kBuiltinGather, NULL, 1, check_gather, lower_gather,
     "params runtime or constant, any axis (negative too); indices constant int32/int64 (checked in range) or "
     "runtime int32 (out-of-range reads give 0), of any rank with an output rank <= 4 (upstream: 1-D); "
     "batch_dims 0"},
    {kBuiltinGelu, NULL, 2, check_unary, lower_unary, "1 runtime input; approximate (tanh) or exact (erf)"},
    {kBuiltinGreater, NULL, 2, check_binary, lower_binary, CMP_CONSTRAINTS},
    {kBuiltinGreaterEqual, NULL, 2, check_binary, lower_binary, CMP_CONSTRAINTS},
    {kBuiltinHardSwish, NULL, 1, check_unary, lower_unary, "1 runtime input"},
    {kBuiltinL2Normalization, NULL, 1, check_l2_norm, lower_l2_norm,
     "float32, over the last axis of a rank 1-4 tensor: x / max(sqrt(sum x^2), 1e-6) as TFLite; fused activation "
     "NONE (the CPU kernel refuses others); int8/uint8 (integer kernel) stays on the CPU"},
    {kBuiltinLeakyRelu, NULL, 2, check_unary, lower_unary, "1 runtime input; any alpha"},
    {kBuiltinLess, NULL, 2, check_binary, lower_binary, CMP_CONSTRAINTS},
    {kBuiltinLessEqual, NULL, 2, check_binary, lower_binary, CMP_CONSTRAINTS},
    {kBuiltinLog, NULL, 2, check_unary, lower_unary, "1 runtime input"},
    {kBuiltinLogicalAnd, NULL, 2, check_binary, lower_binary,
     "2 BOOL inputs with broadcasting; BOOL output (at a partition boundary too)"},
    {kBuiltinLogistic, NULL, 2, check_unary, lower_unary, "1 runtime input"},
    {kBuiltinLogSoftmax, NULL, 2, check_softmax, lower_softmax,
     "over the last axis of a rank 1-4 tensor (not in upstream's table); max-subtracted, float32 sums"},
    {kBuiltinLstm, NULL, 4, check_lstm, lower_lstm,
     "basic kernel (kernel_type BASIC): 3 runtime inputs [B,I], [B,O], [B,O], constant float weights "
     "[4O,I+O] and bias [4O]; TANH; cell_clip = proj_clip = 0; 4 outputs. The full kernel (20/24 inputs, "
     "variable state tensors), which upstream also takes, stays on the CPU"},
    {kBuiltinMaximum, NULL, 2, check_binary, lower_binary, "2 inputs with broadcasting"},
    {kBuiltinMaxPool2d, NULL, 2, check_pool, lower_pool, "filter and stride > 0; SAME/VALID; fused activation"},
    {kBuiltinMean, NULL, 3, check_reduce, lower_reduce,
     "constant int32 axes, any combination of the (up to 4) axes, negative allowed; keep_dims true or false; float32 accumulation"},
    {kBuiltinMinimum, NULL, 2, check_binary, lower_binary, "2 inputs with broadcasting"},
    {kBuiltinMirrorPad, NULL, 2, check_pad, lower_pad,
     "constant paddings on any of the (up to 4) axes; REFLECT (padding < size) and SYMMETRIC (padding <= size; "
     "upstream: REFLECT only)"},
    {kBuiltinMul, NULL, 3, check_binary, lower_binary, "2 inputs with broadcasting; fused activation"},
    {kBuiltinNeg, NULL, 2, check_unary, lower_unary, "1 runtime input"},
    {kBuiltinNotEqual, NULL, 2, check_binary, lower_binary, CMP_CONSTRAINTS},
    {kBuiltinOneHot, NULL, 1, check_one_hot, lower_one_hot,
     "runtime int32 indices (of rank <= 3), read as ints at the partition boundary; constant depth; constant "
     "float on/off values; any axis (upstream: last axis, batch/channels only)"},
    {kBuiltinPack, NULL, 4, check_pack, lower_pack,
     "1 to 16 inputs of the same shape, rank <= 3; any axis (negative too)"},
    {kBuiltinPad, NULL, 2, check_pad, lower_pad, "constant paddings on any of the (up to 4) axes; zero fill"},
    {kBuiltinPadv2, NULL, 2, check_pad, lower_pad,
     "constant paddings on any of the (up to 4) axes; constant float32 pad value"},
    {kBuiltinPow, NULL, 2, check_binary, lower_binary, "2 float inputs with broadcasting"},
    {kBuiltinPrelu, NULL, 1, check_binary, lower_binary, "alpha constant or runtime, broadcast to the input"},
    {kBuiltinQuantize, NULL, 2, check_quantize, lower_quantize,
     "ENABLE_QUANT: float32 or int8/uint8 runtime input, int8/uint8 output with per-tensor quantization; "
     "a quantize-dequantize onto the output's grid"},
    {kBuiltinReduceMax, NULL, 3, check_reduce, lower_reduce,
     "constant int32 axes, any combination of the (up to 4) axes, negative allowed; keep_dims true or false"},
    {kBuiltinReduceMin, NULL, 3, check_reduce, lower_reduce,
     "constant int32 axes, any combination of the (up to 4) axes, negative allowed; keep_dims true or false"},
    {kBuiltinReduceProd, NULL, 2, check_reduce, lower_reduce,
     "constant int32 axes, any combination of the (up to 4) axes, negative allowed; keep_dims true or false; float32 products"},
    {kBuiltinRelu, NULL, 2, check_unary, lower_unary, "1 runtime input"},
    {kBuiltinRelu6, NULL, 2, check_unary, lower_unary, "1 runtime input"},
    {kBuiltinReluN1To1, NULL, 1, check_unary, lower_unary, "1 runtime input"},
    {kBuiltinReshape, NULL, 1, check_reshape, lower_reshape, "same element count; rank <= 4 in and out"},
    {kBuiltinSqueeze, NULL, 1, check_squeeze, lower_reshape,
     "squeeze_dims of size 1 (or every size-1 dimension); rank <= 4 in and out"},
    {kBuiltinExpandDims, NULL, 1, check_expand_dims, lower_reshape,
     "constant int32 axis (negative allowed); rank <= 4 out"},
    {kBuiltinResizeBilinear, NULL, 3, check_resize_bilinear, lower_resize_bilinear,
     "rank-4 input; constant int32 size [2]; align_corners or half_pixel_centers (not both)"},
    {kBuiltinResizeNearestNeighbor, NULL, 3, check_resize_nearest, lower_resize_nearest,
     "rank-4 input; constant int32 size [2]; align_corners and half_pixel_centers"},
    {kBuiltinReverseV2, NULL, 2, check_reverse, lower_reverse,
     "constant int32 axis tensor of exactly 1 axis (negative allowed) of a rank 1-4 input; several axes stay "
     "on the CPU (the TFLite 2.x kernel reverses only the first, LiteRT's only contiguous ones)"},
    {kBuiltinRsqrt, NULL, 2, check_unary, lower_unary, "1 runtime input"},
    {kBuiltinSelect, NULL, 1, check_select, lower_select,
     "BOOL condition of x's shape, a scalar, or a vector along x's first dimension; x and y of one shape"},
    {kBuiltinSelectV2, NULL, 1, check_select, lower_select,
     "BOOL condition, x and y broadcast together (upstream: x/y of the output's shape or scalars)"},
    {kBuiltinSign, NULL, 2, check_unary, lower_unary, "1 runtime input"},
    {kBuiltinSin, NULL, 2, check_unary, lower_unary, "1 runtime input"},
    {kBuiltinSlice, NULL, 2, check_slice, lower_slice,
     "constant begin/size (int32/int64), size -1 to the end; rank 1-4 (upstream: 3-4)"},
    {kBuiltinSoftmax, NULL, 2, check_softmax, lower_softmax,
     "over the last axis of a rank 1-4 tensor; any finite beta (upstream: beta 1 only); max-subtracted, "
     "float32 sums"},
    {kBuiltinSpaceToDepth, NULL, 2, check_space_to_depth, lower_space_to_depth,
     "rank-4 input; block_size > 1 dividing height and width"},
    {kBuiltinSplit, NULL, 4, check_split, lower_split,
     "constant axis (negative too) of a rank 1-4 input; equal pieces; up to 256 outputs"},
    {kBuiltinSplitV, NULL, 2, check_split, lower_split,
     "constant size_splits (one may be -1) and axis (negative too) of a rank 1-4 input; up to 256 outputs"},
    {kBuiltinSqrt, NULL, 2, check_unary, lower_unary, "1 runtime input"},
    {kBuiltinSquare, NULL, 2, check_unary, lower_unary, "1 runtime input"},
    {kBuiltinSquaredDifference, NULL, 2, check_binary, lower_binary, "2 inputs with broadcasting"},
    {kBuiltinStridedSlice, NULL, 4, check_strided_slice, lower_strided_slice,
     "constant begin/end/strides; begin/end masks; positive strides; ellipsis/new-axis masks 0; "
     "shrink_axis_mask supported"},
    {kBuiltinSub, NULL, 2, check_binary, lower_binary, "2 inputs with broadcasting; fused activation"},
    {kBuiltinSum, NULL, 2, check_reduce, lower_reduce,
     "constant int32 axes, any combination of the (up to 4) axes, negative allowed; keep_dims true or false; float32 sums"},
    {kBuiltinTanh, NULL, 2, check_unary, lower_unary, "1 runtime input"},
    {kBuiltinTile, NULL, 3, check_tile, lower_tile, "constant multiples >= 1 on any of the (up to 4) axes"},
    {kBuiltinTranspose, NULL, 4, check_transpose, lower_transpose,
     "constant perm: any permutation of a rank 1-4 input (upstream: rank 2-4)"},
    {kBuiltinTransposeConv, NULL, 3, check_transpose_conv, lower_transpose_conv,
     "constant weights (OHWI) and int32 output_shape; optional bias (v3); SAME/VALID; stride >= 1; "
     "no fused activation (v4 is above the limit)"},
    {kBuiltinUnpack, NULL, 4, check_unpack, lower_unpack, "any axis (negative too) of a rank 1-4 input"},
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

int64_t size_mul(int64_t a, int64_t b) {
  if (a <= 0 || b <= 0) return 0;
  return a > INT64_MAX / b ? INT64_MAX : a * b;
}

int64_t storage_elements(const int64_t s[4]) {
  int64_t c4 = s[GD_C] > INT64_MAX - 3 ? INT64_MAX : (s[GD_C] + 3) / 4 * 4;
  return size_mul(size_mul(size_mul(s[GD_B], s[GD_H]), s[GD_W]), c4);
}

/* The element-count limit, for a shape already known to fit int dims. */
static int check_storage(const NodeInfo* ni, const char* what, const int64_t e[4]) {
  int64_t n = storage_elements(e);
  if (n > GD_MAX_ELEMENTS)
    return reason(ni, "%s [%" PRId64 ",%" PRId64 ",%" PRId64 ",%" PRId64 "] needs %" PRId64
                  " elements (channels padded to 4); at most %" PRId64 " are supported",
                  what, e[0], e[1], e[2], e[3], n, GD_MAX_ELEMENTS);
  return 0;
}

int check_output_shape64(const NodeInfo* ni, int tensor, const int64_t e[4]) {
  static const char* const kAxis[4] = {"batch", "height", "width", "channels"};
  for (int d = 0; d < 4; ++d)
    if (e[d] < 1 || e[d] > INT32_MAX)
      return reason(ni, "the computed output %s is %" PRId64 ", outside 1..%d", kAxis[d], e[d], INT32_MAX);
  if (check_storage(ni, "the computed output", e)) return -1;
  int o[4] = {(int)e[0], (int)e[1], (int)e[2], (int)e[3]};
  return check_output_shape(ni, tensor, o);
}

int check_window(const NodeInfo* ni, const char* axis, int size, int k, int stride, int dilation) {
  int64_t extent = ((int64_t)k - 1) * dilation + 1; /* < 2^62: no overflow */
  if (extent > INT32_MAX || (int64_t)size + extent + stride > INT32_MAX)
    return reason(ni, "%s window overflows: size %d, filter %d, dilation %d (extent %" PRId64 "), stride %d; "
                  "size + extent + stride must stay below 2^31", axis, size, k, dilation, extent, stride);
  return 0;
}

int check_output_shape(const NodeInfo* ni, int tensor, const int e[4]) {
  const int64_t e64[4] = {e[0], e[1], e[2], e[3]};
  if (check_storage(ni, "the computed output", e64)) return -1;
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
  /* Quantized constants, including the int8 weights of dynamic-range
   * (hybrid) models, are dequantized at prepare whatever ENABLE_QUANT says:
   * upstream's type gate checks runtime tensors only. */
  if ((x->type == kTfLiteInt8 || x->type == kTfLiteUInt8) && x->quantization.type == kTfLiteAffineQuantization)
    return 1;
  return 0;
}

/* GATHER's indices and ONE_HOT's indices may be runtime int32 tensors
 * (as upstream allows): they enter the partition raw, never as floats. */
static int runtime_indices_input(const NodeInfo* ni, int k) {
  int code = ni->reg->builtin_code;
  return (code == kBuiltinGather && k == 1) || (code == kBuiltinOneHot && k == 0);
}

/* Types other than float32 that an op may read or write as a runtime
 * tensor (bool: one byte, 0/1). Inside the partition they are floats; the
 * executor converts them at the partition boundary. NULL: float32 only. */
static const char* extra_types(int builtin, int is_output, int k) {
  switch (builtin) {
    case kBuiltinEqual: case kBuiltinNotEqual: case kBuiltinLess: case kBuiltinLessEqual:
    case kBuiltinGreater: case kBuiltinGreaterEqual:
      return is_output ? "BOOL" : NULL;
    case kBuiltinLogicalAnd: return "BOOL";
    case kBuiltinSelect: case kBuiltinSelectV2: return !is_output && k == 0 ? "BOOL" : NULL;
    case kBuiltinCast: return "INT32/BOOL";
    case kBuiltinArgMax: case kBuiltinArgMin: return is_output ? "INT32/INT64" : NULL;
    default: return NULL;
  }
}

/* Is `type` allowed for input/output k of the node (runtime or constant)? */
static int type_allowed(const NodeInfo* ni, int is_output, int k, int type) {
  if (type == kTfLiteFloat32) return 1;
  const char* extra = extra_types(ni->reg->builtin_code, is_output, k);
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
      int s[4];
      shape_from_dims(x->dims->data, x->dims->size, s);
      const int64_t s64[4] = {s[0], s[1], s[2], s[3]};
      char which[160];
      snprintf(which, sizeof(which), "%s %d (%s)", what, k, x->name ? x->name : "?");
      if (check_storage(ni, which, s64)) return -1;
      if (pass == 0 && mv_is_const(mv, t)) continue;
      if (pass == 0 && x->type == kTfLiteInt32 && runtime_indices_input(ni, k)) continue;
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
      if (!type_allowed(ni, pass, k, x->type)) {
        const char* extra = extra_types(ni->reg->builtin_code, pass, k);
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
  if (!d || !d->check) {
    if (ni->reg->builtin_code == kBuiltinCustom)
      return reason(ni, "custom op %s is not supported", ni->reg->custom_name ? ni->reg->custom_name : "?");
    if (ni->reg->builtin_code == kBuiltinDensify) return check_densify(ni);
    return reason(ni, "Operation is not supported.");
  }
  if (ni->reg->version > d->max_version)
    return reason(ni, "Max version supported: %d. Requested version %d.", d->max_version, ni->reg->version);
  if (check_tensors(ni)) return -1;
  for (int k = 0; k < ni_num_inputs(ni); ++k) {
    int t = ni_input(ni, k);
    if (t >= 0 && mv_is_const(ni->mv, t) && mv_tensor(ni->mv, t)->type != kTfLiteInt32 &&
        mv_tensor(ni->mv, t)->type != kTfLiteInt64 && !const_is_float_convertible(ni->mv, t) &&
        !(mv_tensor(ni->mv, t)->type == kTfLiteBool && type_allowed(ni, 0, k, kTfLiteBool)))
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
  return d->check(ni);
}

int lower_tensor(Lowering* lw, int tflite_index) {
  if (tflite_index < 0 || tflite_index >= lw->mv->num_tensors)
    return lower_error(lw, "tensor index %d out of range", tflite_index);
  if (lw->map[tflite_index] >= 0) {
    /* A raw int32 indices tensor has no float copy to read as values. */
    if (lw->g->tensors[lw->map[tflite_index]].is_int32)
      return lower_error(lw, "runtime int32 tensor %d is used both as indices and as values", tflite_index);
    return lw->map[tflite_index];
  }
  int dims[8], shape[4];
  int rank = mv_dims(lw->mv, tflite_index, dims, 8);
  if (rank < 0 || shape_from_dims(dims, rank, shape))
    return lower_error(lw, "tensor %d has an unsupported shape", tflite_index);
  int id = graph_add_tensor(lw->g, shape, rank);
  if (id < 0) return lower_error(lw, "out of memory");
  lw->g->tensors[id].tflite_index = tflite_index;
  lw->g->tensors[id].dtype = (int)mv_tensor(lw->mv, tflite_index)->type;
  if (mv_is_const(lw->mv, tflite_index)) {
    if (mv_const_float(lw->mv, tflite_index, &lw->g->tensors[id].data, lw->err, lw->errlen)) return -1;
  } else {
    GTensor* t = &lw->g->tensors[id];
    if (quant_params(lw->mv, tflite_index, &t->qtype, &t->qscale, &t->qzero)) t->qtype = GD_QNONE;
  }
  lw->map[tflite_index] = id;
  return id;
}

int lower_reshape_node(Lowering* lw, int in, int out) {
  return lower_remap_node(lw, in, out, REMAP_RESHAPE) ? 0 : -1;
}

/* In 64 bits, so no parameter can overflow them; the results fit an int
 * whenever check_window passed (and stride >= 1). */
int conv_out_size(int padding, int in, int k, int stride, int dilation) {
  if (stride < 1) return 0;
  int64_t eff = ((int64_t)k - 1) * dilation + 1;
  if (padding == kTfLitePaddingSame) return (int)(((int64_t)in + stride - 1) / stride);
  return in >= eff ? (int)(((int64_t)in - eff + stride) / stride) : 0;
}

int conv_pad_before(int padding, int in, int k, int stride, int dilation) {
  if (padding != kTfLitePaddingSame) return 0;
  int64_t out = conv_out_size(padding, in, k, stride, dilation);
  int64_t total = (out - 1) * stride + ((int64_t)k - 1) * dilation + 1 - in;
  if (total > 2 * (int64_t)INT32_MAX) total = 2 * (int64_t)INT32_MAX;
  return total > 0 ? (int)(total / 2) : 0;
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
