/* Reductions and scans along axes: MEAN/SUM/REDUCE_MAX/MIN/PROD (reduce),
 * SOFTMAX/LOG_SOFTMAX over channels (softmax) and CUMSUM (cumsum). One
 * program for all of them: PoCL compiles each program once, ~0.5 s. All
 * arithmetic is float, whatever the storage type. The REDUCE_* op codes,
 * reduce_identity, reduce_step(1) and fill_tail live in common.cl. */

/* Any set of axes; dst has the keep_dims shape (size 1 on every reduced
 * axis). axes: (x, y, c, b), nonzero where reduced; act: the fused
 * activation (ACT_*) of a global pool lowered here, else ACT_NONE. One
 * work-item per output float4 folds its whole window.
 *
 * Over channels the window covers every slice of the source, with the
 * padded lanes of the last one set to the op's identity; the four lanes
 * are folded at the end into lane 0 of the single output slice.
 *
 * summed: the window is of src + addend (a tensor of src's shape), an ADD
 * read only by this reduction (fuse_summed_reduce.c); else addend is
 * unread. */
#define REDUCE_PARAMS                                                                                           \
  __global const storage_t* src, __global const storage_t* addend, __global storage_t* dst, int4 src_shape,     \
  int4 dst_shape, int4 axes, int op, int act, int summed, int total
#define REDUCE_ARGS src, addend, dst, src_shape, dst_shape, axes, op, act, summed, total
#if GD_SELECTED(reduce, 0)
OUTLINED_KERNEL(reduce, REDUCE_PARAMS, REDUCE_ARGS) {
  if (gid >= total) return;
  int4 p = split_gid(gid, dst_shape);
  int b0 = axes.w ? 0 : p.w, b1 = axes.w ? src_shape.w : p.w + 1;
  int s0 = axes.z ? 0 : p.z, s1 = axes.z ? SLICES(src_shape) : p.z + 1;
  int y0 = axes.y ? 0 : p.y, y1 = axes.y ? src_shape.y : p.y + 1;
  int x0 = axes.x ? 0 : p.x, x1 = axes.x ? src_shape.x : p.x + 1;
  float4 id = reduce_identity(op);
  float4 acc = id;
  int last = SLICES(src_shape) - 1;
  for (int b = b0; b < b1; ++b)
    for (int s = s0; s < s1; ++s)
      for (int y = y0; y < y1; ++y) {
        int i = idx4(src_shape, b, s, y, 0);
        for (int x = x0; x < x1; ++x) {
          float4 v = LOAD4(src, i + x);
          if (summed) v += LOAD4(addend, i + x);
          if (axes.z && s == last) v = fill_tail(v, s, src_shape.z, id);
          acc = reduce_step(acc, v, op);
        }
      }
  float4 r;
  if (axes.z) {
    float f = reduce_step1(reduce_step1(acc.x, acc.y, op), reduce_step1(acc.z, acc.w, op), op);
    if (op == REDUCE_MEAN) f /= (float)((b1 - b0) * (y1 - y0) * (x1 - x0) * src_shape.z);
    r = (float4)(activate1(f, act), 0.0f, 0.0f, 0.0f);
  } else {
    if (op == REDUCE_MEAN) acc /= (float)((b1 - b0) * (y1 - y0) * (x1 - x0));
    r = mask_tail(activate(acc, act), p.z, dst_shape.z);
  }
  STORE4(r, dst, gid);
}
#endif

/* SOFTMAX (log_mode 0) or LOG_SOFTMAX (1) of beta * x over the channels
 * (TFLite's last axis is C in BHWC). One work-item per pixel makes three
 * passes over its slices: the max of beta * x, the sum of exp(beta * x -
 * max) (so no exp overflows, whatever the inputs' magnitude or beta's
 * sign), then the outputs. */
#define SOFTMAX_PARAMS \
  __global const storage_t* src, __global storage_t* dst, int4 shape, float beta, int log_mode, int total
#define SOFTMAX_ARGS src, dst, shape, beta, log_mode, total
#if GD_SELECTED(softmax, 1)
OUTLINED_KERNEL(softmax, SOFTMAX_PARAMS, SOFTMAX_ARGS) {
  if (gid >= total) return;
  int slices = SLICES(shape);
  int stride = shape.y * shape.x;
  int base = pixel_base(gid, shape);
  float4 m4 = (float4)(-INFINITY);
  for (int s = 0; s < slices; ++s)
    m4 = fmax(m4, fill_tail(beta * LOAD4(src, base + s * stride), s, shape.z, (float4)(-INFINITY)));
  float m = fmax(fmax(m4.x, m4.y), fmax(m4.z, m4.w));
  float4 sum4 = (float4)(0.0f);
  for (int s = 0; s < slices; ++s)
    sum4 += fill_tail(exp(beta * LOAD4(src, base + s * stride) - m), s, shape.z, (float4)(0.0f));
  float sum = (sum4.x + sum4.y) + (sum4.z + sum4.w);
  float log_sum = log(sum);
  float inv = 1.0f / sum;
  for (int s = 0; s < slices; ++s) {
    float4 z = beta * LOAD4(src, base + s * stride) - m;
    float4 r = log_mode ? z - log_sum : exp(z) * inv;
    STORE4(mask_tail(r, s, shape.z), dst, base + s * stride);
  }
}
#endif

/* CUMSUM along one axis (0 x, 1 y, 2 c, 3 b). One work-item per line
 * along the axis walks it in order (backwards for reverse), keeping the
 * running float sum; exclusive writes the sum before adding. Over
 * channels a line is one pixel's slices, lane by lane; otherwise it is a
 * column of float4s, `lines` = the shape with the axis collapsed to 1. */
#define CUMSUM_PARAMS \
  __global const storage_t* src, __global storage_t* dst, int4 shape, int4 lines, int axis, int exclusive, \
  int reverse, int total
#define CUMSUM_ARGS src, dst, shape, lines, axis, exclusive, reverse, total
#if GD_SELECTED(cumsum, 2)
OUTLINED_KERNEL(cumsum, CUMSUM_PARAMS, CUMSUM_ARGS) {
  if (gid >= total) return;
  int4 p = split_gid(gid, lines);
  if (axis == 2) {
    int slices = SLICES(shape);
    int stride = shape.y * shape.x;
    int base = idx4(shape, p.w, 0, p.y, p.x);
    float acc = 0.0f;
    for (int k = 0; k < slices; ++k) {
      int s = reverse ? slices - 1 - k : k;
      float4 v = LOAD4(src, base + s * stride);
      float4 r = (float4)(0.0f);
      for (int j = 0; j < 4; ++j) {
        int lane = reverse ? 3 - j : j;
        if (s * 4 + lane >= shape.z) continue;
        float e = lane == 0 ? v.x : lane == 1 ? v.y : lane == 2 ? v.z : v.w;
        float out = exclusive ? acc : acc + e;
        acc += e;
        if (lane == 0) r.x = out;
        else if (lane == 1) r.y = out;
        else if (lane == 2) r.z = out;
        else r.w = out;
      }
      STORE4(r, dst, base + s * stride);
    }
    return;
  }
  int n = axis == 0 ? shape.x : axis == 1 ? shape.y : shape.w;
  int step = axis == 0 ? 1 : axis == 1 ? shape.x : SLICES(shape) * shape.y * shape.x;
  int base = idx4(shape, p.w, p.z, p.y, p.x);
  float4 acc = (float4)(0.0f);
  for (int k = 0; k < n; ++k) {
    int i = base + (reverse ? n - 1 - k : k) * step;
    float4 v = LOAD4(src, i);
    STORE4(exclusive ? acc : acc + v, dst, i);
    acc += v;
  }
}
#endif
