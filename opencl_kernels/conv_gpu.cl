/* CONV_2D shaped for GPUs: 3-D NDRanges, work-groups that share tiles
 * through __local memory, and a small register block per work-item (the
 * depthwise kernels, which need none of that, are in depthwise_gpu.cl).
 * The siblings in conv.cl are shaped for CPU OpenCL; each kernel here takes
 * exactly its sibling's arguments, so ops_conv.c's set_conv_args sets them
 * unchanged. FP32 accumulation in every precision.
 *
 * ============================ LAUNCH CONTRACT ============================
 * Notation: output shape (W, H, C, B) = dst_shape, P = W * H, S_out =
 * ceil(C / 4), ceil(a / b) = (a + b - 1) / b, round_up(a, b) = ceil(a, b) * b.
 * Every kernel has a fixed work-group size, declared with
 * reqd_work_group_size: launch with exactly the local size below. `total`
 * is ignored (pass anything, e.g. the number of output float4s) but with
 * CONVG_DST_BHWC (below); bounds come from the shapes.
 *
 * conv2d_1x1_gpu  (args as conv2d_1x1; only for 1x1, stride 1, no padding)
 * conv2d_gpu      (args as conv2d_tiled; any filter/stride/dilation/padding)
 * conv2d_bhwc_gpu (args, defines, NDRange and __local memory as conv2d_gpu;
 *                 src is row-major BHWC float32 in every storage)
 * conv2d_1x1_scaled_gpu (as conv2d_1x1_gpu, with `scale`, [B, 1, 1, C_in]
 *                 in PHWC4, inserted after dst_shape)
 * conv2d_1x1_scaled_add_gpu (as conv2d_1x1_scaled_gpu, with `addend`, the
 *                 source's shape, inserted after `scale`)
 * conv2d_1x1_up2_gpu (as conv2d_1x1_gpu, with `int src_code` inserted after
 *                 dst_shape; src is W/2 x H/2, src_shape its shape)
 *   Defines (defaults; both kernels of one build share them):
 *     CONVG_TP = 4   output pixels per work-item
 *     CONVG_BS = 2   output slices per work-item = weight block_slices
 *     CONVG_LX = 16  work-group size along pixels
 *     CONVG_LY = 4   work-group size along output blocks
 *     CONVG_KT = 4   reduction slices per __local tile (K step)
 *     CONVG_LX * CONVG_LY <= 256; CONVG_BS in {1, 2, 4}.
 *   Weights: upload_dense_weights_blocked(block_slices = CONVG_BS), i.e.
 *     BS = 2 by default: blocks of Wb = 8 output channels, G = ceil(S_out /
 *     CONVG_BS) blocks; bias [G * Wb] floats.
 *   work_dim 3:
 *     global = (round_up(ceil(P, CONVG_TP), CONVG_LX),
 *               round_up(ceil(S_out, CONVG_BS), CONVG_LY),
 *               B)
 *     local  = (CONVG_LX, CONVG_LY, 1)
 *   __local memory: CONVG_KT * (CONVG_LX * CONVG_TP + 4 * CONVG_LY *
 *     CONVG_BS) float4s (4 KiB + 2 KiB with the defaults).
 *
 * dw_conv2d_1x1_gpu  a DEPTHWISE_CONV_2D (multiplier 1) whose output only a
 *   1x1 conv2d_1x1_gpu reads, in one launch (fuse_dw_conv.c): args as
 *   conv2d_1x1_gpu with the depthwise's inserted after dst_shape:
 *     (src, dst, weights, bias, src_shape, dst_shape, dw_weights, dw_bias,
 *      geom, pad_dil, dw_act, act, alpha, residual, epi, res_slices, total)
 *   src is the depthwise's input (its channels are the 1x1's input
 *   channels); dw_weights / dw_bias / geom / pad_dil / dw_act as
 *   depthwise_gpu.cl's depthwise_gpu. Weights, defines, NDRange and
 *   __local memory as conv2d_1x1_gpu, whose input tile it computes
 *   instead of loading it.
 *
 * ========================================================================
 *
 * -DCONVG_DST_BHWC=1 (output_direct.c; common.cl's convg_store): dst is a
 *   float32 row-major BHWC buffer and `total` the element where this
 *   output starts in it (a part of an assembled output), in every storage.
 *
 * Epilogue of every kernel (as conv.cl): bias, sum, then common.cl's
 * convg_store: activate(act), the fused epilogue with the residual read at
 * its own index (a residual of fewer slices adds zero to the slices it
 * lacks), tail lanes zeroed. */

/* Tiles and default groups: kernel_abi.h. */
#if CONVG_BS != 1 && CONVG_BS != 2 && CONVG_BS != 4
#error "CONVG_BS must be 1, 2 or 4 (the weight block_slices)"
#endif
#if CONVG_LX * CONVG_LY > 256
#error "work-groups are limited to 256 work-items"
#endif
#if CONVG_TP < 1 || CONVG_KT < 1
#error "tile sizes must be positive"
#endif

#define CONVG_WG (CONVG_LX * CONVG_LY)
/* Pixels of one work-group's tile; pixel i of a work-item is lx + i * LX, so
 * neighbouring work-items touch neighbouring float4s in every access. */
#define CONVG_TILE_P (CONVG_LX * CONVG_TP)
/* float4s in the input tile [KT][TILE_P] and the weight tile
 * [KT][4 lanes][LY][BS], and how many of each a work-item loads. */
#define CONVG_IN_N (CONVG_KT * CONVG_TILE_P)
#define CONVG_W_N (CONVG_KT * 4 * CONVG_LY * CONVG_BS)
#define CONVG_IN_LOADS ((CONVG_IN_N + CONVG_WG - 1) / CONVG_WG)
#define CONVG_W_LOADS ((CONVG_W_N + CONVG_WG - 1) / CONVG_WG)
#define CONVG_ACC (CONVG_TP * CONVG_BS)

/* Each kernel is written once and compiled in two forms:
 * - as a kernel (the GPU set): its __local tiles declared in it, its ids
 *   asked for. Not common.cl's GROUP_KERNEL form, whose body takes them
 *   as arguments: in that form PoCL 3.1's LLVM crashed (InstCombine)
 *   compiling dw_conv2d_1x1_gpu for one-row groups;
 * - in the VM program (GD_VM_PROGRAM), a GROUP_KERNEL body at the default
 *   16 x 4 group (the VM's), its tiles carved from the VM's __local memory
 *   and its ids passed in (policy vm_tiles, select_conv.c).
 * tools/gen_vm.py reads the bodies' signatures and group shapes with
 * GD_VM_SCAN, where a kernel is written as GROUP_KERNEL's kernel form (it
 * only preprocesses that form). */
#define CONVG_LMEM (CONVG_IN_N + CONVG_W_N)
#if defined(GD_VM_PROGRAM) || defined(GD_VM_SCAN)
#define CONVG_KERNEL(NAME, FORM) GROUP_KERNEL(NAME, CONVG_LX, CONVG_LY, CONVG_LMEM, FORM##_PARAMS, FORM##_ARGS)
#define CONVG_TILES                   \
  __local float4* in_l = lmem;        \
  __local float4* w_l = lmem + CONVG_IN_N;
#define CONVG_LOCAL_ID(D, C) loc.C
#define CONVG_GROUP_ID(D, C) grp.C
#define CONVG_GLOBAL_ID_Z grp.z
#else
#define CONVG_KERNEL(NAME, FORM) \
  __kernel __attribute__((reqd_work_group_size(CONVG_LX, CONVG_LY, 1))) void NAME(FORM##_PARAMS)
#define CONVG_TILES                   \
  __local float4 in_l[CONVG_IN_N];    \
  __local float4 w_l[CONVG_W_N];
#define CONVG_LOCAL_ID(D, C) get_local_id(D)
#define CONVG_GROUP_ID(D, C) get_group_id(D)
#define CONVG_GLOBAL_ID_Z get_global_id(2)
#endif

/* The kernels' parameters (the launch contract above) and arguments: FORM_PARAMS and FORM_ARGS
 * (CONVG_KERNEL pastes the names, so that each list reaches GROUP_KERNEL as one argument). */
#define CONVG_OUT __global storage_t* dst, __global const float* weights, __global const float* bias, int4 src_shape, int4 dst_shape
#define CONVG_OUT_ARGS dst, weights, bias, src_shape, dst_shape
#define CONVG_EPI int act, __global const float4* alpha, __global const storage_t* residual, int4 epi, int res_slices, int total
#define CONVG_EPI_ARGS act, alpha, residual, epi, res_slices, total
#define CONVG_1X1_PARAMS __global const storage_t* src, CONVG_OUT, CONVG_EPI
#define CONVG_1X1_ARGS src, CONVG_OUT_ARGS, CONVG_EPI_ARGS
#define CONVG_SCALED_PARAMS __global const storage_t* src, CONVG_OUT, __global const storage_t* scale, CONVG_EPI
#define CONVG_SCALED_ARGS src, CONVG_OUT_ARGS, scale, CONVG_EPI_ARGS
#define CONVG_SCALED_ADD_PARAMS \
  __global const storage_t* src, CONVG_OUT, __global const storage_t* scale, __global const storage_t* addend, CONVG_EPI
#define CONVG_SCALED_ADD_ARGS src, CONVG_OUT_ARGS, scale, addend, CONVG_EPI_ARGS
#define CONVG_UP2_PARAMS __global const storage_t* src, CONVG_OUT, int src_code, CONVG_EPI
#define CONVG_UP2_ARGS src, CONVG_OUT_ARGS, src_code, CONVG_EPI_ARGS
#define CONVG_GEOM_PARAMS __global const storage_t* src, CONVG_OUT, int4 geom, int4 pad_dil, CONVG_EPI
#define CONVG_GEOM_ARGS src, CONVG_OUT_ARGS, geom, pad_dil, CONVG_EPI_ARGS
#define CONVG_BHWC_PARAMS __global const float* src, CONVG_OUT, int4 geom, int4 pad_dil, CONVG_EPI
#define CONVG_BHWC_ARGS CONVG_GEOM_ARGS
#define CONVG_DW_1X1_PARAMS                                                                                          \
  __global const storage_t* src, CONVG_OUT, __global const float4* dw_weights, __global const float4* dw_bias, int4 geom, \
      int4 pad_dil, int dw_act, CONVG_EPI
#define CONVG_DW_1X1_ARGS src, CONVG_OUT_ARGS, dw_weights, dw_bias, geom, pad_dil, dw_act, CONVG_EPI_ARGS

/* The weight tile: K-slices k0 .. k0+KT-1 of blocks g0 .. g0+LY-1 into
 * w_l[KT][4][LY][BS]. Block g's reduction rows are contiguous (k_slices of
 * them, 4 lanes x BS float4 each), so consecutive work-items read
 * consecutive float4s. Rows past k_slices and blocks past `groups` read 0. */
GD_INLINE void convg_load_weights(__local float4* w_l, __global const float* weights, int lid, int g0, int groups,
                               int k_slices, int k0) {
  const int per_block = CONVG_KT * 4 * CONVG_BS;
#pragma unroll
  for (int r = 0; r < CONVG_W_LOADS; ++r) {
    int e = lid + r * CONVG_WG;
    if (CONVG_W_N % CONVG_WG == 0 || e < CONVG_W_N) {
      int ly = e / per_block, q = e - ly * per_block; /* q = (k * 4 + lane) * BS + j */
      int g = g0 + ly, k4 = q / CONVG_BS;
      float4 v = (float4)(0.0f);
      if (g < groups && k0 + k4 / 4 < k_slices) v = vload4((g * k_slices + k0) * 4 * CONVG_BS + q, weights);
      w_l[(k4 * CONVG_LY + ly) * CONVG_BS + (q - k4 * CONVG_BS)] = v;
    }
  }
}

/* One K step of the register block: for each of the KT slices, TP pixel
 * float4s and 4 x BS weight float4s from local memory feed 16 * TP * BS
 * multiply-adds. acc[i * BS + j] = pixel i, output slice j of the block. */
#define CONVG_LANE(L, COMP)                                                     \
  {                                                                             \
    _Pragma("unroll") for (int j = 0; j < CONVG_BS; ++j) {                      \
      float4 wv = w_l[((k * 4 + (L)) * CONVG_LY + ly) * CONVG_BS + j];          \
      _Pragma("unroll") for (int i = 0; i < CONVG_TP; ++i) acc[i * CONVG_BS + j] = \
          fma((float4)(x[i].COMP), wv, acc[i * CONVG_BS + j]);                 \
    }                                                                           \
  }
#define CONVG_TILE_FMA()                                                            \
  _Pragma("unroll") for (int k = 0; k < CONVG_KT; ++k) {                            \
    float4 x[CONVG_TP];                                                             \
    _Pragma("unroll") for (int i = 0; i < CONVG_TP; ++i) x[i] = in_l[k * CONVG_TILE_P + lx + i * CONVG_LX]; \
    CONVG_LANE(0, x) CONVG_LANE(1, y) CONVG_LANE(2, z) CONVG_LANE(3, w)             \
  }

/* Shared start of both conv kernels: the work-item's place, and the
 * accumulators initialised with the bias (zero for blocks past the end). */
#define CONVG_PROLOGUE                                                                 \
  CONVG_TILES                                                                          \
  int lx = CONVG_LOCAL_ID(0, x), ly = CONVG_LOCAL_ID(1, y), lid = ly * CONVG_LX + lx;  \
  int p0 = CONVG_GROUP_ID(0, x) * CONVG_TILE_P, g0 = CONVG_GROUP_ID(1, y) * CONVG_LY;  \
  int b = CONVG_GLOBAL_ID_Z, g = g0 + ly;                                              \
  int so = SLICES(dst_shape), groups = (so + CONVG_BS - 1) / CONVG_BS;                 \
  int plane = dst_shape.x * dst_shape.y, src_slices = SLICES(src_shape);               \
  float4 acc[CONVG_ACC];                                                               \
  _Pragma("unroll") for (int j = 0; j < CONVG_BS; ++j) {                               \
    float4 bv = g < groups ? vload4(g * CONVG_BS + j, bias) : (float4)(0.0f);          \
    _Pragma("unroll") for (int i = 0; i < CONVG_TP; ++i) acc[i * CONVG_BS + j] = bv;   \
  }

/* Stores of the register block: pixels past the plane and slices past
 * S_out (in the last, partial block) are dropped. */
#define CONVG_EPILOGUE                                                                          \
  _Pragma("unroll") for (int i = 0; i < CONVG_TP; ++i) {                                        \
    int p = p0 + lx + i * CONVG_LX;                                                             \
    _Pragma("unroll") for (int j = 0; j < CONVG_BS; ++j) {                                      \
      int s = g * CONVG_BS + j;                                                                 \
      if (p < plane && s < so)                                                                  \
        convg_store(acc[i * CONVG_BS + j], dst, dst_shape, b, s, p, act, alpha, residual, epi, res_slices, total); \
    }                                                                                           \
  }

/* The rest of a K step once the input tile is staged: the weight tile of
 * reduction rows k0 .. k0+KT-1 (of K_SLICES), then the register block's
 * multiply-adds; the barrier after them lets the next step overwrite both
 * tiles. */
#define CONVG_K_STEP(K_SLICES)                                                  \
  convg_load_weights(w_l, weights, lid, g0, groups, K_SLICES, k0);            \
  barrier(CLK_LOCAL_MEM_FENCE);                                                \
  CONVG_TILE_FMA()                                                             \
  barrier(CLK_LOCAL_MEM_FENCE);

/* 1x1, stride 1, no padding: a GEMM per batch of the pixel plane (P x
 * C_in) by the weights (C_in x C_out). A work-group computes LX * TP pixels
 * x LY * BS output slices, stepping over the input slices KT at a time:
 * each input float4 it loads serves LY * BS output slices, each weight
 * float4 LX * TP pixels. */
/* TILE(si, p): input slice si at output pixel p (< plane) of batch b. */
#define CONVG_1X1_GEMM(TILE)                                                                                      \
  CONVG_PROLOGUE                                                                                                  \
  for (int k0 = 0; k0 < src_slices; k0 += CONVG_KT) {                                                             \
    /* Input tile in_l[KT][TILE_P]; its element e is (slice e / TILE_P,                                           \
     * pixel e % TILE_P), so consecutive work-items read consecutive pixels. */                                   \
    _Pragma("unroll") for (int r = 0; r < CONVG_IN_LOADS; ++r) {                                                  \
      int e = lid + r * CONVG_WG;                                                                                 \
      if (CONVG_IN_N % CONVG_WG == 0 || e < CONVG_IN_N) {                                                         \
        int k = e / CONVG_TILE_P, p = p0 + e - k * CONVG_TILE_P;                                                  \
        int si = k0 + k;                                                                                          \
        in_l[e] = si < src_slices && p < plane ? TILE(si, p) : (float4)(0.0f);                                   \
      }                                                                                                           \
    }                                                                                                             \
    CONVG_K_STEP(src_slices)                                                                                      \
  }                                                                                                               \
  CONVG_EPILOGUE

#define CONVG_PLAIN(SI, P) LOAD4(src, (b * src_slices + (SI)) * plane + (P))
#if GD_SELECTED(conv2d_1x1_gpu, 0)
CONVG_KERNEL(conv2d_1x1_gpu, CONVG_1X1) {
  CONVG_1X1_GEMM(CONVG_PLAIN)
}
#endif

/* conv2d_1x1_gpu with its source multiplied by a per-channel scale of
 * each batch (scale: [B, 1, 1, C_in] PHWC4, i.e. float4 b * S_in + si)
 * where it loads it: the MUL that ends a squeeze-and-excitation block,
 * fused (fuse_conv_source.c). */
#define CONVG_SCALED(SI, P) (CONVG_PLAIN(SI, P) * LOAD4(scale, b * src_slices + (SI)))
#if GD_SELECTED(conv2d_1x1_scaled_gpu, 5)
CONVG_KERNEL(conv2d_1x1_scaled_gpu, CONVG_SCALED) {
  CONVG_1X1_GEMM(CONVG_SCALED)
}
#endif

/* conv2d_1x1_scaled_gpu whose source also has a same-shaped `addend`
 * added after the scale (addend: B x H x W x C_in PHWC4, as src): a MUL by
 * a channel scale then an ADD, as a decoder's attention gate ends
 * (selfie_segmentation: skip * sigmoid(fc(mean)) + upsampled), fused
 * (fuse_conv_source.c). */
#define CONVG_SCALED_ADD(SI, P) (CONVG_SCALED(SI, P) + LOAD4(addend, (b * src_slices + (SI)) * plane + (P)))
#if GD_SELECTED(conv2d_1x1_scaled_add_gpu, 7)
CONVG_KERNEL(conv2d_1x1_scaled_add_gpu, CONVG_SCALED_ADD) {
  CONVG_1X1_GEMM(CONVG_SCALED_ADD)
}
#endif

/* conv2d_1x1_gpu whose source is the W/2 x H/2 input of a 2x bilinear
 * upsampling (src_shape is that input's), interpolated where the tile is
 * loaded (conv_up2; src_code: EPI_ADD_UP2 | EPI_UP2_HALF_PIXEL): the
 * RESIZE_BILINEAR before the 1x1, fused (fuse_conv_source.c). */
#define CONVG_UPSAMPLED(SI, P) \
  conv_up2(src, src_code, dst_shape, b * src_slices + (SI), (P) % dst_shape.x, (P) / dst_shape.x)
#if GD_SELECTED(conv2d_1x1_up2_gpu, 6)
CONVG_KERNEL(conv2d_1x1_up2_gpu, CONVG_UP2) {
  CONVG_1X1_GEMM(CONVG_UPSAMPLED)
}
#endif

/* Any filter, stride, dilation and padding, as an implicit GEMM whose
 * reduction runs over K = KH * KW * S_in slices in the weights' order
 * (tap-major, then input slice), so the weight tiles are those of the 1x1
 * kernel and a K step may span taps (a 3-channel source, S_in = 1, fills
 * a tile with 4 taps instead of wasting 3/4 of it). Each input element a
 * work-item loads serves the same output pixel at every K step; its tap
 * (ky, kx, si) advances by KT per step without divisions. Taps outside the
 * input read zero. TAP(ci, sy, sx) loads input slice ci of batch b at a
 * pixel inside the input: one body for both source layouts. */
#define CONVG_IMPLICIT_GEMM(TAP)                                                                            \
  CONVG_PROLOGUE                                                                                            \
  int k_slices = geom.x * geom.y * src_slices;                                                              \
  /* Per load r: the source origin of its pixel (sy0 = INT_MIN/2 when the                                   \
   * pixel is past the plane) and the tap of its reduction row. */                                          \
  int sx0[CONVG_IN_LOADS], sy0[CONVG_IN_LOADS], ci[CONVG_IN_LOADS], cx[CONVG_IN_LOADS], cy[CONVG_IN_LOADS]; \
  _Pragma("unroll") for (int r = 0; r < CONVG_IN_LOADS; ++r) {                                              \
    int e = min(lid + r * CONVG_WG, CONVG_IN_N - 1);                                                        \
    int k = e / CONVG_TILE_P, p = p0 + e - k * CONVG_TILE_P;                                                \
    int oy = p / dst_shape.x;                                                                               \
    sx0[r] = (p - oy * dst_shape.x) * geom.z - pad_dil.x;                                                   \
    sy0[r] = p < plane ? oy * geom.w - pad_dil.y : -(1 << 30);                                              \
    int t = k / src_slices;                                                                                 \
    ci[r] = k - t * src_slices;                                                                             \
    cy[r] = t / geom.x;                                                                                     \
    cx[r] = t - cy[r] * geom.x;                                                                             \
  }                                                                                                         \
  for (int k0 = 0; k0 < k_slices; k0 += CONVG_KT) {                                                         \
    _Pragma("unroll") for (int r = 0; r < CONVG_IN_LOADS; ++r) {                                            \
      int e = lid + r * CONVG_WG;                                                                           \
      if (CONVG_IN_N % CONVG_WG == 0 || e < CONVG_IN_N) {                                                   \
        int sy = sy0[r] + cy[r] * pad_dil.w, sx = sx0[r] + cx[r] * pad_dil.z;                               \
        /* cy past KH: the row is past k_slices. */                                                         \
        bool ok = cy[r] < geom.y && sy >= 0 && sy < src_shape.y && sx >= 0 && sx < src_shape.x;            \
        in_l[e] = ok ? TAP(ci[r], sy, sx) : (float4)(0.0f);                                                 \
        /* Advance the row by KT: slice, then tap column, then tap row. */                                  \
        ci[r] += CONVG_KT;                                                                                  \
        while (ci[r] >= src_slices) {                                                                       \
          ci[r] -= src_slices;                                                                              \
          if (++cx[r] == geom.x) {                                                                          \
            cx[r] = 0;                                                                                      \
            ++cy[r];                                                                                        \
          }                                                                                                 \
        }                                                                                                   \
      }                                                                                                     \
    }                                                                                                       \
    CONVG_K_STEP(k_slices)                                                                                  \
  }                                                                                                         \
  CONVG_EPILOGUE

#define CONVG_TAP_PHWC4(CI, SY, SX) LOAD4(src, ((b * src_slices + (CI)) * src_shape.y + (SY)) * src_shape.x + (SX))

#if GD_SELECTED(conv2d_gpu, 1)
CONVG_KERNEL(conv2d_gpu, CONVG_GEOM) {
  CONVG_IMPLICIT_GEMM(CONVG_TAP_PHWC4)
}
#endif

/* Input slice ci (channels 4ci .. 4ci+3, those past C read as zero) of
 * batch b at pixel (sx, sy) of a row-major BHWC float32 tensor. */
GD_INLINE float4 convg_bhwc_tap(__global const float* src, int4 shape, int b, int ci, int sy, int sx) {
  int c = 4 * ci, n = shape.z - c;
  __global const float* q = src + ((b * shape.y + sy) * shape.x + sx) * shape.z + c;
  if (n >= 4) return vload4(0, q);
  return (float4)(q[0], n > 1 ? q[1] : 0.0f, n > 2 ? q[2] : 0.0f, 0.0f);
}
#define CONVG_TAP_BHWC(CI, SY, SX) convg_bhwc_tap(src, src_shape, b, (CI), (SY), (SX))

/* conv2d_gpu reading a partition input straight from the runtime's BHWC
 * float32 bytes (its staging buffer, any storage), so the input needs no
 * conversion launch (fuse.c keep_inputs_bhwc). */
#if GD_SELECTED(conv2d_bhwc_gpu, 4)
CONVG_KERNEL(conv2d_bhwc_gpu, CONVG_BHWC) {
  CONVG_IMPLICIT_GEMM(CONVG_TAP_BHWC)
}
#endif

/* Depthwise then 1x1 in one launch: conv2d_1x1_gpu whose input tile holds
 * the depthwise's outputs, computed where the 1x1 would load them. The
 * intermediate tensor is never written; each work-group recomputes the
 * depthwise values of its pixel tile for its LY * BS output slices, i.e.
 * ceil(S_out / (LY * BS)) times over the launch: K * K multiply-adds per
 * input float4 against LY * BS * 16 of the 1x1's, a small price on a GPU
 * where a launch costs more than either. Each load's pixel is the same at
 * every K step, so its source origin is computed once. */
#if GD_SELECTED(dw_conv2d_1x1_gpu, 3)
CONVG_KERNEL(dw_conv2d_1x1_gpu, CONVG_DW_1X1) {
  CONVG_PROLOGUE
  int sx0[CONVG_IN_LOADS], sy0[CONVG_IN_LOADS], kk[CONVG_IN_LOADS];
  bool live[CONVG_IN_LOADS];
#pragma unroll
  for (int r = 0; r < CONVG_IN_LOADS; ++r) {
    int e = min(lid + r * CONVG_WG, CONVG_IN_N - 1);
    int k = e / CONVG_TILE_P, p = p0 + e - k * CONVG_TILE_P;
    int oy = p / dst_shape.x;
    kk[r] = k;
    live[r] = p < plane;
    sx0[r] = (p - oy * dst_shape.x) * geom.z - pad_dil.x;
    sy0[r] = oy * geom.w - pad_dil.y;
  }
  for (int k0 = 0; k0 < src_slices; k0 += CONVG_KT) {
#pragma unroll
    for (int r = 0; r < CONVG_IN_LOADS; ++r) {
      int e = lid + r * CONVG_WG;
      if (CONVG_IN_N % CONVG_WG == 0 || e < CONVG_IN_N) {
        int si = k0 + kk[r];
        in_l[e] = live[r] && si < src_slices ? dw_value(src, src_shape, dw_weights, dw_bias, geom, pad_dil,
                                                              dw_act, b, si, sx0[r], sy0[r])
                                             : (float4)(0.0f);
      }
    }
    CONVG_K_STEP(src_slices)
  }
  CONVG_EPILOGUE
}
#endif
