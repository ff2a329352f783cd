/* Conversions between the runtime's BHWC tensors and PHWC4, at the
 * partition boundary (the float ones 8 pixels per work-item, the typed and
 * quantized ones one float4). */

/* The float boundary conversions move LAYOUT_PIXELS pixels of one slice
 * per work-item: LAYOUT_TILE in the CPU set, where the index split once per
 * row piece instead of per float4 paid (hand_recrop's 256x256x3 input took
 * 0.46 ms per float4); 1 in the GPU set, so neighbouring work-items touch
 * neighbouring memory. Work-items run over (ceil(W / LAYOUT_PIXELS), H,
 * slices, B). */
#ifndef LAYOUT_PIXELS
#define LAYOUT_PIXELS LAYOUT_TILE
#endif
#define BHWC_TO_PHWC4_PARAMS __global const float* src, __global storage_t* dst, int4 shape, int total
#define BHWC_TO_PHWC4_ARGS src, dst, shape, total
#if GD_SELECTED(bhwc_to_phwc4, 0)
OUTLINED_KERNEL(bhwc_to_phwc4, BHWC_TO_PHWC4_PARAMS, BHWC_TO_PHWC4_ARGS) {
  if (gid >= total) return;
  int4 p = split_gid(gid, (int4)((shape.x + LAYOUT_PIXELS - 1) / LAYOUT_PIXELS, shape.y, shape.z, shape.w));
  int C = shape.z, c0 = p.z * 4, x = p.x * LAYOUT_PIXELS;
  int n = min(LAYOUT_PIXELS, shape.x - x);
  __global const float* s = src + ((p.w * shape.y + p.y) * shape.x + x) * C + c0;
  int o = idx4(shape, p.w, p.z, p.y, x);
  if (c0 + 4 <= C) {
    for (int i = 0; i < n; ++i) STORE4(vload4(0, s + i * C), dst, o + i);
    return;
  }
  for (int i = 0; i < n; ++i, s += C) {
    float4 v = (float4)(s[0], c0 + 1 < C ? s[1] : 0.0f, c0 + 2 < C ? s[2] : 0.0f, 0.0f);
    STORE4(v, dst, o + i);
  }
}
#endif

/* dst_offset (elements): where in dst the tensor's BHWC bytes begin; an
 * output assembled from several tensors (executor.c) takes each at its own. */
#define PHWC4_TO_BHWC_PARAMS __global const storage_t* src, __global float* dst, int4 shape, int dst_offset, int total
#define PHWC4_TO_BHWC_ARGS src, dst, shape, dst_offset, total
#if GD_SELECTED(phwc4_to_bhwc, 1)
OUTLINED_KERNEL(phwc4_to_bhwc, PHWC4_TO_BHWC_PARAMS, PHWC4_TO_BHWC_ARGS) {
  if (gid >= total) return;
  int4 p = split_gid(gid, (int4)((shape.x + LAYOUT_PIXELS - 1) / LAYOUT_PIXELS, shape.y, shape.z, shape.w));
  int C = shape.z, c0 = p.z * 4, x = p.x * LAYOUT_PIXELS;
  int n = min(LAYOUT_PIXELS, shape.x - x);
  __global float* d = dst + dst_offset + ((p.w * shape.y + p.y) * shape.x + x) * C + c0;
  int o = idx4(shape, p.w, p.z, p.y, x);
  if (c0 + 4 <= C) {
    for (int i = 0; i < n; ++i) vstore4(LOAD4(src, o + i), 0, d + i * C);
    return;
  }
  for (int i = 0; i < n; ++i, d += C) {
    float4 v = LOAD4(src, o + i);
    d[0] = v.x;
    if (c0 + 1 < C) d[1] = v.y;
    if (c0 + 2 < C) d[2] = v.z;
  }
}
#endif

/* Source coordinates s on axes of sizes n folded back inside, without
 * branches (the border is the same for every work-item): reflect (edge
 * not repeated), symmetric (edge repeated), both once, which the op
 * checks guarantee is enough; wrap (TILE); const: a component < 0 means
 * outside (constant fill). */
GD_INLINE int4 fold4(int4 s, int4 n, int border) {
  if (border == BORDER_REFLECT) {
    int4 t = max(s, -s);
    return min(t, 2 * n - 2 - t);
  }
  if (border == BORDER_SYMMETRIC) {
    int4 t = max(s, -s - 1);
    return min(t, 2 * n - 1 - t);
  }
  if (border == BORDER_WRAP) {
    int4 t = s % n;
    return select(t, t + n, t < 0);
  }
  return select(s, (int4)(-1), s < 0 || s >= n);
}

/* The same conversions for the partition's int32, int64 and bool tensors
 * (bool is one byte, 0 or 1; `type` is a TYPED_* code). Inside the
 * partition their values are floats: integers exact up to 2^24, bool 0.0 /
 * 1.0, so reading back is exact; a value read as bool is 1 for anything
 * non-zero. int64 moves as two ints, low word first (little-endian hosts),
 * so no device needs the `long` type. */
#define TYPED_TO_PHWC4_PARAMS __global const uchar* src, __global storage_t* dst, int4 shape, int type, int total
#define TYPED_TO_PHWC4_ARGS src, dst, shape, type, total
#if GD_SELECTED(typed_to_phwc4, 2)
OUTLINED_KERNEL(typed_to_phwc4, TYPED_TO_PHWC4_PARAMS, TYPED_TO_PHWC4_ARGS) {
  if (gid >= total) return;
  int4 p = split_gid(gid, shape);
  int C = shape.z;
  int base = ((p.w * shape.y + p.y) * shape.x + p.x) * C;
  __global const int* src32 = (__global const int*)src;
  float v[4];
  for (int lane = 0; lane < 4; ++lane) {
    int c = p.z * 4 + lane;
    v[lane] = c >= C                ? 0.0f
              : type == TYPED_BOOL  ? (src[base + c] != 0 ? 1.0f : 0.0f)
              : type == TYPED_INT64 ? (float)src32[2 * (base + c)]
                                    : (float)src32[base + c];
  }
  STORE4((float4)(v[0], v[1], v[2], v[3]), dst, gid);
}
#endif

#define PHWC4_TO_TYPED_PARAMS __global const storage_t* src, __global uchar* dst, int4 shape, int type, int total
#define PHWC4_TO_TYPED_ARGS src, dst, shape, type, total
#if GD_SELECTED(phwc4_to_typed, 3)
OUTLINED_KERNEL(phwc4_to_typed, PHWC4_TO_TYPED_PARAMS, PHWC4_TO_TYPED_ARGS) {
  if (gid >= total) return;
  int4 p = split_gid(gid, shape);
  int C = shape.z;
  int base = ((p.w * shape.y + p.y) * shape.x + p.x) * C;
  __global int* dst32 = (__global int*)dst;
  float4 v4 = LOAD4(src, gid);
  float v[4] = {v4.x, v4.y, v4.z, v4.w};
  for (int lane = 0; lane < 4; ++lane) {
    int c = p.z * 4 + lane;
    if (c >= C) break;
    if (type == TYPED_BOOL) {
      dst[base + c] = v[lane] != 0.0f ? 1 : 0;
    } else if (type == TYPED_INT64) {
      int q = convert_int_rtz(v[lane]);
      dst32[2 * (base + c)] = q;
      dst32[2 * (base + c) + 1] = q < 0 ? -1 : 0;
    } else {
      dst32[base + c] = convert_int_rtz(v[lane]);
    }
  }
}
#endif

/* Element (b, y, x, c) of `dst` comes from the same row-major position of
 * `src` (RESHAPE), or from begin + i * stride per axis (STRIDED_SLICE),
 * or, for PAD, from i - before, with `pad_value` outside the source.
 * mode: 0 reshape, 1 slice, 2 pad. begin/stride are (x, y, c, b). */
#define REMAP_PARAMS \
  __global const storage_t* src, __global storage_t* dst, int4 src_shape, int4 dst_shape, int4 begin, \
  int4 stride, int mode, float pad_value, int total
#define REMAP_ARGS src, dst, src_shape, dst_shape, begin, stride, mode, pad_value, total
#if GD_SELECTED(remap, 4)
OUTLINED_KERNEL(remap, REMAP_PARAMS, REMAP_ARGS) {
  if (gid >= total) return;
  int4 p = split_gid(gid, dst_shape);
  /* Channels untouched (slice or zero pad that only moves B/H/W, or pads
   * channels at the end): whole float4s; src's padded lanes are zero. */
  if (mode != 0 && begin.z == 0 && stride.z == 1 && pad_value == 0.0f) {
    int sx = begin.x + p.x * stride.x, sy = begin.y + p.y * stride.y, sb = begin.w + p.w * stride.w;
    float4 v = (float4)(0.0f);
    if (sx >= 0 && sx < src_shape.x && sy >= 0 && sy < src_shape.y && sb >= 0 && sb < src_shape.w &&
        p.z < SLICES(src_shape))
      v = LOAD4(src, idx4(src_shape, sb, p.z, sy, sx));
    STORE4(mask_tail(v, p.z, dst_shape.z), dst, gid);
    return;
  }
  float r[4];
  for (int lane = 0; lane < 4; ++lane) {
    int c = p.z * 4 + lane;
    float v = 0.0f;
    if (c < dst_shape.z) {
      int sx, sy, sc, sb;
      if (mode == REMAP_RESHAPE) {
        int lin = ((p.w * dst_shape.y + p.y) * dst_shape.x + p.x) * dst_shape.z + c;
        sc = lin % src_shape.z;
        lin /= src_shape.z;
        sx = lin % src_shape.x;
        lin /= src_shape.x;
        sy = lin % src_shape.y;
        sb = lin / src_shape.y;
      } else {
        sx = begin.x + p.x * stride.x;
        sy = begin.y + p.y * stride.y;
        sc = begin.z + c * stride.z;
        sb = begin.w + p.w * stride.w;
      }
      if (sx >= 0 && sx < src_shape.x && sy >= 0 && sy < src_shape.y && sc >= 0 && sc < src_shape.z && sb >= 0 &&
          sb < src_shape.w) {
        v = LOAD1(src, idx1(src_shape, sb, sy, sx, sc));
      } else {
        v = pad_value;
      }
    }
    r[lane] = v;
  }
  STORE4((float4)(r[0], r[1], r[2], r[3]), dst, gid);
}
#endif

/* The general remap (transposes, tiles, mirror pads, gathers, unpacks):
 * output element d = (x, y, c, b) comes from source coordinate
 * begin + mx * d.x + my * d.y + mc * d.z + mb * d.w (each m a column of
 * the output-to-source map: a permutation scaled by the strides), folded
 * by `border`; the gather axis (>= 0) instead reads indices[dot(gstride,
 * d)]. `pad_value` where the source is outside. All int4 are (x, y, c, b).
 * `whole`: the host found that channels map to themselves from 0, so whole
 * float4s move (src's padded lanes are zero, and the tail is masked).
 * Otherwise each lane steps the first lane's coordinate by mc.
 * (Reshapes, slices and pads take the shorter `remap` above: PoCL runs
 * that one several times faster.) */
#define REMAP_MAP_PARAMS \
  __global const storage_t* src, __global storage_t* dst, int4 src_shape, int4 dst_shape, int4 begin, int4 mx, \
  int4 my, int4 mc, int4 mb, int border, float pad_value, int whole, __global const int* indices, int gather_axis, \
  int4 gstride, int total
#define REMAP_MAP_ARGS \
  src, dst, src_shape, dst_shape, begin, mx, my, mc, mb, border, pad_value, whole, indices, gather_axis, gstride, \
  total
#if GD_SELECTED(remap_map, 5)
OUTLINED_KERNEL(remap_map, REMAP_MAP_PARAMS, REMAP_MAP_ARGS) {
  if (gid >= total) return;
  int4 p = split_gid(gid, dst_shape);
  int c0 = p.z * 4;
  int dc = whole ? 0 : c0;
  int4 s0 = begin + mx * p.x + my * p.y + mc * dc + mb * p.w;
  int g0 = gstride.x * p.x + gstride.y * p.y + gstride.z * dc + gstride.w * p.w;
  if (whole) {
    int4 s = fold4(s0, src_shape, border);
    if (gather_axis == 0) s.x = indices[g0];
    if (gather_axis == 1) s.y = indices[g0];
    if (gather_axis == 3) s.w = indices[g0];
    float4 v = (float4)(pad_value);
    if (s.x >= 0 && s.x < src_shape.x && s.y >= 0 && s.y < src_shape.y && s.w >= 0 && s.w < src_shape.w)
      v = p.z < SLICES(src_shape) ? LOAD4(src, idx4(src_shape, s.w, p.z, s.y, s.x)) : (float4)(0.0f);
    STORE4(mask_tail(v, p.z, dst_shape.z), dst, gid);
    return;
  }
  float r[4];
  for (int lane = 0; lane < 4; ++lane) {
    float v = 0.0f;
    if (c0 + lane < dst_shape.z) {
      int4 s = fold4(s0 + lane * mc, src_shape, border);
      if (gather_axis >= 0) {
        int k = indices[g0 + lane * gstride.z];
        if (gather_axis == 0) s.x = k < src_shape.x ? k : -1;
        if (gather_axis == 1) s.y = k < src_shape.y ? k : -1;
        if (gather_axis == 2) s.z = k < src_shape.z ? k : -1;
        if (gather_axis == 3) s.w = k < src_shape.w ? k : -1;
      }
      v = all(s >= 0) ? LOAD1(src, idx1(src_shape, s.w, s.y, s.x, s.z)) : pad_value;
    }
    r[lane] = v;
  }
  STORE4((float4)(r[0], r[1], r[2], r[3]), dst, gid);
}
#endif

/* ONE_HOT: output element d is `on` where indices[dot(d, istride)] equals
 * d's coordinate on the depth axis (0-3 as x, y, c, b), else `off`. */
#define ONE_HOT_PARAMS \
  __global const int* indices, __global storage_t* dst, int4 dst_shape, int axis, int4 istride, float on, float off, \
  int total
#define ONE_HOT_ARGS indices, dst, dst_shape, axis, istride, on, off, total
#if GD_SELECTED(one_hot, 6)
OUTLINED_KERNEL(one_hot, ONE_HOT_PARAMS, ONE_HOT_ARGS) {
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
#endif

/* CONCATENATION, one dispatch per input: copies `src` into `dst` at
 * offset `off` (x, y, c, b). Channel offsets that are not multiples of 4
 * write lane by lane; `zero_from` (the output channel count, for the input
 * that ends the channel axis) zeroes the padded lanes after it. */
#define CONCAT_COPY_PARAMS \
  __global const storage_t* src, __global storage_t* dst, int4 src_shape, int4 dst_shape, int4 off, \
  int zero_from, int total
#define CONCAT_COPY_ARGS src, dst, src_shape, dst_shape, off, zero_from, total
#if GD_SELECTED(concat_copy, 7)
OUTLINED_KERNEL(concat_copy, CONCAT_COPY_PARAMS, CONCAT_COPY_ARGS) {
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
#endif

/* Boundary conversions of int8/uint8 partition tensors (ENABLE_QUANT): the
 * runtime's bytes are dequantized on the way in, (q - zero_point) * scale,
 * and quantized on the way out, round to nearest (half away from zero, as
 * TFLite's AffineQuantize) then clamp to [qmin, qmax]. is_signed picks
 * int8 over uint8; both travel as bytes. */
GD_INLINE float q_byte_value(uchar b, int is_signed) { return is_signed ? (float)(char)b : (float)b; }

#define BHWC_Q_TO_PHWC4_PARAMS \
  __global const uchar* src, __global storage_t* dst, int4 shape, float scale, int zero_point, int is_signed, \
  int total
#define BHWC_Q_TO_PHWC4_ARGS src, dst, shape, scale, zero_point, is_signed, total
#if GD_SELECTED(bhwc_q_to_phwc4, 8)
OUTLINED_KERNEL(bhwc_q_to_phwc4, BHWC_Q_TO_PHWC4_PARAMS, BHWC_Q_TO_PHWC4_ARGS) {
  if (gid >= total) return;
  int4 p = split_gid(gid, shape);
  int C = shape.z;
  int base = ((p.w * shape.y + p.y) * shape.x + p.x) * C;
  int c0 = p.z * 4;
  float r[4];
  for (int lane = 0; lane < 4; ++lane) {
    int c = c0 + lane;
    r[lane] = c < C ? (q_byte_value(src[base + c], is_signed) - (float)zero_point) * scale : 0.0f;
  }
  STORE4((float4)(r[0], r[1], r[2], r[3]), dst, gid);
}
#endif

#define PHWC4_TO_BHWC_Q_PARAMS \
  __global const storage_t* src, __global uchar* dst, int4 shape, float scale, int zero_point, int is_signed, \
  int total
#define PHWC4_TO_BHWC_Q_ARGS src, dst, shape, scale, zero_point, is_signed, total
#if GD_SELECTED(phwc4_to_bhwc_q, 9)
OUTLINED_KERNEL(phwc4_to_bhwc_q, PHWC4_TO_BHWC_Q_PARAMS, PHWC4_TO_BHWC_Q_ARGS) {
  if (gid >= total) return;
  int4 p = split_gid(gid, shape);
  int C = shape.z;
  int base = ((p.w * shape.y + p.y) * shape.x + p.x) * C;
  int c0 = p.z * 4;
  float4 v = LOAD4(src, gid);
  float lanes[4] = {v.x, v.y, v.z, v.w};
  int qmin = is_signed ? -128 : 0, qmax = is_signed ? 127 : 255;
  for (int lane = 0; lane < 4; ++lane) {
    int c = c0 + lane;
    if (c >= C) break;
    /* Clamped as float first: a huge or infinite value must not overflow the int. */
    int q = (int)clamp(round(lanes[lane] / scale) + (float)zero_point, (float)qmin, (float)qmax);
    dst[base + c] = (uchar)(q & 0xff);
  }
}
#endif

/* Mixed storage (mixed_storage.c): one PHWC4 tensor between its half form
 * and its float form, one float4 per work-item. The types are explicit, so
 * these two do not depend on the storage defines. */
#define STORAGE_HALF_TO_FLOAT_PARAMS __global const half* src, __global float* dst, int total
#define STORAGE_HALF_TO_FLOAT_ARGS src, dst, total
#if GD_SELECTED(storage_half_to_float, 10)
OUTLINED_KERNEL(storage_half_to_float, STORAGE_HALF_TO_FLOAT_PARAMS, STORAGE_HALF_TO_FLOAT_ARGS) {
  if (gid < total) vstore4(vload_half4(gid, src), gid, dst);
}
#endif

#define STORAGE_FLOAT_TO_HALF_PARAMS __global const float* src, __global half* dst, int total
#define STORAGE_FLOAT_TO_HALF_ARGS src, dst, total
#if GD_SELECTED(storage_float_to_half, 11)
OUTLINED_KERNEL(storage_float_to_half, STORAGE_FLOAT_TO_HALF_PARAMS, STORAGE_FLOAT_TO_HALF_ARGS) {
  if (gid < total) vstore_half4(vload4(gid, src), gid, dst);
}
#endif
