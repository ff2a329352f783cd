/* MediaPipe's MaxPoolingWithArgmax2D and MaxUnpooling2D (custom ops; the
 * upstream OSS GPU delegate has both). Their custom_options are the raw
 * bytes of a TfLitePoolParams: padding, stride_w, stride_h, filter_w,
 * filter_h, activation (int32 each; the computed padding after them is
 * not read). Kernels in opencl_kernels/pool_argmax.cl.
 *   MaxPoolingWithArgmax2D: input [B,H,W,C] -> values and argmax indices,
 *     both [B,OH,OW,C] with TFLite's SAME/VALID sizes; fused activation on
 *     the values.
 *   MaxUnpooling2D: values and indices [B,H,W,C] -> [B,H*kh,W*kw,C]; the
 *     padding type is ignored and the leading pad is
 *     max(((H - 1) * stride + kh - OH) / 2, 0), as MediaPipe computes it. */
#include <string.h>

#include "encode/encode.h"
#include "ops/op_table.h"
#include "model/tflite_builtins.h"
#include "ops/op_kinds.h"

/* The graph ops this file encodes (graph.h: a node points at its op). */
static int encode_pool_argmax(Encoder* ex, int node);
/* MediaPipe MaxPoolingWithArgmax2D: p.pool; outputs (values, indices) */
const GOpDesc kGOpMaxPoolArgmax = {"MAX_POOL_ARGMAX", encode_pool_argmax};
static int encode_unpool(Encoder* ex, int node);
/* MediaPipe MaxUnpooling2D: p.pool; inputs (values, indices) */
const GOpDesc kGOpMaxUnpool = {"MAX_UNPOOL", encode_unpool};

#define POOL_OPTION_BYTES 24 /* the six leading int32s of TfLitePoolParams */

static int raw_pool_params(const NodeInfo* ni, TfLitePoolParams* p) {
  if (!ni->node->custom_initial_data || ni->node->custom_initial_data_size < POOL_OPTION_BYTES)
    return reason(ni, "custom_options hold %d bytes; a TfLitePoolParams (at least %d bytes) is required",
                  ni->node->custom_initial_data ? ni->node->custom_initial_data_size : 0, POOL_OPTION_BYTES);
  memset(p, 0, sizeof(*p));
  memcpy(p, ni->node->custom_initial_data, POOL_OPTION_BYTES);
  if (p->filter_width < 1 || p->filter_height < 1)
    return reason(ni, "filter %dx%d must be >= 1", p->filter_width, p->filter_height);
  if (p->stride_width < 1 || p->stride_height < 1)
    return reason(ni, "stride %dx%d must be >= 1", p->stride_width, p->stride_height);
  return 0;
}

/* 64-bit: check_unpool bounded (in - 1) * stride + k to an int. */
static int unpool_pad(int in, int out, int k, int stride) {
  int64_t total = ((int64_t)in - 1) * stride + k - out;
  return total > 0 ? (int)(total / 2) : 0;
}

static int check_pool_argmax(const NodeInfo* ni) {
  TfLitePoolParams p;
  if (check_io(ni, 1, 2) || raw_pool_params(ni, &p)) return -1;
  if (p.padding != kTfLitePaddingSame && p.padding != kTfLitePaddingValid)
    return reason(ni, "padding %d is unknown (SAME=1 or VALID=2)", p.padding);
  if (check_activation(ni, p.activation)) return -1;
  int in[4];
  if (ni_shape(ni, ni_input(ni, 0), in) != 4) return reason(ni, "input 0 must have rank 4");
  if (check_window(ni, "height", in[GD_H], p.filter_height, p.stride_height, 1) ||
      check_window(ni, "width", in[GD_W], p.filter_width, p.stride_width, 1))
    return -1;
  int out[4] = {in[GD_B], conv_out_size(p.padding, in[GD_H], p.filter_height, p.stride_height, 1),
                conv_out_size(p.padding, in[GD_W], p.filter_width, p.stride_width, 1), in[GD_C]};
  if (out[GD_H] < 1 || out[GD_W] < 1) return reason(ni, "the filter is larger than the input");
  if (check_output_shape(ni, ni_output(ni, 0), out)) return -1;
  return check_output_shape(ni, ni_output(ni, 1), out);
}

static int check_unpool(const NodeInfo* ni) {
  TfLitePoolParams p;
  if (check_io(ni, 2, 1) || raw_pool_params(ni, &p)) return -1;
  int in[4], idx[4];
  if (ni_shape(ni, ni_input(ni, 0), in) != 4) return reason(ni, "input 0 must have rank 4");
  if (ni_shape(ni, ni_input(ni, 1), idx) != 4 || memcmp(in, idx, sizeof(in)) != 0)
    return reason(ni, "input 1 (indices) must have the shape of input 0");
  const int64_t out[4] = {in[GD_B], (int64_t)in[GD_H] * p.filter_height, (int64_t)in[GD_W] * p.filter_width,
                          in[GD_C]};
  /* The leading pad's (in - 1) * stride + k must fit an int too. */
  if (((int64_t)in[GD_H] - 1) * p.stride_height + p.filter_height > INT32_MAX ||
      ((int64_t)in[GD_W] - 1) * p.stride_width + p.filter_width > INT32_MAX)
    return reason(ni, "stride %dx%d over a %dx%d input overflows the window arithmetic", p.stride_width,
                  p.stride_height, in[GD_W], in[GD_H]);
  return check_output_shape64(ni, ni_output(ni, 0), out);
}

static int lower_common(Lowering* lw, const NodeInfo* ni, GOp op, int n_in, int n_out) {
  TfLitePoolParams p;
  if (raw_pool_params(ni, &p)) return -1; /* the parse wrote lw->err */
  int ids[4];
  for (int k = 0; k < n_in + n_out; ++k) {
    ids[k] = lower_tensor(lw, k < n_in ? ni_input(ni, k) : ni_output(ni, k - n_in));
    if (ids[k] < 0) return -1;
  }
  GNode* n = graph_add_node(lw->g, op);
  if (!n) return lower_error(lw, "out of memory");
  for (int k = 0; k < n_in; ++k) n->inputs[k] = ids[k];
  for (int k = 0; k < n_out; ++k) n->outputs[k] = ids[n_in + k];
  n->num_inputs = n_in;
  n->num_outputs = n_out;
  const int* s = lw->g->tensors[ids[0]].shape;
  const int* d = lw->g->tensors[ids[n_in]].shape;
  n->p.pool.kw = p.filter_width;
  n->p.pool.kh = p.filter_height;
  n->p.pool.sx = p.stride_width;
  n->p.pool.sy = p.stride_height;
  if (op == GOP_MAX_POOL_ARGMAX) {
    n->act = p.activation;
    n->p.pool.pad_x = conv_pad_before(p.padding, s[GD_W], p.filter_width, p.stride_width, 1);
    n->p.pool.pad_y = conv_pad_before(p.padding, s[GD_H], p.filter_height, p.stride_height, 1);
    n->p.pool.is_max = 1;
  } else {
    n->p.pool.pad_x = unpool_pad(s[GD_W], d[GD_W], p.filter_width, p.stride_width);
    n->p.pool.pad_y = unpool_pad(s[GD_H], d[GD_H], p.filter_height, p.stride_height);
  }
  return 0;
}

static int lower_pool_argmax(Lowering* lw, const NodeInfo* ni) { return lower_common(lw, ni, GOP_MAX_POOL_ARGMAX, 1, 2); }
static int lower_unpool(Lowering* lw, const NodeInfo* ni) { return lower_common(lw, ni, GOP_MAX_UNPOOL, 2, 1); }

static int encode_pool_argmax(Encoder* ex, int node) {
  const GNode* n = &ex->g.nodes[node];
  KArgs a;
  if (ex_dispatch_src_dst(ex, node, "pool_argmax.cl", "max_pool_with_argmax", &a)) return -1;
  karg_mem(&a, ex_tensor_mem(ex, n->outputs[1]));
  karg_int4(&a, n->p.pool.kw, n->p.pool.kh, n->p.pool.sx, n->p.pool.sy);
  karg_int2(&a, n->p.pool.pad_x, n->p.pool.pad_y);
  karg_int(&a, n->act);
  karg_int(&a, a.total);
  return karg_done(ex, &a);
}

static int encode_unpool(Encoder* ex, int node) {
  const GNode* n = &ex->g.nodes[node];
  KArgs a;
  if (ex_dispatch_src_dst(ex, node, "pool_argmax.cl", "max_unpooling", &a)) return -1;
  karg_mem(&a, ex_tensor_mem(ex, n->inputs[1]));
  karg_int4(&a, n->p.pool.kw, n->p.pool.kh, n->p.pool.sx, n->p.pool.sy);
  karg_int2(&a, n->p.pool.pad_x, n->p.pool.pad_y);
  karg_int(&a, a.total);
  return karg_done(ex, &a);
}

/* The TFLite ops this file runs (op_table.c lists them). */
const OpDef kOpCustomMaxPoolingWithArgmax2D = {.builtin_code = kBuiltinCustom, .custom_name = "MaxPoolingWithArgmax2D", .max_version = 2,
    .check = check_pool_argmax, .lower = lower_pool_argmax,
    .constraints = "MediaPipe: 1 input, 2 outputs (values, argmax within the window + 0.1, as float); custom_options = raw "
     "TfLitePoolParams; filter and stride > 0; SAME/VALID; fused activation"};
const OpDef kOpCustomMaxUnpooling2D = {.builtin_code = kBuiltinCustom, .custom_name = "MaxUnpooling2D", .max_version = 1,
    .check = check_unpool, .lower = lower_unpool,
    .constraints = "MediaPipe: values and indices [B,H,W,C] -> [B,H*kh,W*kw,C]; custom_options = raw TfLitePoolParams; "
     "filter and stride > 0; an index outside its window is dropped (the CPU writes it outside the window)"};
