/* Recurrent sequence ops (delegate_c/ops/ops_sequence.c): one dispatch per time
 * step, one work-item per (batch b, unit u). step = (t, prev, first, last):
 * the step computes output row t and reads the previous output h from the
 * initial state (first step) or from row prev of the output sequence (t - 1,
 * or t + 1 for a backward direction), so no work-item writes what another
 * one reads; the cell state
 * of (b, u) is read and rewritten by its own work-item only. The final h
 * and c land in the state tensors, which the executor copies back into the
 * model's variable tensors. Weights are plain float rows, gate-major, and
 * sums accumulate in float. seq_shape is the input's or output's BHWC
 * shape (rank 3: H, W, C); a row (b, t) is (H, W) = (b, t), or (t, b) when
 * time_major. state_shape is [B, U] (W, C). Work-items run over units
 * rounded up to 4, and those past U write the zeros that PHWC4's padded
 * lanes must hold for the kernels that read whole float4s. */

/* Zeros in the padded lanes of the step's output row and of the states. */
#define PAD_LANES(u, units)                                          \
  if ((u) >= (units)) {                                              \
    STORE1(0.0f, y, idx1(y_shape, 0, xy, xx, u));                   \
    if (step.w) STORE1(0.0f, h_state, idx1(state_shape, 0, 0, b, u));      \
    return;                                                          \
  }

/* sum over k < n of w[k] * v(row, k), v a [.., .., n] tensor's row. */
GD_INLINE float dot_row(__global const float* w, __global const storage_t* v, int4 shape, int ry, int rx, int n) {
  float acc = 0.0f;
  for (int k = 0; k < n; ++k) acc += w[k] * LOAD1(v, idx1(shape, 0, ry, rx, k));
  return acc;
}

/* Row prev of the output sequence as (H, W) coordinates. */
#define ROW(b, prev, time_major) ((time_major) ? (prev) : (b)), ((time_major) ? (b) : (prev))

GD_INLINE float sigmoid_seq(float x) { return 1.0f / (1.0f + exp(-x)); }

/* UNIDIRECTIONAL_SEQUENCE_LSTM step, TFLite's gate order (input, forget,
 * cell, output). flags = (time_major, activation, cifg, peephole): with
 * CIFG the input gate is 1 - forget; peepholes add w * c_prev to the input
 * and forget gates and w * c_new to the output gate. cell_clip > 0 clips
 * the new cell state. */
#define LSTM_STEP_PARAMS \
  __global const storage_t* x, __global const storage_t* h0, __global const storage_t* c0, __global storage_t* y, \
  __global storage_t* h_state, __global storage_t* c_state, __global const float* wx, __global const float* wh, \
  __global const float* bias, __global const float* peep, int4 x_shape, int4 y_shape, int4 state_shape, int4 flags, \
  float cell_clip, int4 step, int total
#define LSTM_STEP_ARGS \
  x, h0, c0, y, h_state, c_state, wx, wh, bias, peep, x_shape, y_shape, state_shape, flags, cell_clip, step, total
OUTLINED_KERNEL(lstm_step, LSTM_STEP_PARAMS, LSTM_STEP_ARGS) {
  if (gid >= total) return;
  int units = state_shape.z, depth = x_shape.z, units4 = SLICES(state_shape) * 4;
  int u = gid % units4, b = gid / units4;
  int time_major = flags.x, act = flags.y, cifg = flags.z, peephole = flags.w;
  int t = step.x;
  int xy = time_major ? t : b, xx = time_major ? b : t;
  int st = idx1(state_shape, 0, 0, b, u);
  if (u >= units) STORE1(0.0f, c_state, st);
  PAD_LANES(u, units)
  float c_prev = step.z ? LOAD1(c0, st) : LOAD1(c_state, st);
  float g[4];
  for (int gate = 0; gate < 4; ++gate) {
    if (gate == 0 && cifg) continue;
    int row = gate * units + u;
    float acc = bias[row] + dot_row(wx + (size_t)row * depth, x, x_shape, xy, xx, depth);
    if (step.z)
      acc += dot_row(wh + (size_t)row * units, h0, state_shape, 0, b, units);
    else
      acc += dot_row(wh + (size_t)row * units, y, y_shape, ROW(b, step.y, time_major), units);
    g[gate] = acc;
  }
  float pi = peephole ? peep[u] : 0.0f, pf = peephole ? peep[units + u] : 0.0f;
  float po = peephole ? peep[2 * units + u] : 0.0f;
  float f = sigmoid_seq(g[1] + pf * c_prev);
  float i = cifg ? 1.0f - f : sigmoid_seq(g[0] + pi * c_prev);
  float c = f * c_prev + i * activate1(g[2], act);
  if (cell_clip > 0.0f) c = clamp(c, -cell_clip, cell_clip);
  float o = sigmoid_seq(g[3] + po * c);
  float h = o * activate1(c, act);
  STORE1(c, c_state, st);
  STORE1(h, y, idx1(y_shape, 0, xy, xx, u));
  if (step.w) STORE1(h, h_state, st);
}

/* UNIDIRECTIONAL_SEQUENCE_RNN step: h = act(wx x + wh h_prev + bias).
 * flags = (time_major, activation, 0, 0). */
#define RNN_STEP_PARAMS \
  __global const storage_t* x, __global const storage_t* h0, __global storage_t* y, __global storage_t* h_state, \
  __global const float* wx, __global const float* wh, __global const float* bias, int4 x_shape, int4 y_shape, \
  int4 state_shape, int4 flags, int4 step, int total
#define RNN_STEP_ARGS x, h0, y, h_state, wx, wh, bias, x_shape, y_shape, state_shape, flags, step, total
OUTLINED_KERNEL(rnn_step, RNN_STEP_PARAMS, RNN_STEP_ARGS) {
  if (gid >= total) return;
  int units = state_shape.z, depth = x_shape.z, units4 = SLICES(state_shape) * 4;
  int u = gid % units4, b = gid / units4;
  int time_major = flags.x, t = step.x;
  int xy = time_major ? t : b, xx = time_major ? b : t;
  PAD_LANES(u, units)
  float acc = bias[u] + dot_row(wx + (size_t)u * depth, x, x_shape, xy, xx, depth);
  if (step.z)
    acc += dot_row(wh + (size_t)u * units, h0, state_shape, 0, b, units);
  else
    acc += dot_row(wh + (size_t)u * units, y, y_shape, ROW(b, step.y, time_major), units);
  float h = activate1(acc, flags.y);
  STORE1(h, y, idx1(y_shape, 0, xy, xx, u));
  if (step.w) STORE1(h, h_state, idx1(state_shape, 0, 0, b, u));
}
