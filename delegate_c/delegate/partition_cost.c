/* See partition_cost.h. The device side is a real run of the partition's
 * executor (programs built here stay in the device's program cache, so the
 * chosen partitions do not build them again); the CPU side is a roofline
 * estimate, max(FLOPs / rate, bytes / bandwidth) + a per-node cost, since
 * the interpreter's kernels cannot be run before its tensors exist. */
#include "delegate/partition_cost.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "delegate/pipeline.h"
#include "model/tflite_builtins.h"
#include "util/log.h"

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

/* ---- host rates ---- */

typedef float v8f __attribute__((vector_size(32)));
typedef float v16f __attribute__((vector_size(64)));
enum { kTileK = 256, kTileRows = 6 };

/* What the interpreter's kernels (XNNPACK) use where the host has it: FMA,
 * contracted here since -std=c11 turns contraction off. */
#if defined(__clang__)
#define HOST_ISA(isa) __attribute__((target(isa)))
#define CONTRACT_FMA _Pragma("clang fp contract(fast)")
#else
#define HOST_ISA(isa) __attribute__((target(isa), optimize("fp-contract=fast")))
#define CONTRACT_FMA
#endif

/* A 6-row register tile of a GEMM over K = 256 with 2 vectors per row: the
 * inner loop of a CPU convolution kernel (b holds 2 * kTileK vectors). */
#define GEMM_TILE_BODY(V)                                                     \
  CONTRACT_FMA                                                                \
  V acc[kTileRows][2];                                                        \
  memset(acc, 0, sizeof(acc));                                                \
  for (int k = 0; k < kTileK; ++k) {                                          \
    V b0 = b[2 * k], b1 = b[2 * k + 1];                                       \
    _Pragma("GCC unroll 8") /* accumulators in registers */                   \
    for (int r = 0; r < kTileRows; ++r) {                                     \
      float s = a[r * kTileK + k]; /* broadcast */                            \
      acc[r][0] += b0 * s;                                                    \
      acc[r][1] += b1 * s;                                                    \
    }                                                                         \
  }                                                                           \
  for (int r = 0; r < kTileRows; ++r) out[2 * r] = acc[r][0], out[2 * r + 1] = acc[r][1];

static void tile8_base(const float* a, const v8f* b, v8f* out) { GEMM_TILE_BODY(v8f) }
#if defined(__x86_64__) && defined(__GNUC__)
HOST_ISA("avx2,fma") static void tile8_avx2(const float* a, const v8f* b, v8f* out) { GEMM_TILE_BODY(v8f) }
HOST_ISA("avx512f,fma") static void tile16_avx512(const float* a, const v16f* b, v16f* out) { GEMM_TILE_BODY(v16f) }
#endif

/* FLOP/us of one tile function, best of 3 rounds of 2 ms. */
#define TILE_RATE(fn, V, lanes, result)                                              \
  do {                                                                               \
    static V b[2 * kTileK], out[2 * kTileRows];                                                  \
    for (int i = 0; i < 2 * kTileK; ++i) b[i] = (V){0} + 1e-3f * (float)(i % 3);    \
    double best_ = 0;                                                                \
    for (int round = 0; round < 3; ++round) {                                        \
      double t0 = now_us();                                                          \
      long calls = 0;                                                                \
      do {                                                                           \
        for (int i = 0; i < 64; ++i, ++calls) fn(a, b, out);                         \
      } while (now_us() - t0 < 2000);                                                \
      double rate = 2.0 * kTileRows * 2 * (lanes) * kTileK * (double)calls / (now_us() - t0); \
      if (rate > best_) best_ = rate;                                                \
    }                                                                                \
    volatile float sink = out[0][0]; /* keeps the tiles from being optimised away */ \
    (void)sink;                                                                      \
    (result) = best_;                                                                \
  } while (0)

static HostRates g_rates;
static pthread_once_t g_rates_once = PTHREAD_ONCE_INIT;

static void measure_host_rates(void) {
  static float a[kTileRows * kTileK];
  for (int i = 0; i < kTileRows * kTileK; ++i) a[i] = 1e-3f * (float)(i % 7);
  double best = 0;
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx512f"))
    TILE_RATE(tile16_avx512, v16f, 16, best);
  else if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"))
    TILE_RATE(tile8_avx2, v8f, 8, best);
#endif
  if (best == 0) TILE_RATE(tile8_base, v8f, 8, best);
  g_rates.flops_per_us = best;
  /* memcpy of 8 MiB: reads and writes, 16 MiB of traffic per copy. */
  size_t bytes = 8u << 20;
  char* src = malloc(bytes);
  char* dst = malloc(bytes);
  g_rates.bytes_per_us = 5000; /* 5 GB/s if the buffers cannot be had */
  if (src && dst) {
    memset(src, 1, bytes);
    memset(dst, 0, bytes);
    double fastest = 0;
    for (int round = 0; round < 3; ++round) {
      double t0 = now_us();
      memcpy(dst, src, bytes);
      double us = now_us() - t0;
      if (fastest == 0 || us < fastest) fastest = us;
    }
    if (fastest > 0) g_rates.bytes_per_us = 2.0 * (double)bytes / fastest;
  }
  free(src);
  free(dst);
  g_rates.node_us = 1.0; /* the interpreter's per-node dispatch, not measured */
}

const HostRates* host_rates(void) {
  pthread_once(&g_rates_once, measure_host_rates);
  return &g_rates;
}

/* ---- CPU estimate ---- */

static size_t type_size(int type) {
  switch (type) {
    case kTfLiteInt8: case kTfLiteUInt8: case kTfLiteBool: return 1;
    case kTfLiteFloat16: case kTfLiteInt16: return 2;
    case kTfLiteInt64: case kTfLiteFloat64: return 8;
    default: return 4;
  }
}

static double tensor_bytes(const ModelView* mv, int t) {
  if (t < 0 || t >= mv->num_tensors) return 0;
  return (double)mv_elements(mv, t) * (double)type_size(mv_tensor(mv, t)->type);
}

static int dim(const ModelView* mv, int t, int k) {
  int d[8];
  int rank = t >= 0 && t < mv->num_tensors ? mv_dims(mv, t, d, 8) : -1;
  if (rank <= 0) return 1;
  if (k < 0) k += rank;
  return k >= 0 && k < rank && d[k] > 0 ? d[k] : 1;
}

/* Multiply-adds x 2 for the ops that are GEMMs; 2 per output element for the rest. */
static double node_flops(const ModelView* mv, const TfLiteNode* n, int code) {
  int in0 = n->inputs->size > 0 ? n->inputs->data[0] : -1;
  int w = n->inputs->size > 1 ? n->inputs->data[1] : -1;
  int out = n->outputs->size > 0 ? n->outputs->data[0] : -1;
  double out_elems = out >= 0 ? (double)mv_elements(mv, out) : 0;
  double w_elems = w >= 0 ? (double)mv_elements(mv, w) : 0;
  switch (code) {
    case kBuiltinConv2d:
    case kBuiltinFullyConnected: /* weights [O][...]: one row per output channel */
      return 2.0 * out_elems * w_elems / dim(mv, w, 0);
    case kBuiltinDepthwiseConv2d: /* weights [1][KH][KW][C] */
      return 2.0 * out_elems * w_elems / dim(mv, w, -1);
    case kBuiltinTransposeConv: { /* inputs (shape, weights [O][KH][KW][I], x) */
      int x = n->inputs->size > 2 ? n->inputs->data[2] : -1;
      return 2.0 * (x >= 0 ? (double)mv_elements(mv, x) : 0) * w_elems / dim(mv, w, -1);
    }
    case kBuiltinBatchMatmul:
      return 2.0 * out_elems * dim(mv, in0, -1);
    default:
      return 2.0 * out_elems;
  }
}

static double nodes_cpu_us(const ModelView* mv, const TfLiteIntArray* nodes) {
  const HostRates* r = host_rates();
  double us = 0;
  for (int i = 0; i < nodes->size; ++i) {
    TfLiteNode* n;
    TfLiteRegistration* reg;
    if (mv_node(mv, nodes->data[i], &n, &reg) || !n->inputs || !n->outputs) continue;
    double bytes = 0;
    for (int k = 0; k < n->inputs->size; ++k) bytes += tensor_bytes(mv, n->inputs->data[k]);
    for (int k = 0; k < n->outputs->size; ++k) bytes += tensor_bytes(mv, n->outputs->data[k]);
    double compute = node_flops(mv, n, reg->builtin_code) / r->flops_per_us;
    double memory = bytes / r->bytes_per_us;
    us += r->node_us + (compute > memory ? compute : memory);
  }
  return us;
}

/* ---- device measurement ---- */

static int cmp_int(const void* a, const void* b) { return *(const int*)a - *(const int*)b; }

static double device_us(const ModelView* mv, GpuDevice* dev, const Policy* run, const TfLiteDelegateParams* p,
                        char* err, size_t errlen) {
  TfLiteIntArray* nodes = malloc(sizeof(int) * (size_t)(p->nodes_to_replace->size + 1));
  double us = -1;
  if (!nodes) {
    snprintf(err, errlen, "out of memory");
    goto done;
  }
  memcpy(nodes, p->nodes_to_replace, sizeof(int) * (size_t)(p->nodes_to_replace->size + 1));
  qsort(nodes->data, (size_t)nodes->size, sizeof(int), cmp_int); /* execution order, as kernel init does */
  ModelView view = *mv; /* shallow: only the storage flag differs (pipeline_plan sets it) */
  PartitionPlan plan;
  if (pipeline_plan(&view, nodes, p->output_tensors, dev, run, NULL, &plan, err, errlen)) goto done;
  Executor ex = {0};
  pthread_mutex_lock(&dev->mutex);
  double t;
  if (pipeline_build(&plan, &ex, dev, NULL, 0, NULL, err, errlen) == 0) {
    if (executor_time(&ex, 3, NULL, &t, err, errlen) == 0) us = t;
    executor_free(&ex);
  }
  pthread_mutex_unlock(&dev->mutex);
  pipeline_plan_free(&plan);
done:
  free(nodes);
  return us;
}

void partition_costs(const ModelView* mv, GpuDevice* dev, const Policy* run, const TfLiteDelegateParams* parts, int np,
                     int log_level, PartCost* costs) {
  const HostRates* r = host_rates();
  gd_log(log_level, GD_LOG_INFO,
         "partition_policy=measured: CPU estimated at %.1f GFLOP/s, %.1f GB/s, %.1f us per node", r->flops_per_us * 1e-3, r->bytes_per_us * 1e-3, r->node_us);
  for (int p = 0; p < np; ++p) {
    char err[512] = "";
    costs[p].cpu_us = nodes_cpu_us(mv, parts[p].nodes_to_replace);
    costs[p].device_us = device_us(mv, dev, run, &parts[p], err, sizeof(err));
    if (costs[p].device_us < 0)
      gd_log(log_level, GD_LOG_INFO, "partition of %d nodes not timed: %s", parts[p].nodes_to_replace->size, err);
  }
}
