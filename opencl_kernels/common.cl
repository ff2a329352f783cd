/* Prepended to every program, after kernel_abi.h (the codes and tiles
 * shared with the C library). Activations live in PHWC4 layout: channels
 * grouped in slices of 4, memory order [B][S][H][W][4] with S = ceil(C/4).
 * One float4 load feeds four multiply-adds on GPUs (vector registers) and
 * on CPU OpenCL (SIMD lanes), and the padded lanes of the last slice are
 * always written as zero, so kernels that sum over input channels need no
 * tail checks and 0 * garbage never makes NaN.
 *
 * Storage type: float, or half with -DFP16_STORAGE=1 (vload_half works
 * without cl_khr_fp16, which PoCL lacks). Math is always float. A node that
 * mixed_storage.c keeps on float storage inside an FP16 partition is built
 * with -DFP32_STORAGE=1 as well, which wins. */

#if defined(FP16_STORAGE) && defined(FP32_STORAGE)
#undef FP16_STORAGE
#endif
/* HALF_MATH (the GPU set on a device with cl_khr_fp16, FP16 storage):
 * kernels may compute in half where that rounds exactly as float math
 * followed by a half store (one correctly rounded op per value). */
#if defined(HALF_MATH) && !defined(FP16_STORAGE)
#undef HALF_MATH
#endif
#ifdef HALF_MATH
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#endif
#ifdef FP16_STORAGE
typedef half storage_t;
#define GD_VLOAD4(p, i) vload_half4((i), (p))
#define GD_VSTORE4(v, p, i) vstore_half4((v), (i), (p))
#define GD_ALOAD4(p, i) vloada_half4((i), (p))
#define GD_ASTORE4(v, p, i) vstorea_half4((v), (i), (p))
#define GD_ALIGN4_MASK 7
#define LOAD1(p, i) vload_half((i), (p))
#define STORE1(v, p, i) vstore_half((v), (i), (p))
#else
typedef float storage_t;
#define GD_VLOAD4(p, i) vload4((i), (p))
#define GD_VSTORE4(v, p, i) vstore4((v), (i), (p))
#define GD_ALOAD4(p, i) gd_aload4((i), (p))
#define GD_ASTORE4(v, p, i) gd_astore4((v), (i), (p))
#define GD_ALIGN4_MASK 15
#define LOAD1(p, i) ((p)[i])
#define STORE1(v, p, i) ((p)[i] = (v))
#endif
/* LOAD4 / STORE4: float4 i of a PHWC4 tensor, which starts at a multiple
 * of 4 elements of an aligned buffer (memory_plan.c, vm.c); vload4 may only
 * assume a float's alignment, and clang's NVPTX back end split it in four
 * scalar loads. On NVIDIA (-DGD_NVIDIA=1) one aligned access; -DGD_VLOAD=1
 * (policy vload4=1, an A/B) keeps vload4. -DGD_CHECK_ALIGN=1 (any
 * device, tests/test_aligned_access.py): aligned accesses, and a misaligned
 * one prints "tflite-gpu: misaligned LOAD4 at line N" and is skipped (a
 * load reads 1e30). Inline: PoCL 3.1 crashed on a printf out of line. */
#if defined(GD_CHECK_ALIGN)
static inline float4 gd_misaligned_load(int line) {
  printf("tflite-gpu: misaligned LOAD4 at line %d\n", line);
  return (float4)(1.0e30f);
}
static inline void gd_misaligned_store(int line) { printf("tflite-gpu: misaligned STORE4 at line %d\n", line); }
#define GD_MISALIGNED(p) (((size_t)(p)) & GD_ALIGN4_MASK)
#define LOAD4(p, i) (GD_MISALIGNED((p) + 4 * (i)) ? gd_misaligned_load(__LINE__) : GD_ALOAD4(p, i))
#define STORE4(v, p, i) (GD_MISALIGNED((p) + 4 * (i)) ? gd_misaligned_store(__LINE__) : (void)GD_ASTORE4(v, p, i))
#elif defined(GD_NVIDIA) && !defined(GD_VLOAD)
#define LOAD4(p, i) GD_ALOAD4(p, i)
#define STORE4(v, p, i) GD_ASTORE4(v, p, i)
#else
#define LOAD4(p, i) GD_VLOAD4(p, i)
#define STORE4(v, p, i) GD_VSTORE4(v, p, i)
#endif

/* Helpers are GD_INLINE: static inline, so every program holds their
 * definitions whatever its compiler inlines (a C99 `inline` alone defines
 * nothing, and a compiler that does not inline, at -O0 or by choice, then
 * cannot link the kernel). OpenCL C 1.1 has no `static`: plain
 * definitions there (one translation unit per program). */
#if defined(__OPENCL_C_VERSION__) && __OPENCL_C_VERSION__ >= 120
#define GD_STATIC static
#define GD_INLINE static inline
#else
#define GD_STATIC
#define GD_INLINE
#endif

#ifndef FP16_STORAGE
/* LOAD4's aligned access as functions: a pointer of another type is an
 * error, as with vload4, not a reinterpretation. */
GD_INLINE float4 gd_aload4(size_t i, __global const float* p) { return ((__global const float4*)p)[i]; }
GD_INLINE void gd_astore4(float4 v, size_t i, __global float* p) { ((__global float4*)p)[i] = v; }
#endif

/* Shapes travel as int4 (W, H, C, B). */
#define SLICES(shape) (((shape).z + 3) >> 2)

/* float4 index of (b, s, y, x) in a PHWC4 tensor. */
GD_INLINE int idx4(int4 shape, int b, int s, int y, int x) {
  return ((b * SLICES(shape) + s) * shape.y + y) * shape.x + x;
}

/* Scalar index of channel c at (b, y, x). */
GD_INLINE int idx1(int4 shape, int b, int y, int x, int c) { return idx4(shape, b, c >> 2, y, x) * 4 + (c & 3); }

/* The float4 index of pixel gid's first slice (gid runs over (b, y, x)
 * row-major) in a PHWC4 tensor; its other slices follow H * W apart.
 * For the kernels that walk one pixel's channel row. */
GD_INLINE int pixel_base(int gid, int4 shape) {
  int t = gid / shape.x;
  return idx4(shape, t / shape.y, 0, t % shape.y, gid % shape.x);
}

/* Splits a flat work-item id into (x, y, s, b) over a PHWC4 output. */
GD_INLINE int4 split_gid(int gid, int4 shape) {
  int t = gid / shape.x, u = t / shape.y;
  return (int4)(gid % shape.x, t % shape.y, u % SLICES(shape), u / SLICES(shape));
}

/* Index of the fused residual's float4 for output float4 o (batch b, slice
 * s, of so slices over a plane of `plane` pixels). A residual whose channel
 * PAD was folded into the ADD (fuse.c) has res_slices < so: it is read at
 * its own index, and its missing slices add zero (-1). */
GD_INLINE int residual_index(int o, int b, int s, int so, int res_slices, int plane) {
  return s < res_slices ? o - b * (so - res_slices) * plane : -1;
}

/* Zero the lanes of slice s beyond the channel count C. */
GD_INLINE float4 mask_tail(float4 v, int s, int C) {
  int base = s * 4;
  if (base + 4 <= C) return v;
  return (float4)(base + 0 < C ? v.x : 0.0f, base + 1 < C ? v.y : 0.0f, base + 2 < C ? v.z : 0.0f,
                  base + 3 < C ? v.w : 0.0f);
}

/* Compiler-specific attributes and pragmas only where they were measured
 * to help: PoCL's clang (-DGD_POCL=1, cl_device.c) and NVIDIA's (-DGD_NVIDIA=1);
 * others get plain OpenCL C 1.2 (NVIDIA warned about clang's pragma). On PoCL:
 * - ALWAYS_INLINE: PoCL's clang left the activation helpers as calls, and a
 *   float16 argument then travels through memory (forcing the inline made
 *   the conv stores 1.3-1.5x faster);
 * - kernel bodies are outlined (GD_BODY_ATTR, OUTLINED_KERNEL below);
 * - the -Wpsabi note clang prints for float16 arguments on AVX2 targets is
 *   irrelevant to code that is all inlined.
 * GD_NOINLINE, on PoCL and NVIDIA: tanh, sigmoid and the other rare paths
 * (activate*_rare, unary_math, epilogue_chain) stay in one out-of-line
 * copy. Inlined into every store they made LLVM's compile of a conv kernel
 * 2-4x slower on PoCL, and ptxas 4.8-8.9x slower on NVIDIA's path (the PTX
 * 2.3-6x longer: tools/nvptx_build_time.py, docs/benchmarks/nvptx-build-time.md;
 * -DGD_INLINE_RARE=1 inlines them on NVIDIA, an A/B of the build time).
 * Static, so that one nothing calls is never compiled (a VM program with
 * every body took 2.5-3.0 s to build on PoCL, 1.2 s with its own). */
#ifdef GD_POCL
#define ALWAYS_INLINE __attribute__((always_inline)) GD_INLINE
#define GD_STORE_FN GD_INLINE /* convg_store, below */
#pragma clang diagnostic ignored "-Wpsabi"
#else
#define ALWAYS_INLINE GD_INLINE
#define GD_STORE_FN GD_NOINLINE
#endif
#if defined(GD_POCL) || (defined(GD_NVIDIA) && !defined(GD_INLINE_RARE))
#define GD_NOINLINE __attribute__((noinline)) GD_STATIC
#else
#define GD_NOINLINE GD_INLINE
#endif

/* Fused activations (ACT_* in kernel_abi.h). One body for every vector
 * width: activate1 (float), activate (float4), activate8 and activate16
 * (the register-tiled conv kernels); the common cases inline, the rare
 * ones in NAME_rare. */
#define DEFINE_ACTIVATE(NAME, T)                                   \
  GD_NOINLINE T NAME##_rare(T v, int act) {                        \
    switch (act) {                                                 \
      case ACT_RELU_N1_TO_1: return clamp(v, -1.0f, 1.0f);         \
      case ACT_TANH: return tanh(v);                               \
      case ACT_SIGMOID: return 1.0f / (1.0f + exp(-v));            \
      case ACT_HARD_SWISH:                                         \
        return v * clamp(v + 3.0f, 0.0f, 6.0f) * (1.0f / 6.0f);    \
      default: return v;                                           \
    }                                                              \
  }                                                                \
  ALWAYS_INLINE T NAME(T v, int act) {                             \
    if (act == ACT_NONE) return v;                                 \
    if (act == ACT_RELU) return fmax(v, 0.0f);                     \
    if (act == ACT_RELU6) return clamp(v, 0.0f, 6.0f);             \
    return NAME##_rare(v, act);                                    \
  }
DEFINE_ACTIVATE(activate1, float)
DEFINE_ACTIVATE(activate, float4)
DEFINE_ACTIVATE(activate8, float8)
DEFINE_ACTIVATE(activate16, float16)

/* OUTLINED_KERNEL(name, PARAMS, ARGS) { body }: a kernel whose body is a
 * function of its own, taking the work-item's gid. PARAMS and ARGS name
 * macros holding the parameter and argument lists (OpenCL C has no
 * variadic macros). PoCL inlines a kernel into the two launchers it emits
 * beside it, so on PoCL the body stays one noinline function, generated
 * once (conv2d_tiled_c3: 0.71 s -> 0.30 s of the first launch; the call
 * per work-item did not show in any kernel's latency). Elsewhere the body
 * is static inline: the same code as a plain kernel. */
#ifdef GD_POCL
#define GD_BODY_ATTR GD_NOINLINE
#else
#define GD_BODY_ATTR GD_INLINE
#endif
/* In the VM program (GD_VM_PROGRAM, tools/gen_vm.py) the bodies alone:
 * it launches vm_run only, and a driver that compiles every kernel of a
 * program when it is built (NVIDIA) would compile each body twice. */
#ifdef GD_VM_PROGRAM
#define OUTLINED_KERNEL(NAME, PARAMS, ARGS) GD_BODY_ATTR void NAME##_body(int gid, PARAMS)
#else
#define OUTLINED_KERNEL(NAME, PARAMS, ARGS)                                          \
  GD_BODY_ATTR void NAME##_body(int gid, PARAMS);                                    \
  __kernel void NAME(PARAMS) { NAME##_body(get_global_id(0), ARGS); }                \
  GD_BODY_ATTR void NAME##_body(int gid, PARAMS)
#endif

/* GROUP_KERNEL(name, LX, LY, LMEM, PARAMS, ARGS) { body }: a kernel of
 * LX x LY work-groups (reqd_work_group_size) that share LMEM float4s of
 * __local memory, its body a function of (grp: the group's id, ngrp: the
 * groups along each dimension, loc: the work-item's local id, lmem), which
 * must not ask for ids or sizes itself. The VM (gen_vm.py, vm/vm_run.cl)
 * calls it for virtual groups, each physical group running them in turn,
 * with vm_run's __local memory (OpenCL C declares it in kernels only).
 * Every work-item of a group calls the body (it may hold barriers).
 * Inline everywhere: PoCL inlines what holds a barrier anyway. */
#ifdef GD_VM_PROGRAM
#define GROUP_KERNEL(NAME, LX, LY, LMEM, PARAMS, ARGS) \
  GD_INLINE void NAME##_gbody(int3 grp, int3 ngrp, int2 loc, __local float4* lmem, PARAMS)
#else
#define GROUP_KERNEL(NAME, LX, LY, LMEM, PARAMS, ARGS)                                                  \
  GD_INLINE void NAME##_gbody(int3 grp, int3 ngrp, int2 loc, __local float4* lmem, PARAMS);         \
  __kernel __attribute__((reqd_work_group_size(LX, LY, 1))) void NAME(PARAMS) {                       \
    __local float4 lmem[LMEM];                                                                        \
    NAME##_gbody((int3)((int)get_group_id(0), (int)get_group_id(1), (int)get_group_id(2)),            \
                 (int3)((int)get_num_groups(0), (int)get_num_groups(1), (int)get_num_groups(2)),      \
                 (int2)((int)get_local_id(0), (int)get_local_id(1)), lmem, ARGS);                     \
  }                                                                                                   \
  GD_INLINE void NAME##_gbody(int3 grp, int3 ngrp, int2 loc, __local float4* lmem, PARAMS)
#endif

/* Kernel selection: a file's kernels stand in `#if GD_SELECTED(name, bit)`
 * blocks, each program built with -DGD_KSEL=<mask> of the kernels its
 * partition launches (dispatch.c; PoCL, conv.cl: 0.46-0.50 s with all 14
 * kernels, 0.29-0.35 s with the 6-9 of two models). tools/embed_kernels.py
 * reads the (name, bit) pairs; tests/test_kernel_select.py checks each bit
 * builds exactly its kernel. No GD_KSEL: every kernel. */
#ifndef GD_KSEL
#define GD_KSEL 0x7fffffff
#endif
#define GD_SELECTED(NAME, BIT) ((GD_KSEL >> (BIT)) & 1)

/* GD_UN_OPS, GD_BIN_OPS: the unary and binary ops (bits UN_*, BIN_*) a
 * program computes (the VM program's: its phases', encode.h ex_math): the
 * math of the others is not compiled; one outside them gives NaN. Unset: all. */
#ifndef GD_UN_OPS
#define GD_UN_OPS 0xffffffffu
#endif
#ifndef GD_BIN_OPS
#define GD_BIN_OPS 0xffffffffu
#endif
#define UN_CASE(OP, E) case OP: return ((GD_UN_OPS >> OP) & 1) ? (E) : (float4)(NAN);
#define BIN_CASE(OP, E) case OP: return ((GD_BIN_OPS >> OP) & 1) ? (E) : (float4)(NAN);

/* The float unary ops (UN_* in kernel_abi.h), one table for elementwise.cl's
 * unary_op and a fused EPI_UNARY epilogue step: leaky relu takes alpha,
 * UN_GELU uses erf and UN_GELU_TANH the tanh approximation; the casts
 * (UN_TRUNC, UN_NOT_ZERO) are unary_op's alone, anything else is the
 * identity. Out of line on PoCL and NVIDIA (GD_NOINLINE): compiled once
 * per program, not at every epilogue. */
GD_NOINLINE float4 unary_math(float4 v, int op, float alpha) {
  switch (op) {
    UN_CASE(UN_RELU, fmax(v, 0.0f))
    UN_CASE(UN_RELU6, clamp(v, 0.0f, 6.0f))
    UN_CASE(UN_RELU_N1_TO_1, clamp(v, -1.0f, 1.0f))
    UN_CASE(UN_TANH, tanh(v))
    UN_CASE(UN_LOGISTIC, 1.0f / (1.0f + exp(-v)))
    UN_CASE(UN_HARD_SWISH, v * clamp(v + 3.0f, 0.0f, 6.0f) * (1.0f / 6.0f))
    UN_CASE(UN_LEAKY_RELU, select(v * alpha, v, v >= 0.0f))
    UN_CASE(UN_ABS, fabs(v))
    UN_CASE(UN_EXP, exp(v))
    UN_CASE(UN_NEG, -v)
    UN_CASE(UN_SQRT, sqrt(v))
    UN_CASE(UN_RSQRT, rsqrt(v))
    UN_CASE(UN_SQUARE, v * v)
    UN_CASE(UN_LOG, log(v))
    UN_CASE(UN_SIN, sin(v))
    UN_CASE(UN_COS, cos(v))
    UN_CASE(UN_FLOOR, floor(v))
    UN_CASE(UN_ELU, select(expm1(v), v, v >= 0.0f))
    UN_CASE(UN_SIGN, sign(v))
    UN_CASE(UN_GELU, 0.5f * v * (1.0f + erf(v * 0.70710678118654752f)))
    UN_CASE(UN_GELU_TANH, 0.5f * v * (1.0f + tanh(0.79788456080286536f * (v + 0.044715f * v * v * v))))
    default: return v;
  }
}

#define ZERO4 ((float4)(0.0f))

/* 1.0 where the lane mask is set, else 0.0: comparisons keep bools as floats. */
GD_INLINE float4 as_bool4(int4 mask) { return select(ZERO4, (float4)(1.0f), mask); }

/* FLOOR_DIV: floor of the exact quotient (the CPU divides in double). The
 * float quotient can round across an integer; the remainder a - q * b
 * (one fma, so its sign is exact) says which way to correct. */
GD_INLINE float4 floor_div(float4 a, float4 b) {
  float4 q = floor(a / b);
  float4 r = fma(-q, b, a);
  int4 too_big = (isless(r, ZERO4) & isgreater(b, ZERO4)) |
                 (isgreater(r, ZERO4) & isless(b, ZERO4));
  int4 too_small = isgreaterequal(fabs(r), fabs(b)) & ~too_big;
  return q - as_bool4(too_big) + as_bool4(too_small);
}

/* FLOOR_MOD as TFLite computes it: fmod, moved into the divisor's sign. */
GD_INLINE float4 floor_mod(float4 a, float4 b) {
  float4 m = fmod(a, b);
  return select(m, m + b, isnotequal(m, ZERO4) & (isless(b, ZERO4) ^ isless(m, ZERO4)));
}

/* The binary ops, one table for elementwise.cl's kernels and a fused
 * EPI_BINARY epilogue step. op: BIN_* (kernel_abi.h); PReLU is a >= 0 ? a :
 * a * b, comparisons and logical_and give 1.0 / 0.0. */
GD_INLINE float4 binary(float4 a, float4 b, int op) {
  switch (op) {
    BIN_CASE(BIN_ADD, a + b)
    BIN_CASE(BIN_MUL, a * b)
    BIN_CASE(BIN_SUB, a - b)
    BIN_CASE(BIN_DIV, a / b)
    BIN_CASE(BIN_MAX, fmax(a, b))
    BIN_CASE(BIN_MIN, fmin(a, b))
    BIN_CASE(BIN_PRELU, select(a * b, a, a >= 0.0f))
    BIN_CASE(BIN_SQDIFF, (a - b) * (a - b))
    BIN_CASE(BIN_POW, pow(a, b))
    BIN_CASE(BIN_FLOOR_DIV, floor_div(a, b))
    BIN_CASE(BIN_FLOOR_MOD, floor_mod(a, b))
    BIN_CASE(BIN_EQUAL, as_bool4(isequal(a, b)))
    BIN_CASE(BIN_NOT_EQUAL, as_bool4(isnotequal(a, b)))
    BIN_CASE(BIN_LESS, as_bool4(isless(a, b)))
    BIN_CASE(BIN_LESS_EQUAL, as_bool4(islessequal(a, b)))
    BIN_CASE(BIN_GREATER, as_bool4(isgreater(a, b)))
    BIN_CASE(BIN_GREATER_EQUAL, as_bool4(isgreaterequal(a, b)))
    BIN_CASE(BIN_LOGICAL_AND, as_bool4(isnotequal(a, ZERO4) & isnotequal(b, ZERO4)))
    default: return a;
  }
}

/* An epilogue code that adds the residual: EPI_ADD, or one read through a
 * pool or an upsampling (EPI_ADD_MAX2 / _UP2 and their bits). */
GD_INLINE int epi_adds(int op) { return op == EPI_ADD || (op >= EPI_ADD_MAX2 && op < EPI_UNARY); }

/* One depthwise output float4 (conv_gpu.cl dw_conv2d_1x1_gpu's input tile,
 * conv.cl conv2d_x4_dw's source): slice si of batch b at the output pixel
 * whose first tap is (sx0, sy0), with the depthwise's bias and activation.
 * Weights [S][KH][KW] float4s. Taps outside the input read zero. */
GD_INLINE float4 dw_value(__global const storage_t* src, int4 src_shape, __global const float4* dw_weights,
                          __global const float4* dw_bias, int4 geom, int4 pad_dil, int dw_act, int b, int si, int sx0,
                          int sy0) {
  float4 acc = dw_bias[si];
  __global const float4* w = dw_weights + si * geom.y * geom.x;
  int chan = (b * SLICES(src_shape) + si) * src_shape.y;
  for (int ky = 0; ky < geom.y; ++ky) {
    int sy = sy0 + ky * pad_dil.w;
    if (sy < 0 || sy >= src_shape.y) continue;
    int row = (chan + sy) * src_shape.x;
    for (int kx = 0; kx < geom.x; ++kx) {
      int sx = sx0 + kx * pad_dil.z;
      if (sx >= 0 && sx < src_shape.x) acc = fma(LOAD4(src, row + sx), w[ky * geom.x + kx], acc);
    }
  }
  return activate(acc, dw_act);
}

/* The arguments of the two 4-pixel kernels (conv.cl conv2d_x4, depthwise.cl depthwise_conv2d_x4). */
#define X4_PARAMS                                                                                           \
  __global const storage_t* src, __global storage_t* dst, __global const float4* weights,                   \
   __global const float4* bias, int4 src_shape, int4 dst_shape, int4 geom, int4 pad_dil, int act,            \
   __global const float4* alpha, __global const storage_t* residual, int4 epi, int res_slices, int total
#define X4_ARGS src, dst, weights, bias, src_shape, dst_shape, geom, pad_dil, act, alpha, residual, epi, res_slices, total
/* The 4-pixel kernels' multiply-adds (conv.cl, split_k.cl): four pixels'
 * input float4s i0..i3 times one slice's weights w[0..3] (a float4 of
 * output channels per input lane), into acc0..acc3. */
#define X4_MADS                                                                                               \
  float4 w0 = w[0], w1 = w[1], w2 = w[2], w3 = w[3];                                                          \
  acc0 = fma((float4)(i0.x), w0, fma((float4)(i0.y), w1, fma((float4)(i0.z), w2, fma((float4)(i0.w), w3, acc0)))); \
  acc1 = fma((float4)(i1.x), w0, fma((float4)(i1.y), w1, fma((float4)(i1.z), w2, fma((float4)(i1.w), w3, acc1)))); \
  acc2 = fma((float4)(i2.x), w0, fma((float4)(i2.y), w1, fma((float4)(i2.z), w2, fma((float4)(i2.w), w3, acc2)))); \
  acc3 = fma((float4)(i3.x), w0, fma((float4)(i3.y), w1, fma((float4)(i3.z), w2, fma((float4)(i3.w), w3, acc3))));

/* Fused epilogue steps (delegate_c/passes/fuse_epilogue.c): epi = (op0, act0, op1, act1),
 * op 1 = PReLU with a per-channel alpha (float4 per slice), op 2 = ADD of
 * the residual float4 r, then act (EPI_ADD_MAX2 / _UP2: r read through a
 * max pool / an upsampling), op 3 = a quantize-dequantize (quantize.cl) with alpha[0] =
 * (scale, zero point, qmin, qmax), op 16 = EPI_UNARY: the float unary op
 * act (UN_*, unary_math), leaky relu's alpha in alpha[0].x; only in a
 * program built with -DEPI_UN=1 (ops_conv.c asks for it where a node has
 * such a step): the vector math of every unary op in each conv kernel made
 * PoCL's cold start 1.6-2.4 s slower on models that have none; op 17 =
 * EPI_AFFINE: v * alpha[2s] + alpha[2s + 1] (a constant's MUL / ADD / SUB),
 * then act; op 18 = EPI_CHAIN: epi = (EPI_CHAIN, steps, read code, 0),
 * any steps, EPI_BINARY ones too, from the alpha operand (epilogue_chain;
 * -DEPI_UN=1 only).
 * epilogue_r takes the residual's value (conv_residual reads it through
 * a fused max pool); epilogue reads it at index gid (usually the output's
 * own index; a residual with fewer channels passes its own index, or -1
 * for a slice it lacks, which adds zero). */
GD_INLINE float4 epilogue_step(float4 v, int op, int act, __global const float4* alpha, float4 r, int s) {
  if (op == EPI_PRELU) return select(v * alpha[s], v, isgreaterequal(v, (float4)(0.0f)));
#ifdef EPI_UN
  if (op == EPI_UNARY) return unary_math(v, act, act == UN_LEAKY_RELU ? alpha[0].x : 0.0f);
#endif
  if (op == EPI_AFFINE) return activate(v * alpha[2 * s] + alpha[2 * s + 1], act);
  if (epi_adds(op)) return activate(v + r, act);
  if (op == EPI_QDQ) {
    float4 g = alpha[0];
    return (clamp(round(v / g.x) + g.y, g.z, g.w) - g.y) * g.x;
  }
  return v;
}

#ifdef EPI_UN
/* EPI_CHAIN (kernel_abi.h): n steps, step k's (code, act, offset, aux) in
 * alpha[k], its constants from alpha[offset]; r the runtime operand.
 * Out of line on PoCL and NVIDIA, as unary_math. */
GD_NOINLINE float4 epilogue_chain(float4 v, int n, __global const float4* alpha, float4 r, int s) {
  for (int k = 0; k < n; ++k) {
    int4 d = as_int4(alpha[k]);
    __global const float4* a = alpha + d.z;
    if (d.x == EPI_BINARY) {
      float4 o = (d.w & EPI_BIN_RUNTIME) ? r : a[s];
      int op = d.w & EPI_BIN_OP;
      v = activate((d.w & EPI_BIN_SWAP) ? binary(o, v, op) : binary(v, o, op), d.y);
    } else {
      v = epilogue_step(v, d.x, d.y, a, r, s);
    }
  }
  return v;
}
#endif

GD_INLINE float4 epilogue_r(float4 v, int4 epi, __global const float4* alpha, float4 r, int s) {
#ifdef EPI_UN
  if (epi.x == EPI_CHAIN) return epilogue_chain(v, epi.y, alpha, r, s);
#endif
  v = epilogue_step(v, epi.x, epi.y, alpha, r, s);
  return epilogue_step(v, epi.z, epi.w, alpha, r, s);
}

GD_INLINE float4 epilogue(float4 v, int4 epi, __global const float4* alpha, __global const storage_t* residual, int s,
                       int gid) {
  float4 r = (epi.x == EPI_ADD || epi.z == EPI_ADD) && gid >= 0 ? LOAD4(residual, gid)
             : epi.z == EPI_RES_CHANNEL ? LOAD4(residual, s) : (float4)(0.0f);
  return epilogue_r(v, epi, alpha, r, s);
}

/* The GPU set's store of an output float4, the last step of every kernel
 * in conv_gpu.cl and depthwise_gpu.cl (here because both end with it).
 * -DCONVG_DST_BHWC=1 (conv_gpu.cl only; output_direct.c): dst is a float32
 * row-major BHWC buffer instead. */
#ifndef CONVG_DST_BHWC
#define CONVG_DST_BHWC 0
#endif

/* Pixel (x, y) of a 2x bilinear upsampling of W/2 x H/2 (EPI_ADD_UP2) as resize.cl: lower index max(floor(v), 0),
 * upper min(ceil(v), size - 1). up2_taps: the taps' offsets in a slice and weights (*k), alike in every slice. */
GD_INLINE int4 up2_taps(int code, int4 dst_shape, int x, int y, float4* k) {
  int sw = dst_shape.x / 2, sh = dst_shape.y / 2;
  float off = (code & EPI_UP2_HALF_PIXEL) ? 0.25f : 0.0f; /* (o + 0.5) / 2 - 0.5 = o / 2 - 0.25 */
  float fy = (float)y * 0.5f - off, fx = (float)x * 0.5f - off;
  int y0 = min(max((int)floor(fy), 0), sh - 1), y1 = min((int)ceil(fy), sh - 1);
  int x0 = min(max((int)floor(fx), 0), sw - 1), x1 = min((int)ceil(fx), sw - 1);
  float dy = fy - (float)y0, dx = fx - (float)x0;
  *k = (float4)((1.0f - dy) * (1.0f - dx), dy * (1.0f - dx), (1.0f - dy) * dx, dy * dx);
  return (int4)(y0 * sw + x0, y1 * sw + x0, y0 * sw + x1, y1 * sw + x1);
}
GD_INLINE float4 up2_mix(__global const storage_t* src, int base, int4 o, float4 k) { /* base: the slice's */
  return LOAD4(src, base + o.x) * k.x + LOAD4(src, base + o.y) * k.y + LOAD4(src, base + o.z) * k.z +
         LOAD4(src, base + o.w) * k.w;
}
GD_INLINE float4 conv_up2(__global const storage_t* residual, int code, int4 dst_shape, int c0, int x, int y) {
  float4 k;
  int4 o = up2_taps(code, dst_shape, x, y, &k);
  return up2_mix(residual, c0 * (dst_shape.x / 2) * (dst_shape.y / 2), o, k);
}

/* The fused residual's float4 for output float4 o = (b, s, p): a residual
 * of res_slices < so slices adds zero to the slices it lacks. EPI_ADD
 * reads it at the output's place; EPI_ADD_MAX2 (codes 4-7, kernel_abi.h)
 * takes the max of the 2x2 window at (2x, 2y) of a source of sw x sh
 * pixels, one short of 2W / 2H where the code says so, whose taps past
 * its edge are left out, as MAX_POOL_2D's SAME padding does; EPI_ADD_UP2
 * (8-9) interpolates a W/2 x H/2 source (conv_up2). That source is the
 * pool's or the resize's input: the pool or resize itself is never
 * launched (fuse.c). */
GD_INLINE float4 conv_residual(__global const storage_t* residual, int4 epi, int4 dst_shape, int b, int s, int p,
                                int res_slices) {
  int add = epi_adds(epi.x) ? epi.x : epi.z;
  if (add == EPI_RES_CHANNEL) return LOAD4(residual, b * res_slices + s);
  if (!epi_adds(add) || s >= res_slices) return (float4)(0.0f);
  int w = dst_shape.x, plane = w * dst_shape.y;
  if (add == EPI_ADD) return LOAD4(residual, (b * res_slices + s) * plane + p);
  int y = p / w, x = p - y * w;
  if (add >= EPI_ADD_UP2) return conv_up2(residual, add, dst_shape, b * res_slices + s, x, y);
  int sw = 2 * w - (add & EPI_MAX2_ODD_W), sh = 2 * dst_shape.y - ((add & EPI_MAX2_ODD_H) >> 1);
  int sx = 2 * x, sy = 2 * y;
  int i = ((b * res_slices + s) * sh + sy) * sw + sx;
  bool right = sx + 1 < sw, below = sy + 1 < sh;
  float4 m = LOAD4(residual, i);
  if (right) m = max(m, LOAD4(residual, i + 1));
  if (below) m = max(m, LOAD4(residual, i + sw));
  if (right && below) m = max(m, LOAD4(residual, i + sw + 1));
  return m;
}

/* Activation, fused epilogue, tail mask and store of output float4 (b, s,
 * p). Built with CONVG_DST_BHWC=1, dst is instead the runtime's BHWC
 * float32 output (or the part of one that starts at element `total`):
 * channels 4s .. 4s+3 of pixel p, those below C (output_direct.c). Out of
 * line on NVIDIA (GD_STORE_FN), a call per float4: inlined at every store it
 * was three fifths of the GPU set's conv programs and a sixth of
 * selfie_segmentation's VM program (docs/benchmarks/nvptx-build-time.md;
 * GD_INLINE_RARE inlines it). */
GD_STORE_FN void convg_store(float4 v, __global storage_t* dst, int4 dst_shape, int b, int s, int p, int act,
                             __global const float4* alpha, __global const storage_t* residual, int4 epi, int res_slices,
                             int total) {
  v = activate(v, act);
  v = epilogue_r(v, epi, alpha, conv_residual(residual, epi, dst_shape, b, s, p, res_slices), s);
#if CONVG_DST_BHWC
  __global float* out = (__global float*)dst + total + ((size_t)b * dst_shape.x * dst_shape.y + p) * dst_shape.z;
  int c = 4 * s;
  out[c] = v.x;
  if (c + 1 < dst_shape.z) out[c + 1] = v.y;
  if (c + 2 < dst_shape.z) out[c + 2] = v.z;
  if (c + 3 < dst_shape.z) out[c + 3] = v.w;
#else
  (void)total;
  int o = (b * SLICES(dst_shape) + s) * dst_shape.x * dst_shape.y + p;
  STORE4(mask_tail(v, s, dst_shape.z), dst, o);
#endif
}

/* The 4-pixel kernels' (conv.cl, depthwise.cl) store: acc0..acc3 at pixels
 * x..x+3 of row p.y, slice p.z, batch p.w, through convg_store (their
 * programs never have CONVG_DST_BHWC: output_direct.c stores only through
 * the GPU set's convs, and their `total` counts work-items). */
#define X4_STORE                                                                                        \
  float4 accs[4] = {acc0, acc1, acc2, acc3};                                                           \
  for (int i = 0; i < 4 && x + i < dst_shape.x; ++i)                                                   \
    convg_store(accs[i], dst, dst_shape, p.w, p.z, p.y * dst_shape.x + x + i, act, alpha, residual, epi, res_slices, 0);

/* Reduction helpers shared by reduce.cl and reduce_gpu.cl (op: REDUCE_*,
 * kernel_abi.h). */
GD_INLINE float4 reduce_identity(int op) {
  return (float4)(op == REDUCE_MAX ? -INFINITY : op == REDUCE_MIN ? INFINITY : op == REDUCE_PROD ? 1.0f : 0.0f);
}

GD_INLINE float4 reduce_step(float4 acc, float4 v, int op) {
  switch (op) {
    case REDUCE_MAX: return fmax(acc, v);
    case REDUCE_MIN: return fmin(acc, v);
    case REDUCE_PROD: return acc * v;
    default: return acc + v;
  }
}

GD_INLINE float reduce_step1(float acc, float v, int op) {
  switch (op) {
    case REDUCE_MAX: return fmax(acc, v);
    case REDUCE_MIN: return fmin(acc, v);
    case REDUCE_PROD: return acc * v;
    default: return acc + v;
  }
}

/* Lanes of slice s at or beyond C replaced by `fill`. */
GD_INLINE float4 fill_tail(float4 v, int s, int C, float4 fill) {
  int4 lane = (int4)(0, 1, 2, 3) + s * 4;
  return select(fill, v, lane < (int4)(C));
}

/* FULLY_CONNECTED's dot product (fully_connected.cl, split_k.cl): output
 * float4 p (split_gid over dst_shape) over input slices [first, end),
 * starting from acc. Row r of the output is the r-th pixel (row-major over
 * B, H, W), and of the source, whose C is K; weights [S_out][S_in][4]
 * float4s. Two accumulators shorten the dependent chain of multiply-adds. */
GD_INLINE float4 fc_dot(__global const storage_t* src, int4 src_shape, int4 dst_shape, int4 p,
                        __global const float4* weights, int first, int end, float4 acc) {
  int row = (p.w * dst_shape.y + p.y) * dst_shape.x + p.x;
  int sx = row % src_shape.x;
  int t = row / src_shape.x;
  int sy = t % src_shape.y;
  int sb = t / src_shape.y;
  int slice_stride = src_shape.y * src_shape.x;
  int sidx = idx4(src_shape, sb, first, sy, sx);
  __global const float4* w = weights + (p.z * SLICES(src_shape) + first) * 4;
  float4 acc1 = (float4)(0.0f);
  for (int si = first; si < end; ++si, sidx += slice_stride, w += 4) {
    float4 v = LOAD4(src, sidx);
    acc = fma((float4)(v.x), w[0], acc);
    acc1 = fma((float4)(v.y), w[1], acc1);
    acc = fma((float4)(v.z), w[2], acc);
    acc1 = fma((float4)(v.w), w[3], acc1);
  }
  return acc + acc1;
}
