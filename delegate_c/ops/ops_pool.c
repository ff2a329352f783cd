/* MAX_POOL_2D and AVERAGE_POOL_2D (opencl_kernels/pool.cl); a pool over
 * the whole input runs as a reduction (ops_reduce.c). */
#include "encode/encode.h"
#include "ops/op_table.h"
#include "model/tflite_builtins.h"
#include "ops/op_kinds.h"

/* The graph ops this file encodes (graph.h: a node points at its op). */
static int encode_pool(Encoder* ex, int node);
const GOpDesc kGOpPool = {"POOL", encode_pool};

static int check_pool(const NodeInfo* ni) {
  const TfLitePoolParams* p = ni->node->builtin_data;
  if (!p) return reason(ni, "missing parameters");
  if (ni_num_inputs(ni) != 1 || ni_num_outputs(ni) != 1) return reason(ni, "needs 1 input and 1 output");
  if (mv_is_const(ni->mv, ni_input(ni, 0))) return reason(ni, "input 0 is a constant");
  if (p->filter_width < 1 || p->filter_height < 1) return reason(ni, "filter %dx%d must be >= 1", p->filter_width, p->filter_height);
  if (p->stride_width < 1 || p->stride_height < 1) return reason(ni, "stride %dx%d must be >= 1", p->stride_width, p->stride_height);
  if (p->padding != kTfLitePaddingSame && p->padding != kTfLitePaddingValid) return reason(ni, "padding %d is unknown", p->padding);
  if (check_activation(ni, p->activation)) return -1;
  int in[4];
  if (ni_shape(ni, ni_input(ni, 0), in) != 4) return reason(ni, "input 0 must have rank 4");
  if (check_window(ni, "height", in[GD_H], p->filter_height, p->stride_height, 1) ||
      check_window(ni, "width", in[GD_W], p->filter_width, p->stride_width, 1))
    return -1;
  return 0;
}

/* TFLite's SAME/VALID output size (check_pool has bounded the window). */
static int infer_pool(const NodeInfo* ni, int k, int out[4]) {
  const TfLitePoolParams* p = ni->node->builtin_data;
  int in[4];
  (void)k;
  ni_shape(ni, ni_input(ni, 0), in);
  out[GD_B] = in[GD_B], out[GD_C] = in[GD_C];
  out[GD_H] = conv_out_size(p->padding, in[GD_H], p->filter_height, p->stride_height, 1);
  out[GD_W] = conv_out_size(p->padding, in[GD_W], p->filter_width, p->stride_width, 1);
  if (out[GD_H] < 1 || out[GD_W] < 1) return reason(ni, "the filter is larger than the input");
  return 0;
}

/* A window that is exactly the whole input: output 1x1, no padding. */
static int is_global_pool(const TfLitePoolParams* p, const int in[4], const int out[4]) {
  return out[GD_H] == 1 && out[GD_W] == 1 && p->filter_height == in[GD_H] && p->filter_width == in[GD_W] &&
         conv_pad_before(p->padding, in[GD_H], p->filter_height, p->stride_height, 1) == 0 &&
         conv_pad_before(p->padding, in[GD_W], p->filter_width, p->stride_width, 1) == 0;
}

static int lower_pool(Lowering* lw, const NodeInfo* ni) {
  const TfLitePoolParams* p = ni->node->builtin_data;
  int in = lower_tensor(lw, ni_input(ni, 0));
  int out = in < 0 ? -1 : lower_tensor(lw, ni_output(ni, 0));
  if (out < 0) return -1;
  /* A global pool is a MEAN (or REDUCE_MAX) over H and W: the node those
   * ops lower to (ops_reduce.c: keep_dims shape, so no reshape). pool2d
   * gives one work-item a whole window, serially: selfie_segmentation's ten
   * global average pools (up to 128x128) took 3.9 ms on an H100, the same
   * pools as MEAN (the landscape model) 0.1 ms, since the GPU set splits a
   * long reduction over a work-group (select_reduce.c). The reduce kernels
   * apply the node's fused activation, as pool2d does. */
  if (is_global_pool(p, lw->g->tensors[in].shape, lw->g->tensors[out].shape)) {
    GNode* r = graph_add_node_io(lw->g, GOP_REDUCE, in, out);
    if (!r) return lower_error(lw, "out of memory");
    r->act = p->activation;
    r->p.reduce.op = ni->reg->builtin_code == kBuiltinMaxPool2d ? REDUCE_MAX : REDUCE_MEAN;
    r->p.reduce.axes[GD_H] = r->p.reduce.axes[GD_W] = 1; /* B and C stay 0 (graph_add_node zeroes) */
    return 0;
  }
  GNode* n = graph_add_node(lw->g, GOP_POOL);
  if (!n) return lower_error(lw, "out of memory");
  const GTensor* src = &lw->g->tensors[in];
  n->inputs[0] = in;
  n->num_inputs = 1;
  n->outputs[0] = out;
  n->num_outputs = 1;
  n->act = p->activation;
  n->p.pool.kw = p->filter_width;
  n->p.pool.kh = p->filter_height;
  n->p.pool.sx = p->stride_width;
  n->p.pool.sy = p->stride_height;
  n->p.pool.pad_x = conv_pad_before(p->padding, src->shape[GD_W], p->filter_width, p->stride_width, 1);
  n->p.pool.pad_y = conv_pad_before(p->padding, src->shape[GD_H], p->filter_height, p->stride_height, 1);
  n->p.pool.is_max = ni->reg->builtin_code == kBuiltinMaxPool2d;
  return 0;
}

static int encode_pool(Encoder* ex, int node) {
  const GNode* n = &ex->g.nodes[node];
  KArgs a;
  if (ex_dispatch_src_dst(ex, node, "pool.cl", "pool2d", &a)) return -1;
  karg_int4(&a, n->p.pool.kw, n->p.pool.kh, n->p.pool.sx, n->p.pool.sy);
  karg_int2(&a, n->p.pool.pad_x, n->p.pool.pad_y);
  karg_int(&a, n->p.pool.is_max);
  karg_int(&a, n->act);
  karg_int(&a, a.total);
  return karg_done(ex, &a);
}

/* The TFLite ops this file runs (op_table.c lists them). */
const OpDef kOpAveragePool2d = {.builtin_code = kBuiltinAveragePool2d, .max_version = 2,
    .check = check_pool, .infer = infer_pool, .lower = lower_pool,
    .constraints = "filter and stride > 0; SAME/VALID; fused activation"};
const OpDef kOpMaxPool2d = {.builtin_code = kBuiltinMaxPool2d, .max_version = 2,
    .check = check_pool, .infer = infer_pool, .lower = lower_pool,
    .constraints = "filter and stride > 0; SAME/VALID; fused activation"};
