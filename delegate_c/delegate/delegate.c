/* The TfLiteDelegate: creation from a validated configuration, Prepare
 * (choose the nodes, then replace each partition with one delegate kernel,
 * partition_kernel.c) and destruction. The entry points that create one
 * are in c_api.c; what it reports, in introspection.c. */
#include "delegate/delegate.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "runtime/capture.h"
#include "cl/cl_device.h"
#include "model/const_fold.h"
#include "gpu_delegate.h"
#include "gpu_delegate_introspection.h"
#include "cl/kernel_cache.h"
#include "util/log.h"
#include "model/model_view.h"
#include "config/options.h"
#include "delegate/partition.h"
#include "delegate/partition_kernel.h"
#include "model/tflite_abi.h"

static TfLiteStatus delegate_prepare(TfLiteContext* context, TfLiteDelegate* delegate) {
  GpuDelegate* d = (GpuDelegate*)delegate;
  char err[GD_ERR_LEN];
  ModelView mv;
  int quant = (d->cfg.v2.experimental_flags & TFLITE_GPU_EXPERIMENTAL_FLAGS_ENABLE_QUANT) != 0;
  /* The view, then its folded constants (const_fold.c marks them; a view
   * mv_build failed is already freed, and freeing it again is harmless). */
  if (mv_build(&mv, context, quant, err, sizeof(err)) || const_fold_mark(&mv, err, sizeof(err))) {
    mv_free(&mv);
    context->ReportError(context, "TfLiteGpuDelegate Prepare: %s", err);
    return kTfLiteDelegateError;
  }
  PartitionResult pr;
  pthread_mutex_lock(&d->prepare_mutex);
  TfLiteStatus status = kTfLiteOk;
  PartitionPolicy policy = {d->cfg.partition_policy, d->cfg.v2.max_delegated_partitions, d->dev, &d->policy};
  if (partition_select(&mv, &policy, d->cfg.log_level, &pr, err, sizeof(err))) {
    context->ReportError(context, "TfLiteGpuDelegate Prepare: %s", err);
    status = kTfLiteDelegateError;
  } else {
    partition_result_free(&d->last);
    d->last = pr;
    d->dispatches = 0;
    d->arena_bytes = d->live_peak_bytes = 0;
    free(d->partition_report);
    d->partition_report = NULL;
    free(d->groups_report);
    d->groups_report = NULL;
    free(d->phases_report);
    d->phases_report = NULL;
    free(d->tune_report);
    d->tune_report = NULL;
    gpu_device_runs_reset(d->dev);
    TfLiteRegistration reg = partition_kernel_registration();
    d->current_view = &mv;
    d->init_error[0] = '\0';
    d->init_failure = TFLITE_GPU_FAILURE_NONE;
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

GpuDelegate* delegate_create(GpuConfig* cfg, char* err, size_t errlen) {
  GpuDelegate* d = calloc(1, sizeof(*d));
  if (!d) {
    snprintf(err, errlen, "out of memory");
    gpu_config_free(cfg);
    return NULL;
  }
  d->cfg = *cfg;
  if (gpu_device_create(d->cfg.device, d->cfg.fp16, &d->dev, err, errlen)) {
    gpu_config_free(&d->cfg);
    free(d);
    return NULL;
  }
  PolicyRequest req = policy_request(&d->cfg);
  if (policy_resolve(&d->dev->caps, &req, NULL, &d->policy, err, errlen)) {
    gpu_device_release(d->dev);
    gpu_config_free(&d->cfg);
    free(d);
    return NULL;
  }
  gpu_device_set_choices(d->dev, (int)d->policy.v[POL_INLINE_RARE], (int)d->policy.v[POL_VLOAD4],
                         (int)d->policy.v[POL_BUILD_THREADS]);
  d->capture = capture_store_new();
  if (!d->capture) {
    snprintf(err, errlen, "out of memory");
    gpu_device_release(d->dev);
    gpu_config_free(&d->cfg);
    free(d);
    return NULL;
  }
  d->dev->log_level = d->cfg.log_level;
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
  gd_log(d->cfg.log_level, GD_LOG_INFO, "OpenCL device: %s (%s, %s), %s, %s kernels, %s execution (policy row %s)",
         d->dev->caps.name, d->dev->caps.platform, d->dev->caps.version, d->cfg.fp16 ? "FP16 storage" : "FP32",
         kernel_set_name((KernelSet)policy_build_kernel_set(&d->policy)), kExecutionNames[d->policy.v[POL_EXECUTION]],
         d->policy.rule);
  return d;
}

void delegate_destroy(GpuDelegate* d) {
  if (!d) return;
  pthread_mutex_lock(&d->dev->mutex);
  capture_set(d->capture, 0); /* kernels still alive keep the (empty) store */
  pthread_mutex_unlock(&d->dev->mutex);
  capture_store_release(d->capture);
  gpu_device_release(d->dev); /* kernels still alive keep their own reference */
  gpu_config_free(&d->cfg);
  partition_result_free(&d->last);
  free(d->partition_report);
  free(d->groups_report);
  free(d->phases_report);
  free(d->tune_report);
  pthread_mutex_destroy(&d->prepare_mutex);
  free(d);
}
