/* Codes and tile sizes shared by the C library and the OpenCL kernels: the
 * library includes this header, and every program is built with it
 * prepended (before common.cl), so both sides use these names instead of
 * bare numbers. Plain C and OpenCL C: enums and #defines only. */
#ifndef TFLITE_GPU_KERNEL_ABI_H
#define TFLITE_GPU_KERNEL_ABI_H

/* Fused activations: TfLiteFusedActivation's values (5, sign bit, is
 * refused at partition time), and ACT_HARD_SWISH, the delegate's own: a
 * HARD_SWISH node fused into the convolution before it (fuse.c), never a
 * value a model holds. */
enum { ACT_NONE = 0, ACT_RELU = 1, ACT_RELU_N1_TO_1 = 2, ACT_RELU6 = 3, ACT_TANH = 4, ACT_SIGMOID = 6,
       ACT_HARD_SWISH = 32 };

/* Binary ops (elementwise.cl): comparisons and LOGICAL_AND give 1.0 / 0.0;
 * BIN_SELECT takes 3 inputs (cond, x, y). */
enum {
  BIN_ADD = 0, BIN_MUL, BIN_SUB, BIN_DIV, BIN_MAX, BIN_MIN, BIN_PRELU, BIN_SQDIFF, BIN_POW, BIN_FLOOR_DIV,
  BIN_FLOOR_MOD, BIN_EQUAL, BIN_NOT_EQUAL, BIN_LESS, BIN_LESS_EQUAL, BIN_GREATER, BIN_GREATER_EQUAL,
  BIN_LOGICAL_AND, BIN_SELECT
};
/* Unary ops (elementwise.cl). UN_TRUNC, UN_NOT_ZERO and UN_IDENTITY are
 * CAST to int32, to bool, and between equal float values. */
enum {
  UN_RELU = 0, UN_RELU6, UN_RELU_N1_TO_1, UN_TANH, UN_LOGISTIC, UN_HARD_SWISH, UN_LEAKY_RELU, UN_ABS, UN_EXP,
  UN_NEG, UN_SQRT, UN_RSQRT, UN_SQUARE, UN_LOG, UN_SIN, UN_COS, UN_FLOOR, UN_ELU, UN_SIGN, UN_GELU,
  UN_GELU_TANH, UN_TRUNC, UN_NOT_ZERO, UN_IDENTITY
};
/* The grid barrier's state (grid_sync.cl, vm.c): an int array, zeroed
 * before every persistent launch. */
enum { GS_COUNT = 0, GS_ABORT = 1, GS_WORDS = 2 };

/* The VM program's opcode masks (tools/gen_vm.py, vm.c): VM_OPS_0.. words of
 * 32 opcodes each, the program's build defines. Opcodes from VM_FLOAT_COPY
 * on (words 4..7) are the bodies' copies on float storage, which an FP16
 * program runs for the nodes mixed_storage.c keeps on float; the bodies
 * themselves may take opcodes up to VM_FLOAT_COPY (words 0..3). VM_NO_BARRIER:
 * the bit of an op list's phase offset that says no grid barrier comes
 * before it. VM_GROUPED: the bit of a phase's opcode word that says its
 * body is a group's (GROUP_KERNEL, common.cl; vm/vm_run.cl). */
enum { VM_OPS_WORDS = 8, VM_OPS_BITS = 32, VM_FLOAT_COPY = 128, VM_NO_BARRIER = 1 << 30, VM_GROUPED = 1 << 16 };
/* The VM kernel's buffer arguments ("spaces", tools/gen_vm.py, vm.c): 0 the
 * activation arena, the staging buffers of the partition's inputs and
 * outputs included (regions of it in the VM modes, executor.c), 1 the
 * arena of every other buffer. Two, whatever the partition's inputs and
 * outputs: each more would lengthen the select that finds a space at every
 * buffer argument of every body (16 staging arguments made the VM
 * programs 20-26% more PTX). */
enum { VM_NUM_SPACES = 2 };

/* Remaps (layout.cl) and what they read outside [0, size). */
enum { REMAP_RESHAPE = 0, REMAP_SLICE = 1, REMAP_PAD = 2 };
enum { BORDER_CONST = 0, BORDER_REFLECT = 1, BORDER_SYMMETRIC = 2, BORDER_WRAP = 3 };
/* Element types of the typed boundary conversions (layout.cl). */
enum { TYPED_INT32 = 0, TYPED_BOOL = 1, TYPED_INT64 = 2 };
/* Reductions (reduce.cl). */
enum { REDUCE_MEAN = 0, REDUCE_SUM, REDUCE_MAX, REDUCE_MIN, REDUCE_PROD };

/* Elementwise steps fused into a producer's output (fuse.c, common.cl's
 * epilogue): PReLU with a per-channel alpha, ADD of a residual then an
 * activation, or a quantize-dequantize onto an int8/uint8 grid.
 * A convolution's (common.cl's conv_residual): an ADD of a residual read through
 *   EPI_ADD_MAX2: a 2x2 stride-2 MAX_POOL_2D of a source of 2W x 2H
 *     pixels; the _ODD bits say the source is one pixel short in W / H
 *     (SAME padding of an odd size), so its last window holds fewer taps.
 *     Codes 4-7.
 *   EPI_ADD_UP2: a RESIZE_BILINEAR (no align_corners) of a W/2 x H/2
 *     source, with half-pixel centers where EPI_UP2_HALF_PIXEL is set.
 *     Codes 8-9.
 * EPI_UNARY: any float unary op (its UN_* code in the step's act; common.cl's
 * unary_math), leaky relu's alpha in the alpha operand; in programs built
 * with EPI_UN_DEFINE only.
 * EPI_AFFINE: v * a + b per channel, then the step's activation: a MUL, ADD
 * or SUB by a constant (or a MUL then an ADD), (a, b) interleaved per slice
 * in the alpha operand.
 * EPI_CHAIN: a chain of any of these steps and EPI_BINARY ones, any
 * length, for an epilogue the two-step form above cannot hold (common.cl's
 * epilogue_chain; with EPI_UN_DEFINE only): epi = (EPI_CHAIN, steps, the
 * runtime operand's read code, 0), step k's (code, act, offset, aux) in
 * the alpha operand's float4 k (as ints), its constants at float4 offset.
 * EPI_BINARY: a BIN_* op (aux & EPI_BIN_OP) of v and a constant per channel
 * (a float4 per slice) or, with EPI_BIN_RUNTIME, the runtime operand r;
 * EPI_BIN_SWAP: v is the op's second operand; then act.
 * EPI_RES_CHANNEL: a read code: the runtime operand holds one value per
 * channel (batch 1), read at the slice. */
enum {
  EPI_NONE = 0, EPI_PRELU = 1, EPI_ADD = 2, EPI_QDQ = 3, EPI_ADD_MAX2 = 4, EPI_ADD_UP2 = 8, EPI_UNARY = 16,
  EPI_AFFINE = 17, EPI_CHAIN = 18, EPI_BINARY = 19, EPI_RES_CHANNEL = 20
};
enum { EPI_MAX2_ODD_W = 1, EPI_MAX2_ODD_H = 2, EPI_UP2_HALF_PIXEL = 1 };
enum { EPI_BIN_OP = 0xff, EPI_BIN_SWAP = 0x100, EPI_BIN_RUNTIME = 0x200 };
#define EPI_UN_DEFINE "-DEPI_UN=1"

/* CPU kernel set tiles: output pixels per work-item of the register-tiled
 * convolutions (conv.cl), of the fixed-filter depthwise kernels (depthwise.cl), of the
 * float boundary conversions (layout.cl), of the row-wise binary ops
 * (elementwise.cl) and of bilinear resize (resize.cl). The GPU set builds
 * the last three with 1 pixel per work-item (-DLAYOUT_PIXELS=1,
 * -DROW_PIXELS=1, -DRESIZE_PIXELS=1; select_elementwise.c). */
#define GEMM_TILE 6
#define DW_TILE 16
#define LAYOUT_TILE 8
#define ROW_TILE 8
#define RESIZE_TILE 8

/* GPU set tiles and default work-groups of conv_gpu.cl and
 * depthwise_gpu.cl (select_conv.c): a conv work-item makes CONVG_TP pixels
 * x CONVG_BS slices, a work-group stages CONVG_KT input slices at a time
 * and is CONVG_LX x CONVG_LY (the selector passes -D for other groups); a
 * depthwise work-item makes DWG_TX pixels in DWG_LX x DWG_LY groups.
 * #ifndef: the single-kernel tests (tests/test_cl_conv_gpu.py) build
 * other tiles. */
#ifndef CONVG_TP
#define CONVG_TP 4
#endif
#ifndef CONVG_BS
#define CONVG_BS 2
#endif
#ifndef CONVG_KT
#define CONVG_KT 4
#endif
#ifndef CONVG_LX
#define CONVG_LX 16
#endif
#ifndef CONVG_LY
#define CONVG_LY 4
#endif
#ifndef DWG_TX
#define DWG_TX 2
#endif
#ifndef DWG_LX
#define DWG_LX 8
#endif
#ifndef DWG_LY
#define DWG_LY 8
#endif

/* pw_depthwise_gpu (a 1x1 computed inside the depthwise that alone reads
 * it; fuse_pw_dw.h): PWDW_WG work-items per group (a power of two; the
 * selector passes -D for a device that runs fewer), which hold the 1x1's
 * values of one slice over a band of source rows in PWDW_LOCAL float4s of
 * __local memory (16 KiB: two groups fit a 48 KiB unit). */
#ifndef PWDW_WG
#define PWDW_WG 64
#endif
#define PWDW_LOCAL 1024

#endif
