/* FULLY_CONNECTED and BATCH_MATMUL shaped for GPUs: one work-group per
 * output float4, whose work-items split the reduction (K) between them and
 * then add their partial float4s in a __local tree. A GPU has far more
 * lanes than a layer has outputs when rows are few (FC at batch 1), so
 * the long dot products are what must be spread. Same arguments and
 * results as fully_connected / batch_matmul in fully_connected.cl.
 *
 * Launch contract, both kernels:
 *   defines:  -DWG=<n>, work-group size, a power of two in 1..256
 *             (default 64); the kernels require local size == WG.
 *   work dim: 1
 *   local:    (WG)
 *   global:   (WG * dst_shape.w * ceil(dst_shape.z / 4) * dst_shape.y * dst_shape.x),
 *             i.e. WG times the output's float4 count (phwc4_items(dst),
 *             the `total` argument): work-group g makes output float4 g.
 *   Work-groups past the output's float4 count store nothing, so a
 *   rounded-up global size is harmless. WG near ceil(K / 4) (FC) or
 *   ceil(depth / 4) (matmul), capped at 256, leaves no work-item idle. */

#ifndef WG
#define WG 64
#endif
#if WG < 1 || WG > 256 || (WG & (WG - 1)) != 0
#error "WG must be a power of two in 1..256"
#endif

/* Sum of v over the work-group, returned to work-item 0 (others get their
 * own v back). Every work-item must call it: it holds barriers. */
GD_INLINE float4 wg_sum4(__local float4* buf, float4 v, int lid) {
  buf[lid] = v;
  for (int off = WG / 2; off > 0; off >>= 1) {
    barrier(CLK_LOCAL_MEM_FENCE);
    if (lid < off) buf[lid] += buf[lid + off];
  }
  /* Work-item 0 wrote buf[0] last itself, but a compiler may load buf[0]
   * in every work-item and keep it in work-item 0 only (a select instead of
   * the branch): that load would race with work-item 0's store (Oclgrind
   * reports it). The barrier makes the read race-free however it is compiled. */
  barrier(CLK_LOCAL_MEM_FENCE);
  if (lid == 0) v = buf[0];
  return v;
}

/* Output float4 count of a PHWC4 shape. A macro: as an inline function
 * it made Oclgrind 21.10's uninitialized-value check segfault. */
#define ITEMS4(shape) ((shape).w * SLICES(shape) * (shape).y * (shape).x)

/* Work-item lid's part of one row's products with a weight block w (4
 * output channels): source slices lid, lid + WG, ... of n, slice si at
 * first + si * stride in src; the caller sums the parts (wg_sum4). */
GD_INLINE float4 fc_part(__global const storage_t* src, int first, int stride, __global const float4* w, int n,
                         int lid) {
  float4 acc0 = (float4)(0.0f), acc1 = (float4)(0.0f);
  for (int si = lid; si < n; si += WG) {
    float4 v = LOAD4(src, first + si * stride);
    __global const float4* ws = w + si * 4;
    acc0 = fma((float4)(v.x), ws[0], acc0);
    acc1 = fma((float4)(v.y), ws[1], acc1);
    acc0 = fma((float4)(v.z), ws[2], acc0);
    acc1 = fma((float4)(v.w), ws[3], acc1);
  }
  return acc0 + acc1;
}

/* Weights: float4 blocks [S_out][S_in][4 in-lanes], 4 output channels for
 * one input channel; bias: [S_out] float4 (as fully_connected). Row r is
 * the r-th pixel (B, H, W order) of the output and of the source. Work-item
 * lid takes input slices lid, lid + WG, ...: neighbours read neighbouring
 * 64-byte weight blocks, and neighbouring source float4s when the rows are
 * one pixel apart in a 1x1 plane. */
#define FC_GPU_PARAMS \
  __global const storage_t* src, __global storage_t* dst, __global const float4* weights, __global const float4* bias, \
  int4 src_shape, int4 dst_shape, int act, int total
#define FC_GPU_ARGS src, dst, weights, bias, src_shape, dst_shape, act, total
GROUP_KERNEL(fully_connected_gpu, WG, 1, WG, FC_GPU_PARAMS, FC_GPU_ARGS) {
  __local float4* part = lmem; /* WG */
  int lid = loc.x;
  int gid = grp.x;
  /* A surplus group still runs the barriers, with an empty loop. */
  int valid = gid < ITEMS4(dst_shape);
  int4 p = split_gid(valid ? gid : 0, dst_shape);
  int row = (p.w * dst_shape.y + p.y) * dst_shape.x + p.x;
  int sx = row % src_shape.x;
  int t = row / src_shape.x;
  int sy = t % src_shape.y;
  int sb = t / src_shape.y;
  int src_slices = valid ? SLICES(src_shape) : 0;
  int slice_stride = src_shape.y * src_shape.x;
  int sidx = idx4(src_shape, sb, 0, sy, sx);
  __global const float4* w = weights + p.z * SLICES(src_shape) * 4;
  float4 sum = wg_sum4(part, fc_part(src, sidx, slice_stride, w, src_slices, lid), lid);
  if (lid == 0 && valid) STORE4(mask_tail(activate(sum + bias[p.z], act), p.z, dst_shape.z), dst, gid);
}

/* FULLY_CONNECTED heads of one source row (a single pixel) in one launch
 * (fuse_fc_heads.c): work-group g makes float4 g of the heads' outputs laid
 * end to end, each head from a slice boundary on (head h's slices end at
 * ends[h]; those past the last head repeat its end), as fully_connected_gpu
 * makes a head's, and stores it into head h's own tensor (dst0..dst3, one
 * pixel each) with head h's activation and channel count. Weights and bias
 * as fully_connected_gpu's over the heads' rows together. Launch: as
 * fully_connected_gpu, over ends.w output float4s. */
#define FC_HEADS_GPU_PARAMS \
  __global const storage_t* src, __global storage_t* dst0, __global storage_t* dst1, __global storage_t* dst2, \
  __global storage_t* dst3, __global const float4* weights, __global const float4* bias, int4 src_shape, int4 ends, \
  int4 channels, int4 acts, int total
#define FC_HEADS_GPU_ARGS src, dst0, dst1, dst2, dst3, weights, bias, src_shape, ends, channels, acts, total
GROUP_KERNEL(fc_heads_gpu, WG, 1, WG, FC_HEADS_GPU_PARAMS, FC_HEADS_GPU_ARGS) {
  __local float4* part = lmem; /* WG */
  int lid = loc.x, gid = grp.x;
  int valid = gid < ends.w;
  int si = SLICES(src_shape), src_slices = valid ? si : 0;
  __global const float4* w = weights + (valid ? gid : 0) * si * 4;
  float4 sum = wg_sum4(part, fc_part(src, 0, 1, w, src_slices, lid), lid);
  if (lid == 0 && valid) {
    int h = gid < ends.x ? 0 : gid < ends.y ? 1 : gid < ends.z ? 2 : 3;
    int s = gid - (h == 0 ? 0 : h == 1 ? ends.x : h == 2 ? ends.y : ends.z);
    int c = h == 0 ? channels.x : h == 1 ? channels.y : h == 2 ? channels.z : channels.w;
    int act = h == 0 ? acts.x : h == 1 ? acts.y : h == 2 ? acts.z : acts.w;
    __global storage_t* d = h == 0 ? dst0 : h == 1 ? dst1 : h == 2 ? dst2 : dst3;
    STORE4(mask_tail(activate(sum + bias[gid], act), s, c), d, s);
  }
}

/* BATCH_MATMUL, every adj combination: dst[b, h, m, n] = sum_k A[m, k] *
 * B[k, n] per batch (b, h), a size-1 batch dim of A or B broadcast; rows
 * are W and columns C in every operand, adj.x / adj.y mean A / B are
 * stored transposed (as batch_matmul). Work-item lid takes k = 4 * lid,
 * 4 * (lid + WG), ..., four k's at a time: a float4 of A's row m where k
 * runs along channels (no adj_x), and of B's rows n0..n0+3 where k does
 * (adj_y); the padded lanes there are zero, and the other loads are
 * guarded by k < depth or n < N. */
#define MATMUL_GPU_PARAMS \
  __global const storage_t* a, __global const storage_t* b, __global storage_t* dst, int4 a_shape, int4 b_shape, \
  int4 dst_shape, int2 adj, int total
#define MATMUL_GPU_ARGS a, b, dst, a_shape, b_shape, dst_shape, adj, total
GROUP_KERNEL(batch_matmul_gpu, WG, 1, WG, MATMUL_GPU_PARAMS, MATMUL_GPU_ARGS) {
  __local float4* part = lmem; /* WG */
  int lid = loc.x;
  int gid = grp.x;
  int valid = gid < ITEMS4(dst_shape);
  int4 p = split_gid(valid ? gid : 0, dst_shape);
  int m = p.x, n0 = p.z * 4, N = dst_shape.z;
  int ab = a_shape.w == 1 ? 0 : p.w, ah = a_shape.y == 1 ? 0 : p.y;
  int bb = b_shape.w == 1 ? 0 : p.w, bh = b_shape.y == 1 ? 0 : p.y;
  int depth = valid ? (adj.x ? a_shape.x : a_shape.z) : 0;
  float4 acc = (float4)(0.0f);
  for (int k = lid * 4; k < depth; k += WG * 4) {
    float4 av; /* A[m, k..k+3], zero past depth */
    if (!adj.x) {
      av = LOAD4(a, idx4(a_shape, ab, k >> 2, ah, m));
    } else {
      av.x = LOAD1(a, idx1(a_shape, ab, ah, k, m));
      av.y = k + 1 < depth ? LOAD1(a, idx1(a_shape, ab, ah, k + 1, m)) : 0.0f;
      av.z = k + 2 < depth ? LOAD1(a, idx1(a_shape, ab, ah, k + 2, m)) : 0.0f;
      av.w = k + 3 < depth ? LOAD1(a, idx1(a_shape, ab, ah, k + 3, m)) : 0.0f;
    }
    if (!adj.y) {
      /* B is [K, N]: row k is the float4 of columns n0..n0+3. */
      int base = idx4(b_shape, bb, p.z, bh, 0) + k;
      float4 b0 = LOAD4(b, base);
      float4 b1 = k + 1 < depth ? LOAD4(b, base + 1) : (float4)(0.0f);
      float4 b2 = k + 2 < depth ? LOAD4(b, base + 2) : (float4)(0.0f);
      float4 b3 = k + 3 < depth ? LOAD4(b, base + 3) : (float4)(0.0f);
      acc = fma((float4)(av.x), b0, fma((float4)(av.y), b1, fma((float4)(av.z), b2, fma((float4)(av.w), b3, acc))));
    } else {
      /* B is [N, K]: row n holds B[n, k..k+3] in one float4. */
      int base = idx4(b_shape, bb, k >> 2, bh, 0) + n0;
      float4 t0 = LOAD4(b, base);
      float4 t1 = n0 + 1 < N ? LOAD4(b, base + 1) : (float4)(0.0f);
      float4 t2 = n0 + 2 < N ? LOAD4(b, base + 2) : (float4)(0.0f);
      float4 t3 = n0 + 3 < N ? LOAD4(b, base + 3) : (float4)(0.0f);
      acc += (float4)(dot(av, t0), dot(av, t1), dot(av, t2), dot(av, t3));
    }
  }
  float4 sum = wg_sum4(part, acc, lid);
  if (lid == 0 && valid) STORE4(mask_tail(sum, p.z, N), dst, gid);
}

/* Two 1x1 convolutions on one pixel in one launch: the excitation of a
 * squeeze-and-excitation block, [B, 1, 1, C] -> 1x1 (act1) -> [B, 1, 1, M]
 * -> 1x1 (act2) -> [B, 1, 1, N] (fuse_fc_pair.c). Each is a few thousand
 * multiply-adds, far less than a launch costs on a GPU. One work-group per
 * batch item: its source row and then its hidden row go through __local,
 * each work-item making whole output float4s (weights as fully_connected:
 * [S_out][S_in][4 in-lanes] float4 blocks, bias [S_out] float4). The hidden
 * row stays float in every storage and its lanes past M are zero.
 * Launch: work dim 1, local (WG), global (WG * B); at most FCP_MAX_SLICES
 * source and hidden slices (the selector checks). */
#define FCP_MAX_SLICES 256

/* acc plus the row of n slices in x (__local) times the weight blocks w:
 * 4 output channels from 4 float4s per input slice. */
GD_INLINE float4 fcp_dot(__local const float4* x, __global const float4* w, int n, float4 acc) {
  for (int i = 0; i < n; ++i) {
    float4 v = x[i];
    acc = fma((float4)(v.x), w[4 * i], fma((float4)(v.y), w[4 * i + 1],
              fma((float4)(v.z), w[4 * i + 2], fma((float4)(v.w), w[4 * i + 3], acc))));
  }
  return acc;
}

#define FC_PAIR_GPU_PARAMS \
  __global const storage_t* src, __global storage_t* dst, __global const float4* w1, __global const float4* b1, \
  __global const float4* w2, __global const float4* b2, int4 src_shape, int4 mid_shape, int4 dst_shape, int act1, \
  int act2, int total
#define FC_PAIR_GPU_ARGS src, dst, w1, b1, w2, b2, src_shape, mid_shape, dst_shape, act1, act2, total
GROUP_KERNEL(fc_pair_gpu, WG, 1, 2 * FCP_MAX_SLICES, FC_PAIR_GPU_PARAMS, FC_PAIR_GPU_ARGS) {
  __local float4* x = lmem;                  /* FCP_MAX_SLICES */
  __local float4* h = lmem + FCP_MAX_SLICES; /* FCP_MAX_SLICES */
  int lid = loc.x, b = grp.x;
  int si = SLICES(src_shape), sm = SLICES(mid_shape), so = SLICES(dst_shape);
  for (int i = lid; i < si; i += WG) x[i] = LOAD4(src, b * si + i);
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int j = lid; j < sm; j += WG)
    h[j] = mask_tail(activate(fcp_dot(x, w1 + j * si * 4, si, b1[j]), act1), j, mid_shape.z);
  barrier(CLK_LOCAL_MEM_FENCE);
  for (int o = lid; o < so; o += WG)
    STORE4(mask_tail(activate(fcp_dot(h, w2 + o * sm * 4, sm, b2[o]), act2), o, dst_shape.z), dst, b * so + o);
}
