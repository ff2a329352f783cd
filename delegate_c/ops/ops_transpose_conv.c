/* TRANSPOSE_CONV (builtin) and MediaPipe's Convolution2DTransposeBias
 * (custom): checks, lowering and dispatch of one gather kernel
 * (opencl_kernels/transpose_conv.cl). The two differ only in where their
 * inputs and parameters live and in how the output size is set:
 *   TRANSPOSE_CONV: inputs (output_shape, weights OHWI, input[, bias]);
 *     the output shape is given, and the leading pad is the one of the
 *     forward conv from output to input (TFLite's ComputePaddingHeightWidth).
 *   Convolution2DTransposeBias: inputs (input, weights OHWI, bias);
 *     custom_options hold the raw bytes of a TfLiteTransposeConvParams
 *     (padding, stride_width, stride_height as int32); the output size is
 *     stride * (in - 1) + k - pad_total with SAME's
 *     pad_total = max(0, k - (in - 1) % stride - 1) (MediaPipe's
 *     transpose_conv_bias.cc), the leading pad pad_total / 2. */
#include <string.h>

#include "encode/encode.h"
#include "ops/op_table.h"
#include "model/tflite_builtins.h"
#include "ops/op_kinds.h"

/* The graph ops this file encodes (graph.h: a node points at its op). */
static int encode_transpose_conv(Encoder* ex, int node);
/* p.conv: kw, kh, sx, sy, pad_x, pad_y, weights, bias; act (fuse_epilogue.c) */
const GOpDesc kGOpTransposeConv = {"TRANSPOSE_CONV", encode_transpose_conv};

/* Where one variant keeps its pieces. */
typedef struct TransposeConvArgs {
  int input, weights, bias; /* TFLite tensor indices; bias -1 when absent */
  int padding, stride_w, stride_h;
} TransposeConvArgs;

static int is_custom(const NodeInfo* ni) { return ni->reg->builtin_code == kBuiltinCustom; }

/* Reads the variant's inputs and parameters; 0 or -1 with the reason set. */
static int transpose_conv_args(const NodeInfo* ni, TransposeConvArgs* a) {
  if (is_custom(ni)) {
    if (ni_num_inputs(ni) != 3 || ni_num_outputs(ni) != 1)
      return reason(ni, "needs 3 inputs (input, weights, bias) and 1 output, has %d and %d", ni_num_inputs(ni),
                    ni_num_outputs(ni));
    int32_t raw[3];
    if (!ni->node->custom_initial_data || ni->node->custom_initial_data_size < (int)sizeof(raw))
      return reason(ni, "custom_options hold %d bytes; a TfLiteTransposeConvParams (padding, stride_w, stride_h: "
                    "12 bytes) is required", ni->node->custom_initial_data ? ni->node->custom_initial_data_size : 0);
    memcpy(raw, ni->node->custom_initial_data, sizeof(raw));
    *a = (TransposeConvArgs){ni_input(ni, 0), ni_input(ni, 1), ni_input(ni, 2), raw[0], raw[1], raw[2]};
    if (a->bias < 0) return reason(ni, "input 2 (bias) is missing; Convolution2DTransposeBias requires it");
    return 0;
  }
  const TfLiteTransposeConvParams* p = ni->node->builtin_data;
  if (!p) return reason(ni, "missing parameters");
  int n = ni_num_inputs(ni);
  if (n < 3 || n > 4 || ni_num_outputs(ni) != 1)
    return reason(ni, "needs 3-4 inputs (output_shape, weights, input[, bias]) and 1 output, has %d and %d", n,
                  ni_num_outputs(ni));
  *a = (TransposeConvArgs){ni_input(ni, 2), ni_input(ni, 1), n == 4 ? ni_input(ni, 3) : -1, p->padding,
                           p->stride_width, p->stride_height};
  return 0;
}

/* MediaPipe's output size along one axis (see the file comment), in 64
 * bits: a crafted stride makes it exceed an int, which the check refuses. */
static int64_t mediapipe_out_size(int padding, int in, int k, int stride) {
  int64_t pad_total = 0;
  if (padding == kTfLitePaddingSame) {
    pad_total = (int64_t)k - (in - 1) % stride - 1;
    if (pad_total < 0) pad_total = 0;
  }
  return (int64_t)stride * (in - 1) + k - pad_total;
}

/* Leading pad along one axis, from the output size `out` and the input `in`. */
static int transpose_pad(const NodeInfo* ni, int padding, int in, int out, int k, int stride) {
  if (is_custom(ni)) {
    if (padding != kTfLitePaddingSame) return 0;
    int pad_total = k - (in - 1) % stride - 1;
    return pad_total > 0 ? pad_total / 2 : 0;
  }
  /* The forward conv from `out` back to `in`, as TFLite pads it. */
  int64_t fwd = conv_out_size(padding, out, k, stride, 1);
  int64_t total = (fwd - 1) * stride + k - out; /* < out + k: fits (check_window) */
  return total > 0 ? (int)(total / 2) : 0;
}

static int check_transpose_conv(const NodeInfo* ni) {
  TransposeConvArgs a = {0};
  if (transpose_conv_args(ni, &a)) return -1;
  if (a.input < 0 || mv_is_const(ni->mv, a.input)) return reason(ni, "the data input is a constant or missing");
  if (!mv_is_const(ni->mv, a.weights))
    return reason(ni, "the weights are a runtime tensor; only constant weights are supported");
  if (a.bias >= 0 && !mv_is_const(ni->mv, a.bias)) return reason(ni, "the bias is a runtime tensor; it must be constant");
  if (a.padding != kTfLitePaddingSame && a.padding != kTfLitePaddingValid)
    return reason(ni, "padding %d is unknown (SAME=1 or VALID=2)", a.padding);
  if (a.stride_w < 1 || a.stride_h < 1) return reason(ni, "stride %dx%d must be >= 1", a.stride_w, a.stride_h);
  int in[4], w[4], out[4];
  if (ni_shape(ni, a.input, in) != 4) return reason(ni, "the data input must have rank 4");
  if (ni_shape(ni, a.weights, w) != 4) return reason(ni, "the weights must have rank 4 (OHWI)");
  if (w[3] != in[GD_C]) return reason(ni, "weights have %d input channels, the input has %d", w[3], in[GD_C]);
  if (a.bias >= 0 && mv_elements(ni->mv, a.bias) != (size_t)w[0])
    return reason(ni, "bias has %zu elements, expected %d", mv_elements(ni->mv, a.bias), w[0]);
  /* Repacked like conv2d's weights: [round4(O)][KH][KW][round4(I)] floats. */
  int64_t packed = size_mul(size_mul(size_mul(((int64_t)w[0] + 3) / 4 * 4, w[1]), w[2]), ((int64_t)w[3] + 3) / 4 * 4);
  if (packed > GD_MAX_ELEMENTS)
    return reason(ni, "the repacked weights need %lld floats; at most %lld are supported", (long long)packed,
                  (long long)GD_MAX_ELEMENTS);
  if (is_custom(ni)) {
    const int64_t o64[4] = {in[GD_B], mediapipe_out_size(a.padding, in[GD_H], w[1], a.stride_h),
                            mediapipe_out_size(a.padding, in[GD_W], w[2], a.stride_w), w[0]};
    if (o64[GD_H] < 1 || o64[GD_W] < 1) return reason(ni, "the output would be empty");
    if (o64[GD_H] > INT32_MAX || o64[GD_W] > INT32_MAX)
      return reason(ni, "stride %dx%d over a %dx%d input gives a %lldx%lld output, which overflows an int",
                    a.stride_w, a.stride_h, in[GD_W], in[GD_H], (long long)o64[GD_W], (long long)o64[GD_H]);
    for (int d = 0; d < 4; ++d) out[d] = (int)o64[d];
  } else {
    if (check_const_input(ni, 0, "output_shape", kTfLiteInt32)) return -1;
    int shape[8], count;
    char err[200];
    if (mv_const_ints(ni->mv, ni_input(ni, 0), shape, 8, &count, err, sizeof(err)))
      return reason(ni, "output_shape (input 0): %s", err);
    if (count != 4) return reason(ni, "output_shape holds %d values; 4 (NHWC) are required", count);
    memcpy(out, shape, sizeof(out));
    if (out[GD_B] != in[GD_B] || out[GD_C] != w[0])
      return reason(ni, "output_shape [%d,%d,%d,%d] disagrees with the input batch %d or the weights' %d outputs",
                    out[0], out[1], out[2], out[3], in[GD_B], w[0]);
    /* The forward conv of the output must give back the input size. */
    if (conv_out_size(a.padding, out[GD_H], w[1], a.stride_h, 1) != in[GD_H] ||
        conv_out_size(a.padding, out[GD_W], w[2], a.stride_w, 1) != in[GD_W])
      return reason(ni, "output_shape %dx%d is not a transpose of the input %dx%d with this filter and stride",
                    out[GD_H], out[GD_W], in[GD_H], in[GD_W]);
  }
  if (out[GD_H] < 1 || out[GD_W] < 1) return reason(ni, "the output would be empty");
  /* The kernel walks the output with the filter and stride (a forward
   * window over the output). */
  if (check_window(ni, "height", out[GD_H], w[1], a.stride_h, 1) ||
      check_window(ni, "width", out[GD_W], w[2], a.stride_w, 1))
    return -1;
  return check_output_shape(ni, ni_output(ni, 0), out);
}

static int lower_transpose_conv(Lowering* lw, const NodeInfo* ni) {
  TransposeConvArgs a = {0};
  if (transpose_conv_args(ni, &a)) return -1; /* the parse wrote lw->err */
  int in = lower_tensor(lw, a.input);
  int w = in < 0 ? -1 : lower_tensor(lw, a.weights);
  int b = (w < 0 || a.bias < 0) ? -1 : lower_tensor(lw, a.bias);
  if (w < 0 || (a.bias >= 0 && b < 0)) return -1;
  int out = lower_tensor(lw, ni_output(ni, 0));
  if (out < 0) return -1;
  GNode* n = graph_add_node(lw->g, GOP_TRANSPOSE_CONV);
  if (!n) return lower_error(lw, "out of memory");
  const int* s = lw->g->tensors[in].shape;
  const int* d = lw->g->tensors[out].shape;
  const int* ws = lw->g->tensors[w].shape;
  n->inputs[0] = in;
  n->num_inputs = 1;
  n->outputs[0] = out;
  n->num_outputs = 1;
  n->p.conv.kh = ws[1];
  n->p.conv.kw = ws[2];
  n->p.conv.sx = a.stride_w;
  n->p.conv.sy = a.stride_h;
  n->p.conv.dx = n->p.conv.dy = 1;
  n->p.conv.pad_y = transpose_pad(ni, a.padding, s[GD_H], d[GD_H], ws[1], a.stride_h);
  n->p.conv.pad_x = transpose_pad(ni, a.padding, s[GD_W], d[GD_W], ws[2], a.stride_w);
  n->p.conv.weights = w;
  n->p.conv.bias = b;
  n->p.conv.multiplier = 1;
  return 0;
}

static int encode_transpose_conv(Encoder* ex, int node) {
  const GNode* n = &ex->g.nodes[node];
  const GTensor* bias = n->p.conv.bias >= 0 ? &ex->g.tensors[n->p.conv.bias] : NULL;
  cl_mem wm, bm;
  if (upload_dense_weights(ex, &ex->g.tensors[n->p.conv.weights], ex->g.tensors[n->inputs[0]].shape[GD_C], bias, &wm,
                           &bm))
    return -1;
  KArgs a;
  if (ex_dispatch_src_dst(ex, node, "transpose_conv.cl", "transpose_conv2d", &a)) return -1;
  karg_mem(&a, wm);
  karg_mem(&a, bm);
  karg_int4(&a, n->p.conv.kw, n->p.conv.kh, n->p.conv.sx, n->p.conv.sy);
  karg_int2(&a, n->p.conv.pad_x, n->p.conv.pad_y);
  karg_int(&a, n->act); /* an activation node after it (fuse_epilogue.c) */
  karg_int(&a, a.total);
  return karg_done(ex, &a);
}

/* The TFLite ops this file runs (op_table.c lists them). */
const OpDef kOpCustomConvolution2DTransposeBias = {.builtin_code = kBuiltinCustom, .custom_name = "Convolution2DTransposeBias", .max_version = 1,
    .check = check_transpose_conv, .lower = lower_transpose_conv,
    .constraints = "MediaPipe: input, constant weights (OHWI) and bias; custom_options = raw TfLiteTransposeConvParams "
     "(padding, stride_w, stride_h); SAME/VALID; stride >= 1"};
const OpDef kOpTransposeConv = {.builtin_code = kBuiltinTransposeConv, .max_version = 3,
    .check = check_transpose_conv, .lower = lower_transpose_conv,
    .constraints = "constant weights (OHWI) and int32 output_shape; optional bias (v3); SAME/VALID; stride >= 1; "
     "no fused activation (v4 is above the limit)"};
