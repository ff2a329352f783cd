/* The CPU's integer requantization for int8 CONV_2D, FULLY_CONNECTED and
 * PRELU (delegate_c/ops/int8_exact.c, docs/int8-fidelity.md). Tensors hold the
 * float view (q - zero_point) * scale; these kernels recover the integers
 * exactly, apply TFLite's MultiplyByQuantizedMultiplier and write the float
 * view back. 64-bit integers: OpenCL full profile (PoCL, desktop GPUs).
 * Integer clamps take vector bounds: Oclgrind 21.10 computes only lane 0 of
 * clamp(int4, int, int) (found by the matrix: tools/matrix.py
 * INT8_KERNEL_TESTS). */

/* MultiplyByQuantizedMultiplier(x, q, shift) per lane, q >= 2^30 (so the
 * saturating case of SaturatingRoundingDoublingHighMul never arises):
 * round(x * 2^left * q / 2^31) with ties away from zero and the C++
 * division's truncation toward zero (done as a shift with a bias for
 * negatives: a 64-bit division was 10x slower on PoCL), then the rounding
 * right shift with its ties up (toward +inf: the x86 wheels' CONV_2D /
 * FULLY_CONNECTED) or away from zero (gemmlowp's RoundingDivideByPOT: PRELU). */
GD_INLINE int4 int8x_mbqm4(int4 x, int4 q, int4 shift, int ties_up) {
  int4 left = max(shift, (int4)(0)), right = max(-shift, (int4)(0));
  long4 ab = convert_long4(x << left) * convert_long4(q);
  long4 r = ab + select((long4)(1L - (1L << 30)), (long4)(1L << 30), ab >= (long4)(0));
  int4 t = convert_int4((r + ((r >> 63) & (long4)((1L << 31) - 1))) >> 31);
  long4 tl = convert_long4(t), rl = convert_long4(right);
  long4 nudge = ((long4)(1) << rl) >> 1;
  if (ties_up) return convert_int4((tl + nudge) >> rl);
  /* Ties away: one less nudge for negatives when right > 0 (a true vector
   * comparison is -1). gemmlowp's mask/threshold form of the same rounding
   * gives wrong lanes on Oclgrind 21.10. */
  return convert_int4((tl + nudge + ((tl < (long4)(0)) & (rl > (long4)(0)))) >> rl);
}

/* xi = x / scale rounded: the integers q - zero_point of the float view. */
#define INT8_INT_VIEW_PARAMS \
  __global const storage_t* src, __global storage_t* dst, int4 src_shape, int4 dst_shape, float scale, int total
#define INT8_INT_VIEW_ARGS src, dst, src_shape, dst_shape, scale, total
OUTLINED_KERNEL(int8_int_view, INT8_INT_VIEW_PARAMS, INT8_INT_VIEW_ARGS) {
  if (gid >= total) return;
  int4 p = split_gid(gid, dst_shape);
  STORE4(mask_tail(round(LOAD4(src, gid) / scale), p.z, dst_shape.z), dst, gid);
}

/* Integer-valued accumulator -> per channel c: params[2c] multiplier,
 * params[2c + 1] shift (padded to whole slices); + zero point, clamped to
 * [qmin, qmax] (the fused activation's range), stored as
 * (q - zero point) * scale. */
#define INT8_REQUANT_PARAMS \
  __global const storage_t* src, __global storage_t* dst, int4 src_shape, int4 dst_shape, __global const int* params, \
  float scale, int zero_point, int qmin, int qmax, int total
#define INT8_REQUANT_ARGS src, dst, src_shape, dst_shape, params, scale, zero_point, qmin, qmax, total
OUTLINED_KERNEL(int8_requant, INT8_REQUANT_PARAMS, INT8_REQUANT_ARGS) {
  if (gid >= total) return;
  int4 p = split_gid(gid, dst_shape);
  int8 m = vload8(p.z, params);
  int4 q = int8x_mbqm4(convert_int4_rte(LOAD4(src, gid)), m.even, m.odd, 1) + zero_point;
  float4 y = convert_float4(clamp(q, (int4)(qmin), (int4)(qmax)) - zero_point) * scale;
  STORE4(mask_tail(y, p.z, dst_shape.z), dst, gid);
}

/* PRELU on the integers (TFLite's reference prelu.h, two multipliers):
 * params = (q_pos, shift_pos, q_neg, shift_neg, bits of the input scale,
 * then alpha - alpha_zero_point per channel, padded to whole slices). */
#define INT8_PRELU_PARAMS \
  __global const storage_t* src, __global storage_t* dst, int4 src_shape, int4 dst_shape, __global const int* params, \
  float scale, int zero_point, int qmin, int qmax, int total
#define INT8_PRELU_ARGS src, dst, src_shape, dst_shape, params, scale, zero_point, qmin, qmax, total
OUTLINED_KERNEL(int8_prelu, INT8_PRELU_PARAMS, INT8_PRELU_ARGS) {
  if (gid >= total) return;
  int4 p = split_gid(gid, dst_shape);
  int4 x = convert_int4_rte(LOAD4(src, gid) / as_float(params[4]));
  int4 alpha = vload4(0, params + 5 + 4 * p.z);
  int4 pos = x >= (int4)(0);
  int4 q = int8x_mbqm4(select(x * alpha, x, pos), select((int4)(params[2]), (int4)(params[0]), pos),
                       select((int4)(params[3]), (int4)(params[1]), pos), 0) + zero_point;
  float4 y = convert_float4(clamp(q, (int4)(qmin), (int4)(qmax)) - zero_point) * scale;
  STORE4(mask_tail(y, p.z, dst_shape.z), dst, gid);
}
