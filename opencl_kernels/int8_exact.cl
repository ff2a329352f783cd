/* The CPU's integer requantization for int8 CONV_2D, FULLY_CONNECTED and
 * PRELU (delegate_c/int8_exact.c, docs/int8-fidelity.md). Tensors hold the
 * float view (q - zero_point) * scale; these kernels recover the integers
 * exactly, apply TFLite's MultiplyByQuantizedMultiplier and write the float
 * view back. 64-bit integers: OpenCL full profile (PoCL, desktop GPUs). */

/* SaturatingRoundingDoublingHighMul (gemmlowp): round(a * b / 2^31), ties
 * away from zero; b >= 2^30 here, so the saturating case never arises. */
inline int int8x_srdhm(int a, int b) {
  long ab = (long)a * (long)b;
  long r = ab + (ab >= 0 ? (1L << 30) : (1L - (1L << 30)));
  return (int)(r / (1L << 31)); /* truncates toward zero, as C++ does */
}

/* MultiplyByQuantizedMultiplier(x, q, shift); the last rounding shift's ties
 * up (toward +inf: the x86 wheels' CONV_2D / FULLY_CONNECTED) or away from
 * zero (gemmlowp's RoundingDivideByPOT: PRELU). */
inline int int8x_mbqm(int x, int q, int shift, int ties_up) {
  int left = shift > 0 ? shift : 0, right = shift > 0 ? 0 : -shift;
  int t = int8x_srdhm(x << left, q);
  if (right == 0) return t;
  if (ties_up) return (int)(((long)t + (1L << (right - 1))) >> right);
  int mask = (1 << right) - 1;
  int threshold = (mask >> 1) + (t < 0 ? 1 : 0);
  return (t >> right) + ((t & mask) > threshold ? 1 : 0);
}

/* xi = x / scale rounded: the integers q - zero_point of the float view. */
__kernel void int8_int_view(__global const storage_t* src, __global storage_t* dst, int4 src_shape, int4 dst_shape,
                            float scale, int total) {
  int gid = get_global_id(0);
  if (gid >= total) return;
  int4 p = split_gid(gid, dst_shape);
  STORE4(mask_tail(round(LOAD4(src, gid) / scale), p.z, dst_shape.z), dst, gid);
}

/* Integer-valued accumulator -> per channel c: params[2c] multiplier,
 * params[2c + 1] shift; + zero point, clamped to [qmin, qmax] (the fused
 * activation's range), stored as (q - zero point) * scale. */
__kernel void int8_requant(__global const storage_t* src, __global storage_t* dst, int4 src_shape, int4 dst_shape,
                           __global const int* params, float scale, int zero_point, int qmin, int qmax, int total) {
  int gid = get_global_id(0);
  if (gid >= total) return;
  int4 p = split_gid(gid, dst_shape);
  float4 v = LOAD4(src, gid);
  float r[4] = {v.x, v.y, v.z, v.w};
  for (int i = 0; i < 4; ++i) {
    int c = p.z * 4 + i;
    if (c >= dst_shape.z) {
      r[i] = 0.0f;
      continue;
    }
    int q = int8x_mbqm(convert_int_rte(r[i]), params[2 * c], params[2 * c + 1], 1) + zero_point;
    r[i] = (float)(clamp(q, qmin, qmax) - zero_point) * scale;
  }
  STORE4((float4)(r[0], r[1], r[2], r[3]), dst, gid);
}

/* PRELU on the integers (TFLite's reference prelu.h, two multipliers):
 * params = (q_pos, shift_pos, q_neg, shift_neg, bits of the input scale,
 * then alpha - alpha_zero_point per channel). */
__kernel void int8_prelu(__global const storage_t* src, __global storage_t* dst, int4 src_shape, int4 dst_shape,
                         __global const int* params, float scale, int zero_point, int qmin, int qmax, int total) {
  int gid = get_global_id(0);
  if (gid >= total) return;
  int4 p = split_gid(gid, dst_shape);
  float in_scale = as_float(params[4]);
  float4 v = LOAD4(src, gid);
  float r[4] = {v.x, v.y, v.z, v.w};
  for (int i = 0; i < 4; ++i) {
    int c = p.z * 4 + i;
    if (c >= dst_shape.z) {
      r[i] = 0.0f;
      continue;
    }
    int x = convert_int_rte(r[i] / in_scale);
    int alpha = params[5 + c];
    int q = x >= 0 ? int8x_mbqm(x, params[0], params[1], 0) : int8x_mbqm(x * alpha, params[2], params[3], 0);
    r[i] = (float)(clamp(q + zero_point, qmin, qmax) - zero_point) * scale;
  }
  STORE4((float4)(r[0], r[1], r[2], r[3]), dst, gid);
}
