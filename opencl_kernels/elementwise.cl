/* Elementwise ops with TFLite broadcasting. Shapes are right-aligned to
 * BHWC; an operand dimension of 1 broadcasts. A one-channel operand
 * against a wider output is splatted across the four lanes. */

#define ZERO4 ((float4)(0.0f))

/* 1.0 where the lane mask is set, else 0.0: comparisons keep bools as floats. */
inline float4 as_bool4(int4 mask) { return select(ZERO4, (float4)(1.0f), mask); }

/* FLOOR_DIV: floor of the exact quotient (the CPU divides in double). The
 * float quotient can round across an integer; the remainder a - q * b
 * (one fma, so its sign is exact) says which way to correct. */
inline float4 floor_div(float4 a, float4 b) {
  float4 q = floor(a / b);
  float4 r = fma(-q, b, a);
  int4 too_big = (isless(r, ZERO4) & isgreater(b, ZERO4)) |
                 (isgreater(r, ZERO4) & isless(b, ZERO4));
  int4 too_small = isgreaterequal(fabs(r), fabs(b)) & ~too_big;
  return q - as_bool4(too_big) + as_bool4(too_small);
}

/* FLOOR_MOD as TFLite computes it: fmod, moved into the divisor's sign. */
inline float4 floor_mod(float4 a, float4 b) {
  float4 m = fmod(a, b);
  return select(m, m + b, isnotequal(m, ZERO4) & (isless(b, ZERO4) ^ isless(m, ZERO4)));
}

/* op: 0 add, 1 mul, 2 sub, 3 div, 4 maximum, 5 minimum, 6 prelu (a >= 0 ?
 * a : a * b), 7 squared difference, 8 pow, 9 floor_div, 10 floor_mod,
 * 11 equal, 12 not_equal, 13 less, 14 less_equal, 15 greater,
 * 16 greater_equal, 17 logical_and (graph.h BIN_*). */
inline float4 binary(float4 a, float4 b, int op) {
  switch (op) {
    case 0: return a + b;
    case 1: return a * b;
    case 2: return a - b;
    case 3: return a / b;
    case 4: return fmax(a, b);
    case 5: return fmin(a, b);
    case 6: return select(a * b, a, a >= 0.0f);
    case 7: return (a - b) * (a - b);
    case 8: return pow(a, b);
    case 9: return floor_div(a, b);
    case 10: return floor_mod(a, b);
    case 11: return as_bool4(isequal(a, b));
    case 12: return as_bool4(isnotequal(a, b));
    case 13: return as_bool4(isless(a, b));
    case 14: return as_bool4(islessequal(a, b));
    case 15: return as_bool4(isgreater(a, b));
    case 16: return as_bool4(isgreaterequal(a, b));
    case 17: return as_bool4(isnotequal(a, ZERO4) & isnotequal(b, ZERO4));
    default: return a;
  }
}

inline float4 load_broadcast(__global const storage_t* t, int4 shape, int4 out_shape, int4 p) {
  int x = shape.x == 1 ? 0 : p.x;
  int y = shape.y == 1 ? 0 : p.y;
  int b = shape.w == 1 ? 0 : p.w;
  if (shape.z == 1 && out_shape.z != 1) return (float4)(LOAD1(t, idx1(shape, b, y, x, 0)));
  return LOAD4(t, idx4(shape, b, p.z, y, x));
}

__kernel void binary_op(__global const storage_t* a, __global const storage_t* b, __global storage_t* dst,
                        int4 a_shape, int4 b_shape, int4 dst_shape, int op, int act, int total) {
  int gid = get_global_id(0);
  if (gid >= total) return;
  int4 p = split_gid(gid, dst_shape);
  float4 va = load_broadcast(a, a_shape, dst_shape, p);
  float4 vb = load_broadcast(b, b_shape, dst_shape, p);
  float4 r = mask_tail(activate(binary(va, vb, op), act), p.z, dst_shape.z);
  STORE4(r, dst, gid);
}

/* The common case of binary_op: a has the output's shape, b the same
 * shape or one value per channel (PReLU's alpha, a bias). A work-item
 * handles 8 consecutive pixels of one slice: no per-float4 index split or
 * broadcast arithmetic (binary_op spent ~9 ns per float4 on them). Work-items
 * run over (ceil(H * W / 8), slices, B). */
__kernel void binary_op_rows(__global const storage_t* a, __global const storage_t* b, __global storage_t* dst,
                             int4 dst_shape, int b_per_channel, int op, int act, int total) {
  int gid = get_global_id(0);
  if (gid >= total) return;
  int plane = dst_shape.x * dst_shape.y;
  int tiles = (plane + 7) >> 3;
  int t = gid % tiles, sb = gid / tiles;
  int s = sb % SLICES(dst_shape);
  int o = sb * plane + t * 8;
  int n = min(8, plane - t * 8);
  float4 vc = b_per_channel ? LOAD4(b, s) : (float4)(0.0f);
  for (int i = 0; i < n; ++i) {
    float4 vb = b_per_channel ? vc : LOAD4(b, o + i);
    STORE4(mask_tail(activate(binary(LOAD4(a, o + i), vb, op), act), s, dst_shape.z), dst, o + i);
  }
}

/* SELECT / SELECT_V2: cond != 0 ? x : y, each operand broadcast. */
__kernel void select_op(__global const storage_t* cond, __global const storage_t* x, __global const storage_t* y,
                        __global storage_t* dst, int4 c_shape, int4 x_shape, int4 y_shape, int4 dst_shape,
                        int total) {
  int gid = get_global_id(0);
  if (gid >= total) return;
  int4 p = split_gid(gid, dst_shape);
  float4 vc = load_broadcast(cond, c_shape, dst_shape, p);
  float4 vx = load_broadcast(x, x_shape, dst_shape, p);
  float4 vy = load_broadcast(y, y_shape, dst_shape, p);
  STORE4(mask_tail(select(vy, vx, isnotequal(vc, ZERO4)), p.z, dst_shape.z), dst, gid);
}

/* op: 0 relu, 1 relu6, 2 relu_n1_to_1, 3 tanh, 4 logistic, 5 hard_swish,
 * 6 leaky relu (alpha), 7 abs, 8 exp, 9 neg, 10 sqrt, 11 rsqrt, 12 square,
 * 13 log, 14 sin, 15 cos, 16 floor, 17 elu, 18 sign, 19 gelu (erf),
 * 20 gelu (tanh approximation), 21 trunc (CAST to int32), 22 != 0 (CAST
 * to bool), 23 identity (graph.h UN_*). */
__kernel void unary_op(__global const storage_t* src, __global storage_t* dst, int4 shape, int op, float alpha,
                       int total) {
  int gid = get_global_id(0);
  if (gid >= total) return;
  float4 v = LOAD4(src, gid);
  float4 r;
  switch (op) {
    case 0: r = fmax(v, 0.0f); break;
    case 1: r = clamp(v, 0.0f, 6.0f); break;
    case 2: r = clamp(v, -1.0f, 1.0f); break;
    case 3: r = tanh(v); break;
    case 4: r = 1.0f / (1.0f + exp(-v)); break;
    case 5: r = v * clamp(v + 3.0f, 0.0f, 6.0f) * (1.0f / 6.0f); break;
    case 6: r = select(v * alpha, v, v >= 0.0f); break;
    case 7: r = fabs(v); break;
    case 8: r = exp(v); break;
    case 9: r = -v; break;
    case 10: r = sqrt(v); break;
    case 11: r = rsqrt(v); break;
    case 12: r = v * v; break;
    case 13: r = log(v); break;
    case 14: r = sin(v); break;
    case 15: r = cos(v); break;
    case 16: r = floor(v); break;
    case 17: r = select(expm1(v), v, v >= 0.0f); break;
    case 18: r = sign(v); break;
    case 19: r = 0.5f * v * (1.0f + erf(v * 0.70710678118654752f)); break;
    case 20: r = 0.5f * v * (1.0f + tanh(0.79788456080286536f * (v + 0.044715f * v * v * v))); break;
    case 21: r = trunc(v); break;
    case 22: r = as_bool4(isnotequal(v, ZERO4)); break;
    default: r = v;
  }
  int s = (gid / (shape.x * shape.y)) % SLICES(shape);
  STORE4(mask_tail(r, s, shape.z), dst, gid);
}
