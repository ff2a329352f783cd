/* See partition_kernel.h. */
#include "delegate/partition_kernel.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cl/cl_device.h"
#include "model/const_fold.h"
#include "delegate/delegate.h"
#include "gpu_delegate_introspection.h"
#include "runtime/executor.h"
#include "runtime/fp16_guard.h"
#include "passes/fuse.h"
#include "select/selectors.h"
#include "runtime/capture.h"
#include "runtime/launch_groups.h"
#include "util/log.h"
#include "passes/mixed_storage.h"
#include "model/model_view.h"
#include "ops/op_table.h"
#include "config/options.h"
#include "delegate/pipeline.h"
#include "delegate/serialization.h"
#include "model/int_fold.h"
#include "delegate/partition_policy.h"
#include "vm/vm.h"

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
  TfLiteIntArray* output_tensors;  /* the ones the kernels compute */
  TfLiteIntArray* const_outputs;   /* folded constants the runtime still wants written (int_fold.h) */
  unsigned char* const_data;       /* their bytes, evaluated once per plan */
  size_t* const_offsets;           /* output i: const_data[offsets[i], offsets[i + 1]) */
  int const_count;                 /* outputs evaluated (all, once the plan is built) */
  int stale;               /* a re-plan failed: output shapes must be inferred again */
  int replans;             /* successful re-plans, for reports and tests */
  char* float_outputs;     /* fp16_guard: per output, 1 = it and what it depends on stay on float */
  Policy policy;           /* the partition's choices (select/policy.h): rule, remembered, options, overrides */
  PolicyStore store;       /* where its remembered policy lives (policy_store.h) */
  signed char* tune;       /* per dispatch, log2 of its group's scale; NULL: the selector's groups */
  int tune_len;
  unsigned passes;         /* the fusion passes of the last build (fuse.h) */
  int pass_counts[FUSE_NUM_PASSES]; /* and what each did */
  struct CaptureStore* capture; /* its delegate's (runtime/capture.h), a reference of its own */
  int index;               /* its order among the partitions of that Prepare */
  char error[GD_ERR_LEN];  /* init failure, reported by prepare */
} PartitionKernel;

/* Appends a kernel's line to d->partition_report (best effort). */
static void record_partition(GpuDelegate* d, const TfLiteIntArray* nodes, int dispatches, unsigned passes,
                             const int* counts, const VmState* vm, const char* declined, const Policy* pol) {
  char policy[2048];
  policy_format(pol, 1, policy, sizeof(policy));
  size_t old = d->partition_report ? strlen(d->partition_report) : 0;
  size_t add = 32 + (size_t)nodes->size * 12 + FUSE_NUM_PASSES * 40 + strlen(declined) + strlen(policy);
  char* r = realloc(d->partition_report, old + add);
  if (!r) return;
  d->partition_report = r;
  size_t used = old;
  used += (size_t)snprintf(r + used, add, "%d\t%d\t", nodes->size, dispatches);
  for (int i = 0; i < nodes->size; ++i)
    used += (size_t)snprintf(r + used, old + add - used, "%s%d", i ? "," : "", nodes->data[i]);
  /* The fusion passes that ran (fuse.h), each with what it did. */
  used += (size_t)snprintf(r + used, old + add - used, "\t");
  for (int i = 0, first = 1; i < FUSE_NUM_PASSES; ++i) {
    if (!(passes & FUSE_PASS_BIT(i))) continue;
    used += (size_t)snprintf(r + used, old + add - used, "%s%s=%d", first ? "" : ",", kFusePasses[i].name, counts[i]);
    first = 0;
  }
  /* How it runs, as built (execution, launches per invoke, grid barriers
   * per invoke: persistent only), and why it runs its kernels where a VM
   * mode was asked (vm_plan; empty otherwise). */
  int mode = vm ? vm->mode : GD_EXEC_KERNELS;
  used += (size_t)snprintf(r + used, old + add - used, "\t%s:%d:%d\t%s", kExecutionNames[mode],
                           vm ? vm_launches(vm, mode == GD_EXEC_PERSISTENT) : dispatches,
                           vm && mode == GD_EXEC_PERSISTENT ? vm->barriers : 0, declined);
  /* The policy it was built with, each field with its source (select/policy.h). */
  used += (size_t)snprintf(r + used, old + add - used, "\t%s", policy);
  snprintf(r + used, old + add - used, "\n");
}

/* Appends a line per VM phase to d->phases_report (best effort):
 * "partition\tsegment\tlevel\tkernel\twork-items\tgroups\tgroup size\tnode" (node:
 * the fused graph's, as in the groups report; -1 a boundary conversion). */
static void record_phases(GpuDelegate* d, int partition, const VmState* vm) {
  if (!vm || !vm->phase) return;
  size_t old = d->phases_report ? strlen(d->phases_report) : 0;
  size_t add = (size_t)vm->num_phases * 128 + 1;
  char* r = realloc(d->phases_report, old + add);
  if (!r) return;
  d->phases_report = r;
  size_t used = old;
  r[used] = '\0';
  for (int k = 0; k < vm->num_phases; ++k) {
    const VmPhase* ph = &vm->phase[k];
    used += (size_t)snprintf(r + used, old + add - used, "%d\t%d\t%d\t%s\t%d\t%zu\t%zu\t%d\n", partition,
                             ph->segment, ph->level, ph->kernel, ph->items, vm->grid, vm->group, ph->node);
  }
}

static int cmp_int(const void* a, const void* b) { return *(const int*)a - *(const int*)b; }

static TfLiteIntArray* int_array_copy(const TfLiteIntArray* a) {
  TfLiteIntArray* c = malloc(sizeof(int) * (size_t)(a->size + 1));
  if (c) memcpy(c, a, sizeof(int) * (size_t)(a->size + 1));
  return c;
}

/* The executor's VmProgramCache hook: the VM program's file, once its opcodes are known. */
static void vm_cache_load(void* ctx, char* defines, size_t size) {
  PartitionKernel* k = ctx;
  ser_vm_load(&k->cache, k->dev, defines, size, k->log_level);
}

/* Lowers k->nodes from k->mv (whose tensors hold the current shapes),
 * fuses and builds an executor into ex under policy pol (work-group scales
 * tune). Programs already built on the device are reused; only buffers,
 * arguments and sizes are new. d and params are given for the first build
 * only: it may load programs from the kernel cache (serialization.c); a
 * re-plan reuses what is built. */
static int build_with(PartitionKernel* k, const Policy* pol, const signed char* tune, int tune_len, Executor* ex,
                      char* err, size_t errlen, const GpuDelegate* d, const TfLiteDelegateParams* params) {
  PartitionPlan plan;
  int rc = pipeline_plan(&k->mv, k->nodes, k->output_tensors, k->dev, pol, k->float_outputs, &plan, err, errlen);
  if (rc == 0) {
    k->passes = plan.fuse.passes;
    memcpy(k->pass_counts, plan.fuse.counts, sizeof(k->pass_counts));
  }
  if (rc == 0 && plan.fuse.mixed.float_nodes)
    gd_log(k->log_level, GD_LOG_INFO, "FP16 partition: %d nodes kept on float storage, %d conversions",
           plan.fuse.mixed.float_nodes, plan.fuse.mixed.casts);
  if (rc == 0) {
    pthread_mutex_lock(&k->dev->mutex);
    if (d && d->cache_on)
      ser_partition_begin(&k->cache, d->cfg.serialization_dir, d->cfg.model_token, k->dev, d->current_view, params,
                          (KernelSet)policy_build_kernel_set(pol), policy_vm(pol), k->log_level);
    VmProgramCache vm_cache = {vm_cache_load, k};
    rc = pipeline_build(&plan, ex, k->dev, tune, tune_len, d && d->cache_on ? &vm_cache : NULL, err, errlen);
    if (rc == 0 && d) ser_partition_built(&k->cache, k->dev, k->log_level);
    pthread_mutex_unlock(&k->dev->mutex);
    pipeline_plan_free(&plan);
  }
  return rc;
}

static int build_executor(PartitionKernel* k, Executor* ex, char* err, size_t errlen, const GpuDelegate* d,
                          const TfLiteDelegateParams* params) {
  return build_with(k, &k->policy, k->tune, k->tune_len, ex, err, errlen, d, params);
}

/* The tuner's builds (tuner.h TuneBuildFn): a candidate's policy, no cache. */
static int tune_build(void* ctx, const Policy* p, const signed char* tune, int tune_len, Executor* ex, char* err,
                      size_t errlen) {
  return build_with(ctx, p, tune, tune_len, ex, err, errlen, NULL, NULL);
}

/* fp16_guard=on (FP16 partitions): builds the partition as planned and on
 * float storage, compares their outputs on seeded inputs (fp16_guard.c)
 * and sets k->float_outputs for the outputs too far apart. A failure here
 * leaves the partition all half, with a warning. */
static void guard_fp16(PartitionKernel* k) {
  int n = k->output_tensors->size;
  char* all = malloc((size_t)n + 1);
  char* keep = calloc((size_t)n + 1, 1);
  double* rel = calloc((size_t)n + 1, sizeof(double));
  char err[GD_ERR_LEN] = "";
  Executor half = {0}, ref = {0};
  int flagged = -1;
  if (!all || !keep || !rel) {
    snprintf(err, sizeof(err), "out of memory");
  } else {
    memset(all, 1, (size_t)n);
    k->float_outputs = NULL;
    if (build_executor(k, &half, err, sizeof(err), NULL, NULL) == 0) {
      k->float_outputs = all;
      if (build_executor(k, &ref, err, sizeof(err), NULL, NULL) == 0) {
        pthread_mutex_lock(&k->dev->mutex);
        flagged = fp16_guard_compare(&half, &ref, GD_FP16_GUARD_RTOL, keep, rel, err, sizeof(err));
        executor_free(&ref);
        pthread_mutex_unlock(&k->dev->mutex);
      }
      pthread_mutex_lock(&k->dev->mutex);
      executor_free(&half);
      pthread_mutex_unlock(&k->dev->mutex);
    }
  }
  k->float_outputs = NULL;
  if (flagged < 0) {
    gd_log(k->log_level, GD_LOG_WARNING, "fp16_guard: %s; the partition stays on half storage", err);
  } else {
    for (int i = 0; i < n; ++i)
      if (rel[i] > 0)
        gd_log(k->log_level, GD_LOG_INFO, "fp16_guard: output tensor %d on half storage is %.3g relative L2 from "
               "float%s", k->output_tensors->data[i], rel[i], keep[i] ? ": kept on float with what it depends on" : "");
    if (flagged > 0) k->float_outputs = keep, keep = NULL;
  }
  free(all);
  free(keep);
  free(rel);
}

/* The partition's policy (select/policy.h): the device's rule, what this
 * device remembered for this partition (policy_store.h), the options and
 * the overrides; then, with SUSTAINED_SPEED and nothing remembered (or
 * tune=force), the tuner's choice, remembered. tune=clear forgets. -1 with
 * k->error set when the overrides are not valid. */
/* The partition's policy (partition_policy.h), k->tune its work-group
 * scales; -1 with k->error set when the overrides are not valid. */
static int resolve_policy(PartitionKernel* k, GpuDelegate* d, const TfLiteDelegateParams* params) {
  return partition_policy_resolve(d, k->dev, params, &k->store, &k->policy, &k->tune, &k->tune_len, tune_build, k,
                          k->log_level, k->error, sizeof(k->error));
}

static void remember_input_shapes(PartitionKernel* k) {
  for (int i = 0; i < k->ex.num_inputs; ++i)
    memcpy(&k->input_shapes[4 * i], k->ex.enc.g.tensors[k->ex.inputs[i].tensor].shape, 4 * sizeof(int));
}

/* The bytes of folded output `tensor` in its own type (int32/int64 from
 * int_fold.c, float32 from a folded DEQUANTIZE / DENSIFY), appended to
 * the partition's const_data. */
static int fold_output_bytes(PartitionKernel* k, int tensor, char* err, size_t errlen) {
  const ModelView* mv = &k->mv;
  int type = mv_tensor(mv, tensor)->type;
  size_t n = mv_elements(mv, tensor), es = type == kTfLiteInt64 ? 8 : 4, at = k->const_offsets[k->const_count];
  if (type != kTfLiteInt32 && type != kTfLiteInt64 && type != kTfLiteFloat32)
    return snprintf(err, errlen, "folded output %d has type %s", tensor, type_name(type)), -1;
  unsigned char* grown = realloc(k->const_data, at + n * es + 1);
  if (!grown) return snprintf(err, errlen, "out of memory"), -1;
  k->const_data = grown;
  if (type == kTfLiteFloat32) {
    float* values;
    if (mv_const_float(mv, tensor, &values, err, errlen)) return -1;
    memcpy(grown + at, values, n * es);
    free(values);
  } else {
    int64_t v[INT_FOLD_MAX];
    int count;
    if (int_fold_values(mv, tensor, v, INT_FOLD_MAX, &count, err, errlen)) return -1;
    for (int i = 0; i < count && (size_t)i < n; ++i) {
      int32_t v32 = (int32_t)v[i];
      memcpy(grown + at + (size_t)i * es, es == 8 ? (const void*)&v[i] : (const void*)&v32, es);
    }
  }
  k->const_offsets[++k->const_count] = at + n * es;
  return 0;
}

/* Evaluates the folded outputs once per plan (init, and each re-plan: a
 * SHAPE's value follows a resize); invoke only copies them out. */
static int fold_const_outputs(PartitionKernel* k, char* err, size_t errlen) {
  k->const_count = 0;
  if (!k->const_offsets) k->const_offsets = calloc((size_t)k->const_outputs->size + 1, sizeof(size_t));
  if (!k->const_offsets) return snprintf(err, errlen, "out of memory"), -1;
  for (int i = 0; i < k->const_outputs->size; ++i)
    if (fold_output_bytes(k, k->const_outputs->data[i], err, errlen)) return -1;
  return 0;
}

/* Moves the folded constants among the partition's outputs (a SHAPE
 * value read in another partition, say) to const_outputs: no kernel
 * computes them; invoke writes them from the fold. */
static int split_const_outputs(PartitionKernel* k) {
  k->const_outputs = int_array_copy(k->output_tensors);
  if (!k->const_outputs) return -1;
  int kept = 0, folded = 0;
  for (int i = 0; i < k->output_tensors->size; ++i) {
    int t = k->output_tensors->data[i];
    if (t >= 0 && t < k->mv.num_tensors && k->mv.const_kind[t] == CONST_FOLDED) k->const_outputs->data[folded++] = t;
    else k->output_tensors->data[kept++] = t;
  }
  k->output_tensors->size = kept;
  k->const_outputs->size = folded;
  return 0;
}

static int write_const_outputs(PartitionKernel* k, TfLiteContext* context, char* err, size_t errlen) {
  if (k->const_count != k->const_outputs->size) return snprintf(err, errlen, "folded outputs not evaluated"), -1;
  for (int i = 0; i < k->const_count; ++i) {
    TfLiteTensor* dst = &context->tensors[k->const_outputs->data[i]];
    size_t bytes = k->const_offsets[i + 1] - k->const_offsets[i];
    if (!dst->data.raw || dst->bytes < bytes)
      return snprintf(err, errlen, "folded output %d has no buffer of %zu bytes", k->const_outputs->data[i], bytes), -1;
    memcpy(dst->data.raw, k->const_data + k->const_offsets[i], bytes);
  }
  return 0;
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
  if (split_const_outputs(k)) {
    snprintf(k->error, sizeof(k->error), "out of memory");
    return k;
  }
  if (fold_const_outputs(k, k->error, sizeof(k->error))) return k;
  int rejected_before = k->dev->build_failures;
  /* The rule's policy for the guard's builds; the tuner then times the
   * candidates on float outputs as the guard left them. */
  PolicyRequest req = policy_request(&d->cfg);
  if (policy_resolve(&k->dev->caps, &req, NULL, &k->policy, k->error, sizeof(k->error))) return k;
  if (k->dev->fp16 && d->cfg.fp16_guard) guard_fp16(k);
  if (resolve_policy(k, d, params)) return k;
  k->built = build_executor(k, &k->ex, k->error, sizeof(k->error), d, params) == 0;
  if (k->built) {
    k->input_shapes = malloc((size_t)(k->ex.num_inputs + 1) * 4 * sizeof(int));
    if (!k->input_shapes) {
      k->built = 0;
      snprintf(k->error, sizeof(k->error), "out of memory");
    } else {
      remember_input_shapes(k);
      for (const char* c = d->partition_report; c && *c; ++c) k->index += *c == '\n';
      k->capture = capture_store_ref(d->capture);
      record_partition(d, params->nodes_to_replace, k->ex.enc.num_dispatches, k->passes, k->pass_counts, k->ex.vm,
                       k->ex.vm_declined, &k->policy);
      launch_groups_report(&k->ex.enc, k->index, &d->groups_report); /* best effort, as the line above */
      record_phases(d, k->index, k->ex.vm);
      d->dispatches += k->ex.enc.num_dispatches;
      d->arena_bytes += k->ex.arena_bytes;
      d->live_peak_bytes += k->ex.lower_bound_bytes;
      d->compile_seconds = k->dev->compile_seconds;
      gd_log(k->log_level, GD_LOG_INFO, "partition of %d nodes: %d kernels, arena %zu bytes (live peak %zu)",
             params->nodes_to_replace->size, k->ex.enc.num_dispatches, k->ex.arena_bytes, k->ex.lower_bound_bytes);
    }
  }
  if (!k->built) {
    gd_log(k->log_level, GD_LOG_WARNING, "TfLiteGpuDelegate Init: %s", k->error);
    if (!d->init_error[0]) {
      snprintf(d->init_error, sizeof(d->init_error), "%s", k->error);
      /* The device's compiler rejected a kernel: tflite-gpu fails on this
       * device, whatever the model (the CLI's exit 5, not 4). */
      d->init_failure = k->dev->build_failures > rejected_before ? TFLITE_GPU_FAILURE_KERNEL_BUILD
                                                                 : TFLITE_GPU_FAILURE_OTHER;
    }
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
  capture_store_release(k->capture);
  ser_partition_free(&k->cache);
  policy_store_free(&k->store);
  mv_free(&k->mv);
  free(k->nodes);
  free(k->output_tensors);
  free(k->const_outputs);
  free(k->const_data);
  free(k->const_offsets);
  free(k->input_shapes);
  free(k->float_outputs);
  free(k->tune);
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
    NodeInfo ni = {&k->mv, k->nodes->data[i], NULL, NULL, why, sizeof(why), NULL};
    if (mv_node(&k->mv, ni.index, &ni.node, &ni.reg)) {
      rc = -1;
      snprintf(err, errlen, "GetNodeAndRegistration(%d) failed", ni.index);
      break;
    }
    const OpDef* def = op_lookup(ni.reg);
    if (def && !def->lower) continue;
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
  if (fold_const_outputs(k, err, errlen)) return -1; /* stays stale: the next prepare tries again */
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

/* How the last invoke ran, for reports (GpuDevice.runs). Under the device mutex. */
static void record_run(PartitionKernel* k) {
  const VmState* vm = k->ex.vm;
  GpuRun* r = &k->dev->runs[k->index];
  r->ran = 1;
  r->mode = !vm ? GD_EXEC_KERNELS : vm->last_persistent ? GD_EXEC_PERSISTENT : GD_EXEC_STEPPED;
  r->launches = vm ? vm->last_launches : k->ex.enc.num_dispatches;
  snprintf(r->fallback, sizeof(r->fallback), "%.190s", vm ? vm->fallback : k->ex.vm_declined);
  /* Phase times (best effort: none kept when memory runs out). */
  r->timed = 0;
  if (!vm || !vm->timed) return;
  if (r->num_phase_ns != vm->num_phases) {
    double* ns = realloc(r->phase_ns, (size_t)vm->num_phases * sizeof(double));
    if (!ns) return;
    r->phase_ns = ns;
    r->num_phase_ns = vm->num_phases;
  }
  for (int p = 0; p < vm->num_phases; ++p) r->phase_ns[p] = vm->phase[p].ns;
  r->timed = vm->timed;
}

static TfLiteStatus kernel_invoke(TfLiteContext* context, TfLiteNode* node) {
  PartitionKernel* k = node->user_data;
  if (!k || !k->built) {
    context->ReportError(context, "TfLiteGpuDelegate Invoke: delegate is not initialized");
    return kTfLiteError;
  }
  char err[GD_ERR_LEN];
  pthread_mutex_lock(&k->dev->mutex);
  k->ex.capture = capture_active(k->capture);
  k->ex.capture_partition = k->index;
  int rc = executor_invoke(&k->ex, context, err, sizeof(err));
  k->ex.capture = NULL;
  if (rc == 0 && k->index < GD_MAX_RUNS) record_run(k);
  if (rc == 0) rc = write_const_outputs(k, context, err, sizeof(err));
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

TfLiteRegistration partition_kernel_registration(void) {
  TfLiteRegistration reg;
  memset(&reg, 0, sizeof(reg)); /* registration_external, async_kernel, inplace_operator stay 0 */
  reg.init = kernel_init;
  reg.free = kernel_free;
  reg.prepare = kernel_prepare;
  reg.invoke = kernel_invoke;
  reg.custom_name = "TfLiteGpuDelegateV2";
  reg.version = 1;
  return reg;
}
