/* LOCAL_RESPONSE_NORMALIZATION (delegate_c/ops/ops_lrn.c): per channel c,
 * x[c] * (bias + alpha * sum of x[k]^2 over k in [c - radius, c + radius]
 * within the channels)^-beta. One work-item per float4 of the output. */

#define LRN_PARAMS \
  __global const storage_t* src, __global storage_t* dst, int4 src_shape, int4 dst_shape, int radius, float bias, \
  float alpha, float beta, int total
#define LRN_ARGS src, dst, src_shape, dst_shape, radius, bias, alpha, beta, total
OUTLINED_KERNEL(lrn, LRN_PARAMS, LRN_ARGS) {
  if (gid >= total) return;
  int4 p = split_gid(gid, dst_shape);
  float4 x = LOAD4(src, gid);
  float r[4];
  for (int lane = 0; lane < 4; ++lane) {
    int c = p.z * 4 + lane;
    float sum = 0.0f;
    for (int k = max(c - radius, 0); k <= min(c + radius, src_shape.z - 1); ++k) {
      float v = LOAD1(src, idx1(src_shape, p.w, p.y, p.x, k));
      sum += v * v;
    }
    r[lane] = pow(bias + alpha * sum, -beta);
  }
  STORE4(mask_tail(x * (float4)(r[0], r[1], r[2], r[3]), p.z, dst_shape.z), dst, gid);
}
