/* MEAN/SUM/REDUCE_MAX/MIN/PROD (reduce_gpu; reduce_gpu_part and
 * reduce_gpu_sum in two launches) and SOFTMAX/LOG_SOFTMAX
 * (softmax_gpu) shaped for GPUs: one work-group per output float4 (reduce)
 * or per pixel (softmax), whose work-items stride over the window and then
 * combine their partials in a __local tree. Same arguments and results as
 * reduce / softmax in reduce.cl (summed: the window of src + addend, as
 * reduce); the REDUCE_* codes (kernel_abi.h), reduce_identity,
 * reduce_step(1) and fill_tail are in common.cl. All arithmetic is float.
 *
 * Launch contract:
 *   defines:  -DWG=<n>, work-group size, a power of two in 1..256
 *             (default 64); the kernels require local size == WG.
 *   work dim: 1, local: (WG), for every kernel.
 *   reduce_gpu:  global = (WG * dst_shape.w * ceil(dst_shape.z / 4) * dst_shape.y * dst_shape.x),
 *                WG times the output's float4 count (phwc4_items(dst), the
 *                `total` argument): work-group g makes output float4 g.
 *   reduce_gpu_part: global = WG * chunks * phwc4_items(dst) (`total`: the groups);
 *   reduce_gpu_sum: global = WG * phwc4_items(dst) (`total`).
 *   softmax_gpu: global = (WG * shape.w * shape.y * shape.x),
 *                WG times the pixel count (the `total` argument):
 *                work-group g makes every slice of pixel g.
 *   Work-groups past those counts store nothing, so a rounded-up global
 *   size is harmless. */

#ifndef WG
#define WG 64
#endif
#if WG < 1 || WG > 256 || (WG & (WG - 1)) != 0
#error "WG must be a power of two in 1..256"
#endif

/* op over the work-group's v, returned to work-item 0 (others get their
 * own v back). Every work-item must call these: they hold barriers. */
GD_INLINE float4 wg_reduce4(__local float4* buf, float4 v, int op, int lid) {
  buf[lid] = v;
  for (int off = WG / 2; off > 0; off >>= 1) {
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < off) buf[lid] = reduce_step(buf[lid], buf[lid + off], op);
  }
  /* Work-item 0 wrote buf[0] last itself, but a compiler may load buf[0]
   * in every work-item and keep it in work-item 0 only (a select instead of
   * the branch): that load would race with work-item 0's store (Oclgrind
   * reports it). The barrier makes the read race-free however it is compiled. */
  barrier(CLK_LOCAL_MEM_FENCE);
  if (lid == 0) v = buf[0];
  return v;
}

/* op over the work-group's v, returned to every work-item; buf is free
 * for reuse on return. */
GD_INLINE float wg_all1(__local float* buf, float v, int op, int lid) {
  buf[lid] = v;
  for (int off = WG / 2; off > 0; off >>= 1) {
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < off) buf[lid] = reduce_step1(buf[lid], buf[lid + off], op);
  }
  barrier(CLK_LOCAL_MEM_FENCE);
  float r = buf[0];
  barrier(CLK_LOCAL_MEM_FENCE); /* everyone has read buf[0] before it is overwritten */
  return r;
}

/* Any set of axes; dst has the keep_dims shape; axes (x, y, c, b) nonzero
 * where reduced, act the fused activation (as reduce). The window of output
 * float4 o, nb x ns x ny x nx float4s, is numbered x fastest; reduce_part
 * gives work-item lid the numbers lid, lid + WG, ... in [from, to):
 * neighbours read neighbouring float4s along W. Over channels the padded
 * lanes of the last slice are the op's identity, and reduce_store folds the
 * four lanes into lane 0 of the single output slice. */
typedef struct {
  int b0, nb, s0, ns, y0, ny, x0, nx;
} ReduceWindow;

GD_INLINE ReduceWindow reduce_window(int o, int4 src_shape, int4 dst_shape, int4 axes) {
  int4 p = split_gid(o, dst_shape);
  ReduceWindow w;
  w.b0 = axes.w ? 0 : p.w;
  w.nb = axes.w ? src_shape.w : 1;
  w.s0 = axes.z ? 0 : p.z;
  w.ns = axes.z ? SLICES(src_shape) : 1;
  w.y0 = axes.y ? 0 : p.y;
  w.ny = axes.y ? src_shape.y : 1;
  w.x0 = axes.x ? 0 : p.x;
  w.nx = axes.x ? src_shape.x : 1;
  return w;
}

GD_INLINE float4 reduce_part(__global const storage_t* src, __global const storage_t* addend, int summed,
                             int4 src_shape, int4 axes, int op, ReduceWindow w, int from, int to, int lid) {
  int last = SLICES(src_shape) - 1;
  float4 id = reduce_identity(op);
  float4 acc = id;
  for (int i = from + lid; i < to; i += WG) {
    int x = i % w.nx;
    int t = i / w.nx;
    int y = t % w.ny;
    t /= w.ny;
    int s = w.s0 + t % w.ns;
    int b = w.b0 + t / w.ns;
    int at = idx4(src_shape, b, s, w.y0 + y, w.x0 + x);
    float4 v = LOAD4(src, at);
    if (summed) v += LOAD4(addend, at);
    if (axes.z && s == last) v = fill_tail(v, s, src_shape.z, id);
    acc = reduce_step(acc, v, op);
  }
  return acc;
}

/* Output float4 o from acc, op over its whole window: the mean's division,
 * the channel fold, the activation, the tail lanes zeroed. */
GD_INLINE void reduce_store(__global storage_t* dst, float4 acc, int4 src_shape, int4 dst_shape, int4 axes, int op,
                            int act, ReduceWindow w, int o) {
  float4 r;
  if (axes.z) {
    float f = reduce_step1(reduce_step1(acc.x, acc.y, op), reduce_step1(acc.z, acc.w, op), op);
    if (op == REDUCE_MEAN) f /= (float)(w.nb * w.ny * w.nx * src_shape.z);
    r = (float4)(activate1(f, act), 0.0f, 0.0f, 0.0f);
  } else {
    if (op == REDUCE_MEAN) acc /= (float)(w.nb * w.ny * w.nx);
    r = mask_tail(activate(acc, act), split_gid(o, dst_shape).z, dst_shape.z);
  }
  STORE4(r, dst, o);
}

#define REDUCE_GPU_PARAMS                                                                                       \
  __global const storage_t* src, __global const storage_t* addend, __global storage_t* dst, int4 src_shape,     \
  int4 dst_shape, int4 axes, int op, int act, int summed, int total
#define REDUCE_GPU_ARGS src, addend, dst, src_shape, dst_shape, axes, op, act, summed, total
#if GD_SELECTED(reduce_gpu, 0)
GROUP_KERNEL(reduce_gpu, WG, 1, WG, REDUCE_GPU_PARAMS, REDUCE_GPU_ARGS) {
  int lid = loc.x;
  int gid = grp.x;
  int valid = gid < total;
  ReduceWindow w = reduce_window(valid ? gid : 0, src_shape, dst_shape, axes);
  int count = valid ? w.nb * w.ns * w.ny * w.nx : 0; /* a surplus group only runs the barriers */
  float4 acc = wg_reduce4(lmem, reduce_part(src, addend, summed, src_shape, axes, op, w, 0, count, lid), op, lid);
  if (lid == 0 && valid) reduce_store(dst, acc, src_shape, dst_shape, axes, op, act, w, gid);
}
#endif

/* reduce_gpu in two launches, for a few outputs with long windows (the VM
 * on a GPU, select_reduce_chunks): reduce_gpu_part, one work-group per
 * (chunk c, output float4 o), group c * outs + o, op over window numbers
 * [c * chunk, (c + 1) * chunk) into part[c * outs + o] (FP32, the lanes
 * not yet folded); reduce_gpu_sum, one work-group per output float4, op
 * over its chunks' partials in a fixed tree (the same bits on every
 * invoke), then reduce_gpu's store. total: chunks x outs; outs. */
#define REDUCE_GPU_PART_PARAMS                                                                                  \
  __global const storage_t* src, __global const storage_t* addend, __global float4* part, int4 src_shape,       \
  int4 dst_shape, int4 axes, int op, int summed, int chunk, int total
#define REDUCE_GPU_PART_ARGS src, addend, part, src_shape, dst_shape, axes, op, summed, chunk, total
#if GD_SELECTED(reduce_gpu_part, 1)
GROUP_KERNEL(reduce_gpu_part, WG, 1, WG, REDUCE_GPU_PART_PARAMS, REDUCE_GPU_PART_ARGS) {
  int lid = loc.x;
  int gid = grp.x;
  int outs = dst_shape.w * SLICES(dst_shape) * dst_shape.y * dst_shape.x;
  int valid = gid < total;
  int c = valid ? gid / outs : 0;
  ReduceWindow w = reduce_window(valid ? gid - c * outs : 0, src_shape, dst_shape, axes);
  int from = c * chunk, to = valid ? min(from + chunk, w.nb * w.ns * w.ny * w.nx) : 0;
  float4 acc = wg_reduce4(lmem, reduce_part(src, addend, summed, src_shape, axes, op, w, from, to, lid), op, lid);
  if (lid == 0 && valid) part[gid] = acc;
}
#endif

#define REDUCE_GPU_SUM_PARAMS \
  __global const float4* part, __global storage_t* dst, int4 src_shape, int4 dst_shape, int4 axes, int op, int act, \
  int chunks, int total
#define REDUCE_GPU_SUM_ARGS part, dst, src_shape, dst_shape, axes, op, act, chunks, total
#if GD_SELECTED(reduce_gpu_sum, 2)
GROUP_KERNEL(reduce_gpu_sum, WG, 1, WG, REDUCE_GPU_SUM_PARAMS, REDUCE_GPU_SUM_ARGS) {
  int lid = loc.x;
  int gid = grp.x;
  int valid = gid < total;
  float4 acc = reduce_identity(op);
  for (int c = lid; valid && c < chunks; c += WG) acc = reduce_step(acc, part[c * total + gid], op);
  acc = wg_reduce4(lmem, acc, op, lid);
  if (lid == 0 && valid)
    reduce_store(dst, acc, src_shape, dst_shape, axes, op, act, reduce_window(gid, src_shape, dst_shape, axes), gid);
}
#endif

/* SOFTMAX (log_mode 0) or LOG_SOFTMAX (1) of beta * x over the channels of
 * pixel g (as softmax): the work-items stride over its slices for the max
 * of beta * x (padded lanes -inf), then for the sum of exp(beta * x - max)
 * (padded lanes 0; no exp overflows, whatever the magnitudes or beta's
 * sign), each combined in the group, then for the outputs (padded lanes
 * written as 0). */
#define SOFTMAX_GPU_PARAMS __global const storage_t* src, __global storage_t* dst, int4 shape, float beta, int log_mode, int total
#define SOFTMAX_GPU_ARGS src, dst, shape, beta, log_mode, total
#if GD_SELECTED(softmax_gpu, 3)
GROUP_KERNEL(softmax_gpu, WG, 1, (WG + 3) / 4, SOFTMAX_GPU_PARAMS, SOFTMAX_GPU_ARGS) {
  __local float* part = (__local float*)lmem; /* WG floats */
  int lid = loc.x;
  int gid = grp.x;
  int valid = gid < shape.w * shape.y * shape.x;
  int pix = valid ? gid : 0;
  int x = pix % shape.x;
  int t = pix / shape.x;
  int y = t % shape.y;
  int b = t / shape.y;
  int slices = valid ? SLICES(shape) : 0; /* a surplus group only runs the barriers */
  int stride = shape.y * shape.x;
  int base = idx4(shape, b, 0, y, x);
  float4 m4 = (float4)(-INFINITY);
  for (int s = lid; s < slices; s += WG)
    m4 = fmax(m4, fill_tail(beta * LOAD4(src, base + s * stride), s, shape.z, (float4)(-INFINITY)));
  float m = wg_all1(part, fmax(fmax(m4.x, m4.y), fmax(m4.z, m4.w)), REDUCE_MAX, lid);
  float4 sum4 = (float4)(0.0f);
  for (int s = lid; s < slices; s += WG)
    sum4 += fill_tail(exp(beta * LOAD4(src, base + s * stride) - m), s, shape.z, (float4)(0.0f));
  float sum = wg_all1(part, (sum4.x + sum4.y) + (sum4.z + sum4.w), REDUCE_SUM, lid);
  float log_sum = log(sum);
  float inv = 1.0f / sum;
  for (int s = lid; s < slices; s += WG) {
    float4 z = beta * LOAD4(src, base + s * stride) - m;
    float4 r = log_mode ? z - log_sum : exp(z) * inv;
    STORE4(mask_tail(r, s, shape.z), dst, base + s * stride);
  }
}
#endif
