/* FULLY_CONNECTED (opencl_kernels/fully_connected.cl): checks, lowering,
 * weight repacking and kernel dispatch.
 *
 * TFLite flattens the input into rows of K = weights.dims[1] values and
 * writes [rows, O] (or the input's dims with the last replaced by O under
 * keep_num_dims). When the input's last dim is K, row r is the r-th pixel
 * of the input's BHWC shape and of the output's: the kernel maps both on
 * its own. Otherwise a reshape to [rows, K] goes first. */
#include <stdlib.h>
#include <string.h>

#include "encode/encode.h"
#include "ops/op_table.h"
#include "select/selectors.h"
#include "model/tflite_builtins.h"
#include "ops/op_kinds.h"

/* The graph ops this file encodes (graph.h: a node points at its op). */
static int encode_fully_connected(Encoder* ex, int node);
const GOpDesc kGOpFullyConnected = {"FULLY_CONNECTED", encode_fully_connected};

static int check_fully_connected(const NodeInfo* ni) {
  const TfLiteFullyConnectedParams* p = ni->node->builtin_data;
  if (!p) return reason(ni, "missing parameters");
  int n = ni_num_inputs(ni);
  if (n < 2 || n > 3 || ni_num_outputs(ni) != 1)
    return reason(ni, "needs 2-3 inputs and 1 output, has %d and %d", n, ni_num_outputs(ni));
  if (p->weights_format != 0)
    return reason(ni, "weights_format %d (shuffled) is not supported; only the default format is", p->weights_format);
  int in = ni_input(ni, 0), w = ni_input(ni, 1), b = ni_input(ni, 2);
  if (in < 0 || w < 0) return reason(ni, "input 0 or 1 is missing");
  if (mv_is_const(ni->mv, in)) return reason(ni, "input 0 is a constant; a runtime input is required");
  if (!mv_is_const(ni->mv, w))
    return reason(ni, "input 1 (weights) is a runtime tensor; only constant weights are supported");
  /* A folded DEQUANTIZE reads as FLOAT32 here. INT8/UINT8 weights read
   * directly (quantized models, and hybrid ones whose input is float) are
   * dequantized at prepare, like an int32 bias with its scale. */
  int wtype = mv_tensor(ni->mv, w)->type;
  if (wtype != kTfLiteFloat32 && wtype != kTfLiteInt8 && wtype != kTfLiteUInt8)
    return reason(ni, "weights have type %s; FLOAT32, INT8/UINT8 (quantized) or a DEQUANTIZE to FLOAT32 is required",
                  type_name(wtype));
  if (b >= 0) {
    if (!mv_is_const(ni->mv, b)) return reason(ni, "input 2 (bias) is a runtime tensor; it must be constant");
    int btype = mv_tensor(ni->mv, b)->type;
    if (btype != kTfLiteFloat32 && btype != kTfLiteInt32)
      return reason(ni, "bias has type %s; FLOAT32 or quantized INT32 is required", type_name(btype));
  }
  if (p->activation == kTfLiteActTanh || p->activation == kTfLiteActSigmoid)
    return reason(ni, "fused activation %s, which TFLite's FULLY_CONNECTED refuses (only NONE and the RELU family)",
                  p->activation == kTfLiteActTanh ? "TANH" : "SIGMOID");
  if (check_activation(ni, p->activation)) return -1;
  int wd[8];
  if (mv_dims(ni->mv, w, wd, 8) != 2) return reason(ni, "weights must have rank 2 [O,K]");
  int units = wd[0], depth = wd[1];
  if (b >= 0 && mv_elements(ni->mv, b) != (size_t)units)
    return reason(ni, "bias has %zu elements, expected %d", mv_elements(ni->mv, b), units);
  int dims[8];
  int rank = mv_dims(ni->mv, in, dims, 8);
  if (rank < 1 || rank > 4) return reason(ni, "input 0 must have rank 1-4, has %d", rank);
  size_t elements = mv_elements(ni->mv, in);
  if (elements % (size_t)depth != 0)
    return reason(ni, "input 0 holds %zu elements, not a multiple of the weights' depth %d", elements, depth);
  int out_dims[4], out_rank;
  if (p->keep_num_dims) {
    if (dims[rank - 1] != depth)
      return reason(ni, "keep_num_dims needs the input's last dim (%d) to equal the weights' depth %d",
                    dims[rank - 1], depth);
    memcpy(out_dims, dims, (size_t)rank * sizeof(int));
    out_dims[rank - 1] = units;
    out_rank = rank;
  } else {
    out_dims[0] = (int)(elements / (size_t)depth);
    out_dims[1] = units;
    out_rank = 2;
  }
  int declared[8];
  int declared_rank = mv_dims(ni->mv, ni_output(ni, 0), declared, 8);
  if (declared_rank != out_rank) return reason(ni, "output has rank %d; expected %d", declared_rank, out_rank);
  int expect[4];
  shape_from_dims(out_dims, out_rank, expect);
  return check_output_shape(ni, ni_output(ni, 0), expect);
}

static int lower_fully_connected(Lowering* lw, const NodeInfo* ni) {
  const TfLiteFullyConnectedParams* p = ni->node->builtin_data;
  int in = lower_tensor(lw, ni_input(ni, 0));
  int w = in < 0 ? -1 : lower_tensor(lw, ni_input(ni, 1));
  int b = (w < 0 || ni_input(ni, 2) < 0) ? -1 : lower_tensor(lw, ni_input(ni, 2));
  if (w < 0 || (ni_input(ni, 2) >= 0 && b < 0)) return -1;
  int out = lower_tensor(lw, ni_output(ni, 0));
  if (out < 0) return -1;
  int depth = lw->g->tensors[w].shape[GD_C];
  int src = in;
  if (lw->g->tensors[in].shape[GD_C] != depth) {
    /* Rows span several pixels or part of one: flatten to [rows, K]. */
    int rows[4] = {1, 1, (int)(shape_elements(lw->g->tensors[in].shape) / (size_t)depth), depth};
    src = graph_add_tensor(lw->g, rows, 2);
    if (src < 0) return lower_error(lw, "out of memory");
    if (lower_reshape_node(lw, in, src)) return -1;
  }
  GNode* n = graph_add_node_io(lw->g, GOP_FULLY_CONNECTED, src, out);
  if (!n) return lower_error(lw, "out of memory");
  n->act = p->activation;
  n->p.fc.weights = w;
  n->p.fc.bias = b;
  return 0;
}

/* Over K in two phases (select_fc_split): partials per chunk of `chunk`
 * input slices into a scratch buffer of FP32 float4s, then their sum. */
static int encode_split(Encoder* ex, int node, cl_mem wm, cl_mem bm, int chunk) {
  const GNode* n = &ex->g.nodes[node];
  const int* ss = ex->g.tensors[n->inputs[0]].shape;
  const int* ds = ex->g.tensors[n->outputs[0]].shape;
  size_t outs = phwc4_items(ds);
  int chunks = ((ss[GD_C] + 3) / 4 + chunk - 1) / chunk;
  cl_mem part = ex_buffer(ex, CL_MEM_READ_WRITE, outs * (size_t)chunks * 4 * sizeof(float), NULL);
  if (!part) return -1;
  KArgs a;
  if (split_first_pass(ex, node, "fully_connected_split", outs * (size_t)chunks, part, wm, bm, &a)) return -1;
  karg_int(&a, chunk);
  karg_int(&a, (int)(outs * (size_t)chunks));
  if (karg_done(ex, &a)) return -1;
  KernelVariant v = variant_1d("split_k.cl", "fully_connected_sum", outs);
  KernelRef k = ex_dispatch_variant(ex, &v, node);
  if (!k) return -1;
  a = (KArgs){k, 0, CL_SUCCESS, 0};
  karg_mem(&a, part);
  karg_mem(&a, ex_tensor_mem(ex, n->outputs[0]));
  karg_shape(&a, ds);
  karg_int(&a, chunks);
  karg_int(&a, n->act);
  karg_int(&a, (int)v.total);
  return karg_done(ex, &a);
}

static int encode_fully_connected(Encoder* ex, int node) {
  const GNode* n = &ex->g.nodes[node];
  const GTensor* wt = &ex->g.tensors[n->p.fc.weights];
  const GTensor* bias = n->p.fc.bias >= 0 ? &ex->g.tensors[n->p.fc.bias] : NULL;
  /* [O, K] is the 1x1 case of conv2d's OHWI layout. */
  GTensor as_ohwi = *wt;
  int ohwi[4] = {wt->shape[GD_W], 1, 1, wt->shape[GD_C]};
  memcpy(as_ohwi.shape, ohwi, sizeof(ohwi));
  cl_mem wm, bm;
  if (upload_dense_weights(ex, &as_ohwi, wt->shape[GD_C], bias, &wm, &bm)) return -1;
  const GTensor* src = &ex->g.tensors[n->inputs[0]];
  const GTensor* dst = &ex->g.tensors[n->outputs[0]];
  KernelVariant v;
  int chunk = select_fc_split(&ex->target, &ex->g, n);
  if (chunk) return encode_split(ex, node, wm, bm, chunk);
  select_fully_connected(&ex->target, &ex->g, n, &v);
  KernelRef k = ex_dispatch_variant(ex, &v, node);
  if (!k) return -1;
  KArgs a = {k, 0, CL_SUCCESS, 0};
  karg_mem(&a, ex_tensor_mem(ex, n->inputs[0]));
  karg_mem(&a, ex_tensor_mem(ex, n->outputs[0]));
  karg_mem(&a, wm);
  karg_mem(&a, bm);
  karg_shape(&a, src->shape);
  karg_shape(&a, dst->shape);
  karg_int(&a, n->act);
  karg_int(&a, (int)v.total);
  return karg_done(ex, &a);
}

/* The TFLite ops this file runs (op_table.c lists them). */
const OpDef kOpFullyConnected = {.builtin_code = kBuiltinFullyConnected, .max_version = 9,
    .check = check_fully_connected, .lower = lower_fully_connected,
    .constraints = "constant weights [O,K] (float32; float16/int8 behind a folded DEQUANTIZE; int8/uint8 quantized, also "
     "hybrid, dequantized at prepare); default weights format; optional bias; input of any rank <= 4 with a multiple of K elements; "
     "keep_num_dims; fused activation"};
