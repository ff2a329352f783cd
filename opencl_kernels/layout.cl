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

/* Element (b, y, x, c) of `dst` comes from the same row-major position of
 * `src` (RESHAPE), or from begin + i * stride per axis (STRIDED_SLICE),
 * or, for PAD, from i - before, with `pad_value` outside the source.
 * mode: 0 reshape, 1 slice, 2 pad. begin/stride are (x, y, c, b). */
__kernel void remap(__global const storage_t* src, __global storage_t* dst, int4 src_shape, int4 dst_shape,
                    int4 begin, int4 stride, int mode, float pad_value, int total) {
  int gid = get_global_id(0);
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
      if (mode == 0) {
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

/* Boundary conversions of int8/uint8 partition tensors (ENABLE_QUANT): the
 * runtime's bytes are dequantized on the way in, (q - zero_point) * scale,
 * and quantized on the way out, round to nearest (half away from zero, as
 * TFLite's AffineQuantize) then clamp to [qmin, qmax]. is_signed picks
 * int8 over uint8; both travel as bytes. */
inline float q_byte_value(uchar b, int is_signed) { return is_signed ? (float)(char)b : (float)b; }

__kernel void bhwc_q_to_phwc4(__global const uchar* src, __global storage_t* dst, int4 shape, float scale,
                              int zero_point, int is_signed, int total) {
  int gid = get_global_id(0);
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

__kernel void phwc4_to_bhwc_q(__global const storage_t* src, __global uchar* dst, int4 shape, float scale,
                              int zero_point, int is_signed, int total) {
  int gid = get_global_id(0);
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
