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
