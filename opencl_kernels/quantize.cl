/* Quantize-dequantize ("fake quant"): snaps each value onto the int8/uint8
 * grid of a tensor that was quantized in the original model, so the float
 * view of a quantized graph carries the same rounding as the CPU's integer
 * kernels: q = clamp(round(x / scale) + zero_point, qmin, qmax), then
 * (q - zero_point) * scale. round() is half away from zero, as TFLite's
 * AffineQuantize. Padded lanes stay zero. */
#define QUANTIZE_DEQUANTIZE_PARAMS \
  __global const storage_t* src, __global storage_t* dst, int4 src_shape, int4 dst_shape, float scale, int zero_point, \
  int qmin, int qmax, int total
#define QUANTIZE_DEQUANTIZE_ARGS src, dst, src_shape, dst_shape, scale, zero_point, qmin, qmax, total
OUTLINED_KERNEL(quantize_dequantize, QUANTIZE_DEQUANTIZE_PARAMS, QUANTIZE_DEQUANTIZE_ARGS) {
  if (gid >= total) return;
  int4 p = split_gid(gid, dst_shape);
  float4 x = LOAD4(src, gid);
  float4 q = clamp(round(x / scale) + (float)zero_point, (float)qmin, (float)qmax);
  STORE4(mask_tail((q - (float)zero_point) * scale, p.z, dst_shape.z), dst, gid);
}
