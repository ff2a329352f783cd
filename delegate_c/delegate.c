/* The TfLiteDelegate: Prepare chooses and replaces nodes; each partition
 * becomes one delegate kernel that lowers its nodes, builds an executor and
 * runs it. Also the public C API and the external-delegate entry points. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cl_device.h"
#include "executor.h"
#include "fuse.h"
#include "gpu_delegate.h"
#include "kernel_cache.h"
#include "log.h"
#include "model_view.h"
#include "op_table.h"
#include "options.h"
#include "partition.h"
#include "serialization.h"
#include "tflite_abi.h"

#define TFLITE_GPU_VERSION "0.1.0"
#define GD_ERR_LEN 4096

typedef struct GpuDelegate {
  TfLiteDelegate base; /* first, so a TfLiteDelegate* is a GpuDelegate* */
  GpuConfig cfg;
  GpuDevice* dev;
  int cache_on;        /* serialization: flag, dir and token given, dir safe */
  /* Prepare runs synchronously and calls kernel init from inside
   * ReplaceNodeSubsetsWithDelegateKernels; the view is valid only then. */
  pthread_mutex_t prepare_mutex;
  const ModelView* current_view;
  PartitionResult last; /* counts of the last Prepare, for reports */
  /* Summed over the kernels built by the last Prepare. */
  int dispatches;           /* kernel launches per invoke */
  size_t arena_bytes;       /* device memory for activations */
  size_t live_peak_bytes;   /* lower bound: peak of live activation bytes */
  double compile_seconds;   /* OpenCL program builds so far */
  char* partition_report;   /* one line per kernel: "nodes\tkernels\tnode,node,..." */
  char init_error[GD_ERR_LEN]; /* first kernel init failure of the running Prepare */
} GpuDelegate;

/* Appends a kernel's line to d->partition_report (best effort). */
static void record_partition(GpuDelegate* d, const TfLiteIntArray* nodes, int dispatches) {
  size_t old = d->partition_report ? strlen(d->partition_report) : 0;
  size_t add = 32 + (size_t)nodes->size * 12;
  char* r = realloc(d->partition_report, old + add);
  if (!r) return;
  d->partition_report = r;
  size_t used = old;
  used += (size_t)snprintf(r + used, add, "%d\t%d\t", nodes->size, dispatches);
  for (int i = 0; i < nodes->size; ++i)
    used += (size_t)snprintf(r + used, old + add - used, "%s%d", i ? "," : "", nodes->data[i]);
  snprintf(r + used, old + add - used, "\n");
}

typedef struct PartitionKernel {
  GpuDevice* dev;          /* retained: the kernel may outlive the delegate */
  Executor ex;
  int built;
  int log_level;
  int* input_shapes;       /* per boundary input: 4 ints as built */
  PartitionCache cache;    /* kernel cache state of this partition */
  /* What a re-plan after a resize needs: the view of the model as it was
   * delegated (folded constants included), the nodes and the outputs. */
  ModelView mv;
  TfLiteIntArray* nodes;
  TfLiteIntArray* output_tensors;
  int stale;               /* a re-plan failed: output shapes must be inferred again */
  int replans;             /* successful re-plans, for reports and tests */
  char error[GD_ERR_LEN];  /* init failure, reported by prepare */
} PartitionKernel;

/* ---------------- kernel ---------------- */

static int cmp_int(const void* a, const void* b) { return *(const int*)a - *(const int*)b; }

static int lower_partition(const ModelView* mv, const TfLiteIntArray* to_replace, const TfLiteIntArray* out_tensors,
                           Graph* g, int* outputs, char* err, size_t errlen) {
  int* map = malloc((size_t)(mv->num_tensors + 1) * sizeof(int));
  int* nodes = malloc((size_t)(to_replace->size + 1) * sizeof(int));
  if (!map || !nodes) {
    free(map);
    free(nodes);
    return snprintf(err, errlen, "out of memory"), -1;
  }
  for (int t = 0; t < mv->num_tensors; ++t) map[t] = -1;
  /* Node indices follow execution order in the model. */
  memcpy(nodes, to_replace->data, (size_t)to_replace->size * sizeof(int));
  qsort(nodes, (size_t)to_replace->size, sizeof(int), cmp_int);
  Lowering lw = {mv, g, map, err, errlen};
  int rc = 0;
  for (int k = 0; k < to_replace->size && rc == 0; ++k) {
    NodeInfo ni = {mv, nodes[k], NULL, NULL, NULL, 0};
    if (mv_node(mv, nodes[k], &ni.node, &ni.reg)) {
      rc = -1;
      snprintf(err, errlen, "GetNodeAndRegistration(%d) failed", nodes[k]);
      break;
    }
    const OpDef* d = op_lookup(ni.reg);
    if (!d || !d->lower) continue; /* folded constants: read by their consumers */
    int first_new = g->num_nodes;
    rc = d->lower(&lw, &ni);
    if (rc == 0) rc = lower_quant_outputs(&lw, &ni, first_new); /* int8/uint8 outputs snap to their grid */
    for (int j = first_new; j < g->num_nodes; ++j) {
      g->nodes[j].tflite_node = nodes[k];
      g->nodes[j].name = builtin_name(ni.reg->builtin_code);
    }
    if (rc) {
      char why[GD_ERR_LEN / 2];
      snprintf(why, sizeof(why), "%s", err);
      snprintf(err, errlen, "lowering %s (node %d): %s", builtin_name(ni.reg->builtin_code), nodes[k], why);
    }
  }
  for (int k = 0; rc == 0 && k < out_tensors->size; ++k) {
    int t = out_tensors->data[k];
    outputs[k] = (t >= 0 && t < mv->num_tensors) ? map[t] : -1;
    if (outputs[k] < 0) rc = -1, snprintf(err, errlen, "partition output tensor %d is not produced by its nodes", t);
  }
  free(map);
  free(nodes);
  return rc;
}

static TfLiteIntArray* int_array_copy(const TfLiteIntArray* a) {
  TfLiteIntArray* c = malloc(sizeof(int) * (size_t)(a->size + 1));
  if (c) memcpy(c, a, sizeof(int) * (size_t)(a->size + 1));
  return c;
}

/* Lowers k->nodes from k->mv (whose tensors hold the current shapes),
 * fuses and builds an executor into ex. Programs already built on the
 * device are reused; only buffers, arguments and sizes are new. */
/* d and params are given for the first build only: it may load programs
 * from the kernel cache (serialization.c); a re-plan reuses what is built. */
static int build_executor(PartitionKernel* k, Executor* ex, char* err, size_t errlen, const GpuDelegate* d,
                          const TfLiteDelegateParams* params) {
  Graph g = {0};
  int* outputs = malloc((size_t)(k->output_tensors->size + 1) * sizeof(int));
  if (!outputs) return snprintf(err, errlen, "out of memory"), -1;
  int rc = lower_partition(&k->mv, k->nodes, k->output_tensors, &g, outputs, err, errlen);
  if (rc == 0 && fuse_graph(&g, outputs, k->output_tensors->size) < 0) {
    rc = -1;
    snprintf(err, errlen, "out of memory");
  }
  if (rc == 0) {
    pthread_mutex_lock(&k->dev->mutex);
    if (d && d->cache_on)
      ser_partition_begin(&k->cache, d->cfg.serialization_dir, d->cfg.model_token, k->dev, d->current_view, params,
                          k->log_level);
    rc = executor_build(ex, k->dev, &g, outputs, k->output_tensors->size, err, errlen);
    if (rc == 0 && d) ser_partition_built(&k->cache, k->dev, k->log_level);
    if (rc) executor_free(ex);
    pthread_mutex_unlock(&k->dev->mutex);
  } else {
    graph_free(&g);
  }
  free(outputs);
  return rc;
}

static void remember_input_shapes(PartitionKernel* k) {
  for (int i = 0; i < k->ex.num_inputs; ++i)
    memcpy(&k->input_shapes[4 * i], k->ex.g.tensors[k->ex.inputs[i].tensor].shape, 4 * sizeof(int));
}

static void* kernel_init(TfLiteContext* context, const char* buffer, size_t length) {
  (void)context;
  (void)length;
  const TfLiteDelegateParams* params = (const TfLiteDelegateParams*)buffer;
  PartitionKernel* k = calloc(1, sizeof(*k));
  if (!k) return NULL;
  GpuDelegate* d = params ? (GpuDelegate*)params->delegate : NULL;
  if (!d || !d->current_view) {
    snprintf(k->error, sizeof(k->error), "kernel init outside the delegate's Prepare");
    return k;
  }
  k->dev = d->dev;
  gpu_device_retain(k->dev);
  k->log_level = d->cfg.log_level;
  k->nodes = int_array_copy(params->nodes_to_replace);
  k->output_tensors = int_array_copy(params->output_tensors);
  if (!k->nodes || !k->output_tensors || mv_copy(&k->mv, d->current_view)) {
    snprintf(k->error, sizeof(k->error), "out of memory");
    return k;
  }
  /* Node indices follow execution order in the model. */
  qsort(k->nodes->data, (size_t)k->nodes->size, sizeof(int), cmp_int);
  k->built = build_executor(k, &k->ex, k->error, sizeof(k->error), d, params) == 0;
  if (k->built) {
    k->input_shapes = malloc((size_t)(k->ex.num_inputs + 1) * 4 * sizeof(int));
    if (!k->input_shapes) {
      k->built = 0;
      snprintf(k->error, sizeof(k->error), "out of memory");
    } else {
      remember_input_shapes(k);
      record_partition(d, params->nodes_to_replace, k->ex.num_dispatches);
      d->dispatches += k->ex.num_dispatches;
      d->arena_bytes += k->ex.arena_bytes;
      d->live_peak_bytes += k->ex.lower_bound_bytes;
      d->compile_seconds = k->dev->compile_seconds;
      gd_log(k->log_level, GD_LOG_INFO, "partition of %d nodes: %d kernels, arena %zu bytes (live peak %zu)",
             params->nodes_to_replace->size, k->ex.num_dispatches, k->ex.arena_bytes, k->ex.lower_bound_bytes);
    }
  }
  if (!k->built) {
    gd_log(k->log_level, GD_LOG_WARNING, "TfLiteGpuDelegate Init: %s", k->error);
    if (!d->init_error[0]) snprintf(d->init_error, sizeof(d->init_error), "%s", k->error);
  }
  return k;
}

static void kernel_free(TfLiteContext* context, void* buffer) {
  (void)context;
  PartitionKernel* k = buffer;
  if (!k) return;
  if (k->dev) {
    pthread_mutex_lock(&k->dev->mutex);
    executor_free(&k->ex);
    pthread_mutex_unlock(&k->dev->mutex);
    gpu_device_release(k->dev);
  }
  ser_partition_free(&k->cache);
  mv_free(&k->mv);
  free(k->nodes);
  free(k->output_tensors);
  free(k->input_shapes);
  free(k);
}

/* After a resize: walks the partition's nodes in order with the op checks
 * in shape-inference mode, which resize every output (internal and
 * partition outputs) to what TFLite's kernels would give, then lowers and
 * plans again. Any node that cannot follow fails the whole re-plan with
 * its reason; the old executor stays untouched until the new one is built. */
static int replan(PartitionKernel* k, char* err, size_t errlen) {
  k->stale = 1;
  k->mv.infer_shapes = 1;
  int rc = 0;
  for (int i = 0; i < k->nodes->size && rc == 0; ++i) {
    char why[GD_ERR_LEN / 2] = "";
    NodeInfo ni = {&k->mv, k->nodes->data[i], NULL, NULL, why, sizeof(why)};
    if (mv_node(&k->mv, ni.index, &ni.node, &ni.reg)) {
      rc = -1;
      snprintf(err, errlen, "GetNodeAndRegistration(%d) failed", ni.index);
      break;
    }
    const OpDef* def = op_lookup(ni.reg);
    if (def && !def->check) continue;
    /* Folded constants (DEQUANTIZE/DENSIFY of a constant) keep their shapes. */
    if (ni.node->outputs && ni.node->outputs->size > 0 && ni.node->outputs->data[0] >= 0 &&
        k->mv.const_kind[ni.node->outputs->data[0]] == CONST_FOLDED)
      continue;
    int settled = 0;
    k->mv.inferred = &settled;
    if (op_check_node(&ni)) {
      rc = -1;
      snprintf(err, errlen, "%s (node %d): %s", builtin_name(ni.reg->builtin_code), ni.index, why);
    } else if (settled < ni.node->outputs->size) {
      /* An op whose check does not compute its output shape cannot be
       * trusted with new shapes: refuse rather than plan stale ones. */
      rc = -1;
      snprintf(err, errlen, "%s (node %d): its output shape cannot be inferred after a resize",
               builtin_name(ni.reg->builtin_code), ni.index);
    }
    k->mv.inferred = NULL;
  }
  k->mv.infer_shapes = 0;
  if (rc) return -1;
  Executor ex;
  if (build_executor(k, &ex, err, errlen, NULL, NULL)) return -1;
  int* shapes = malloc((size_t)(ex.num_inputs + 1) * 4 * sizeof(int));
  if (!shapes) {
    pthread_mutex_lock(&k->dev->mutex);
    executor_free(&ex);
    pthread_mutex_unlock(&k->dev->mutex);
    return snprintf(err, errlen, "out of memory"), -1;
  }
  pthread_mutex_lock(&k->dev->mutex);
  executor_free(&k->ex);
  k->ex = ex;
  pthread_mutex_unlock(&k->dev->mutex);
  free(k->input_shapes);
  k->input_shapes = shapes;
  remember_input_shapes(k);
  k->stale = 0;
  k->replans++;
  gd_log(k->log_level, GD_LOG_INFO, "re-planned a partition of %d nodes after a resize: arena %zu bytes",
         k->nodes->size, k->ex.arena_bytes);
  return 0;
}

static int inputs_changed(const PartitionKernel* k, TfLiteContext* context) {
  for (int i = 0; i < k->ex.num_inputs; ++i) {
    const TfLiteTensor* t = &context->tensors[k->ex.inputs[i].tflite_index];
    int shape[4];
    if (!t->dims || shape_from_dims(t->dims->data, t->dims->size, shape) ||
        memcmp(shape, &k->input_shapes[4 * i], sizeof(shape)) != 0)
      return 1;
  }
  return 0;
}

static TfLiteStatus kernel_prepare(TfLiteContext* context, TfLiteNode* node) {
  PartitionKernel* k = node->user_data;
  if (!k) {
    context->ReportError(context, "TfLiteGpuDelegate Prepare: delegate is not initialized");
    return kTfLiteError;
  }
  if (!k->built) {
    context->ReportError(context, "TfLiteGpuDelegate Init: %s", k->error);
    return kTfLiteError;
  }
  /* Prepare runs again after a resize: follow the new input shapes. */
  if (!k->stale && !inputs_changed(k, context)) return kTfLiteOk;
  char err[GD_ERR_LEN] = "";
  if (replan(k, err, sizeof(err))) {
    context->ReportError(context, "TfLiteGpuDelegate Prepare: cannot follow the input resize: %s", err);
    gd_log(k->log_level, GD_LOG_WARNING, "TfLiteGpuDelegate Prepare: cannot follow the input resize: %s", err);
    return kTfLiteError;
  }
  return kTfLiteOk;
}

static TfLiteStatus kernel_invoke(TfLiteContext* context, TfLiteNode* node) {
  PartitionKernel* k = node->user_data;
  if (!k || !k->built) {
    context->ReportError(context, "TfLiteGpuDelegate Invoke: delegate is not initialized");
    return kTfLiteError;
  }
  char err[GD_ERR_LEN];
  pthread_mutex_lock(&k->dev->mutex);
  int rc = executor_invoke(&k->ex, context, err, sizeof(err));
  /* A miss is saved after the first invoke: only then (on PoCL) do the
   * binaries hold the work-group functions the enqueues compiled. */
  if (rc == 0 && k->cache.state == SER_MISS) ser_partition_save(&k->cache, k->dev, &k->ex, k->log_level);
  pthread_mutex_unlock(&k->dev->mutex);
  if (rc) {
    context->ReportError(context, "TfLiteGpuDelegate Invoke: %s", err);
    gd_log(k->log_level, GD_LOG_WARNING, "TfLiteGpuDelegate Invoke: %s", err);
    return kTfLiteError;
  }
  return kTfLiteOk;
}

/* ---------------- delegate ---------------- */

static TfLiteStatus delegate_prepare(TfLiteContext* context, TfLiteDelegate* delegate) {
  GpuDelegate* d = (GpuDelegate*)delegate;
  char err[GD_ERR_LEN];
  ModelView mv;
  int quant = (d->cfg.v2.experimental_flags & TFLITE_GPU_EXPERIMENTAL_FLAGS_ENABLE_QUANT) != 0;
  if (mv_build(&mv, context, quant, err, sizeof(err))) {
    context->ReportError(context, "TfLiteGpuDelegate Prepare: %s", err);
    return kTfLiteDelegateError;
  }
  PartitionResult pr;
  pthread_mutex_lock(&d->prepare_mutex);
  TfLiteStatus status = kTfLiteOk;
  if (partition_select(&mv, d->cfg.v2.max_delegated_partitions, d->cfg.log_level, &pr, err, sizeof(err))) {
    context->ReportError(context, "TfLiteGpuDelegate Prepare: %s", err);
    status = kTfLiteDelegateError;
  } else {
    partition_result_free(&d->last);
    d->last = pr;
    d->dispatches = 0;
    d->arena_bytes = d->live_peak_bytes = 0;
    free(d->partition_report);
    d->partition_report = NULL;
    TfLiteRegistration reg;
    memset(&reg, 0, sizeof(reg)); /* registration_external, async_kernel, inplace_operator stay 0 */
    reg.init = kernel_init;
    reg.free = kernel_free;
    reg.prepare = kernel_prepare;
    reg.invoke = kernel_invoke;
    reg.custom_name = "TfLiteGpuDelegateV2";
    reg.version = 1;
    d->current_view = &mv;
    d->init_error[0] = '\0';
    status = context->ReplaceNodeSubsetsWithDelegateKernels(context, reg, pr.nodes, delegate);
    d->current_view = NULL;
    /* A partition that could not be built (a kernel build or an allocation
     * failed) fails the delegate's application: the runtime restores the
     * CPU graph and Python raises ValueError when the interpreter is made. */
    if (status == kTfLiteOk && d->init_error[0]) {
      context->ReportError(context, "TfLiteGpuDelegate Init: %s", d->init_error);
      status = kTfLiteDelegateError;
    }
  }
  pthread_mutex_unlock(&d->prepare_mutex);
  mv_free(&mv);
  return status;
}

static GpuDelegate* delegate_create(GpuConfig* cfg, char* err, size_t errlen) {
  GpuDelegate* d = calloc(1, sizeof(*d));
  if (!d) {
    snprintf(err, errlen, "out of memory");
    gpu_config_free(cfg);
    return NULL;
  }
  d->cfg = *cfg;
  if (gpu_device_create(d->cfg.device, d->cfg.fp16, (KernelSet)d->cfg.kernel_set, &d->dev, err, errlen)) {
    gpu_config_free(&d->cfg);
    free(d);
    return NULL;
  }
  pthread_mutex_init(&d->prepare_mutex, NULL);
  if (d->cfg.v2.experimental_flags & TFLITE_GPU_EXPERIMENTAL_FLAGS_ENABLE_SERIALIZATION) {
    char why[600];
    if (!d->cfg.serialization_dir || !*d->cfg.serialization_dir || !d->cfg.model_token || !*d->cfg.model_token)
      gd_log(d->cfg.log_level, GD_LOG_WARNING,
             "ENABLE_SERIALIZATION needs both serialization_dir and model_token; running without the kernel cache");
    else if (kc_check_dir(d->cfg.serialization_dir, why, sizeof(why)))
      gd_log(d->cfg.log_level, GD_LOG_WARNING, "kernel cache disabled: %s", why);
    else
      d->cache_on = 1;
  }
  d->base.data_ = d;
  d->base.Prepare = delegate_prepare;
  /* Dynamic tensors: lets us claim nodes (custom ops) the CPU could not
   * prepare, at the cost of handling repeated kernel prepares ourselves. */
  d->base.flags = kTfLiteDelegateFlagsAllowDynamicTensors;
  d->base.opaque_delegate_builder = NULL;
  gd_log(d->cfg.log_level, GD_LOG_INFO, "OpenCL device: %s (%s, %s), %s, %s kernels", d->dev->caps.name,
         d->dev->caps.platform, d->dev->caps.version, d->cfg.fp16 ? "FP16 storage" : "FP32",
         kernel_set_name(d->dev->kernel_set));
  return d;
}

static void delegate_destroy(GpuDelegate* d) {
  if (!d) return;
  gpu_device_release(d->dev); /* kernels still alive keep their own reference */
  gpu_config_free(&d->cfg);
  partition_result_free(&d->last);
  free(d->partition_report);
  pthread_mutex_destroy(&d->prepare_mutex);
  free(d);
}

/* ---------------- public API ---------------- */

TFLITE_GPU_EXPORT TfLiteDelegate* TfLiteGpuDelegateV2Create(const TfLiteGpuDelegateOptionsV2* options) {
  char err[GD_ERR_LEN];
  GpuConfig cfg;
  if (gpu_config_from_options(&cfg, options, err, sizeof(err))) {
    gd_log(GD_LOG_WARNING, GD_LOG_WARNING, "TfLiteGpuDelegateV2Create: %s", err);
    return NULL;
  }
  int level = cfg.log_level;
  GpuDelegate* d = delegate_create(&cfg, err, sizeof(err));
  if (!d) gd_log(level, GD_LOG_WARNING, "TfLiteGpuDelegateV2Create: %s", err);
  return d ? &d->base : NULL;
}

TFLITE_GPU_EXPORT void TfLiteGpuDelegateV2Delete(TfLiteDelegate* delegate) {
  delegate_destroy((GpuDelegate*)delegate);
}

TFLITE_GPU_EXPORT const char* TfLiteGpuDelegateVersion(void) { return TFLITE_GPU_VERSION; }

TFLITE_GPU_EXPORT TfLiteDelegate* tflite_plugin_create_delegate(const char* const* options_keys,
                                                                const char* const* options_values,
                                                                size_t num_options,
                                                                void (*report_error)(const char*)) {
  char err[GD_ERR_LEN];
  GpuConfig cfg;
  /* Python passes the count as a C int: use the low 32 bits only. */
  int n = (int)(unsigned int)(num_options & 0xffffffffu);
  if (n < 0) n = 0;
  GpuDelegate* d = NULL;
  if (gpu_config_from_strings(&cfg, options_keys, options_values, n, err, sizeof(err)) == 0)
    d = delegate_create(&cfg, err, sizeof(err));
  if (!d) {
    if (report_error)
      report_error(err);
    else
      gd_log(GD_LOG_WARNING, GD_LOG_WARNING, "tflite-gpu: %s", err);
    return NULL;
  }
  return &d->base;
}

TFLITE_GPU_EXPORT void tflite_plugin_destroy_delegate(TfLiteDelegate* delegate) {
  delegate_destroy((GpuDelegate*)delegate);
}

/* ---- introspection for the Python package (cffi) ---- */

/* Filled by tflite_gpu_delegate_report(); the Python binding declares the
 * same struct. */
typedef struct TfLiteGpuDelegateReport {
  int32_t delegated_nodes;
  int32_t cpu_nodes;
  int32_t partitions;
  int32_t dispatches;
  uint64_t arena_bytes;
  uint64_t live_peak_bytes;
  double compile_seconds;
  int32_t cache_hits;     /* partitions whose programs all came from the kernel cache */
  int32_t cache_misses;   /* partitions that compiled (and will write the cache) */
  int32_t cache_writes;   /* cache files written */
  int32_t cache_rejected; /* cache files found corrupt or unreadable */
} TfLiteGpuDelegateReport;

TFLITE_GPU_EXPORT int tflite_gpu_delegate_report(const TfLiteDelegate* delegate, TfLiteGpuDelegateReport* out) {
  const GpuDelegate* d = (const GpuDelegate*)delegate;
  if (!d || !out) return -1;
  out->delegated_nodes = d->last.delegated;
  out->cpu_nodes = d->last.cpu;
  out->partitions = d->last.partitions;
  out->dispatches = d->dispatches;
  out->arena_bytes = d->arena_bytes;
  out->live_peak_bytes = d->live_peak_bytes;
  out->compile_seconds = d->compile_seconds;
  pthread_mutex_lock(&d->dev->mutex);
  gpu_device_wait_cache_writes(d->dev); /* counts final: writes run on their own threads */
  out->cache_hits = d->dev->cache.hits;
  out->cache_misses = d->dev->cache.misses;
  out->cache_writes = d->dev->cache.writes;
  out->cache_rejected = d->dev->cache.rejected;
  pthread_mutex_unlock(&d->dev->mutex);
  return 0;
}

/* "kernel\tcalls\ttotal_ms" per kernel, summed over every invoke since the
 * delegate was created (needs TFLITE_GPU_PROFILE=1 at creation). */
TFLITE_GPU_EXPORT size_t tflite_gpu_delegate_profile(const TfLiteDelegate* delegate, char* buf, size_t size) {
  const GpuDelegate* d = (const GpuDelegate*)delegate;
  if (!d) return 0;
  size_t used = 0;
  pthread_mutex_lock(&d->dev->mutex);
  for (int i = 0; i < d->dev->num_profile; ++i) {
    int n = snprintf(used < size ? buf + used : NULL, used < size ? size - used : 0, "%s\t%ld\t%.6f\n",
                     d->dev->profile[i].kernel, d->dev->profile[i].calls, d->dev->profile[i].total_ns * 1e-6);
    if (n > 0) used += (size_t)n;
  }
  pthread_mutex_unlock(&d->dev->mutex);
  return used;
}

/* what = 0: PartitionResult.node_report of the last Prepare (see
 * partition.h); what = 1: the partitions built, one line per kernel. */
TFLITE_GPU_EXPORT size_t tflite_gpu_delegate_nodes(const TfLiteDelegate* delegate, int what, char* buf, size_t size) {
  const GpuDelegate* d = (const GpuDelegate*)delegate;
  const char* text = !d ? "" : what == 0 ? d->last.node_report : d->partition_report;
  if (!text) text = "";
  size_t len = strlen(text);
  if (size) snprintf(buf, size, "%s", text);
  return len;
}

TFLITE_GPU_EXPORT int tflite_gpu_list_devices(char* buf, size_t size, char* err, size_t errlen) {
  return gpu_device_list(buf, size, err, errlen);
}

TFLITE_GPU_EXPORT int tflite_gpu_describe_device(int index, char* buf, size_t size, char* err, size_t errlen) {
  return gpu_device_describe(index, buf, size, err, errlen);
}

TFLITE_GPU_EXPORT size_t tflite_gpu_describe_ops(char* buf, size_t size) { return op_table_describe(buf, size); }

TFLITE_GPU_EXPORT size_t tflite_gpu_describe_options(char* buf, size_t size) {
  return gpu_config_describe(buf, size);
}

TFLITE_GPU_EXPORT int tflite_gpu_delegate_device(const TfLiteDelegate* delegate, char* buf, size_t size) {
  const GpuDelegate* d = (const GpuDelegate*)delegate;
  if (!d) return -1;
  return snprintf(buf, size, "%s\t%s\t%s\t%s\t%s", d->dev->caps.platform, d->dev->caps.name, d->dev->caps.version,
                  d->cfg.fp16 ? "fp16" : "fp32", kernel_set_name(d->dev->kernel_set));
}
