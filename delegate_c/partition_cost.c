/* See partition_cost.h. The device side is a real run of the partition's
 * executor (programs built here stay in the device's program cache, so the
 * chosen partitions do not build them again); the CPU side is a roofline
 * estimate, max(FLOPs / rate, bytes / bandwidth) + a per-node cost, since
 * the interpreter's kernels cannot be run before its tensors exist. */
#include "partition_cost.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "executor.h"
#include "fuse.h"
#include "log.h"
#include "partition_lower.h"
#include "tflite_builtins.h"

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e6 + (double)t.tv_nsec * 1e-3;
}

/* ---- host rates ---- */

typedef float v8f __attribute__((vector_size(32)));
enum { kTileK = 256 };

/* A 4 x 16 register tile of a GEMM over K = 256: the inner loop of a CPU
 * convolution kernel. Returns the FLOPs done. */
#define GEMM_TILE_BODY                                                     \
  v8f acc[4][2] = {{{0}}};                                                 \
  for (int k = 0; k < kTileK; ++k) {                                       \
    v8f b0 = b[2 * k], b1 = b[2 * k + 1];                                  \
    for (int r = 0; r < 4; ++r) {                                          \
      float s = a[r * kTileK + k];                                         \
      v8f av = {s, s, s, s, s, s, s, s};                                   \
      acc[r][0] += av * b0;                                                \
      acc[r][1] += av * b1;                                                \
    }                                                                      \
  }                                                                        \
  for (int r = 0; r < 4; ++r) out[2 * r] = acc[r][0], out[2 * r + 1] = acc[r][1];

static void gemm_tile_base(const float* a, const v8f* b, v8f* out) { GEMM_TILE_BODY }
#if defined(__x86_64__) && defined(__GNUC__)
/* What the interpreter's kernels (XNNPACK) use where the host has it. */
__attribute__((target("avx2,fma"))) static void gemm_tile_avx2(const float* a, const v8f* b, v8f* out) {
  GEMM_TILE_BODY
}
#endif

static HostRates g_rates;
static pthread_once_t g_rates_once = PTHREAD_ONCE_INIT;

static void measure_host_rates(void) {
  void (*tile)(const float*, const v8f*, v8f*) = gemm_tile_base;
#if defined(__x86_64__) && defined(__GNUC__)
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) tile = gemm_tile_avx2;
#endif
  static float a[4 * kTileK];
  static v8f b[2 * kTileK], out[8];
  for (int i = 0; i < 4 * kTileK; ++i) a[i] = 1e-3f * (float)(i % 7);
  for (int i = 0; i < 2 * kTileK; ++i) b[i] = (v8f){1e-3f, 2e-3f, 0, 1e-3f, 0, 0, 1e-3f, 0};
  const double tile_flops = 2.0 * 4 * 16 * kTileK;
  double best = 0;
  for (int round = 0; round < 3; ++round) {
    double t0 = now_us();
    int calls = 0;
    do {
      for (int i = 0; i < 64; ++i, ++calls) tile(a, b, out);
    } while (now_us() - t0 < 2000);
    double rate = tile_flops * calls / (now_us() - t0);
    if (rate > best) best = rate;
  }
  volatile float sink = out[0][0]; /* keeps the tiles from being optimised away */
  (void)sink;
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

static double device_us(const ModelView* mv, GpuDevice* dev, const TfLiteDelegateParams* p, char* err,
                        size_t errlen) {
  TfLiteIntArray* nodes = malloc(sizeof(int) * (size_t)(p->nodes_to_replace->size + 1));
  int* outputs = malloc(sizeof(int) * (size_t)(p->output_tensors->size + 1));
  double us = -1;
  if (!nodes || !outputs) {
    snprintf(err, errlen, "out of memory");
    goto done;
  }
  memcpy(nodes, p->nodes_to_replace, sizeof(int) * (size_t)(p->nodes_to_replace->size + 1));
  qsort(nodes->data, (size_t)nodes->size, sizeof(int), cmp_int); /* execution order, as kernel init does */
  ModelView view = *mv; /* shallow: only the storage flag differs */
  view.fp16_storage = dev->fp16;
  Graph g = {0};
  if (lower_partition(&view, nodes, p->output_tensors, &g, outputs, err, errlen)) goto done;
  if (fuse_graph(&g, outputs, p->output_tensors->size) < 0) {
    graph_free(&g);
    snprintf(err, errlen, "out of memory");
    goto done;
  }
  Executor ex = {0};
  pthread_mutex_lock(&dev->mutex);
  double t;
  if (executor_build(&ex, dev, &g, outputs, p->output_tensors->size, err, errlen) == 0 &&
      executor_time(&ex, 3, &t, err, errlen) == 0)
    us = t;
  executor_free(&ex); /* it owns g, built or not */
  pthread_mutex_unlock(&dev->mutex);
done:
  free(nodes);
  free(outputs);
  return us;
}

void partition_costs(const ModelView* mv, GpuDevice* dev, const TfLiteDelegateParams* parts, int np,
                     int log_level, PartCost* costs) {
  for (int p = 0; p < np; ++p) {
    char err[512] = "";
    costs[p].cpu_us = nodes_cpu_us(mv, parts[p].nodes_to_replace);
    costs[p].device_us = device_us(mv, dev, &parts[p], err, sizeof(err));
    if (costs[p].device_us < 0)
      gd_log(log_level, GD_LOG_INFO, "partition of %d nodes not timed: %s", parts[p].nodes_to_replace->size, err);
  }
}
