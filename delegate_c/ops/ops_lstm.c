/* LSTM with the basic kernel (kernel_type BASIC), lowered onto existing
 * kernels plus one cell kernel:
 *
 *   concat_temp = CONCAT(input [B, I], prev_activation [B, O])   (output 2)
 *   activ_temp  = FULLY_CONNECTED(concat_temp, weights [4O, I+O], bias [4O])
 *                                                              (output 3)
 *   lstm_cell(activ_temp, prev_state) -> activation, state     (outputs 0, 1)
 *
 * with TFLite's gate order in activ_temp: input, new input, forget, output
 * (opencl_kernels/fully_connected.cl, kernel lstm_cell). Upstream 2.14 also
 * takes the full kernel (20/24 inputs), whose state tensors are variables
 * updated in place; the executor has no write-back of inputs, so it stays
 * on the CPU. */
#include "encode/encode.h"
#include "ops/op_table.h"
#include "model/tflite_builtins.h"
#include "ops/op_kinds.h"

/* The graph ops this file encodes (graph.h: a node points at its op). */
static int encode_lstm_cell(Encoder* ex, int node);
/* inputs: gates, prev state; outputs: activation, state */
const GOpDesc kGOpLstmCell = {"LSTM_CELL", encode_lstm_cell};

enum { LSTM_IN = 0, LSTM_PREV_ACT, LSTM_WEIGHTS, LSTM_BIAS, LSTM_PREV_STATE };

/* A rank-2 tensor's dims, or -1. */
static int dims2(const NodeInfo* ni, int t, int d[2]) {
  int dims[8];
  if (mv_dims(ni->mv, t, dims, 8) != 2) return -1;
  d[0] = dims[0];
  d[1] = dims[1];
  return 0;
}

static int check_lstm(const NodeInfo* ni) {
  const TfLiteLSTMParams* p = ni->node->builtin_data;
  if (!p) return reason(ni, "missing parameters");
  if (p->kernel_type != kTfLiteLSTMBasicKernel)
    return reason(ni, "only the basic LSTM kernel (kernel_type BASIC, 5 inputs) is supported; the full kernel "
                      "(%d inputs, variable state tensors updated in place) is not", ni_num_inputs(ni));
  if (ni_num_inputs(ni) != 5 || ni_num_outputs(ni) != 4)
    return reason(ni, "the basic kernel needs 5 inputs and 4 outputs, has %d and %d", ni_num_inputs(ni),
                  ni_num_outputs(ni));
  if (p->activation != kTfLiteActTanh) return reason(ni, "activation %d; the basic kernel needs TANH", p->activation);
  if (p->cell_clip != 0.0f || p->proj_clip != 0.0f)
    return reason(ni, "cell_clip %g and proj_clip %g; the basic kernel needs both 0", p->cell_clip, p->proj_clip);
  static const char* kRuntime[3] = {"input", "previous activation", "previous state"};
  static const int kRuntimeIdx[3] = {LSTM_IN, LSTM_PREV_ACT, LSTM_PREV_STATE};
  for (int k = 0; k < 3; ++k) {
    int t = ni_input(ni, kRuntimeIdx[k]);
    if (t < 0 || mv_is_const(ni->mv, t))
      return reason(ni, "input %d (%s) must be a runtime tensor", kRuntimeIdx[k], kRuntime[k]);
  }
  if (check_const_input(ni, LSTM_WEIGHTS, "weights", kTfLiteFloat32) ||
      check_const_input(ni, LSTM_BIAS, "bias", kTfLiteFloat32))
    return -1;
  int in[2], act[2], w[2], state[2];
  if (dims2(ni, ni_input(ni, LSTM_IN), in) || dims2(ni, ni_input(ni, LSTM_PREV_ACT), act) ||
      dims2(ni, ni_input(ni, LSTM_WEIGHTS), w) || dims2(ni, ni_input(ni, LSTM_PREV_STATE), state))
    return reason(ni, "input, previous activation, weights and previous state must have rank 2");
  int batch = in[0], units = act[1];
  /* 4 * units and depth + units must be ints (the weights' shape). */
  if ((int64_t)units * 4 > INT32_MAX || (int64_t)in[1] + units > INT32_MAX)
    return reason(ni, "%d units with input depth %d overflow the weights' shape", units, in[1]);
  if (act[0] != batch || state[0] != batch || state[1] != units)
    return reason(ni, "previous activation [%d,%d] and state [%d,%d] must be [%d, units]", act[0], act[1], state[0],
                  state[1], batch);
  if (w[0] != 4 * units || w[1] != in[1] + units)
    return reason(ni, "weights are [%d,%d]; [%d,%d] (4 * units, input depth + units) are required", w[0], w[1],
                  4 * units, in[1] + units);
  if (mv_elements(ni->mv, ni_input(ni, LSTM_BIAS)) != (size_t)(4 * units))
    return reason(ni, "bias must hold %d values", 4 * units);
  const int expect[4][2] = {{batch, units}, {batch, units}, {batch, in[1] + units}, {batch, 4 * units}};
  for (int k = 0; k < 4; ++k) {
    int shape[4];
    if (shape_from_dims(expect[k], 2, shape) || check_output_shape(ni, ni_output(ni, k), shape)) return -1;
  }
  return 0;
}

static int lower_lstm(Lowering* lw, const NodeInfo* ni) {
  int t[5], o[4];
  for (int k = 0; k < 5; ++k)
    if ((t[k] = lower_tensor(lw, ni_input(ni, k))) < 0) return -1;
  for (int k = 0; k < 4; ++k)
    if ((o[k] = lower_tensor(lw, ni_output(ni, k))) < 0) return -1;
  GNode* cat = graph_add_node(lw->g, GOP_CONCAT);
  if (!cat) return lower_error(lw, "out of memory");
  cat->inputs[0] = t[LSTM_IN];
  cat->inputs[1] = t[LSTM_PREV_ACT];
  cat->num_inputs = 2;
  cat->outputs[0] = o[2];
  cat->num_outputs = 1;
  cat->p.concat.axis = GD_C;
  GNode* fc = graph_add_node_io(lw->g, GOP_FULLY_CONNECTED, o[2], o[3]);
  if (!fc) return lower_error(lw, "out of memory");
  fc->act = kTfLiteActNone;
  fc->p.fc.weights = t[LSTM_WEIGHTS];
  fc->p.fc.bias = t[LSTM_BIAS];
  GNode* cell = graph_add_node(lw->g, GOP_LSTM_CELL);
  if (!cell) return lower_error(lw, "out of memory");
  cell->inputs[0] = o[3];
  cell->inputs[1] = t[LSTM_PREV_STATE];
  cell->num_inputs = 2;
  cell->outputs[0] = o[0];
  cell->outputs[1] = o[1];
  cell->num_outputs = 2;
  return 0;
}

static int encode_lstm_cell(Encoder* ex, int node) {
  const GNode* n = &ex->g.nodes[node];
  const GTensor* state = &ex->g.tensors[n->outputs[1]];
  size_t items = phwc4_items(state->shape);
  KernelRef k = ex_dispatch(ex, "fully_connected.cl", "lstm_cell", items, node);
  if (!k) return -1;
  KArgs a = {k, 0, CL_SUCCESS, 0};
  karg_mem(&a, ex_tensor_mem(ex, n->inputs[0]));
  karg_mem(&a, ex_tensor_mem(ex, n->inputs[1]));
  karg_mem(&a, ex_tensor_mem(ex, n->outputs[0]));
  karg_mem(&a, ex_tensor_mem(ex, n->outputs[1]));
  karg_shape(&a, ex->g.tensors[n->inputs[0]].shape);
  karg_shape(&a, state->shape);
  karg_int(&a, (int)items);
  return karg_done(ex, &a);
}

/* The TFLite ops this file runs (op_table.c lists them). */
const OpDef kOpLstm = {.builtin_code = kBuiltinLstm, .max_version = 4, .check = check_lstm, .lower = lower_lstm,
    .constraints = "basic kernel (kernel_type BASIC): 3 runtime inputs [B,I], [B,O], [B,O], constant float weights "
     "[4O,I+O] and bias [4O]; TANH; cell_clip = proj_clip = 0; 4 outputs. The full kernel (20/24 inputs, "
     "variable state tensors), which upstream also takes, stays on the CPU"};
