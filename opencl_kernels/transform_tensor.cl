/* MediaPipe's TransformTensorBilinear (transform_tensor_bilinear.cc): each
 * output pixel (x, y) samples the input at (row0 . (x, y, 0, 1),
 * row1 . (x, y, 0, 1)) of the [1,4,4] matrix, bilinearly, reading zeros
 * outside the input; a coordinate outside [0, size - 1] gives 0. Version 2
 * moves the matrix to pixel centres first (align_corners = 1):
 * row.w += 0.5 * row.x + 0.5 * row.y - 0.5. Operation order follows the
 * CPU code. */
#pragma OPENCL FP_CONTRACT OFF

GD_INLINE float4 tt_read(__global const storage_t* src, int4 s, int b, int slice, int y, int x) {
  if (y < 0 || x < 0 || y >= s.y || x >= s.x) return (float4)(0.0f);
  return LOAD4(src, idx4(s, b, slice, y, x));
}

#define TRANSFORM_TENSOR_BILINEAR_PARAMS \
  __global const storage_t* src, __global storage_t* dst, int4 src_shape, int4 dst_shape, \
  __global const storage_t* mat, int4 mat_shape, int align_corners, int total
#define TRANSFORM_TENSOR_BILINEAR_ARGS src, dst, src_shape, dst_shape, mat, mat_shape, align_corners, total
OUTLINED_KERNEL(transform_tensor_bilinear, TRANSFORM_TENSOR_BILINEAR_PARAMS, TRANSFORM_TENSOR_BILINEAR_ARGS) {
  if (gid >= total) return;
  int4 p = split_gid(gid, dst_shape);
  float4 xt = LOAD4(mat, idx4(mat_shape, 0, 0, 0, 0));
  float4 yt = LOAD4(mat, idx4(mat_shape, 0, 0, 0, 1));
  if (align_corners) {
    xt.w += xt.x * 0.5f + xt.y * 0.5f - 0.5f;
    yt.w += yt.x * 0.5f + yt.y * 0.5f - 0.5f;
  }
  float fx = (float)p.x, fy = (float)p.y;
  float tx = xt.x * fx + xt.y * fy + xt.z * 0.0f + xt.w * 1.0f;
  float ty = yt.x * fx + yt.y * fy + yt.z * 0.0f + yt.w * 1.0f;
  float4 r = (float4)(0.0f);
  if (!(tx < 0.0f || tx > (float)(src_shape.x - 1) || ty < 0.0f || ty > (float)(src_shape.y - 1))) {
    float x0 = floor(tx), y0 = floor(ty);
    int ix = (int)x0, iy = (int)y0;
    float4 q11 = tt_read(src, src_shape, p.w, p.z, iy, ix);
    float4 q21 = tt_read(src, src_shape, p.w, p.z, iy, ix + 1);
    float4 q12 = tt_read(src, src_shape, p.w, p.z, iy + 1, ix);
    float4 q22 = tt_read(src, src_shape, p.w, p.z, iy + 1, ix + 1);
    float rc = tx - x0, lc = ty - y0;
    float4 upper = (1.0f - rc) * q11 + rc * q21;
    float4 lower = (1.0f - rc) * q12 + rc * q22;
    r = lc * lower + (1.0f - lc) * upper;
  }
  STORE4(mask_tail(r, p.z, dst_shape.z), dst, gid);
}
