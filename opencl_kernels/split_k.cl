/* Long reductions in two phases, for the VM on a GPU (issue 36): a phase
 * spreads its work-items over one group of 64 per compute unit, so a
 * FULLY_CONNECTED or a convolution of a few output float4s with a long
 * reduction kept a few work-items in long serial loops while the rest of
 * the GPU idled. The first kernel of each pair computes partial sums per
 * chunk of the reduction, one work-item per (chunk, output item), into an
 * FP32 scratch buffer; the second adds them in chunk order. The order is
 * fixed (no atomics), so the outputs are the same bits on every invoke.
 * The weights are the one-pass kernels' (fully_connected.cl, conv.cl's
 * conv2d_x4), and so are the outputs up to the sums' rounding. */

/* FULLY_CONNECTED split over K (select_fc_split in select_reduce.c): a
 * few output float4s with a long K would keep a few work-items in a serial
 * loop over every input slice. Two phases:
 * fully_connected_split, one work-item per (chunk c, output float4 o),
 * the dot product over input slices [c * chunk, (c + 1) * chunk) into
 * part[c * outs + o] (FP32 float4s; chunk 0 starts from the bias), and
 * fully_connected_sum, one work-item per output float4, adding the chunks'
 * partials in chunk order (a fixed order: the same sums on every invoke),
 * then the activation. total: chunks x outs and outs. */
#define FC_SPLIT_PARAMS \
  __global const storage_t* src, __global float4* part, __global const float4* weights, __global const float4* bias, \
  int4 src_shape, int4 dst_shape, int chunk, int total
#define FC_SPLIT_ARGS src, part, weights, bias, src_shape, dst_shape, chunk, total
#if GD_SELECTED(fully_connected_split, 0)
OUTLINED_KERNEL(fully_connected_split, FC_SPLIT_PARAMS, FC_SPLIT_ARGS) {
  if (gid >= total) return;
  const int outs = dst_shape.w * dst_shape.y * dst_shape.x * SLICES(dst_shape);
  const int c = gid / outs;
  int4 p = split_gid(gid - c * outs, dst_shape);
  int first = c * chunk;
  part[gid] = fc_dot(src, src_shape, dst_shape, p, weights, first, min(first + chunk, SLICES(src_shape)),
                     c == 0 ? bias[p.z] : (float4)(0.0f));
}
#endif

#define FC_SUM_PARAMS __global const float4* part, __global storage_t* dst, int4 dst_shape, int chunks, int act, int total
#define FC_SUM_ARGS part, dst, dst_shape, chunks, act, total
#if GD_SELECTED(fully_connected_sum, 1)
OUTLINED_KERNEL(fully_connected_sum, FC_SUM_PARAMS, FC_SUM_ARGS) {
  if (gid >= total) return;
  float4 acc = part[gid];
  for (int c = 1; c < chunks; ++c) acc += part[c * total + gid];
  int4 p = split_gid(gid, dst_shape);
  STORE4(mask_tail(activate(acc, act), p.z, dst_shape.z), dst, gid);
}
#endif

/* conv2d_x4 split over its reduction (select_conv_split in
 * select_conv.c): a conv of few output tiles and a long reduction (the
 * 2x2 heads of pose_landmark_full on a 1x1 output: 1-49 work-items, each
 * 4 taps x 72 slices long) in two phases. conv2d_x4_split: one work-item
 * per (chunk c, tile t of conv2d_x4's), the reduction steps r in
 * [c * chunk, (c + 1) * chunk) of r = (ky * KW + kx) * S_in + si (the
 * weights' order), into part[(c * tiles + t) * 4 + i] for its 4 pixels i
 * (FP32 float4s; chunk 0 starts from the bias). conv2d_x4_sum: one
 * work-item per output float4, the chunks' partials added in chunk order
 * (a fixed order: the same sums on every invoke), then conv2d_x4's
 * activation, epilogue and store. total: chunks x tiles; the output's
 * float4s. */
#define X4_SPLIT_PARAMS                                                                                     \
  __global const storage_t* src, __global float4* part, __global const float4* weights,                     \
   __global const float4* bias, int4 src_shape, int4 dst_shape, int4 geom, int4 pad_dil, int chunk, int total
#define X4_SPLIT_ARGS src, part, weights, bias, src_shape, dst_shape, geom, pad_dil, chunk, total
#if GD_SELECTED(conv2d_x4_split, 2)
OUTLINED_KERNEL(conv2d_x4_split, X4_SPLIT_PARAMS, X4_SPLIT_ARGS) {
  if (gid >= total) return;
  int4 tiles = (int4)((dst_shape.x + 3) >> 2, dst_shape.y, dst_shape.z, dst_shape.w);
  const int count = tiles.x * tiles.y * SLICES(tiles) * tiles.w;
  const int c = gid / count, t = gid - c * count;
  int4 p = split_gid(t, tiles);
  int x = p.x * 4;
  int src_slices = SLICES(src_shape);
  int steps = geom.y * geom.x * src_slices;
  int r = c * chunk, end = min(r + chunk, steps);
  float4 acc0 = c == 0 ? bias[p.z] : (float4)(0.0f);
  float4 acc1 = acc0, acc2 = acc0, acc3 = acc0;
  int x0 = x * geom.z - pad_dil.x;
  int y0 = p.y * geom.w - pad_dil.y;
  int plane = src_shape.y * src_shape.x;
  __global const float4* w = weights + ((size_t)p.z * steps + r) * 4;
  for (; r < end; ++r, w += 4) {
    int si = r % src_slices, k = r / src_slices;
    int sy = y0 + (k / geom.x) * pad_dil.w;
    if (sy < 0 || sy >= src_shape.y) continue;
    int sx0 = x0 + (k % geom.x) * pad_dil.z;
    int sx1 = sx0 + geom.z, sx2 = sx1 + geom.z, sx3 = sx2 + geom.z;
    int base = idx4(src_shape, p.w, si, sy, 0);
    float4 i0 = sx0 >= 0 && sx0 < src_shape.x ? LOAD4(src, base + sx0) : (float4)(0.0f);
    float4 i1 = sx1 >= 0 && sx1 < src_shape.x ? LOAD4(src, base + sx1) : (float4)(0.0f);
    float4 i2 = sx2 >= 0 && sx2 < src_shape.x ? LOAD4(src, base + sx2) : (float4)(0.0f);
    float4 i3 = sx3 >= 0 && sx3 < src_shape.x ? LOAD4(src, base + sx3) : (float4)(0.0f);
    X4_MADS
  }
  __global float4* out = part + (size_t)gid * 4;
  out[0] = acc0;
  out[1] = acc1;
  out[2] = acc2;
  out[3] = acc3;
}
#endif

#define X4_SUM_PARAMS                                                                                       \
  __global const float4* part, __global storage_t* dst, int4 dst_shape, int chunks, int act,                \
   __global const float4* alpha, __global const storage_t* residual, int4 epi, int res_slices, int total
#define X4_SUM_ARGS part, dst, dst_shape, chunks, act, alpha, residual, epi, res_slices, total
#if GD_SELECTED(conv2d_x4_sum, 3)
OUTLINED_KERNEL(conv2d_x4_sum, X4_SUM_PARAMS, X4_SUM_ARGS) {
  if (gid >= total) return;
  int4 p = split_gid(gid, dst_shape);
  int tw = (dst_shape.x + 3) >> 2;
  int t = ((p.w * SLICES(dst_shape) + p.z) * dst_shape.y + p.y) * tw + (p.x >> 2);
  int count = tw * dst_shape.y * SLICES(dst_shape) * dst_shape.w;
  __global const float4* in = part + (size_t)t * 4 + (p.x & 3);
  float4 acc = in[0];
  for (int c = 1; c < chunks; ++c) acc += in[(size_t)c * count * 4];
  float4 res = conv_residual(residual, epi, dst_shape, p.w, p.z, p.y * dst_shape.x + p.x, res_slices);
  float4 r = epilogue_r(activate(acc, act), epi, alpha, res, p.z);
  STORE4(mask_tail(r, p.z, dst_shape.z), dst, gid);
}
#endif
