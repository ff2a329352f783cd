/* Elementwise ops with TFLite broadcasting. Shapes are right-aligned to
 * BHWC; an operand dimension of 1 broadcasts. A one-channel operand
 * against a wider output is splatted across the four lanes. */

GD_INLINE float4 load_broadcast(__global const storage_t* t, int4 shape, int4 out_shape, int4 p) {
  int x = shape.x == 1 ? 0 : p.x;
  int y = shape.y == 1 ? 0 : p.y;
  int b = shape.w == 1 ? 0 : p.w;
  if (shape.z == 1 && out_shape.z != 1) return (float4)(LOAD1(t, idx1(shape, b, y, x, 0)));
  return LOAD4(t, idx4(shape, b, p.z, y, x));
}

#define BINARY_OP_PARAMS \
  __global const storage_t* a, __global const storage_t* b, __global storage_t* dst, int4 a_shape, \
  int4 b_shape, int4 dst_shape, int op, int act, int total
#define BINARY_OP_ARGS a, b, dst, a_shape, b_shape, dst_shape, op, act, total
#if GD_SELECTED(binary_op, 0)
OUTLINED_KERNEL(binary_op, BINARY_OP_PARAMS, BINARY_OP_ARGS) {
  if (gid >= total) return;
  int4 p = split_gid(gid, dst_shape);
  float4 va = load_broadcast(a, a_shape, dst_shape, p);
  float4 vb = load_broadcast(b, b_shape, dst_shape, p);
  float4 r = mask_tail(activate(binary(va, vb, op), act), p.z, dst_shape.z);
  STORE4(r, dst, gid);
}
#endif

/* The common case of binary_op: a has the output's shape, b the same
 * shape or one value per channel (PReLU's alpha, a bias). A work-item
 * handles ROW_PIXELS consecutive pixels of one slice: no per-float4 index
 * split or broadcast arithmetic (binary_op spent ~9 ns per float4 on them
 * on PoCL). The CPU set takes ROW_TILE pixels; the GPU set builds with
 * -DROW_PIXELS=1, so neighbouring work-items read neighbouring float4s.
 * Work-items run over (ceil(H * W / ROW_PIXELS), slices, B). */
#ifndef ROW_PIXELS
#define ROW_PIXELS ROW_TILE
#endif

#ifdef HALF_MATH
/* The ops and activations whose half result is the float result rounded
 * once: the others take the float path below. */
GD_INLINE int half_exact(int op, int act) {
  return (op == BIN_ADD || op == BIN_MUL || op == BIN_SUB || op == BIN_MAX || op == BIN_MIN || op == BIN_PRELU) &&
         (act == ACT_NONE || act == ACT_RELU || act == ACT_RELU6 || act == ACT_RELU_N1_TO_1);
}

GD_INLINE half4 binary_half(half4 a, half4 b, int op) {
  switch (op) {
    case BIN_ADD: return a + b;
    case BIN_MUL: return a * b;
    case BIN_SUB: return a - b;
    case BIN_MAX: return fmax(a, b);
    case BIN_MIN: return fmin(a, b);
    default: return select(a * b, a, a >= (half)0.0f); /* BIN_PRELU */
  }
}

GD_INLINE half4 activate_half(half4 v, int act) {
  switch (act) {
    case ACT_RELU: return fmax(v, (half)0.0f);
    case ACT_RELU6: return clamp(v, (half)0.0f, (half)6.0f);
    case ACT_RELU_N1_TO_1: return clamp(v, (half)-1.0f, (half)1.0f);
    default: return v;
  }
}

GD_INLINE half4 mask_tail_half(half4 v, int s, int C) {
  int base = s * 4;
  if (base + 4 <= C) return v;
  return (half4)(base + 0 < C ? v.x : (half)0.0f, base + 1 < C ? v.y : (half)0.0f, base + 2 < C ? v.z : (half)0.0f,
                 base + 3 < C ? v.w : (half)0.0f);
}
#endif

#define BINARY_OP_ROWS_PARAMS \
  __global const storage_t* a, __global const storage_t* b, __global storage_t* dst, int4 dst_shape, \
  int b_per_channel, int op, int act, int total
#define BINARY_OP_ROWS_ARGS a, b, dst, dst_shape, b_per_channel, op, act, total
#if GD_SELECTED(binary_op_rows, 1)
OUTLINED_KERNEL(binary_op_rows, BINARY_OP_ROWS_PARAMS, BINARY_OP_ROWS_ARGS) {
  if (gid >= total) return;
  int plane = dst_shape.x * dst_shape.y;
  int tiles = (plane + ROW_PIXELS - 1) / ROW_PIXELS;
  int t = gid % tiles, sb = gid / tiles;
  int s = sb % SLICES(dst_shape);
  int o = sb * plane + t * ROW_PIXELS;
  int n = min(ROW_PIXELS, plane - t * ROW_PIXELS);
#ifdef HALF_MATH
  if (half_exact(op, act)) {
    half4 hc = b_per_channel ? vload4(s, b) : (half4)(0.0f);
    for (int i = 0; i < n; ++i) {
      half4 hb = b_per_channel ? hc : vload4(o + i, b);
      vstore4(mask_tail_half(activate_half(binary_half(vload4(o + i, a), hb, op), act), s, dst_shape.z), o + i, dst);
    }
    return;
  }
#endif
  float4 vc = b_per_channel ? LOAD4(b, s) : (float4)(0.0f);
  for (int i = 0; i < n; ++i) {
    float4 vb = b_per_channel ? vc : LOAD4(b, o + i);
    STORE4(mask_tail(activate(binary(LOAD4(a, o + i), vb, op), act), s, dst_shape.z), dst, o + i);
  }
}
#endif

/* SELECT / SELECT_V2: cond != 0 ? x : y, each operand broadcast. */
#define SELECT_OP_PARAMS \
  __global const storage_t* cond, __global const storage_t* x, __global const storage_t* y, __global storage_t* dst, \
  int4 c_shape, int4 x_shape, int4 y_shape, int4 dst_shape, int total
#define SELECT_OP_ARGS cond, x, y, dst, c_shape, x_shape, y_shape, dst_shape, total
#if GD_SELECTED(select_op, 2)
OUTLINED_KERNEL(select_op, SELECT_OP_PARAMS, SELECT_OP_ARGS) {
  if (gid >= total) return;
  int4 p = split_gid(gid, dst_shape);
  float4 vc = load_broadcast(cond, c_shape, dst_shape, p);
  float4 vx = load_broadcast(x, x_shape, dst_shape, p);
  float4 vy = load_broadcast(y, y_shape, dst_shape, p);
  STORE4(mask_tail(select(vy, vx, isnotequal(vc, ZERO4)), p.z, dst_shape.z), dst, gid);
}
#endif

/* op: UN_* (kernel_abi.h), computed by common.cl's unary_math (the same
 * function a fused unary epilogue step runs); UN_TRUNC / UN_NOT_ZERO are
 * CAST to int32 / bool. */
#define UNARY_OP_PARAMS \
  __global const storage_t* src, __global storage_t* dst, int4 shape, int op, float alpha, int total
#define UNARY_OP_ARGS src, dst, shape, op, alpha, total
#if GD_SELECTED(unary_op, 3)
OUTLINED_KERNEL(unary_op, UNARY_OP_PARAMS, UNARY_OP_ARGS) {
  if (gid >= total) return;
  float4 v = LOAD4(src, gid);
  float4 r = op == UN_TRUNC ? trunc(v) : op == UN_NOT_ZERO ? as_bool4(isnotequal(v, ZERO4)) : unary_math(v, op, alpha);
  int s = (gid / (shape.x * shape.y)) % SLICES(shape);
  STORE4(mask_tail(r, s, shape.z), dst, gid);
}
#endif
