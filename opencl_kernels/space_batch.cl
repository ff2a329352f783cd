/* SPACE_TO_BATCH_ND and BATCH_TO_SPACE_ND (delegate_c/ops/ops_space_batch.c).
 * TFLite's batch order: batch (sy * block_w + sx) * B + b holds the pixels
 * at offset (sy, sx) of every block. Channels do not move, so each
 * work-item moves one float4. bp = (block_h, block_w, top, left): padding
 * for space_to_batch, crop for batch_to_space. */

#define SPACE_TO_BATCH_PARAMS \
  __global const storage_t* src, __global storage_t* dst, int4 src_shape, int4 dst_shape, int4 bp, int total
#define SPACE_TO_BATCH_ARGS src, dst, src_shape, dst_shape, bp, total
OUTLINED_KERNEL(space_to_batch, SPACE_TO_BATCH_PARAMS, SPACE_TO_BATCH_ARGS) {
  if (gid >= total) return;
  int4 p = split_gid(gid, dst_shape);
  int b = p.w % src_shape.w, shift = p.w / src_shape.w;
  int y = p.y * bp.x + shift / bp.y - bp.z;
  int x = p.x * bp.y + shift % bp.y - bp.w;
  float4 v = (float4)(0.0f); /* the padding */
  if (y >= 0 && y < src_shape.y && x >= 0 && x < src_shape.x) v = LOAD4(src, idx4(src_shape, b, p.z, y, x));
  STORE4(v, dst, gid);
}

#define BATCH_TO_SPACE_PARAMS \
  __global const storage_t* src, __global storage_t* dst, int4 src_shape, int4 dst_shape, int4 bp, int total
#define BATCH_TO_SPACE_ARGS src, dst, src_shape, dst_shape, bp, total
OUTLINED_KERNEL(batch_to_space, BATCH_TO_SPACE_PARAMS, BATCH_TO_SPACE_ARGS) {
  if (gid >= total) return;
  int4 p = split_gid(gid, dst_shape);
  int y = p.y + bp.z, x = p.x + bp.w;
  int b = ((y % bp.x) * bp.y + x % bp.y) * dst_shape.w + p.w;
  STORE4(LOAD4(src, idx4(src_shape, b, p.z, y / bp.x, x / bp.y)), dst, gid);
}
