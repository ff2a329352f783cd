/* Conversions between the runtime's BHWC float tensors and PHWC4, at the
 * partition boundary. One work-item per output float4 / per 4 values. */

__kernel void bhwc_to_phwc4(__global const float* src, __global storage_t* dst, int4 shape, int total) {
  int gid = get_global_id(0);
  if (gid >= total) return;
  int4 p = split_gid(gid, shape);
  int C = shape.z;
  int base = ((p.w * shape.y + p.y) * shape.x + p.x) * C;
  int c0 = p.z * 4;
  float4 v = (float4)(c0 + 0 < C ? src[base + c0 + 0] : 0.0f, c0 + 1 < C ? src[base + c0 + 1] : 0.0f,
                      c0 + 2 < C ? src[base + c0 + 2] : 0.0f, c0 + 3 < C ? src[base + c0 + 3] : 0.0f);
  STORE4(v, dst, gid);
}

__kernel void phwc4_to_bhwc(__global const storage_t* src, __global float* dst, int4 shape, int total) {
  int gid = get_global_id(0);
  if (gid >= total) return;
  int4 p = split_gid(gid, shape);
  int C = shape.z;
  int base = ((p.w * shape.y + p.y) * shape.x + p.x) * C;
  int c0 = p.z * 4;
  float4 v = LOAD4(src, gid);
  if (c0 + 0 < C) dst[base + c0 + 0] = v.x;
  if (c0 + 1 < C) dst[base + c0 + 1] = v.y;
  if (c0 + 2 < C) dst[base + c0 + 2] = v.z;
  if (c0 + 3 < C) dst[base + c0 + 3] = v.w;
}

/* A source coordinate s on an axis of size n, folded back inside by the
 * border rule: 1 reflect (edge not repeated), 2 symmetric (edge repeated),
 * 3 wrap (TILE); -1 when it stays outside (0: constant fill). */
inline int fold_coord(int s, int n, int border) {
  if (s >= 0 && s < n) return s;
  if (border == 1) {
    s = s < 0 ? -s : 2 * n - 2 - s;
  } else if (border == 2) {
    s = s < 0 ? -s - 1 : 2 * n - 1 - s;
  } else if (border == 3) {
    s %= n;
    if (s < 0) s += n;
  } else {
    return -1;
  }
  return s >= 0 && s < n ? s : -1;
}

/* Source (x, y, c, b) of output coordinate d (x, y, c, b): per source axis
 * a, begin[a] + stride[a] * d[perm[a]], folded; the gather axis (if >= 0)
 * reads indices[dot(d, gstride)] instead. A component < 0 means outside. */
inline int4 remap_source(int4 d, int4 src_shape, int4 begin, int4 stride, int4 perm, int border,
                         __global const int* indices, int gather_axis, int4 gstride) {
  int dc[4] = {d.x, d.y, d.z, d.w};
  int b[4] = {begin.x, begin.y, begin.z, begin.w};
  int st[4] = {stride.x, stride.y, stride.z, stride.w};
  int pm[4] = {perm.x, perm.y, perm.z, perm.w};
  int n[4] = {src_shape.x, src_shape.y, src_shape.z, src_shape.w};
  int s[4];
  for (int a = 0; a < 4; ++a) s[a] = fold_coord(b[a] + st[a] * dc[pm[a]], n[a], border);
  if (gather_axis >= 0) {
    int k = indices[d.x * gstride.x + d.y * gstride.y + d.z * gstride.z + d.w * gstride.w];
    s[gather_axis] = k >= 0 && k < n[gather_axis] ? k : -1;
  }
  return (int4)(s[0], s[1], s[2], s[3]);
}

/* Element (b, y, x, c) of `dst` comes from the same row-major position of
 * `src` (mode 0, RESHAPE), or from remap_source (every other mode: slices,
 * pads, transposes, tiles, gathers), with `pad_value` where that is
 * outside. All int4 are (x, y, c, b). `whole`: the host found that
 * channels map to themselves from 0, so whole float4s move (src's padded
 * lanes are zero, and the tail is masked). */
__kernel void remap(__global const storage_t* src, __global storage_t* dst, int4 src_shape, int4 dst_shape,
                    int4 begin, int4 stride, int4 perm, int mode, int border, float pad_value, int whole,
                    __global const int* indices, int gather_axis, int4 gstride, int total) {
  int gid = get_global_id(0);
  if (gid >= total) return;
  int4 p = split_gid(gid, dst_shape);
  if (mode != 0 && whole) {
    int4 s = remap_source((int4)(p.x, p.y, 0, p.w), src_shape, begin, stride, perm, border, indices, gather_axis,
                          gstride);
    float4 v = (float4)(pad_value);
    if (s.x >= 0 && s.y >= 0 && s.w >= 0)
      v = p.z < SLICES(src_shape) ? LOAD4(src, idx4(src_shape, s.w, p.z, s.y, s.x)) : (float4)(0.0f);
    STORE4(mask_tail(v, p.z, dst_shape.z), dst, gid);
    return;
  }
  float r[4];
  for (int lane = 0; lane < 4; ++lane) {
    int c = p.z * 4 + lane;
    float v = 0.0f;
    if (c < dst_shape.z) {
      int4 s;
      if (mode == 0) {
        int lin = ((p.w * dst_shape.y + p.y) * dst_shape.x + p.x) * dst_shape.z + c;
        s.z = lin % src_shape.z;
        lin /= src_shape.z;
        s.x = lin % src_shape.x;
        lin /= src_shape.x;
        s.y = lin % src_shape.y;
        s.w = lin / src_shape.y;
      } else {
        s = remap_source((int4)(p.x, p.y, c, p.w), src_shape, begin, stride, perm, border, indices, gather_axis,
                         gstride);
      }
      v = s.x >= 0 && s.y >= 0 && s.z >= 0 && s.w >= 0 ? LOAD1(src, idx1(src_shape, s.w, s.y, s.x, s.z)) : pad_value;
    }
    r[lane] = v;
  }
  STORE4((float4)(r[0], r[1], r[2], r[3]), dst, gid);
}

/* ONE_HOT: output element d is `on` where indices[dot(d, istride)] equals
 * d's coordinate on the depth axis (0-3 as x, y, c, b), else `off`. */
__kernel void one_hot(__global const int* indices, __global storage_t* dst, int4 dst_shape, int axis, int4 istride,
                      float on, float off, int total) {
  int gid = get_global_id(0);
  if (gid >= total) return;
  int4 p = split_gid(gid, dst_shape);
  float r[4];
  for (int lane = 0; lane < 4; ++lane) {
    int c = p.z * 4 + lane;
    int d[4] = {p.x, p.y, c, p.w};
    r[lane] = 0.0f;
    if (c < dst_shape.z) {
      int k = indices[p.x * istride.x + p.y * istride.y + c * istride.z + p.w * istride.w];
      r[lane] = k == d[axis] ? on : off;
    }
  }
  STORE4((float4)(r[0], r[1], r[2], r[3]), dst, gid);
}

/* CONCATENATION, one dispatch per input: copies `src` into `dst` at
 * offset `off` (x, y, c, b). Channel offsets that are not multiples of 4
 * write lane by lane; `zero_from` (the output channel count, for the input
 * that ends the channel axis) zeroes the padded lanes after it. */
__kernel void concat_copy(__global const storage_t* src, __global storage_t* dst, int4 src_shape, int4 dst_shape,
                          int4 off, int zero_from, int total) {
  int gid = get_global_id(0);
  if (gid >= total) return;
  int4 p = split_gid(gid, src_shape);
  int ox = p.x + off.x, oy = p.y + off.y, ob = p.w + off.w;
  /* Whole slices when they cannot spill into a neighbour's channels. */
  if ((off.z & 3) == 0 && ((src_shape.z & 3) == 0 || off.z + src_shape.z == dst_shape.z)) {
    float4 v = LOAD4(src, gid);
    STORE4(v, dst, idx4(dst_shape, ob, p.z + (off.z >> 2), oy, ox));
    return;
  }
  float4 v = LOAD4(src, gid);
  float lanes[4] = {v.x, v.y, v.z, v.w};
  for (int lane = 0; lane < 4; ++lane) {
    int c = p.z * 4 + lane;
    if (c < src_shape.z) STORE1(lanes[lane], dst, idx1(dst_shape, ob, oy, ox, c + off.z));
  }
  /* The work-item holding the last source channel clears the tail lanes. */
  int last = src_shape.z - 1;
  if (zero_from > 0 && p.z == (last >> 2)) {
    for (int c = zero_from; c < ((zero_from + 3) & ~3); ++c) STORE1(0.0f, dst, idx1(dst_shape, ob, oy, ox, c));
  }
}
