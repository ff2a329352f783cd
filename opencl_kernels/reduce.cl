/* Reductions over any set of axes; dst has the keep_dims shape (size 1 on
 * every reduced axis). axes: (x, y, c, b), nonzero where reduced. One
 * work-item per output float4 sums its whole window in float32.
 *
 * Over channels the window covers every slice of the source; its padded
 * lanes hold zeros, so the four lanes add up to the channel sum, which
 * goes to lane 0 of the single output slice. op (REDUCE_* in graph.h):
 * 0 mean; the plain sum otherwise. */
__kernel void reduce(__global const storage_t* src, __global storage_t* dst, int4 src_shape, int4 dst_shape,
                     int4 axes, int op, int total) {
  int gid = get_global_id(0);
  if (gid >= total) return;
  int4 p = split_gid(gid, dst_shape);
  int b0 = axes.w ? 0 : p.w, b1 = axes.w ? src_shape.w : p.w + 1;
  int s0 = axes.z ? 0 : p.z, s1 = axes.z ? SLICES(src_shape) : p.z + 1;
  int y0 = axes.y ? 0 : p.y, y1 = axes.y ? src_shape.y : p.y + 1;
  int x0 = axes.x ? 0 : p.x, x1 = axes.x ? src_shape.x : p.x + 1;
  float4 acc = (float4)(0.0f);
  for (int b = b0; b < b1; ++b)
    for (int s = s0; s < s1; ++s)
      for (int y = y0; y < y1; ++y) {
        int i = idx4(src_shape, b, s, y, 0);
        for (int x = x0; x < x1; ++x) acc += LOAD4(src, i + x);
      }
  float4 r;
  if (axes.z) {
    float sum = (acc.x + acc.y) + (acc.z + acc.w);
    float count = (float)((b1 - b0) * (y1 - y0) * (x1 - x0) * src_shape.z);
    r = (float4)(op == 0 ? sum / count : sum, 0.0f, 0.0f, 0.0f);
  } else {
    float count = (float)((b1 - b0) * (y1 - y0) * (x1 - x0));
    r = mask_tail(op == 0 ? acc / count : acc, p.z, dst_shape.z);
  }
  STORE4(r, dst, gid);
}
