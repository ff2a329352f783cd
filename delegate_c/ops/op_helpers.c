/* The helpers every op file uses: the node's inputs and outputs, reasons
 * and lowering errors, the shared checks (activation, inputs, checked
 * sizes, output shapes) and the graph-building steps several lowerings
 * share (tensors, reshape / remap / unary nodes). They call nothing in the
 * op files, so no op file and this one call each other. */
#include "ops/op_helpers.h"

#include <inttypes.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/tflite_builtins.h"

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

int infer_input_shape(const NodeInfo* ni, int k, int shape[4]) {
  (void)k;
  if (ni_shape(ni, ni_input(ni, 0), shape) < 0) return reason(ni, "input 0 has no usable shape");
  return 0;
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

int check_storage(const NodeInfo* ni, const char* what, const int64_t e[4]) {
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

GNode* lower_remap_node(Lowering* lw, int in, int out, int mode) {
  GNode* n = graph_add_node_io(lw->g, GOP_REMAP, in, out);
  if (!n) {
    lower_error(lw, "out of memory");
    return NULL;
  }
  n->p.remap.mode = mode;
  for (int d = 0; d < 4; ++d) n->p.remap.stride[d] = 1, n->p.remap.perm[d] = d;
  return n;
}

int lower_reshape_node(Lowering* lw, int in, int out) {
  return lower_remap_node(lw, in, out, REMAP_RESHAPE) ? 0 : -1;
}

int lower_unary_node(Lowering* lw, int in, int out, int op, float alpha, int tflite_node) {
  GNode* n = graph_add_node_io(lw->g, GOP_UNARY, in, out);
  if (!n) return lower_error(lw, "out of memory");
  n->p.unary.op = op;
  n->p.unary.alpha = alpha;
  n->tflite_node = tflite_node;
  return 0;
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
