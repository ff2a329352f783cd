/* DEPTH_TO_SPACE, DCR order: output channel c at (y, x) comes from input
 * channel ((y % bs) * bs + x % bs) * C_out + c at (y / bs, x / bs). When
 * C_out is a multiple of 4 each output float4 is one aligned input float4;
 * otherwise the lanes are gathered one by one (the tail lanes stay 0). */
#define DEPTH_TO_SPACE_PARAMS \
  __global const storage_t* src, __global storage_t* dst, int4 src_shape, int4 dst_shape, int block, int total
#define DEPTH_TO_SPACE_ARGS src, dst, src_shape, dst_shape, block, total
OUTLINED_KERNEL(depth_to_space, DEPTH_TO_SPACE_PARAMS, DEPTH_TO_SPACE_ARGS) {
  if (gid >= total) return;
  int4 p = split_gid(gid, dst_shape);
  int sy = p.y / block, sx = p.x / block;
  int base = ((p.y - sy * block) * block + (p.x - sx * block)) * dst_shape.z;
  int c0 = p.z * 4;
  float4 v;
  if ((dst_shape.z & 3) == 0) {
    v = LOAD4(src, idx4(src_shape, p.w, (base + c0) >> 2, sy, sx));
  } else {
    float r[4];
    for (int lane = 0; lane < 4; ++lane) {
      int c = c0 + lane;
      r[lane] = c < dst_shape.z ? LOAD1(src, idx1(src_shape, p.w, sy, sx, base + c)) : 0.0f;
    }
    v = (float4)(r[0], r[1], r[2], r[3]);
  }
  STORE4(v, dst, gid);
}

/* SPACE_TO_DEPTH, the inverse: output channel c at (y, x) comes from input
 * channel c % C_in at (y * bs + by, x * bs + bx), where by * bs + bx =
 * c / C_in. Whole float4s when C_in is a multiple of 4. */
#define SPACE_TO_DEPTH_PARAMS \
  __global const storage_t* src, __global storage_t* dst, int4 src_shape, int4 dst_shape, int block, int total
#define SPACE_TO_DEPTH_ARGS src, dst, src_shape, dst_shape, block, total
OUTLINED_KERNEL(space_to_depth, SPACE_TO_DEPTH_PARAMS, SPACE_TO_DEPTH_ARGS) {
  if (gid >= total) return;
  int4 p = split_gid(gid, dst_shape);
  int cin = src_shape.z;
  int c0 = p.z * 4;
  float4 v;
  if ((cin & 3) == 0) {
    int blk = c0 / cin;
    int sy = p.y * block + blk / block, sx = p.x * block + blk % block;
    v = LOAD4(src, idx4(src_shape, p.w, (c0 - blk * cin) >> 2, sy, sx));
  } else {
    float r[4];
    for (int lane = 0; lane < 4; ++lane) {
      int c = c0 + lane;
      int blk = c / cin;
      int sy = p.y * block + blk / block, sx = p.x * block + blk % block;
      r[lane] = c < dst_shape.z ? LOAD1(src, idx1(src_shape, p.w, sy, sx, c - blk * cin)) : 0.0f;
    }
    v = (float4)(r[0], r[1], r[2], r[3]);
  }
  STORE4(v, dst, gid);
}
