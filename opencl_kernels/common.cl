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
#define LOAD4(p, i) vload_half4((i), (p))
#define STORE4(v, p, i) vstore_half4((v), (i), (p))
#define LOAD1(p, i) vload_half((i), (p))
#define STORE1(v, p, i) vstore_half((v), (i), (p))
#else
typedef float storage_t;
#define LOAD4(p, i) vload4((i), (p))
#define STORE4(v, p, i) vstore4((v), (i), (p))
#define LOAD1(p, i) ((p)[i])
#define STORE1(v, p, i) ((p)[i] = (v))
#endif

/* Helpers are GD_INLINE: static inline, so every program holds their
 * definitions whatever its compiler inlines (a C99 `inline` alone defines
 * nothing, and a compiler that does not inline, at -O0 or by choice, then
 * cannot link the kernel). OpenCL C 1.1 has no `static`: plain
 * definitions there (one translation unit per program). */
#if defined(__OPENCL_C_VERSION__) && __OPENCL_C_VERSION__ >= 120
#define GD_INLINE static inline
#else
#define GD_INLINE
#endif

/* Shapes travel as int4 (W, H, C, B). */
#define SLICES(shape) (((shape).z + 3) >> 2)

/* float4 index of (b, s, y, x) in a PHWC4 tensor. */
GD_INLINE int idx4(int4 shape, int b, int s, int y, int x) {
  return ((b * SLICES(shape) + s) * shape.y + y) * shape.x + x;
}

/* Scalar index of channel c at (b, y, x). */
GD_INLINE int idx1(int4 shape, int b, int y, int x, int c) {
  return idx4(shape, b, c >> 2, y, x) * 4 + (c & 3);
}

/* The float4 index of pixel gid's first slice (gid runs over (b, y, x)
 * row-major) in a PHWC4 tensor; its other slices follow H * W apart.
 * For the kernels that walk one pixel's channel row. */
GD_INLINE int pixel_base(int gid, int4 shape) {
  int x = gid % shape.x;
  int t = gid / shape.x;
  return idx4(shape, t / shape.y, 0, t % shape.y, x);
}

/* Splits a flat work-item id into (x, y, s, b) over a PHWC4 output. */
GD_INLINE int4 split_gid(int gid, int4 shape) {
  int x = gid % shape.x;
  int t = gid / shape.x;
  int y = t % shape.y;
  t /= shape.y;
  int s = t % SLICES(shape);
  int b = t / SLICES(shape);
  return (int4)(x, y, s, b);
}

/* Zero the lanes of slice s beyond the channel count C. */
GD_INLINE float4 mask_tail(float4 v, int s, int C) {
  int base = s * 4;
  if (base + 4 <= C) return v;
  return (float4)(base + 0 < C ? v.x : 0.0f, base + 1 < C ? v.y : 0.0f, base + 2 < C ? v.z : 0.0f,
                  base + 3 < C ? v.w : 0.0f);
}

/* Compiler-specific attributes and pragmas only where they were measured
 * to help: PoCL's clang (-DGD_POCL=1, set by cl_device.c). Other compilers
 * get plain OpenCL C 1.2 (NVIDIA's warned about clang's diagnostic pragma
 * and about noinline). On PoCL:
 * - ALWAYS_INLINE: PoCL's clang left the activation helpers as calls, and a
 *   float16 argument then travels through memory (forcing the inline made
 *   the conv stores 1.3-1.5x faster);
 * - GD_NOINLINE: tanh and sigmoid stay in one out-of-line copy (inlined
 *   into every store they made LLVM's compile of a conv kernel 2-4x
 *   slower), and kernel bodies are outlined (OUTLINED_KERNEL below);
 * - the -Wpsabi note clang prints for float16 arguments on AVX2 targets is
 *   irrelevant to code that is all inlined. */
#ifdef GD_POCL
#define ALWAYS_INLINE __attribute__((always_inline)) GD_INLINE
#define GD_NOINLINE __attribute__((noinline))
#pragma clang diagnostic ignored "-Wpsabi"
#else
#define ALWAYS_INLINE GD_INLINE
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
 * function of its own, taking the work-item's gid. PARAMS and ARGS are
 * the names of macros holding the parameter list and the matching
 * argument list (no parentheses: OpenCL C has no variadic macros, and a
 * macro name passes its commas through as one argument). PoCL inlines a
 * kernel into the two launchers it emits beside it, so LLVM generates the
 * body's code three times at its first launch; on PoCL the body stays one
 * noinline function and is generated once (conv2d_tiled_c3: 0.71 s ->
 * 0.30 s of the first launch). The call per work-item did not show in the
 * latency of the conv kernels (hundreds of multiply-adds per work-item)
 * nor of the elementwise, pool, layout and resize kernels that use it
 * (memory-bound). Elsewhere the body is static inline: the same code as a
 * plain kernel. */
#ifdef GD_POCL
#define GD_BODY_ATTR GD_NOINLINE
#else
#define GD_BODY_ATTR GD_INLINE
#endif
#define OUTLINED_KERNEL(NAME, PARAMS, ARGS)                                          \
  GD_BODY_ATTR void NAME##_body(int gid, PARAMS);                                    \
  __kernel void NAME(PARAMS) { NAME##_body(get_global_id(0), ARGS); }                \
  GD_BODY_ATTR void NAME##_body(int gid, PARAMS)

/* Kernel selection: a file's kernels stand in `#if GD_SELECTED(name, bit)`
 * blocks, and the executor builds each program with -DGD_KSEL=<mask> of
 * the kernels its partition launches (dispatch.c), so the compiler skips
 * the rest (PoCL, conv.cl: 0.46-0.50 s with all 14 kernels, 0.29-0.35 s
 * with the 6-9 of two MediaPipe models). tools/embed_kernels.py reads
 * the (name, bit) pairs into the library's table;
 * tests/test_kernel_select.py checks that each bit builds exactly its
 * kernel. No GD_KSEL: every kernel. */
#ifndef GD_KSEL
#define GD_KSEL 0x7fffffff
#endif
#define GD_SELECTED(NAME, BIT) ((GD_KSEL >> (BIT)) & 1)

/* Fused epilogue steps (delegate_c/fuse.c): epi = (op0, act0, op1, act1),
 * op 1 = PReLU with a per-channel alpha (float4 per slice), op 2 = ADD of
 * the residual float4 r, then act (EPI_ADD_MAX2 / _UP2: r read through a
 * max pool / an upsampling), op 3 = a quantize-dequantize (quantize.cl) with alpha[0] =
 * (scale, zero point, qmin, qmax).
 * epilogue_r takes the residual's value (conv_gpu.cl reads it through a
 * fused max pool); epilogue reads it at index gid (usually the output's
 * own index; a residual with fewer channels passes its own index, or -1
 * for a slice it lacks, which adds zero). */
GD_INLINE float4 epilogue_step(float4 v, int op, int act, __global const float4* alpha, float4 r, int s) {
  if (op == EPI_PRELU) return select(v * alpha[s], v, isgreaterequal(v, (float4)(0.0f)));
  if (op == EPI_ADD || op >= EPI_ADD_MAX2) return activate(v + r, act);
  if (op == EPI_QDQ) {
    float4 g = alpha[0];
    return (clamp(round(v / g.x) + g.y, g.z, g.w) - g.y) * g.x;
  }
  return v;
}

GD_INLINE float4 epilogue_r(float4 v, int4 epi, __global const float4* alpha, float4 r, int s) {
  v = epilogue_step(v, epi.x, epi.y, alpha, r, s);
  return epilogue_step(v, epi.z, epi.w, alpha, r, s);
}

GD_INLINE float4 epilogue(float4 v, int4 epi, __global const float4* alpha, __global const storage_t* residual, int s,
                       int gid) {
  float4 r = (epi.x == EPI_ADD || epi.z == EPI_ADD) && gid >= 0 ? LOAD4(residual, gid) : (float4)(0.0f);
  return epilogue_r(v, epi, alpha, r, s);
}

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
