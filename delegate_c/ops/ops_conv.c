/* CONV_2D and DEPTHWISE_CONV_2D: checks, lowering, weight repacking and
 * kernel dispatch (opencl_kernels/conv.cl, depthwise.cl and their _gpu forms). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "encode/encode.h"
#include "encode/epilogue_args.h"
#include "ops/op_table.h"
#include "select/selectors.h"
#include "model/tflite_builtins.h"
#include "ops/op_kinds.h"

/* The graph ops this file encodes (graph.h: a node points at its op). */
static int encode_conv2d(Encoder* ex, int node);
const GOpDesc kGOpConv2d = {"CONV2D", encode_conv2d};
static int encode_depthwise(Encoder* ex, int node);
const GOpDesc kGOpDepthwise = {"DEPTHWISE", encode_depthwise};
static int encode_dw_conv1x1(Encoder* ex, int node);
const GOpDesc kGOpDwConv1x1 = {"DEPTHWISE+CONV2D_1X1", encode_dw_conv1x1};
static int encode_pw_depthwise(Encoder* ex, int node);
const GOpDesc kGOpPwDepthwise = {"CONV2D_1X1+DEPTHWISE", encode_pw_depthwise};

/* Shared checks of the input / weights / bias / output of both convs. */
static int check_conv_common(const NodeInfo* ni, int padding, int sw, int sh, int dw, int dh, int act) {
  int n = ni_num_inputs(ni);
  if (n < 2 || n > 3 || ni_num_outputs(ni) != 1) return reason(ni, "needs 2-3 inputs and 1 output, has %d and %d", n, ni_num_outputs(ni));
  if (mv_is_const(ni->mv, ni_input(ni, 0))) return reason(ni, "input 0 is a constant; a runtime input is required");
  if (!mv_is_const(ni->mv, ni_input(ni, 1)))
    return reason(ni, "input 1 (weights) is a runtime tensor; only constant weights are supported");
  int b = ni_input(ni, 2);
  if (b >= 0 && !mv_is_const(ni->mv, b)) return reason(ni, "input 2 (bias) is a runtime tensor; it must be constant");
  if (padding != kTfLitePaddingSame && padding != kTfLitePaddingValid) return reason(ni, "padding %d is unknown", padding);
  if (sw < 1 || sh < 1) return reason(ni, "stride %dx%d must be >= 1", sw, sh);
  if (dw < 1 || dh < 1) return reason(ni, "dilation %dx%d must be >= 1", dw, dh);
  if (!ni->node->builtin_data) return reason(ni, "missing parameters");
  return check_activation(ni, act);
}

/* Both window axes fit the kernels' int arithmetic, and the repacked weights
 * ([round4(O)][KH][KW][round4(I)] floats) fit their int indexing. */
static int check_conv_sizes(const NodeInfo* ni, const int in[4], const int w[4], int sh, int sw, int dh, int dw,
                            int cout, int cin) {
  if (check_window(ni, "height", in[GD_H], w[1], sh, dh) || check_window(ni, "width", in[GD_W], w[2], sw, dw))
    return -1;
  int64_t packed = size_mul(size_mul(size_mul(((int64_t)cout + 3) / 4 * 4, w[1]), w[2]), ((int64_t)cin + 3) / 4 * 4);
  if (packed > GD_MAX_ELEMENTS)
    return reason(ni, "the repacked weights need %lld floats; at most %lld are supported", (long long)packed,
                  (long long)GD_MAX_ELEMENTS);
  return 0;
}

/* Output shape of a conv over `in` with filter kh x kw and `cout` channels. */
static void conv_output(const int in[4], int padding, int kh, int kw, int sh, int sw, int dh, int dw, int cout,
                        int out[4]) {
  out[GD_B] = in[GD_B];
  out[GD_H] = conv_out_size(padding, in[GD_H], kh, sh, dh);
  out[GD_W] = conv_out_size(padding, in[GD_W], kw, sw, dw);
  out[GD_C] = cout;
}

static int check_conv2d(const NodeInfo* ni) {
  const TfLiteConvParams* p = ni->node->builtin_data;
  if (!p) return reason(ni, "missing parameters");
  if (check_conv_common(ni, p->padding, p->stride_width, p->stride_height, p->dilation_width_factor,
                        p->dilation_height_factor, p->activation))
    return -1;
  int in[4], w[4];
  if (ni_shape(ni, ni_input(ni, 0), in) != 4) return reason(ni, "input 0 must have rank 4");
  if (ni_shape(ni, ni_input(ni, 1), w) != 4) return reason(ni, "weights must have rank 4 (OHWI)");
  if (w[3] != in[GD_C])
    return reason(ni, "grouped convolution (input channels %d, weight channels %d) is not supported", in[GD_C], w[3]);
  int b = ni_input(ni, 2);
  if (b >= 0 && mv_elements(ni->mv, b) != (size_t)w[0])
    return reason(ni, "bias has %zu elements, expected %d", mv_elements(ni->mv, b), w[0]);
  if (check_conv_sizes(ni, in, w, p->stride_height, p->stride_width, p->dilation_height_factor,
                       p->dilation_width_factor, w[0], w[3]))
    return -1;
  int out[4];
  conv_output(in, p->padding, w[1], w[2], p->stride_height, p->stride_width, p->dilation_height_factor,
              p->dilation_width_factor, w[0], out);
  if (out[GD_H] < 1 || out[GD_W] < 1) return reason(ni, "the filter is larger than the padded input");
  return check_output_shape(ni, ni_output(ni, 0), out);
}

static int check_depthwise(const NodeInfo* ni) {
  const TfLiteDepthwiseConvParams* p = ni->node->builtin_data;
  if (!p) return reason(ni, "missing parameters");
  if (check_conv_common(ni, p->padding, p->stride_width, p->stride_height, p->dilation_width_factor,
                        p->dilation_height_factor, p->activation))
    return -1;
  int in[4], w[4];
  if (ni_shape(ni, ni_input(ni, 0), in) != 4) return reason(ni, "input 0 must have rank 4");
  if (ni_shape(ni, ni_input(ni, 1), w) != 4 || w[0] != 1) return reason(ni, "weights must have shape [1,KH,KW,C]");
  if (w[3] % in[GD_C] != 0)
    return reason(ni, "weight channels %d are not a multiple of the input channels %d", w[3], in[GD_C]);
  /* The multiplier follows from the shapes; older converters leave the
   * param at 0 or 1 for multiplier-1 models. */
  int m = w[3] / in[GD_C];
  if (p->depth_multiplier > 0 && p->depth_multiplier != m)
    return reason(ni, "depth_multiplier %d disagrees with the shapes (%d)", p->depth_multiplier, m);
  int b = ni_input(ni, 2);
  if (b >= 0 && mv_elements(ni->mv, b) != (size_t)w[3])
    return reason(ni, "bias has %zu elements, expected %d", mv_elements(ni->mv, b), w[3]);
  if (check_conv_sizes(ni, in, w, p->stride_height, p->stride_width, p->dilation_height_factor,
                       p->dilation_width_factor, w[3], 1))
    return -1;
  int out[4];
  conv_output(in, p->padding, w[1], w[2], p->stride_height, p->stride_width, p->dilation_height_factor,
              p->dilation_width_factor, w[3], out);
  if (out[GD_H] < 1 || out[GD_W] < 1) return reason(ni, "the filter is larger than the padded input");
  return check_output_shape(ni, ni_output(ni, 0), out);
}

static int lower_conv_common(Lowering* lw, const NodeInfo* ni, GOp op, int padding, int sw, int sh, int dw, int dh,
                             int act) {
  int in = lower_tensor(lw, ni_input(ni, 0));
  int w = in < 0 ? -1 : lower_tensor(lw, ni_input(ni, 1));
  int b = (w < 0 || ni_input(ni, 2) < 0) ? -1 : lower_tensor(lw, ni_input(ni, 2));
  if (w < 0 || (ni_input(ni, 2) >= 0 && b < 0)) return -1;
  int out = lower_tensor(lw, ni_output(ni, 0));
  if (out < 0) return -1;
  GNode* n = graph_add_node_io(lw->g, op, in, out);
  if (!n) return lower_error(lw, "out of memory");
  n->act = act;
  const GTensor* src = &lw->g->tensors[in];
  const GTensor* wt = &lw->g->tensors[w];
  n->p.conv.kh = wt->shape[1];
  n->p.conv.kw = wt->shape[2];
  n->p.conv.sx = sw;
  n->p.conv.sy = sh;
  n->p.conv.dx = dw;
  n->p.conv.dy = dh;
  n->p.conv.pad_y = conv_pad_before(padding, src->shape[GD_H], n->p.conv.kh, sh, dh);
  n->p.conv.pad_x = conv_pad_before(padding, src->shape[GD_W], n->p.conv.kw, sw, dw);
  n->p.conv.weights = w;
  n->p.conv.bias = b;
  n->p.conv.multiplier = op == GOP_DEPTHWISE ? wt->shape[3] / src->shape[GD_C] : 1;
  return 0;
}

static int lower_conv2d(Lowering* lw, const NodeInfo* ni) {
  const TfLiteConvParams* p = ni->node->builtin_data;
  return lower_conv_common(lw, ni, GOP_CONV2D, p->padding, p->stride_width, p->stride_height,
                           p->dilation_width_factor, p->dilation_height_factor, p->activation);
}

static int lower_depthwise(Lowering* lw, const NodeInfo* ni) {
  const TfLiteDepthwiseConvParams* p = ni->node->builtin_data;
  return lower_conv_common(lw, ni, GOP_DEPTHWISE, p->padding, p->stride_width, p->stride_height,
                           p->dilation_width_factor, p->dilation_height_factor, p->activation);
}

/* Bias as [S_out] float4, zero padded (a missing bias is all zeros). */
static float* pack_bias(const GTensor* bias, int cout) {
  int slices = (cout + 3) / 4;
  float* b = calloc((size_t)slices * 4, sizeof(float));
  if (b && bias) memcpy(b, bias->data, (size_t)cout * sizeof(float));
  return b;
}

/* conv2d_x4_prelu's src_alpha: the PRELU's alpha as a float4 per input
 * slice (a scalar repeated; 0 past the channels, whose lanes are 0), NULL
 * on error (karg_done then fails the launch). */
static cl_mem upload_src_alpha(Encoder* ex, const GNode* n) {
  const GTensor* a = &ex->g.tensors[n->inputs[n->p.conv.prelu_input]];
  int cin = ex->g.tensors[n->inputs[0]].shape[GD_C], slices = (cin + 3) / 4;
  float* v = calloc((size_t)slices * 4, sizeof(float));
  if (!v) return ex_fail(ex, "out of memory"), NULL;
  for (int c = 0; c < cin; ++c) v[c] = a->data[a->shape[GD_C] == 1 ? 0 : c];
  cl_mem m = ex_upload(ex, v, (size_t)slices * 4 * sizeof(float));
  free(v);
  return m;
}

/* Records node `node`'s launch of variant v, NULL on error. A node with an
 * EPI_UNARY step or an EPI_CHAIN is built with -DEPI_UN=1 (common.cl): that
 * code only in the programs that run one; the steps' unary and binary ops
 * are declared (ex_math). */
static KernelRef dispatch_conv(Encoder* ex, const GNode* n, KernelVariant* v, int node) {
  size_t len = strlen(v->defines);
  if (epilogue_needs_un(&ex->g, n)) {
    int w = snprintf(v->defines + len, sizeof(v->defines) - len, "%s" EPI_UN_DEFINE, len ? " " : "");
    if (w < 0 || (size_t)w >= sizeof(v->defines) - len)
      return ex_fail(ex, "%s: its build defines are too long", v->kernel), NULL;
  }
  KernelRef k = ex_dispatch_variant(ex, v, node);
  unsigned un, bin;
  epilogue_math(n, &un, &bin);
  if (k) ex_math(k, un, bin);
  return k;
}

/* Arguments shared by the conv kernels of every set; the variant's form
 * says which geometry they take (conv2d_1x1 none, the fixed-filter
 * depthwise kernels only the padding, dw_conv2d_1x1_gpu the depthwise's
 * weights, geometry and activation, pw_depthwise_gpu the 1x1's weights,
 * the geometry and the 1x1's activation: `first` holds the fused first
 * op's weights and bias, NULL otherwise). */
static int set_conv_args(Encoder* ex, KernelRef k, const GNode* n, const KernelVariant* v, cl_mem weights,
                         cl_mem bias, const cl_mem first[2]) {
  int geometry = v->form, total = (int)v->total;
  /* A GPU-set kernel ignores total but with CONVG_DST_BHWC, where it is the
   * element its output starts at in the staging buffer (output_direct.c). */
  if (ex->g.tensors[n->outputs[0]].bhwc_out) total = (int)ex->g.tensors[n->outputs[0]].bhwc_offset;
  const GTensor* src = &ex->g.tensors[n->inputs[0]];
  const GTensor* dst = &ex->g.tensors[n->outputs[0]];
  cl_mem alpha, residual;
  int epi[4], res_slices;
  if (epilogue_args(ex, n, v, bias, &alpha, &residual, epi, &res_slices)) return -1;
  KArgs a = {k, 0, CL_SUCCESS, 0};
  karg_mem(&a, ex_tensor_mem(ex, n->inputs[0]));
  karg_mem(&a, ex_tensor_mem(ex, n->outputs[0]));
  karg_mem(&a, weights);
  karg_mem(&a, bias);
  karg_shape(&a, src->shape);
  karg_shape(&a, dst->shape);
  if (geometry == CONV_ARGS_PAD_ONLY) karg_int2(&a, n->p.conv.pad_x, n->p.conv.pad_y);
  if (geometry == CONV_ARGS_SCALED || geometry == CONV_ARGS_SCALED_ADD)
    karg_mem(&a, ex_tensor_mem(ex, n->inputs[n->p.conv.scale_input]));
  if (geometry == CONV_ARGS_SCALED_ADD) karg_mem(&a, ex_tensor_mem(ex, n->inputs[n->p.conv.add_input]));
  if (geometry == CONV_ARGS_UP2) karg_int(&a, n->p.conv.src_via);
  if (geometry == CONV_ARGS_DW_1X1 || geometry == CONV_ARGS_PW_DW) {
    karg_mem(&a, first[0]);
    karg_mem(&a, first[1]);
  }
  if (geometry == CONV_ARGS_GEOMETRY || geometry == CONV_ARGS_DW_1X1 || geometry == CONV_ARGS_PW_DW ||
      geometry == CONV_ARGS_PRELU) {
    karg_int4(&a, n->p.conv.kw, n->p.conv.kh, n->p.conv.sx, n->p.conv.sy);
    karg_int4(&a, n->p.conv.pad_x, n->p.conv.pad_y, n->p.conv.dx, n->p.conv.dy);
  }
  if (geometry == CONV_ARGS_DW_1X1) karg_int(&a, n->p.conv.dw_act);
  if (geometry == CONV_ARGS_PW_DW) karg_int(&a, n->p.conv.first_act);
  karg_int(&a, n->act);
  karg_mem(&a, alpha);
  karg_mem(&a, residual);
  karg_int4(&a, epi[0], epi[1], epi[2], epi[3]);
  karg_int(&a, res_slices);
  /* The multiplier kernel also runs multiplier 1 (the VM's fine bodies, select_conv.c). */
  if (strcmp(v->kernel, "depthwise_conv2d_multiplier") == 0) karg_int(&a, n->p.conv.multiplier);
  if (geometry == CONV_ARGS_PW_DW) {
    /* The depthwise's output shape, 1 where a MEAN over H and W took it. */
    int mean = n->p.conv.mean_of >= 0;
    const int* d = ex->g.tensors[mean ? n->p.conv.mean_of : n->outputs[0]].shape;
    karg_int4(&a, d[GD_W], d[GD_H], mean, 0);
  }
  karg_int(&a, total);
  if (geometry == CONV_ARGS_PRELU) karg_mem(&a, upload_src_alpha(ex, n));
  return karg_done(ex, &a);
}

/* conv2d_x4 over its reduction in two phases (select_conv_split): partials
 * per chunk of `chunk` steps into a scratch buffer of FP32 float4s, then
 * their sum with the activation and the fused epilogue. */
static int encode_conv_split(Encoder* ex, int node, const KernelVariant* x4, cl_mem wm, cl_mem bm, int chunk) {
  const GNode* n = &ex->g.nodes[node];
  const int* ss = ex->g.tensors[n->inputs[0]].shape;
  const int* ds = ex->g.tensors[n->outputs[0]].shape;
  int steps = n->p.conv.kh * n->p.conv.kw * ((ss[GD_C] + 3) / 4);
  int chunks = (steps + chunk - 1) / chunk;
  size_t tiles = x4->total;
  cl_mem alpha, residual, part = ex_buffer(ex, CL_MEM_READ_WRITE, tiles * (size_t)chunks * 16 * sizeof(float), NULL);
  int epi[4], res_slices;
  if (!part || epilogue_args(ex, n, x4, bm, &alpha, &residual, epi, &res_slices)) return -1;
  KArgs a;
  if (split_first_pass(ex, node, "conv2d_x4_split", tiles * (size_t)chunks, part, wm, bm, &a)) return -1;
  karg_int4(&a, n->p.conv.kw, n->p.conv.kh, n->p.conv.sx, n->p.conv.sy);
  karg_int4(&a, n->p.conv.pad_x, n->p.conv.pad_y, n->p.conv.dx, n->p.conv.dy);
  karg_int(&a, chunk);
  karg_int(&a, (int)(tiles * (size_t)chunks));
  if (karg_done(ex, &a)) return -1;
  KernelVariant v = variant_1d("split_k.cl", "conv2d_x4_sum", phwc4_items(ds));
  KernelRef k = dispatch_conv(ex, n, &v, node);
  if (!k) return -1;
  a = (KArgs){k, 0, CL_SUCCESS, 0};
  karg_mem(&a, part);
  karg_mem(&a, ex_tensor_mem(ex, n->outputs[0]));
  karg_shape(&a, ds);
  karg_int(&a, chunks);
  karg_int(&a, n->act);
  karg_mem(&a, alpha);
  karg_mem(&a, residual);
  karg_int4(&a, epi[0], epi[1], epi[2], epi[3]);
  karg_int(&a, res_slices);
  karg_int(&a, (int)v.total);
  return karg_done(ex, &a);
}

static int encode_conv2d(Encoder* ex, int node) {
  const GNode* n = &ex->g.nodes[node];
  const GTensor* src = &ex->g.tensors[n->inputs[0]];
  const GTensor* bias = n->p.conv.bias >= 0 ? &ex->g.tensors[n->p.conv.bias] : NULL;
  KernelVariant v;
  select_conv2d(&ex->target, &ex->g, n, &v);
  /* The input_direct pass keeps a source BHWC only with the GPU set (fuse.c). */
  if (src->bhwc && strcmp(v.kernel, "conv2d_bhwc_gpu") != 0)
    return ex_fail(ex, "%s cannot read a BHWC source", v.kernel);
  if (n->p.conv.scale_input && v.form != (n->p.conv.add_input ? CONV_ARGS_SCALED_ADD : CONV_ARGS_SCALED))
    return ex_fail(ex, "%s cannot scale its source", v.kernel);
  if (n->p.conv.src_via && v.form != CONV_ARGS_UP2)
    return ex_fail(ex, "%s cannot upsample its source", v.kernel);
  if (n->p.conv.prelu_input && v.form != CONV_ARGS_PRELU)
    return ex_fail(ex, "%s cannot read its source through a PRELU", v.kernel);
  cl_mem wm, bm;
  if (upload_dense_weights_blocked(ex, &ex->g.tensors[n->p.conv.weights], src->shape[GD_C], bias, v.weight_block,
                                   &wm, &bm))
    return -1;
  int chunk = strcmp(v.kernel, "conv2d_x4") == 0 ? select_conv_split(&ex->target, &ex->g, n) : 0;
  if (chunk) return encode_conv_split(ex, node, &v, wm, bm, chunk);
  KernelRef k = dispatch_conv(ex, n, &v, node);
  return k ? set_conv_args(ex, k, n, &v, wm, bm, NULL) : -1;
}

/* A depthwise's weights as [S][KH][KW] float4 over output channels and
 * its bias as [S] float4, zero padded. */
static int upload_depthwise(Encoder* ex, const GNode* n, cl_mem* wm, cl_mem* bm) {
  const GTensor* wt = &ex->g.tensors[n->p.conv.weights];
  int kh = wt->shape[1], kw = wt->shape[2], cout = wt->shape[3];
  int so = (cout + 3) / 4;
  /* [S][KH][KW] float4 over output channels, zero padded. */
  size_t count = (size_t)so * kh * kw * 4;
  float* w = calloc(count, sizeof(float));
  float* b = pack_bias(n->p.conv.bias >= 0 ? &ex->g.tensors[n->p.conv.bias] : NULL, cout);
  if (!w || !b) {
    free(w);
    free(b);
    return ex_fail(ex, "out of memory repacking weights");
  }
  for (int y = 0; y < kh; ++y)
    for (int x = 0; x < kw; ++x)
      for (int c = 0; c < cout; ++c)
        w[(((size_t)(c / 4) * kh + y) * kw + x) * 4 + c % 4] = wt->data[((size_t)y * kw + x) * cout + c];
  *wm = ex_upload(ex, w, count * sizeof(float));
  *bm = *wm ? ex_upload(ex, b, (size_t)so * 4 * sizeof(float)) : NULL;
  free(w);
  free(b);
  return *bm ? 0 : -1;
}

static int encode_depthwise(Encoder* ex, int node) {
  const GNode* n = &ex->g.nodes[node];
  cl_mem wm, bm;
  if (upload_depthwise(ex, n, &wm, &bm)) return -1;
  KernelVariant v;
  select_depthwise(&ex->target, &ex->g, n, &v);
  KernelRef k = dispatch_conv(ex, n, &v, node);
  return k ? set_conv_args(ex, k, n, &v, wm, bm, NULL) : -1;
}

/* A depthwise fused into the 1x1 after it (fuse_dw_conv.c): the 1x1's
 * weights blocked as conv2d_1x1_gpu takes them, the depthwise's as
 * depthwise_gpu does. */
static int encode_dw_conv1x1(Encoder* ex, int node) {
  const GNode* n = &ex->g.nodes[node];
  const GTensor* src = &ex->g.tensors[n->inputs[0]];
  const GTensor* bias = n->p.conv.pw_bias >= 0 ? &ex->g.tensors[n->p.conv.pw_bias] : NULL;
  cl_mem dw[2], wm, bm;
  if (upload_depthwise(ex, n, &dw[0], &dw[1])) return -1;
  KernelVariant v;
  select_dw_conv1x1(&ex->target, &ex->g, n, &v);
  if (upload_dense_weights_blocked(ex, &ex->g.tensors[n->p.conv.pw_weights], src->shape[GD_C], bias,
                                   v.weight_block, &wm, &bm))
    return -1;
  KernelRef k = dispatch_conv(ex, n, &v, node);
  return k ? set_conv_args(ex, k, n, &v, wm, bm, dw) : -1;
}

/* A 1x1 fused into the depthwise after it (fuse_pw_dw.c): the depthwise's
 * weights as depthwise_gpu takes them, the 1x1's as fully_connected does
 * ([S_mid][S_in][4 in-lanes] float4 blocks, bias [S_mid] float4). */
static int encode_pw_depthwise(Encoder* ex, int node) {
  const GNode* n = &ex->g.nodes[node];
  const GTensor* src = &ex->g.tensors[n->inputs[0]];
  const GTensor* bias = n->p.conv.first_bias >= 0 ? &ex->g.tensors[n->p.conv.first_bias] : NULL;
  cl_mem pw[2], wm, bm;
  if (upload_depthwise(ex, n, &wm, &bm) ||
      upload_dense_weights(ex, &ex->g.tensors[n->p.conv.first_weights], src->shape[GD_C], bias, &pw[0], &pw[1]))
    return -1;
  KernelVariant v;
  select_pw_depthwise(&ex->target, &ex->g, n, &v);
  KernelRef k = dispatch_conv(ex, n, &v, node);
  return k ? set_conv_args(ex, k, n, &v, wm, bm, pw) : -1;
}

/* The TFLite ops this file runs (op_table.c lists them). */
const OpDef kOpConv2d = {.builtin_code = kBuiltinConv2d, .max_version = 6,
    .check = check_conv2d, .lower = lower_conv2d,
    .constraints = "constant weights (float32, or float16/int8 behind a folded DEQUANTIZE); stride, dilation >= 1; "
     "SAME/VALID; optional bias; fused activation"};
const OpDef kOpDepthwiseConv2d = {.builtin_code = kBuiltinDepthwiseConv2d, .max_version = 6,
    .check = check_depthwise, .lower = lower_depthwise,
    .constraints = "constant weights; any depth_multiplier (upstream: 1 unless one input channel); stride, dilation >= 1; "
     "fused activation"};
