/* FULLY_CONNECTED. One work-item per output float4: 4 output channels of
 * one row, looping over the K input channels a float4 at a time with FP32
 * accumulation. Row r is the r-th pixel (row-major over B, H, W) of the
 * output, and of the source, whose C is K.
 *
 * weights: float4 blocks [S_out][S_in][4 in-lanes] holding 4 output
 * channels for one input channel (conv2d's 1x1 layout); bias: [S_out]
 * float4. Padded input lanes are zero and so are their weights. */
__kernel void fully_connected(__global const storage_t* src, __global storage_t* dst, __global const float4* weights,
                              __global const float4* bias, int4 src_shape, int4 dst_shape, int act, int total) {
  int gid = get_global_id(0);
  if (gid >= total) return;
  int4 p = split_gid(gid, dst_shape);
  int row = (p.w * dst_shape.y + p.y) * dst_shape.x + p.x;
  int sx = row % src_shape.x;
  int t = row / src_shape.x;
  int sy = t % src_shape.y;
  int sb = t / src_shape.y;
  int src_slices = SLICES(src_shape);
  int slice_stride = src_shape.y * src_shape.x;
  int sidx = idx4(src_shape, sb, 0, sy, sx);
  __global const float4* w = weights + p.z * src_slices * 4;
  /* Two accumulators shorten the dependent chain of multiply-adds. */
  float4 acc0 = bias[p.z];
  float4 acc1 = (float4)(0.0f);
  for (int si = 0; si < src_slices; ++si) {
    float4 v = LOAD4(src, sidx + si * slice_stride);
    acc0 = fma((float4)(v.x), w[0], acc0);
    acc1 = fma((float4)(v.y), w[1], acc1);
    acc0 = fma((float4)(v.z), w[2], acc0);
    acc1 = fma((float4)(v.w), w[3], acc1);
    w += 4;
  }
  float4 acc = mask_tail(activate(acc0 + acc1, act), p.z, dst_shape.z);
  STORE4(acc, dst, gid);
}

/* BATCH_MATMUL: dst[b, h, m, n] = sum_k A[m, k] * B[k, n] in each batch
 * (b, h), a size-1 batch dim of A or B broadcast. Rows are W and columns
 * C in every operand; adj.x / adj.y mean A / B are stored transposed. One
 * work-item per output float4 (4 columns n of one row m), float sums. */
__kernel void batch_matmul(__global const storage_t* a, __global const storage_t* b, __global storage_t* dst,
                           int4 a_shape, int4 b_shape, int4 dst_shape, int2 adj, int total) {
  int gid = get_global_id(0);
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

/* The cell of TFLite's basic LSTM: gates holds, per row, 4 blocks of O
 * pre-activations (input gate, new input, forget gate, output gate);
 * state = sigmoid(i) * tanh(n) + sigmoid(f) * prev_state and activation =
 * sigmoid(o) * tanh(state). One work-item per float4 of the [rows, O]
 * outputs; the gate blocks start at any channel, so lanes load singly. */
inline float sigmoid1(float x) { return 1.0f / (1.0f + exp(-x)); }

__kernel void lstm_cell(__global const storage_t* gates, __global const storage_t* prev_state,
                        __global storage_t* activation, __global storage_t* state, int4 gates_shape, int4 shape,
                        int total) {
  int gid = get_global_id(0);
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
