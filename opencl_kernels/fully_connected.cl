/* FULLY_CONNECTED. One work-item per output float4: 4 output channels of
 * one row, looping over the K input channels a float4 at a time with FP32
 * accumulation. Row r is the r-th pixel (row-major over B, H, W) of the
 * output, and of the source, whose C is K.
 *
 * weights: float4 blocks [S_out][S_in][4 in-lanes] holding 4 output
 * channels for one input channel (conv2d's 1x1 layout); bias: [S_out]
 * float4. Padded input lanes are zero and so are their weights. */
#define FULLY_CONNECTED_PARAMS \
  __global const storage_t* src, __global storage_t* dst, __global const float4* weights, __global const float4* bias, \
  int4 src_shape, int4 dst_shape, int act, int total
#define FULLY_CONNECTED_ARGS src, dst, weights, bias, src_shape, dst_shape, act, total
#if GD_SELECTED(fully_connected, 0)
OUTLINED_KERNEL(fully_connected, FULLY_CONNECTED_PARAMS, FULLY_CONNECTED_ARGS) {
  if (gid >= total) return;
  int4 p = split_gid(gid, dst_shape);
  float4 dot = fc_dot(src, src_shape, dst_shape, p, weights, 0, SLICES(src_shape), bias[p.z]);
  float4 acc = mask_tail(activate(dot, act), p.z, dst_shape.z);
  STORE4(acc, dst, gid);
}
#endif

/* BATCH_MATMUL, general form (used for adj_x with adj_y): dst[b, h, m, n]
 * = sum_k A[m, k] * B[k, n] in each batch (b, h), a size-1 batch dim of A
 * or B broadcast. Rows are W and columns C in every operand; adj.x / adj.y
 * mean A / B are stored transposed. One work-item per output float4 (4
 * columns n of one row m), float sums. */
#define BATCH_MATMUL_PARAMS \
  __global const storage_t* a, __global const storage_t* b, __global storage_t* dst, int4 a_shape, int4 b_shape, \
  int4 dst_shape, int2 adj, int total
#define BATCH_MATMUL_ARGS a, b, dst, a_shape, b_shape, dst_shape, adj, total
#if GD_SELECTED(batch_matmul, 1)
OUTLINED_KERNEL(batch_matmul, BATCH_MATMUL_PARAMS, BATCH_MATMUL_ARGS) {
  if (gid >= total) return;
  int4 p = split_gid(gid, dst_shape);
  int m = p.x, n0 = p.z * 4;
  int ab = a_shape.w == 1 ? 0 : p.w, ah = a_shape.y == 1 ? 0 : p.y;
  int bb = b_shape.w == 1 ? 0 : p.w, bh = b_shape.y == 1 ? 0 : p.y;
  int depth = adj.x ? a_shape.x : a_shape.z;
  int N = dst_shape.z;
  float4 acc = (float4)(0.0f);
  for (int k = 0; k < depth; ++k) {
    float av = adj.x ? LOAD1(a, idx1(a_shape, ab, ah, k, m)) : LOAD1(a, idx1(a_shape, ab, ah, m, k));
    float4 bv;
    if (!adj.y) {
      bv = LOAD4(b, idx4(b_shape, bb, p.z, bh, k)); /* columns n0..n0+3 of row k; padded lanes are 0 */
    } else {
      bv.x = LOAD1(b, idx1(b_shape, bb, bh, n0, k));
      bv.y = n0 + 1 < N ? LOAD1(b, idx1(b_shape, bb, bh, n0 + 1, k)) : 0.0f;
      bv.z = n0 + 2 < N ? LOAD1(b, idx1(b_shape, bb, bh, n0 + 2, k)) : 0.0f;
      bv.w = n0 + 3 < N ? LOAD1(b, idx1(b_shape, bb, bh, n0 + 3, k)) : 0.0f;
    }
    acc = fma((float4)(av), bv, acc);
  }
  STORE4(mask_tail(acc, p.z, N), dst, gid);
}
#endif

/* The cell of TFLite's basic LSTM: gates holds, per row, 4 blocks of O
 * pre-activations (input gate, new input, forget gate, output gate);
 * state = sigmoid(i) * tanh(n) + sigmoid(f) * prev_state and activation =
 * sigmoid(o) * tanh(state). One work-item per float4 of the [rows, O]
 * outputs; the gate blocks start at any channel, so lanes load singly. */
GD_INLINE float sigmoid1(float x) { return 1.0f / (1.0f + exp(-x)); }

#define LSTM_CELL_PARAMS \
  __global const storage_t* gates, __global const storage_t* prev_state, __global storage_t* activation, \
  __global storage_t* state, int4 gates_shape, int4 shape, int total
#define LSTM_CELL_ARGS gates, prev_state, activation, state, gates_shape, shape, total
#if GD_SELECTED(lstm_cell, 2)
OUTLINED_KERNEL(lstm_cell, LSTM_CELL_PARAMS, LSTM_CELL_ARGS) {
  if (gid >= total) return;
  int4 p = split_gid(gid, shape);
  int units = shape.z;
  float prev[4], st[4], act[4];
  vstore4(LOAD4(prev_state, gid), 0, prev);
  for (int l = 0; l < 4; ++l) {
    int c = p.z * 4 + l;
    st[l] = 0.0f;
    act[l] = 0.0f;
    if (c >= units) continue;
    float i = sigmoid1(LOAD1(gates, idx1(gates_shape, p.w, p.y, p.x, c)));
    float n = tanh(LOAD1(gates, idx1(gates_shape, p.w, p.y, p.x, units + c)));
    float f = sigmoid1(LOAD1(gates, idx1(gates_shape, p.w, p.y, p.x, 2 * units + c)));
    float o = sigmoid1(LOAD1(gates, idx1(gates_shape, p.w, p.y, p.x, 3 * units + c)));
    st[l] = i * n + f * prev[l];
    act[l] = o * tanh(st[l]);
  }
  STORE4(vload4(0, st), state, gid);
  STORE4(vload4(0, act), activation, gid);
}
#endif

/* BATCH_MATMUL without adj_x, the common case: A's rows hold k along
 * channels, so one float4 load gives 4 k's of a row. Each work-item makes
 * 4 rows (m0..m0+3) x 4 columns, so every load of B serves 4 rows. With
 * adj_y, B's rows hold k along channels too, and each output is a sum of
 * float4 dot products (padded lanes are zero on both sides); without it,
 * row k of B is a float4 of 4 columns. dst_rows = ceil(M / 4) in the
 * work-item grid's x; rows past M are clamped on load and not stored. */
#define BATCH_MATMUL_ROWS4_PARAMS \
  __global const storage_t* a, __global const storage_t* b, __global storage_t* dst, int4 a_shape, int4 b_shape, \
  int4 dst_shape, int4 grid, int adj_y, int total
#define BATCH_MATMUL_ROWS4_ARGS a, b, dst, a_shape, b_shape, dst_shape, grid, adj_y, total
#if GD_SELECTED(batch_matmul_rows4, 3)
OUTLINED_KERNEL(batch_matmul_rows4, BATCH_MATMUL_ROWS4_PARAMS, BATCH_MATMUL_ROWS4_ARGS) {
  if (gid >= total) return;
  int4 p = split_gid(gid, grid);
  int M = dst_shape.x, N = dst_shape.z, K = a_shape.z;
  int m0 = p.x * 4;
  int ab = a_shape.w == 1 ? 0 : p.w, ah = a_shape.y == 1 ? 0 : p.y;
  int bb = b_shape.w == 1 ? 0 : p.w, bh = b_shape.y == 1 ? 0 : p.y;
  int r1 = min(m0 + 1, M - 1), r2 = min(m0 + 2, M - 1), r3 = min(m0 + 3, M - 1);
  float4 acc0 = (float4)(0.0f), acc1 = acc0, acc2 = acc0, acc3 = acc0;
  int k_slices = SLICES(a_shape);
  for (int ks = 0; ks < k_slices; ++ks) {
    float4 a0 = LOAD4(a, idx4(a_shape, ab, ks, ah, m0));
    float4 a1 = LOAD4(a, idx4(a_shape, ab, ks, ah, r1));
    float4 a2 = LOAD4(a, idx4(a_shape, ab, ks, ah, r2));
    float4 a3 = LOAD4(a, idx4(a_shape, ab, ks, ah, r3));
    if (adj_y) {
      /* B is [N, K]: rows n0..n0+3 (clamped), k along channels. */
      int n0 = p.z * 4;
      int base = idx4(b_shape, bb, ks, bh, 0);
      float4 b0 = LOAD4(b, base + n0);
      float4 b1 = LOAD4(b, base + min(n0 + 1, N - 1));
      float4 b2 = LOAD4(b, base + min(n0 + 2, N - 1));
      float4 b3 = LOAD4(b, base + min(n0 + 3, N - 1));
      acc0 += (float4)(dot(a0, b0), dot(a0, b1), dot(a0, b2), dot(a0, b3));
      acc1 += (float4)(dot(a1, b0), dot(a1, b1), dot(a1, b2), dot(a1, b3));
      acc2 += (float4)(dot(a2, b0), dot(a2, b1), dot(a2, b2), dot(a2, b3));
      acc3 += (float4)(dot(a3, b0), dot(a3, b1), dot(a3, b2), dot(a3, b3));
    } else {
      /* B is [K, N]: row k is the float4 of columns n0..n0+3. */
      int base = idx4(b_shape, bb, p.z, bh, 0);
      int k = ks * 4;
      float4 b0 = LOAD4(b, base + k);
      float4 b1 = k + 1 < K ? LOAD4(b, base + k + 1) : (float4)(0.0f);
      float4 b2 = k + 2 < K ? LOAD4(b, base + k + 2) : (float4)(0.0f);
      float4 b3 = k + 3 < K ? LOAD4(b, base + k + 3) : (float4)(0.0f);
      acc0 = fma((float4)(a0.x), b0, fma((float4)(a0.y), b1, fma((float4)(a0.z), b2, fma((float4)(a0.w), b3, acc0))));
      acc1 = fma((float4)(a1.x), b0, fma((float4)(a1.y), b1, fma((float4)(a1.z), b2, fma((float4)(a1.w), b3, acc1))));
      acc2 = fma((float4)(a2.x), b0, fma((float4)(a2.y), b1, fma((float4)(a2.z), b2, fma((float4)(a2.w), b3, acc2))));
      acc3 = fma((float4)(a3.x), b0, fma((float4)(a3.y), b1, fma((float4)(a3.z), b2, fma((float4)(a3.w), b3, acc3))));
    }
  }
  int out = idx4(dst_shape, p.w, p.z, p.y, m0);
  STORE4(mask_tail(acc0, p.z, N), dst, out);
  if (m0 + 1 < M) STORE4(mask_tail(acc1, p.z, N), dst, out + 1);
  if (m0 + 2 < M) STORE4(mask_tail(acc2, p.z, N), dst, out + 2);
  if (m0 + 3 < M) STORE4(mask_tail(acc3, p.z, N), dst, out + 3);
}
#endif

/* BATCH_MATMUL with adj_x and without adj_y: A is stored [K, M], so one
 * float4 load gives rows m0..m0+3 at one k, and row k of B is the float4
 * of columns n0..n0+3: each k adds a 4x4 outer product. Same grid as
 * batch_matmul_rows4 (x = row groups of 4, which are A's channel slices). */
#define BATCH_MATMUL_ADJX_PARAMS \
  __global const storage_t* a, __global const storage_t* b, __global storage_t* dst, int4 a_shape, int4 b_shape, \
  int4 dst_shape, int4 grid, int total
#define BATCH_MATMUL_ADJX_ARGS a, b, dst, a_shape, b_shape, dst_shape, grid, total
#if GD_SELECTED(batch_matmul_adjx, 4)
OUTLINED_KERNEL(batch_matmul_adjx, BATCH_MATMUL_ADJX_PARAMS, BATCH_MATMUL_ADJX_ARGS) {
  if (gid >= total) return;
  int4 p = split_gid(gid, grid);
  int M = dst_shape.x, N = dst_shape.z, K = a_shape.x;
  int m0 = p.x * 4;
  int ab = a_shape.w == 1 ? 0 : p.w, ah = a_shape.y == 1 ? 0 : p.y;
  int bb = b_shape.w == 1 ? 0 : p.w, bh = b_shape.y == 1 ? 0 : p.y;
  int abase = idx4(a_shape, ab, p.x, ah, 0);
  int bbase = idx4(b_shape, bb, p.z, bh, 0);
  float4 acc0 = (float4)(0.0f), acc1 = acc0, acc2 = acc0, acc3 = acc0;
  for (int k = 0; k < K; ++k) {
    float4 av = LOAD4(a, abase + k);
    float4 bv = LOAD4(b, bbase + k);
    acc0 = fma((float4)(av.x), bv, acc0);
    acc1 = fma((float4)(av.y), bv, acc1);
    acc2 = fma((float4)(av.z), bv, acc2);
    acc3 = fma((float4)(av.w), bv, acc3);
  }
  int out = idx4(dst_shape, p.w, p.z, p.y, m0);
  STORE4(mask_tail(acc0, p.z, N), dst, out);
  if (m0 + 1 < M) STORE4(mask_tail(acc1, p.z, N), dst, out + 1);
  if (m0 + 2 < M) STORE4(mask_tail(acc2, p.z, N), dst, out + 2);
  if (m0 + 3 < M) STORE4(mask_tail(acc3, p.z, N), dst, out + 3);
}
#endif
