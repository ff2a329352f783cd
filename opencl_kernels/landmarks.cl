/* MediaPipe's landmark ops (mediapipe/util/tflite/operations/
 * landmarks_to_transform_matrix.cc, transform_landmarks.cc).
 *
 * Landmarks are read by their flat row-major index f = landmark * 3 + k,
 * whatever shape holds them (v1: [1,1,1,3N], v2: [1,N,3]). Matrices are
 * [1,4,4] tensors: row r is the float4 at (x = r) of a one-slice tensor.
 * Products and sums follow the CPU code's order. */
#pragma OPENCL FP_CONTRACT OFF

GD_INLINE float flat_at(__global const storage_t* src, int4 shape, int f) {
  int c = f % shape.z;
  int r = f / shape.z;
  int x = r % shape.x;
  r /= shape.x;
  int y = r % shape.y;
  int b = r / shape.y;
  return LOAD1(src, idx1(shape, b, y, x, c));
}

/* 3x3 and 4x4 row-major products, c = a * b. */
GD_INLINE void mat3_mul(const float* a, const float* b, float* c) {
  for (int r = 0; r < 3; ++r)
    for (int k = 0; k < 3; ++k) {
      float s = 0.0f;
      for (int j = 0; j < 3; ++j) s += a[r * 3 + j] * b[j * 3 + k];
      c[r * 3 + k] = s;
    }
}

GD_INLINE void mat4_mul_into(float* a, const float* b) {
  float c[16];
  for (int r = 0; r < 4; ++r)
    for (int k = 0; k < 4; ++k) {
      float s = 0.0f;
      for (int j = 0; j < 4; ++j) s += a[r * 4 + j] * b[j * 4 + k];
      c[r * 4 + k] = s;
    }
  for (int i = 0; i < 16; ++i) a[i] = c[i];
}

GD_INLINE void store_matrix(__global storage_t* dst, int4 dst_shape, const float* m) {
  for (int r = 0; r < 4; ++r)
    for (int c = 0; c < 4; ++c) STORE1(m[r * 4 + c], dst, idx1(dst_shape, 0, 0, r, c));
}

/* Version 2. rot: (left, right) landmark; out_scale: (scale_x, scale_y,
 * output_width, output_height). One work-item does it all (a few hundred
 * landmarks at most). */
#define LANDMARKS_TO_TRANSFORM_MATRIX_V2_PARAMS \
  __global const storage_t* src, __global storage_t* dst, int4 src_shape, int4 dst_shape, __global const int* subset, \
  int num_subset, int2 rot, float target_rotation, float4 out_scale
#define LANDMARKS_TO_TRANSFORM_MATRIX_V2_ARGS \
  src, dst, src_shape, dst_shape, subset, num_subset, rot, target_rotation, out_scale
OUTLINED_KERNEL(landmarks_to_transform_matrix_v2, LANDMARKS_TO_TRANSFORM_MATRIX_V2_PARAMS,
                LANDMARKS_TO_TRANSFORM_MATRIX_V2_ARGS) {
  if (gid != 0) return;
  float lx = flat_at(src, src_shape, rot.x * 3), ly = flat_at(src, src_shape, rot.x * 3 + 1);
  float rx = flat_at(src, src_shape, rot.y * 3), ry = flat_at(src, src_shape, rot.y * 3 + 1);
  float rotation = target_rotation - atan2(ry - ly, rx - lx);
  float cr = cos(rotation), sr = sin(rotation);
  float2 lo = (float2)(0.0f), hi = (float2)(0.0f);
  for (int i = 0; i < num_subset; ++i) {
    float x = flat_at(src, src_shape, subset[i] * 3), y = flat_at(src, src_shape, subset[i] * 3 + 1);
    float2 v = (float2)(cr * x + -sr * y + 0.0f, sr * x + cr * y + 0.0f);
    if (i == 0) {
      lo = v;
      hi = v;
    } else {
      lo = fmin(lo, v);
      hi = fmax(hi, v);
    }
  }
  float crop_w = hi.x - lo.x, crop_h = hi.y - lo.y;
  float mx = (lo.x + hi.x) / 2.0f, my = (lo.y + hi.y) / 2.0f;
  float ci = cos(-rotation), si = sin(-rotation);
  float cx = ci * mx + -si * my + 0.0f, cy = si * mx + ci * my + 0.0f;
  float t[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
  float shift[16] = {1, 0, 0, cx, 0, 1, 0, cy, 0, 0, 1, 0, 0, 0, 0, 1};
  mat4_mul_into(t, shift);
  float r4[16] = {ci, -si, 0, 0, si, ci, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
  mat4_mul_into(t, r4);
  float sx = out_scale.x * crop_w / out_scale.z, sy = out_scale.y * crop_h / out_scale.w;
  float scale[16] = {sx, 0, 0, 0, 0, sy, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
  mat4_mul_into(t, scale);
  float shift2[16] = {1, 0, 0, -1.0f * (out_scale.z / 2.0f), 0, 1, 0, -1.0f * (out_scale.w / 2.0f),
                      0, 0, 1, 0, 0, 0, 0, 1};
  mat4_mul_into(t, shift2);
  store_matrix(dst, dst_shape, t);
}

/* Version 1. rot: (left, right); hw: (input_w, input_h, output_w,
 * output_h); range_mult: (landmarks_range, bbox_size_multiplier). */
#define LANDMARKS_TO_TRANSFORM_MATRIX_V1_PARAMS \
  __global const storage_t* src, __global storage_t* dst, int4 src_shape, int4 dst_shape, __global const int* subset, \
  int num_subset, int2 rot, int4 hw, float2 range_mult
#define LANDMARKS_TO_TRANSFORM_MATRIX_V1_ARGS src, dst, src_shape, dst_shape, subset, num_subset, rot, hw, range_mult
OUTLINED_KERNEL(landmarks_to_transform_matrix_v1, LANDMARKS_TO_TRANSFORM_MATRIX_V1_PARAMS,
                LANDMARKS_TO_TRANSFORM_MATRIX_V1_ARGS) {
  if (gid != 0) return;
  float lx = flat_at(src, src_shape, rot.x * 3), ly = flat_at(src, src_shape, rot.x * 3 + 1);
  float rx = flat_at(src, src_shape, rot.y * 3), ry = flat_at(src, src_shape, rot.y * 3 + 1);
  float alpha = -atan((ry - ly) / (rx - lx));
  float ca = cos(alpha), sa = sin(alpha);
  float2 hi = (float2)(-100000.0f), lo = (float2)(100000.0f);
  for (int i = 0; i < num_subset; ++i) {
    float x = flat_at(src, src_shape, subset[i] * 3), y = flat_at(src, src_shape, subset[i] * 3 + 1);
    float2 v = (float2)(x * ca - y * sa, x * sa + y * ca);
    hi = fmax(hi, v);
    lo = fmin(lo, v);
  }
  float range = range_mult.x;
  float bw = (hi.x - lo.x) * range_mult.y, bh = (hi.y - lo.y) * range_mult.y;
  float scale[9] = {bw / range, 0, 0, 0, bh / range, 0, 0, 0, 1};
  float mx = (hi.x + lo.x) / 2.0f, my = (hi.y + lo.y) / 2.0f;
  float cn = cos(-alpha), sn = sin(-alpha);
  float rmx = mx * cn - my * sn, rmy = mx * sn + my * cn;
  float rotation[9] = {cn, -sn, (rmx / range) * 2.0f - 1.0f, sn, cn, (rmy / range) * 2.0f - 1.0f, 0, 0, 1};
  float to_rel[9] = {2.0f / ((float)hw.z - 1.0f), 0, -1, 0, 2.0f / ((float)hw.w - 1.0f), -1, 0, 0, 1};
  float to_abs[9] = {((float)hw.x - 1.0f) / 2.0f, 0, ((float)hw.x - 1.0f) / 2.0f,
                     0, ((float)hw.y - 1.0f) / 2.0f, ((float)hw.y - 1.0f) / 2.0f, 0, 0, 1};
  float a[9], b[9];
  mat3_mul(to_abs, rotation, a);
  mat3_mul(a, scale, b);
  mat3_mul(b, to_rel, a);
  float m[16] = {a[0], a[1], 0, a[2], a[3], a[4], 0, a[5], a[6], a[7], a[8], 0, 0, 0, 0, 1};
  store_matrix(dst, dst_shape, m);
}

/* TransformLandmarks: per output float4, each channel c of landmark
 * c / dims: component 0 and 1 are the first two matrix rows applied to
 * (x, y, 0, 1) with the translation times `scale` (v1; 1 in v2), a third
 * component is copied. */
#define TRANSFORM_LANDMARKS_PARAMS \
  __global const storage_t* src, __global storage_t* dst, int4 src_shape, int4 dst_shape, \
  __global const storage_t* mat, int4 mat_shape, int dims, float scale, int total
#define TRANSFORM_LANDMARKS_ARGS src, dst, src_shape, dst_shape, mat, mat_shape, dims, scale, total
OUTLINED_KERNEL(transform_landmarks, TRANSFORM_LANDMARKS_PARAMS, TRANSFORM_LANDMARKS_ARGS) {
  if (gid >= total) return;
  int4 p = split_gid(gid, dst_shape);
  float4 m0 = LOAD4(mat, idx4(mat_shape, 0, 0, 0, 0));
  float4 m1 = LOAD4(mat, idx4(mat_shape, 0, 0, 0, 1));
  float r[4];
  for (int i = 0; i < 4; ++i) {
    int c = p.z * 4 + i;
    r[i] = 0.0f;
    if (c >= dst_shape.z) continue;
    int comp = c % dims;
    int base = c - comp;
    if (comp >= 2) {
      r[i] = LOAD1(src, idx1(src_shape, p.w, p.y, p.x, c));
      continue;
    }
    float x = LOAD1(src, idx1(src_shape, p.w, p.y, p.x, base));
    float y = LOAD1(src, idx1(src_shape, p.w, p.y, p.x, base + 1));
    float4 row = comp == 0 ? m0 : m1;
    r[i] = x * row.x + y * row.y + 0.0f * row.z + 1.0f * (row.w * scale);
  }
  STORE4((float4)(r[0], r[1], r[2], r[3]), dst, gid);
}
