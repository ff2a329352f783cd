/* UNIDIRECTIONAL_SEQUENCE_LSTM and UNIDIRECTIONAL_SEQUENCE_RNN, the ops
 * TF's converter writes for Keras LSTM and SimpleRNN layers, and
 * BIDIRECTIONAL_SEQUENCE_LSTM (a forward and a backward node, then a
 * CONCAT when merged): one graph node per direction that dispatches one
 * step kernel per time step
 * (opencl_kernels/sequence.cl). Their state inputs are variable tensors
 * that TFLite's kernels update in place and that persist across invokes:
 * the node reads them as partition inputs and writes the final states into
 * tensors marked write_back, which the executor copies into the variables
 * after each invoke. Float weights only (hybrid int8 weights quantize the
 * inputs on the CPU); no projection, no layer normalization. */
#include <stdlib.h>
#include <string.h>

#include "encode/encode.h"
#include "ops/op_table.h"
#include "model/tflite_builtins.h"
#include "ops/op_kinds.h"

/* The graph ops this file encodes (graph.h: a node points at its op). */
static int encode_sequence(Encoder* ex, int node);
/* inputs: sequence, h0 (, c0); outputs: sequence, final h (, final c) */
const GOpDesc kGOpSequence = {"SEQUENCE", encode_sequence};

/* UNIDIRECTIONAL_SEQUENCE_LSTM inputs: 1-4 input weights, 5-8 recurrent
 * weights (gates input, forget, cell, output), 9-11 peepholes (input,
 * forget, output), 12-15 biases, 16-17 projection, 18-19 the output and
 * cell states, 20-23 layer-norm coefficients (24-input form).
 * BIDIRECTIONAL_SEQUENCE_LSTM: the forward weights as 1-17, the backward
 * ones as 18-34 (BI_BW + the same offsets), states 35-38 (forward output,
 * cell, backward output, cell), then an auxiliary input and its weights. */
enum { L_WX = 1, L_WH = 5, L_PEEP = 9, L_BIAS = 12, L_PROJ = 16, L_H = 18, L_C = 19, L_NORM = 20 };
enum { BI_BW = 17, BI_STATES = 35, BI_AUX = 39, BI_INPUTS = 48 };
/* UNIDIRECTIONAL_SEQUENCE_RNN inputs. */
enum { R_WX = 1, R_WH = 2, R_BIAS = 3, R_H = 4 };

/* One direction: its weights at the LSTM offsets + base, its state inputs. */
typedef struct SeqDir {
  int base, h, c; /* c: -1 for the RNN */
  int cifg, peephole;
} SeqDir;

typedef struct SeqParams {
  int gates; /* 4 (LSTM) or 1 (RNN) */
  int time_major, act, dirs, merge;
  float cell_clip;
  int batch, steps, depth, units;
  SeqDir dir[2]; /* forward, backward (bidirectional) */
} SeqParams;

/* The activations a model can name that TFLite's sequence kernels apply
 * (ApplyActivationToVector), but SIGN_BIT. */
static int check_seq_activation(const NodeInfo* ni, int act) {
  if (act == kTfLiteActNone || act == kTfLiteActRelu || act == kTfLiteActReluN1To1 || act == kTfLiteActRelu6 ||
      act == kTfLiteActTanh)
    return 0;
  return reason(ni, "activation %d is not supported (SIGN_BIT or unknown)", act);
}

/* The sequence input: rank 3, runtime. Sets batch, steps, depth. */
static int check_sequence_input(const NodeInfo* ni, SeqParams* sp) {
  int dims[8];
  int in = ni_input(ni, 0);
  if (in < 0 || mv_is_const(ni->mv, in)) return reason(ni, "input 0 must be a runtime tensor");
  if (mv_dims(ni->mv, in, dims, 8) != 3) return reason(ni, "input 0 must have rank 3");
  sp->batch = sp->time_major ? dims[1] : dims[0];
  sp->steps = sp->time_major ? dims[0] : dims[1];
  sp->depth = dims[2];
  return 0;
}

/* State input k: a float32 variable [B, units] that only this node reads,
 * since the delegate writes it back at the end of the partition. The first
 * state checked sets units. */
static int check_state(const NodeInfo* ni, SeqParams* sp, int k, const char* what) {
  int dims[8], st = ni_input(ni, k);
  if (st < 0 || mv_is_const(ni->mv, st) || !mv_tensor(ni->mv, st)->is_variable)
    return reason(ni, "input %d (%s) must be a variable tensor", k, what);
  if (mv_tensor(ni->mv, st)->type != kTfLiteFloat32) return reason(ni, "input %d (%s) must be float32", k, what);
  if (mv_dims(ni->mv, st, dims, 8) != 2 || dims[0] != sp->batch || (sp->units && dims[1] != sp->units))
    return reason(ni, "input %d (%s) must be [%d, units]%s", k, what, sp->batch,
                  sp->units ? " with the same units as the other states" : "");
  sp->units = dims[1];
  if (ni->mv->consumers[st] > 1)
    return reason(ni, "input %d (%s) is read by another node too; the delegate writes it back only at the end of "
                  "the partition", k, what);
  return 0;
}

/* Input k: present, constant float32 [rows, cols], or [rows] when cols is 0. */
static int check_weight(const NodeInfo* ni, int k, int rows, int cols, const char* what) {
  if (check_const_input(ni, k, what, kTfLiteFloat32)) return -1;
  int dims[8];
  int rank = mv_dims(ni->mv, ni_input(ni, k), dims, 8);
  if (cols == 0 && (rank != 1 || dims[0] != rows)) return reason(ni, "input %d (%s) must be [%d]", k, what, rows);
  if (cols > 0 && (rank != 2 || dims[0] != rows || dims[1] != cols))
    return reason(ni, "input %d (%s) must be [%d, %d]%s", k, what, rows, cols,
                  rank == 1 ? "; diagonal recurrent weights are not supported" : "");
  return 0;
}

/* One LSTM direction: its states, weights, CIFG and peepholes. */
static int check_lstm_direction(const NodeInfo* ni, SeqParams* sp, SeqDir* d) {
  int b = d->base;
  if (ni_input(ni, L_PROJ + b) >= 0 || ni_input(ni, L_PROJ + 1 + b) >= 0)
    return reason(ni, "a projection layer (inputs %d-%d) is not supported", L_PROJ + b, L_PROJ + 1 + b);
  /* Without projection the output state has the cell state's shape. */
  if (check_state(ni, sp, d->c, "cell state") || check_state(ni, sp, d->h, "output state")) return -1;
  int units = sp->units;
  d->cifg = ni_input(ni, L_WX + b) < 0;
  if (d->cifg && (ni_input(ni, L_WH + b) >= 0 || ni_input(ni, L_BIAS + b) >= 0 || ni_input(ni, L_PEEP + b) >= 0))
    return reason(ni, "CIFG (no input-gate weights, input %d) needs inputs %d, %d and %d absent too", L_WX + b,
                  L_WH + b, L_PEEP + b, L_BIAS + b);
  d->peephole = ni_input(ni, L_PEEP + 1 + b) >= 0;
  for (int g = d->cifg; g < 4; ++g) {
    if (check_weight(ni, L_WX + b + g, units, sp->depth, "input weights") ||
        check_weight(ni, L_WH + b + g, units, units, "recurrent weights") ||
        check_weight(ni, L_BIAS + b + g, units, 0, "gate bias"))
      return -1;
  }
  for (int k = d->cifg; k < 3; ++k) {
    if (!d->peephole && ni_input(ni, L_PEEP + b + k) >= 0)
      return reason(ni, "peepholes (inputs %d-%d) must be all present or all absent", L_PEEP + b, L_PEEP + b + 2);
    if (d->peephole && check_weight(ni, L_PEEP + b + k, units, 0, "peephole weights")) return -1;
  }
  return 0;
}

/* The parameters both LSTM ops share. */
static int check_lstm_params(const NodeInfo* ni, SeqParams* sp, int act, float cell_clip) {
  sp->gates = 4;
  sp->act = act;
  sp->cell_clip = cell_clip;
  if (check_seq_activation(ni, act)) return -1;
  if (!(cell_clip >= 0.0f)) return reason(ni, "cell_clip %g must be >= 0", cell_clip);
  return check_sequence_input(ni, sp);
}

static int parse_lstm(const NodeInfo* ni, void* out) {
  SeqParams* sp = out;
  const TfLiteUnidirectionalSequenceLSTMParams* p = ni->node->builtin_data;
  if (!p) return reason(ni, "missing parameters");
  int n = ni_num_inputs(ni);
  if ((n != 20 && n != 24) || ni_num_outputs(ni) != 1)
    return reason(ni, "needs 20 or 24 inputs and 1 output, has %d and %d", n, ni_num_outputs(ni));
  *sp = (SeqParams){.time_major = p->time_major, .dirs = 1, .dir = {{0, L_H, L_C, 0, 0}}};
  if (check_lstm_params(ni, sp, p->activation, p->cell_clip)) return -1;
  for (int k = L_NORM; k < n; ++k)
    if (ni_input(ni, k) >= 0) return reason(ni, "layer normalization (inputs 20-23) is not supported");
  return check_lstm_direction(ni, sp, &sp->dir[0]);
}

static int parse_bidirectional_lstm(const NodeInfo* ni, void* out) {
  SeqParams* sp = out;
  const TfLiteBidirectionalSequenceLSTMParams* p = ni->node->builtin_data;
  if (!p) return reason(ni, "missing parameters");
  int outs = p->merge_outputs ? 1 : 2;
  if (check_io(ni, BI_INPUTS, outs)) return -1;
  *sp = (SeqParams){.time_major = p->time_major, .dirs = 2, .merge = p->merge_outputs,
                    .dir = {{0, BI_STATES, BI_STATES + 1, 0, 0}, {BI_BW, BI_STATES + 2, BI_STATES + 3, 0, 0}}};
  if (check_lstm_params(ni, sp, p->activation, p->cell_clip)) return -1;
  for (int k = BI_AUX; k < BI_INPUTS; ++k)
    if (ni_input(ni, k) >= 0) return reason(ni, "an auxiliary input (inputs 39-47) is not supported");
  return check_lstm_direction(ni, sp, &sp->dir[0]) || check_lstm_direction(ni, sp, &sp->dir[1]) ? -1 : 0;
}

static int parse_rnn(const NodeInfo* ni, void* out) {
  SeqParams* sp = out;
  const TfLiteSequenceRNNParams* p = ni->node->builtin_data;
  if (!p) return reason(ni, "missing parameters");
  if (check_io(ni, 5, 1)) return -1;
  *sp = (SeqParams){.gates = 1, .time_major = p->time_major, .act = p->activation, .dirs = 1,
                    .dir = {{0, R_H, -1, 0, 0}}};
  if (check_seq_activation(ni, sp->act) || check_sequence_input(ni, sp) ||
      check_state(ni, sp, R_H, "hidden state"))
    return -1;
  if (check_weight(ni, R_WX, sp->units, sp->depth, "input weights") ||
      check_weight(ni, R_WH, sp->units, sp->units, "recurrent weights") ||
      check_weight(ni, R_BIAS, sp->units, 0, "bias"))
    return -1;
  return 0;
}

/* The output sequence: the input's shape with units for its depth. */
static int infer_sequence(const NodeInfo* ni, int k, int shape[4]) {
  const SeqParams* sp = ni->params;
  (void)k;
  int depth = sp->units * (sp->merge ? 2 : 1); /* merged: forward and backward units side by side */
  int dims[3] = {sp->time_major ? sp->steps : sp->batch, sp->time_major ? sp->batch : sp->steps, depth};
  return shape_from_dims(dims, 3, shape);
}

/* A constant of the `count` inputs first..first+count-1, `len` floats each
 * (an absent one gives zeros), one after another: the plain gate-major
 * layout the step kernels read. */
static int pack_rows(Lowering* lw, const NodeInfo* ni, int first, int count, int len) {
  int shape[4] = {1, 1, count, len};
  int id = graph_add_tensor(lw->g, shape, 2);
  float* packed = id < 0 ? NULL : calloc((size_t)count * len, sizeof(float));
  if (!packed) return lower_error(lw, "out of memory");
  lw->g->tensors[id].data = packed;
  for (int r = 0; r < count; ++r) {
    float* f = NULL;
    int t = ni_input(ni, first + r);
    if (t < 0) continue;
    if (mv_const_float(lw->mv, t, &f, lw->err, lw->errlen)) return -1;
    memcpy(packed + (size_t)r * len, f, (size_t)len * sizeof(float));
    free(f);
  }
  return id;
}

/* A tensor for a final state, copied into variable `var` after each invoke. */
static int state_tensor(Lowering* lw, int like, int var) {
  int shape[4];
  memcpy(shape, lw->g->tensors[like].shape, sizeof(shape));
  int id = graph_add_tensor(lw->g, shape, 2);
  if (id < 0) return lower_error(lw, "out of memory");
  lw->g->tensors[id].write_back = var;
  return id;
}

/* One direction's node, writing sequence y. */
static int lower_direction(Lowering* lw, const NodeInfo* ni, const SeqDir* d, int x, int y, int reverse) {
  const SeqParams* sp = ni->params;
  int lstm = sp->gates == 4, b = d->base;
  int h0 = lower_tensor(lw, ni_input(ni, d->h));
  int c0 = h0 < 0 || !lstm ? h0 : lower_tensor(lw, ni_input(ni, d->c));
  int hs = c0 < 0 ? -1 : state_tensor(lw, h0, ni_input(ni, d->h));
  int cs = hs < 0 || !lstm ? hs : state_tensor(lw, c0, ni_input(ni, d->c));
  if (cs < 0) return -1;
  int wx = pack_rows(lw, ni, (lstm ? L_WX : R_WX) + b, sp->gates, sp->units * sp->depth);
  int wh = wx < 0 ? -1 : pack_rows(lw, ni, (lstm ? L_WH : R_WH) + b, sp->gates, sp->units * sp->units);
  int bias = wh < 0 ? -1 : pack_rows(lw, ni, (lstm ? L_BIAS : R_BIAS) + b, sp->gates, sp->units);
  int peep = bias < 0 || !d->peephole ? -1 : pack_rows(lw, ni, L_PEEP + b, 3, sp->units);
  if (bias < 0 || (d->peephole && peep < 0)) return -1;
  GNode* n = graph_add_node(lw->g, GOP_SEQUENCE);
  if (!n) return lower_error(lw, "out of memory");
  int ins[3] = {x, h0, c0}, outs[3] = {y, hs, cs};
  n->num_inputs = n->num_outputs = lstm ? 3 : 2;
  memcpy(n->inputs, ins, sizeof(ins));
  memcpy(n->outputs, outs, sizeof(outs));
  n->act = sp->act;
  n->p.seq.gates = sp->gates;
  n->p.seq.time_major = sp->time_major;
  n->p.seq.reverse = reverse;
  n->p.seq.cifg = d->cifg;
  n->p.seq.peephole = d->peephole;
  n->p.seq.cell_clip = sp->cell_clip;
  n->p.seq.wx = wx;
  n->p.seq.wh = wh;
  n->p.seq.bias = bias;
  n->p.seq.peep = peep;
  return 0;
}

/* A direction per node; merged bidirectional outputs are a CONCAT of both
 * sequences along units. */
static int lower_sequence(Lowering* lw, const NodeInfo* ni) {
  const SeqParams* sp = ni->params;
  int x = lower_tensor(lw, ni_input(ni, 0));
  int y[2] = {-1, -1};
  for (int d = 0; d < sp->dirs && x >= 0; ++d) {
    if (sp->merge) {
      int dims[3] = {sp->time_major ? sp->steps : sp->batch, sp->time_major ? sp->batch : sp->steps, sp->units};
      int shape[4];
      shape_from_dims(dims, 3, shape);
      y[d] = graph_add_tensor(lw->g, shape, 3);
      if (y[d] < 0) return lower_error(lw, "out of memory");
    } else {
      y[d] = lower_tensor(lw, ni_output(ni, d));
    }
    if (y[d] < 0 || lower_direction(lw, ni, &sp->dir[d], x, y[d], d == 1)) return -1;
  }
  if (x < 0) return -1;
  if (!sp->merge) return 0;
  int out = lower_tensor(lw, ni_output(ni, 0));
  GNode* cat = out < 0 ? NULL : graph_add_node(lw->g, GOP_CONCAT);
  if (!cat) return out < 0 ? -1 : lower_error(lw, "out of memory");
  cat->inputs[0] = y[0];
  cat->inputs[1] = y[1];
  cat->num_inputs = 2;
  cat->outputs[0] = out;
  cat->num_outputs = 1;
  cat->p.concat.axis = GD_C;
  return 0;
}

static cl_mem upload_packed(Encoder* ex, int id) {
  const GTensor* t = &ex->g.tensors[id];
  return ex_upload(ex, t->data, shape_elements(t->shape) * sizeof(float));
}

static int encode_sequence(Encoder* ex, int node) {
  const GNode* n = &ex->g.nodes[node];
  int lstm = n->p.seq.gates == 4;
  const GTensor* x = &ex->g.tensors[n->inputs[0]];
  const int* st = ex->g.tensors[n->inputs[1]].shape;
  int steps = n->p.seq.time_major ? x->shape[GD_H] : x->shape[GD_W];
  int items = st[GD_W] * ((st[GD_C] + 3) / 4 * 4); /* units rounded up: the padded lanes get zeros */
  cl_mem wx = upload_packed(ex, n->p.seq.wx), wh = wx ? upload_packed(ex, n->p.seq.wh) : NULL;
  cl_mem bias = wh ? upload_packed(ex, n->p.seq.bias) : NULL;
  cl_mem peep = bias && n->p.seq.peep >= 0 ? upload_packed(ex, n->p.seq.peep) : bias; /* unread without peepholes */
  if (!peep) return -1;
  for (int s = 0; s < steps; ++s) {
    /* The backward direction walks time from the end; its output row t
     * stays at t, and its previous output is row t + 1. */
    int t = n->p.seq.reverse ? steps - 1 - s : s, prev = n->p.seq.reverse ? t + 1 : t - 1;
    KernelRef k = ex_dispatch(ex, "sequence.cl", lstm ? "lstm_step" : "rnn_step", (size_t)items, node);
    if (!k) return -1;
    KArgs a = {k, 0, CL_SUCCESS, 0};
    for (int i = 0; i < n->num_inputs; ++i) karg_mem(&a, ex_tensor_mem(ex, n->inputs[i]));
    for (int i = 0; i < n->num_outputs; ++i) karg_mem(&a, ex_tensor_mem(ex, n->outputs[i]));
    karg_mem(&a, wx);
    karg_mem(&a, wh);
    karg_mem(&a, bias);
    if (lstm) karg_mem(&a, peep);
    karg_shape(&a, x->shape);
    karg_shape(&a, ex->g.tensors[n->outputs[0]].shape);
    karg_shape(&a, st);
    karg_int4(&a, n->p.seq.time_major, n->act, n->p.seq.cifg, n->p.seq.peephole);
    if (lstm) karg_float(&a, n->p.seq.cell_clip);
    karg_int4(&a, t, prev, s == 0, s == steps - 1);
    karg_int(&a, items);
    if (karg_done(ex, &a)) return -1;
  }
  return 0;
}

/* The TFLite ops this file runs (op_table.c lists them). */
const OpDef kOpUnidirectionalSequenceLstm = {.builtin_code = kBuiltinUnidirectionalSequenceLstm, .max_version = 1,
    .parse = parse_lstm, .params_size = sizeof(SeqParams), .infer = infer_sequence, .lower = lower_sequence,
    .constraints = "float32 input [B,T,I] (or [T,B,I] time-major), constant float32 weights, 20 or 24 inputs; "
     "CIFG and peepholes supported; no projection, no layer normalization, no diagonal recurrent weights; the "
     "output and cell states are variable tensors read by no other node (written back after each invoke); "
     "activation NONE/RELU/RELU_N1_TO_1/RELU6/TANH; cell_clip applied"};
const OpDef kOpBidirectionalSequenceLstm = {.builtin_code = kBuiltinBidirectionalSequenceLstm, .max_version = 1,
    .parse = parse_bidirectional_lstm, .params_size = sizeof(SeqParams), .infer = infer_sequence,
    .lower = lower_sequence,
    .constraints = "as UNIDIRECTIONAL_SEQUENCE_LSTM for each direction (48 inputs: forward 1-17, backward 18-34, "
     "states 35-38), both with the same units; merged or separate outputs; no auxiliary input (39-47)"};
const OpDef kOpUnidirectionalSequenceRnn = {.builtin_code = kBuiltinUnidirectionalSequenceRnn, .max_version = 1,
    .parse = parse_rnn, .params_size = sizeof(SeqParams), .infer = infer_sequence, .lower = lower_sequence,
    .constraints = "float32 input [B,T,I] (or [T,B,I] time-major), constant float32 weights [U,I] and [U,U], "
     "bias [U]; the hidden state is a variable tensor read by no other node (written back after each invoke); "
     "activation NONE/RELU/RELU_N1_TO_1/RELU6/TANH"};
