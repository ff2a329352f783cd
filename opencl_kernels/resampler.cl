/* MediaPipe's Resampler (mediapipe/util/tflite/operations/resampler.cc,
 * after TF Addons): output (x, y) samples the source bilinearly at the warp
 * point (warp[y][x][0], warp[y][x][1]), zeros outside; a point outside
 * (-1, size) on either axis gives 0. Operation order follows the CPU. */
#pragma OPENCL FP_CONTRACT OFF

GD_INLINE float4 rs_read(__global const storage_t* src, int4 s, int b, int slice, int y, int x) {
  if (x < 0 || y < 0 || x > s.x - 1 || y > s.y - 1) return (float4)(0.0f);
  return LOAD4(src, idx4(s, b, slice, y, x));
}

#define RESAMPLER_PARAMS \
  __global const storage_t* src, __global storage_t* dst, int4 src_shape, int4 dst_shape, \
  __global const storage_t* warp, int4 warp_shape, int total
#define RESAMPLER_ARGS src, dst, src_shape, dst_shape, warp, warp_shape, total
OUTLINED_KERNEL(resampler, RESAMPLER_PARAMS, RESAMPLER_ARGS) {
  if (gid >= total) return;
  int4 p = split_gid(gid, dst_shape);
  float x = LOAD1(warp, idx1(warp_shape, p.w, p.y, p.x, 0));
  float y = LOAD1(warp, idx1(warp_shape, p.w, p.y, p.x, 1));
  float4 r = (float4)(0.0f);
  if (x > -1.0f && y > -1.0f && x < (float)src_shape.x && y < (float)src_shape.y) {
    int fx = (int)floor(x), fy = (int)floor(y);
    int cx = fx + 1, cy = fy + 1;
    float dx = (float)cx - x, dy = (float)cy - y;
    float4 a = dx * dy * rs_read(src, src_shape, p.w, p.z, fy, fx);
    float4 b = (1.0f - dx) * (1.0f - dy) * rs_read(src, src_shape, p.w, p.z, cy, cx);
    float4 c = dx * (1.0f - dy) * rs_read(src, src_shape, p.w, p.z, cy, fx);
    float4 d = (1.0f - dx) * dy * rs_read(src, src_shape, p.w, p.z, fy, cx);
    r = a + b + c + d;
  }
  STORE4(mask_tail(r, p.z, dst_shape.z), dst, gid);
}
