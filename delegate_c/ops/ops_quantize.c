/* Quantized graphs through a float view (ENABLE_QUANT, as upstream):
 * QUANTIZE and DEQUANTIZE of runtime tensors, and the quantize-dequantize
 * step after every op output that is int8/uint8 in the model, so the
 * activations carry the same rounding to the model's grid as the CPU's
 * integer kernels (opencl_kernels/quantize.cl). Constants are dequantized
 * at prepare by const_fold.c; the partition boundary converts int8/uint8
 * inputs and outputs (executor.c, layout.cl). */
#include <stdlib.h>
#include <string.h>

#include "encode/encode.h"
#include "ops/op_table.h"
#include "model/tflite_builtins.h"
#include "ops/op_kinds.h"

/* The graph ops this file encodes (graph.h: a node points at its op). */
static int encode_quantize(Encoder* ex, int node);
/* quantize-dequantize onto an int8/uint8 grid: p.quant */
const GOpDesc kGOpQuantize = {"QUANTIZE", encode_quantize};

/* Appends a quantize-dequantize node from graph tensor in to out. */
static int add_qdq_node(Lowering* lw, int in, int out, int qtype, float scale, int zero_point) {
  GNode* n = graph_add_node_io(lw->g, GOP_QUANTIZE, in, out);
  if (!n) return lower_error(lw, "out of memory");
  n->p.quant.scale = scale;
  n->p.quant.zero_point = zero_point;
  n->p.quant.qmin = qtype == GD_QINT8 ? -128 : 0;
  n->p.quant.qmax = qtype == GD_QINT8 ? 127 : 255;
  return 0;
}

static int check_quantize(const NodeInfo* ni) {
  if (check_io(ni, 1, 1)) return -1;
  int qtype, zp;
  float scale;
  if (quant_params(ni->mv, ni_output(ni, 0), &qtype, &scale, &zp))
    return reason(ni, "output must be an int8/uint8 tensor with per-tensor quantization");
  return 0;
}

static int lower_quantize(Lowering* lw, const NodeInfo* ni) {
  int in = lower_tensor(lw, ni_input(ni, 0));
  int out = lower_tensor(lw, ni_output(ni, 0));
  if (in < 0 || out < 0) return -1;
  int qtype, zp;
  float scale;
  if (quant_params(lw->mv, ni_output(ni, 0), &qtype, &scale, &zp))
    return lower_error(lw, "output is not a per-tensor quantized int8/uint8 tensor");
  return add_qdq_node(lw, in, out, qtype, scale, zp);
}

static int check_dequantize(const NodeInfo* ni) {
  int in = ni_input(ni, 0);
  if (in >= 0 && in < ni->mv->num_tensors && mv_is_const(ni->mv, in)) {
    /* A foldable one never gets here (partition.c decides those). */
    return reason(ni, "DEQUANTIZE of a %s constant is not supported%s", type_name(mv_tensor(ni->mv, in)->type),
                  ni->mv->enable_quant ? "" : " (ENABLE_QUANT is off)");
  }
  if (check_io(ni, 1, 1)) return -1;
  int qtype, zp;
  float scale;
  if (quant_params(ni->mv, in, &qtype, &scale, &zp))
    return reason(ni, "input must be an int8/uint8 tensor with per-tensor quantization");
  return 0;
}

static int lower_dequantize(Lowering* lw, const NodeInfo* ni) {
  int in = lower_tensor(lw, ni_input(ni, 0));
  int out = lower_tensor(lw, ni_output(ni, 0));
  if (in < 0 || out < 0) return -1;
  /* The float view already holds the dequantized values: a copy. */
  return lower_reshape_node(lw, in, out);
}

/* Ops that only move values: with the input's grid equal to the output's,
 * every output value is already on the grid. */
static int keeps_grid(const Lowering* lw, const NodeInfo* ni, int qtype, float scale, int zp) {
  int code = ni->reg->builtin_code;
  int inputs = 1; /* how many leading inputs carry values (the rest: shapes, paddings) */
  if (code == kBuiltinMaxPool2d) {
    const TfLitePoolParams* p = ni->node->builtin_data;
    if (!p || p->activation != kTfLiteActNone) return 0;
  } else if (code == kBuiltinConcatenation) {
    const TfLiteConcatenationParams* p = ni->node->builtin_data;
    if (!p || p->activation != kTfLiteActNone) return 0;
    inputs = ni_num_inputs(ni);
  } else if (code != kBuiltinReshape && code != kBuiltinStridedSlice && code != kBuiltinPad &&
             code != kBuiltinDepthToSpace) {
    return 0;
  }
  for (int k = 0; k < inputs; ++k) {
    int it, izp;
    float is;
    if (quant_params(lw->mv, ni_input(ni, k), &it, &is, &izp) || mv_is_const(lw->mv, ni_input(ni, k))) return 0;
    if (it != qtype || is != scale || izp != zp) return 0;
  }
  return 1;
}

int lower_quant_outputs(Lowering* lw, const NodeInfo* ni, int first_new) {
  int code = ni->reg->builtin_code;
  if (code == kBuiltinQuantize || code == kBuiltinDequantize || !lw->mv->enable_quant) return 0;
  for (int k = 0; k < ni_num_outputs(ni); ++k) {
    int t = ni_output(ni, k), qtype, zp;
    float scale;
    if (t < 0 || quant_params(lw->mv, t, &qtype, &scale, &zp)) continue;
    if (keeps_grid(lw, ni, qtype, scale, zp)) continue;
    int id = t < lw->mv->num_tensors ? lw->map[t] : -1;
    if (id < 0) continue; /* an output the lowering does not compute (unused) */
    int writer = -1;
    for (int j = first_new; j < lw->g->num_nodes; ++j)
      for (int o = 0; o < lw->g->nodes[j].num_outputs; ++o)
        if (lw->g->nodes[j].outputs[o] == id) writer = j;
    /* No writer among this op's nodes: the output aliases an earlier
     * tensor, whose values are already on a grid. */
    if (writer < 0) continue;
    if (lw->g->nodes[writer].op == GOP_INT8_EXACT) continue; /* already on the grid */
    /* The op writes a float temporary; the snapped values take the
     * tensor's place for its readers and the partition boundary. */
    int tmp = graph_add_tensor(lw->g, lw->g->tensors[id].shape, lw->g->tensors[id].rank);
    if (tmp < 0) return lower_error(lw, "out of memory");
    for (int o = 0; o < lw->g->nodes[writer].num_outputs; ++o)
      if (lw->g->nodes[writer].outputs[o] == id) lw->g->nodes[writer].outputs[o] = tmp;
    if (add_qdq_node(lw, tmp, id, qtype, scale, zp)) return -1;
  }
  return 0;
}

static int encode_quantize(Encoder* ex, int node) {
  const GNode* n = &ex->g.nodes[node];
  KArgs a;
  if (ex_dispatch_src_dst(ex, node, "quantize.cl", "quantize_dequantize", &a)) return -1;
  karg_float(&a, n->p.quant.scale);
  karg_int(&a, n->p.quant.zero_point);
  karg_int(&a, n->p.quant.qmin);
  karg_int(&a, n->p.quant.qmax);
  karg_int(&a, a.total);
  return karg_done(ex, &a);
}

/* The TFLite ops this file runs (op_table.c lists them). */
const OpDef kOpDequantize = {.builtin_code = kBuiltinDequantize, .max_version = 3,
    .check = check_dequantize, .lower = lower_dequantize,
    .constraints = "of a constant float16 (or int8/uint8 with ENABLE_QUANT) tensor: folded into a float constant at "
     "prepare, never run per invoke; of a runtime int8/uint8 tensor (ENABLE_QUANT): a copy of its float view"};
const OpDef kOpQuantize = {.builtin_code = kBuiltinQuantize, .max_version = 2,
    .check = check_quantize, .lower = lower_quantize,
    .constraints = "ENABLE_QUANT: float32 or int8/uint8 runtime input, int8/uint8 output with per-tensor quantization; "
     "a quantize-dequantize onto the output's grid"};
