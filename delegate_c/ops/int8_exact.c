/* The CPU's integer arithmetic for int8 CONV_2D, FULLY_CONNECTED and PRELU
 * (issue 14; docs/int8-fidelity.md). The delegate keeps int8 tensors as a
 * float view on their grid, x = (q - zero_point) * scale; rounding the
 * exact real result once per op differs from TFLite's fixed-point
 * requantization near ties, and across layers those rare 1-step
 * differences spread. Here, at lowering:
 *
 * CONV_2D / FULLY_CONNECTED (int8 input, weights and output):
 *   x -> [INT_VIEW] xi = round(x / in_scale) = q - zp (exact)
 *     -> the op's own float kernel on xi, with the int8 weights and int32
 *        bias as integer-valued floats: every partial sum is an integer
 *        below 2^24 (checked per channel: sum|w| * max|xi| + |bias|), so
 *        the float accumulator holds TFLite's int32 accumulator exactly,
 *        in any summation order;
 *     -> [REQUANT] MultiplyByQuantizedMultiplier with the channel's Q31
 *        multiplier and shift (quant_multiplier.c), ties up as the x86
 *        wheels' optimized kernels round, + zp, clamp to the activation
 *        range, store (q - zp) * out_scale.
 * PRELU (int8 input, constant per-tensor int8 alpha per channel or scalar):
 *   one node on xi with TFLite's two multipliers, ties away.
 *
 * Anything else (uint8, DEPTHWISE_CONV_2D, a channel over the 2^24 bound,
 * tanh/sigmoid activations) keeps the float view, and so does FP16
 * storage: the accumulator tensor between the conv and REQUANT would be
 * rounded to 11 bits (a fused epilogue is the way to lift that). */
#include "ops/int8_exact.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "util/quant_multiplier.h"
#include "model/tflite_builtins.h"
#include "ops/op_kinds.h"

/* The graph ops this file encodes (graph.h: a node points at its op). */
static int encode_int8_exact(Encoder* ex, int node);
/* int8_exact.c: integer view / requantization / PRELU; p.quant with a mode */
const GOpDesc kGOpInt8Exact = {"INT8_EXACT", encode_int8_exact};

/* Per-tensor int8 runtime tensor: scale and zero point. */
static int int8_tensor(const ModelView* mv, int t, float* scale, int* zp) {
  int qtype;
  if (t < 0 || mv_is_const(mv, t) || quant_params(mv, t, &qtype, scale, zp) || qtype != GD_QINT8) return 0;
  return 1;
}

/* A constant int8 tensor with affine quantization, zero points all 0 when
 * `symmetric`; its scales (count 1 or per channel along dim 0). */
static const TfLiteAffineQuantization* int8_const(const ModelView* mv, int t, int symmetric) {
  if (t < 0 || !mv_is_const(mv, t)) return NULL;
  const TfLiteTensor* x = mv_tensor(mv, t);
  if (x->type != kTfLiteInt8 || !x->data.raw || x->sparsity) return NULL;
  if (x->quantization.type != kTfLiteAffineQuantization || !x->quantization.params) return NULL;
  const TfLiteAffineQuantization* aq = x->quantization.params;
  if (!aq->scale || aq->scale->size < 1) return NULL;
  if (aq->scale->size > 1 && aq->quantized_dimension != 0) return NULL;
  for (int k = 0; k < aq->scale->size; ++k)
    if (!(aq->scale->data[k] > 0.0f)) return NULL;
  if (symmetric && aq->zero_point)
    for (int k = 0; k < aq->zero_point->size; ++k)
      if (aq->zero_point->data[k] != 0) return NULL;
  return aq;
}

/* A constant owned by the graph, `count` floats (or int32 bit patterns). */
static int add_const(Lowering* lw, const int shape[4], int rank, size_t count, float** data) {
  int t = graph_add_tensor(lw->g, shape, rank);
  if (t < 0) return lower_error(lw, "out of memory");
  *data = calloc(count ? count : 1, sizeof(float));
  if (!*data) return lower_error(lw, "out of memory");
  lw->g->tensors[t].data = *data;
  return t;
}

static void put_int(float* data, size_t k, int32_t v) { memcpy(&data[k], &v, sizeof v); }

/* TFLite's CalculateActivationRangeQuantized for int8; -1 for tanh/sigmoid. */
static int act_range(int act, float scale, int zp, int* lo, int* hi) {
  *lo = -128;
  *hi = 127;
  if (act == kTfLiteActNone) return 0;
  int zero = zp, six = zp + (int)roundf(6.0f / scale), one = zp + (int)roundf(1.0f / scale),
      minus_one = zp + (int)roundf(-1.0f / scale);
  if (act == kTfLiteActRelu) *lo = zero > *lo ? zero : *lo;
  else if (act == kTfLiteActRelu6) {
    *lo = zero > *lo ? zero : *lo;
    *hi = six < *hi ? six : *hi;
  } else if (act == kTfLiteActReluN1To1) {
    *lo = minus_one > *lo ? minus_one : *lo;
    *hi = one < *hi ? one : *hi;
  } else {
    return -1;
  }
  return 0;
}

/* Moves node `from` (the last) to position `to`, shifting the rest up. */
static void move_node(Graph* g, int from, int to) {
  GNode n = g->nodes[from];
  memmove(&g->nodes[to + 1], &g->nodes[to], (size_t)(from - to) * sizeof(GNode));
  g->nodes[to] = n;
}

static int exact_conv_fc(Lowering* lw, const NodeInfo* ni, int first_new, GOp op) {
  const ModelView* mv = lw->mv;
  int node = -1;
  for (int j = first_new; j < lw->g->num_nodes; ++j)
    if (lw->g->nodes[j].op == op) node = j;
  if (node < 0) return 0;
  float in_scale, out_scale;
  int in_zp, out_zp;
  if (!int8_tensor(mv, ni_input(ni, 0), &in_scale, &in_zp) || !int8_tensor(mv, ni_output(ni, 0), &out_scale, &out_zp))
    return 0;
  int wi = ni_input(ni, 1), bi = ni_input(ni, 2);
  const TfLiteAffineQuantization* wq = int8_const(mv, wi, 1);
  if (!wq) return 0;
  const TfLiteTensor* wt = mv_tensor(mv, wi);
  const TfLiteTensor* bt = bi >= 0 ? mv_tensor(mv, bi) : NULL;
  if (bt && (bt->type != kTfLiteInt32 || !bt->data.raw || !mv_is_const(mv, bi))) return 0;
  int cout = wt->dims->data[0];
  size_t per = mv_elements(mv, wi) / (size_t)cout;
  if (wq->scale->size != 1 && wq->scale->size != cout) return 0;
  int lo, hi;
  GNode* n = &lw->g->nodes[node];
  if (act_range(n->act, out_scale, out_zp, &lo, &hi)) return 0;
  /* Exact float accumulation: every partial sum below 2^24. */
  double max_x = (double)(127 - in_zp > in_zp + 128 ? 127 - in_zp : in_zp + 128);
  for (int c = 0; c < cout; ++c) {
    double s = bt ? fabs((double)bt->data.i32[c]) : 0.0;
    for (size_t k = 0; k < per; ++k) s += fabs((double)wt->data.int8[(size_t)c * per + k]) * max_x;
    if (s >= 16777216.0) return 0;
  }
  int w_old = op == GOP_CONV2D ? n->p.conv.weights : n->p.fc.weights;
  int src = n->inputs[0], dst = n->outputs[0];
  int wshape[4], wrank = lw->g->tensors[w_old].rank;
  memcpy(wshape, lw->g->tensors[w_old].shape, sizeof wshape);
  float *wd, *bd, *pd;
  int w_new = add_const(lw, wshape, wrank, per * (size_t)cout, &wd);
  int bshape[4] = {1, 1, 1, cout};
  int b_new = w_new < 0 ? -1 : add_const(lw, bshape, 1, (size_t)cout, &bd);
  int pshape[4] = {1, 1, 1, 2 * ((cout + 3) / 4 * 4)}; /* whole slices: the kernel loads 8 ints per slice */
  int params = b_new < 0 ? -1 : add_const(lw, pshape, 1, (size_t)pshape[3], &pd);
  if (params < 0) return -1;
  for (size_t k = 0; k < per * (size_t)cout; ++k) wd[k] = (float)wt->data.int8[k];
  for (int c = 0; c < cout; ++c) {
    bd[c] = bt ? (float)bt->data.i32[c] : 0.0f;
    int32_t q;
    int shift;
    float ws = wq->scale->data[wq->scale->size > 1 ? c : 0];
    quantize_multiplier(conv_real_multiplier(in_scale, ws, out_scale), &q, &shift);
    put_int(pd, 2 * (size_t)c, q);
    put_int(pd, 2 * (size_t)c + 1, shift);
  }
  int xi = graph_add_tensor(lw->g, lw->g->tensors[src].shape, lw->g->tensors[src].rank);
  int acc = xi < 0 ? -1 : graph_add_tensor(lw->g, lw->g->tensors[dst].shape, lw->g->tensors[dst].rank);
  if (acc < 0) return lower_error(lw, "out of memory");
  /* Integer view of the input, placed just before the op. */
  GNode* pre = graph_add_node_io(lw->g, GOP_INT8_EXACT, src, xi);
  if (!pre) return lower_error(lw, "out of memory");
  pre->p.quant.scale = in_scale;
  pre->p.quant.mode = QMODE_INT_VIEW;
  pre->p.quant.params = -1;
  move_node(lw->g, lw->g->num_nodes - 1, node);
  n = &lw->g->nodes[node + 1];
  n->inputs[0] = xi;
  n->outputs[0] = acc;
  n->act = kTfLiteActNone;
  if (op == GOP_CONV2D) {
    n->p.conv.weights = w_new;
    n->p.conv.bias = b_new;
  } else {
    n->p.fc.weights = w_new;
    n->p.fc.bias = b_new;
  }
  GNode* rq = graph_add_node_io(lw->g, GOP_INT8_EXACT, acc, dst);
  if (!rq) return lower_error(lw, "out of memory");
  rq->p.quant.scale = out_scale;
  rq->p.quant.zero_point = out_zp;
  rq->p.quant.qmin = lo;
  rq->p.quant.qmax = hi;
  rq->p.quant.mode = QMODE_REQUANT;
  rq->p.quant.params = params;
  return 0;
}

static int exact_prelu(Lowering* lw, const NodeInfo* ni, int first_new) {
  const ModelView* mv = lw->mv;
  if (lw->g->num_nodes != first_new + 1) return 0;
  GNode* n = &lw->g->nodes[first_new];
  if (n->op != GOP_BINARY || n->p.binary.op != BIN_PRELU || n->act != kTfLiteActNone) return 0;
  float in_scale, out_scale;
  int in_zp, out_zp;
  if (!int8_tensor(mv, ni_input(ni, 0), &in_scale, &in_zp) || !int8_tensor(mv, ni_output(ni, 0), &out_scale, &out_zp))
    return 0;
  int ai = ni_input(ni, 1);
  const TfLiteAffineQuantization* aq = int8_const(mv, ai, 0);
  if (!aq || aq->scale->size != 1) return 0;
  const TfLiteTensor* at = mv_tensor(mv, ai);
  const int* shape = lw->g->tensors[n->outputs[0]].shape;
  if (memcmp(shape, lw->g->tensors[n->inputs[0]].shape, sizeof(int) * 4) != 0) return 0;
  int channels = shape[GD_C];
  size_t count = mv_elements(mv, ai);
  if (count != 1) {
    int dims[8], rank = mv_dims(mv, ai, dims, 8);
    if (rank < 1 || count != (size_t)channels || dims[rank - 1] != channels) return 0;
  }
  int pshape[4] = {1, 1, 1, 5 + (channels + 3) / 4 * 4}; /* whole slices: the kernel loads 4 alphas per slice */
  float* pd;
  int params = add_const(lw, pshape, 1, (size_t)pshape[3], &pd);
  if (params < 0) return -1;
  n = &lw->g->nodes[first_new];
  double m_pos, m_neg;
  prelu_real_multipliers(in_scale, at->params.scale, out_scale, &m_pos, &m_neg);
  int32_t q;
  int shift;
  quantize_multiplier(m_pos, &q, &shift);
  put_int(pd, 0, q);
  put_int(pd, 1, shift);
  quantize_multiplier(m_neg, &q, &shift);
  put_int(pd, 2, q);
  put_int(pd, 3, shift);
  memcpy(&pd[4], &in_scale, sizeof in_scale);
  for (int c = 0; c < channels; ++c)
    put_int(pd, 5 + (size_t)c, (int32_t)at->data.int8[count == 1 ? 0 : c] - at->params.zero_point); /* scalar: every channel */
  n->op = GOP_INT8_EXACT;
  n->num_inputs = 1;
  memset(&n->p, 0, sizeof n->p);
  n->p.quant.scale = out_scale;
  n->p.quant.zero_point = out_zp;
  n->p.quant.qmin = -128;
  n->p.quant.qmax = 127;
  n->p.quant.mode = QMODE_PRELU;
  n->p.quant.params = params;
  return 0;
}

int lower_int8_exact(Lowering* lw, const NodeInfo* ni, int first_new) {
  if (!lw->mv->enable_quant || lw->mv->fp16_storage) return 0;
  switch (ni->reg->builtin_code) {
    case kBuiltinConv2d: return exact_conv_fc(lw, ni, first_new, GOP_CONV2D);
    case kBuiltinFullyConnected: return exact_conv_fc(lw, ni, first_new, GOP_FULLY_CONNECTED);
    case kBuiltinPrelu: return exact_prelu(lw, ni, first_new);
    default: return 0;
  }
}

static int encode_int8_exact(Encoder* ex, int node) {
  const GNode* n = &ex->g.nodes[node];
  KArgs a;
  if (n->p.quant.mode == QMODE_INT_VIEW) {
    if (ex_dispatch_src_dst(ex, node, "int8_exact.cl", "int8_int_view", &a)) return -1;
    karg_float(&a, n->p.quant.scale);
    karg_int(&a, a.total);
    return karg_done(ex, &a);
  }
  const GTensor* p = &ex->g.tensors[n->p.quant.params];
  cl_mem pm = ex_upload(ex, p->data, shape_elements(p->shape) * sizeof(float));
  if (!pm) return -1;
  if (ex_dispatch_src_dst(ex, node, "int8_exact.cl", n->p.quant.mode == QMODE_PRELU ? "int8_prelu" : "int8_requant",
                          &a))
    return -1;
  karg_mem(&a, pm);
  karg_float(&a, n->p.quant.scale);
  karg_int(&a, n->p.quant.zero_point);
  karg_int(&a, n->p.quant.qmin);
  karg_int(&a, n->p.quant.qmax);
  karg_int(&a, a.total);
  return karg_done(ex, &a);
}
