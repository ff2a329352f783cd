/* The delegate object behind a TfLiteDelegate*: its configuration, device,
 * the Prepare callback (delegate.c) and what the last Prepare built, which
 * the partition kernels fill (partition_kernel.c) and the introspection
 * API reads (introspection.c). */
#ifndef TFLITE_GPU_DELEGATE_OBJECT_H
#define TFLITE_GPU_DELEGATE_OBJECT_H

#include <pthread.h>
#include <stddef.h>

#include "cl/cl_device.h"
#include "model/model_view.h"
#include "config/options.h"
#include "delegate/partition.h"
#include "model/tflite_abi.h"
#include "select/policy.h"
#include "util/log.h" /* GD_ERR_LEN */

typedef struct GpuDelegate {
  TfLiteDelegate base; /* first, so a TfLiteDelegate* is a GpuDelegate* */
  GpuConfig cfg;
  GpuDevice* dev;
  struct CaptureStore* capture; /* check --bisect's read-backs (runtime/capture.h); its kernels hold references */
  /* The policy as the device's rule and the options give it, nothing
   * remembered: its per-device fields are the device's (set at create);
   * each partition resolves its own (partition_kernel.c). */
  Policy policy;
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
  char* partition_report;   /* one line per kernel: "nodes\tkernels\tnode,node,...\tpasses" */
  char* groups_report;      /* one line per graph node of every kernel (launch_groups.h) */
  char* phases_report;      /* one line per VM phase of every kernel (partition_kernel.c, record_phases) */
  char* tune_report;        /* one line per tuner candidate of every tuned kernel (partition_kernel.c) */
  char init_error[GD_ERR_LEN]; /* first kernel init failure of the running Prepare */
  int init_failure;            /* its TFLITE_GPU_FAILURE_* kind (gpu_delegate_introspection.h) */
} GpuDelegate;

/* Takes cfg (freed on failure); NULL with err set when no device opens or
 * an override of the policy is not valid. */
GpuDelegate* delegate_create(GpuConfig* cfg, char* err, size_t errlen);
/* NULL is a no-op. Kernels still alive keep their own device reference. */
void delegate_destroy(GpuDelegate* d);

#endif
