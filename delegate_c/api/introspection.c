/* The introspection API of gpu_delegate_introspection.h (except the test
 * hooks, debug_api.c): what a delegate's last Prepare built, its kernel
 * profile and device, the OpenCL devices, and the op and option tables. */
#include "gpu_delegate_introspection.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "runtime/capture.h"
#include "cl/cl_device.h"
#include "delegate/delegate.h"
#include "passes/fuse.h"
#include "ops/op_table.h"
#include "config/options.h"
#include "cl/target.h"
#include "util/env_hooks.h"

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
 * delegate was created (needs TFLITE_GPU_PROFILE=1 at creation), then
 * "@queued_to_submit", "@submit_to_start" (over the launches) and "@gap"
 * (over the gaps) lines of the same form: GpuDevice.intervals. */
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
  const struct {
    const char* name;
    long count;
    double ns;
  } iv[3] = {{"@queued_to_submit", d->dev->intervals.launches, d->dev->intervals.queued_to_submit_ns},
             {"@submit_to_start", d->dev->intervals.launches, d->dev->intervals.submit_to_start_ns},
             {"@gap", d->dev->intervals.gaps, d->dev->intervals.gap_ns}};
  for (int i = 0; i < 3 && d->dev->intervals.launches; ++i) {
    int n = snprintf(used < size ? buf + used : NULL, used < size ? size - used : 0, "%s\t%ld\t%.6f\n", iv[i].name,
                     iv[i].count, iv[i].ns * 1e-6);
    if (n > 0) used += (size_t)n;
  }
  pthread_mutex_unlock(&d->dev->mutex);
  return used;
}

static size_t runs_text(GpuDevice* dev, char* buf, size_t size) {
  size_t used = 0;
  if (size) buf[0] = '\0';
  pthread_mutex_lock(&dev->mutex);
  for (int i = 0; i < GD_MAX_RUNS; ++i) {
    const GpuRun* r = &dev->runs[i];
    if (!r->ran) continue;
    int n = snprintf(used < size ? buf + used : NULL, used < size ? size - used : 0, "%d\t%s\t%d\t%s\n", i,
                     kExecutionNames[r->mode], r->launches, r->fallback);
    if (n > 0) used += (size_t)n;
  }
  pthread_mutex_unlock(&dev->mutex);
  return used;
}

/* "partition\tphase\tinvokes\ttotal_ms" per VM phase whose time a
 * profiled persistent invoke stamped (GpuRun.phase_ns). */
static size_t phase_times_text(GpuDevice* dev, char* buf, size_t size) {
  size_t used = 0;
  if (size) buf[0] = '\0';
  pthread_mutex_lock(&dev->mutex);
  for (int i = 0; i < GD_MAX_RUNS; ++i) {
    const GpuRun* r = &dev->runs[i];
    for (int p = 0; r->ran && r->timed && p < r->num_phase_ns; ++p) {
      int n = snprintf(used < size ? buf + used : NULL, used < size ? size - used : 0, "%d\t%d\t%ld\t%.6f\n", i, p,
                       r->timed, r->phase_ns[p] * 1e-6);
      if (n > 0) used += (size_t)n;
    }
  }
  pthread_mutex_unlock(&dev->mutex);
  return used;
}

/* what = 0: PartitionResult.node_report of the last Prepare (see
 * partition.h); what = 1: the partitions built, one line per kernel;
 * what = 2: the measured policy's candidates (PartitionResult.candidates);
 * what = 3: the launch groups of every partition (launch_groups.h);
 * what = 4: how each partition's last invoke ran (GpuDevice.runs);
 * what = 5: the VM phases of every partition (execution=stepped|persistent);
 * what = 6: their times, from profiled persistent invokes on a device with
 * a timer (phase_times_text). */
TFLITE_GPU_EXPORT size_t tflite_gpu_delegate_nodes(const TfLiteDelegate* delegate, int what, char* buf, size_t size) {
  const GpuDelegate* d = (const GpuDelegate*)delegate;
  if (d && what == 4) return runs_text(d->dev, buf, size);
  if (d && what == 6) return phase_times_text(d->dev, buf, size);
  const char* text = !d            ? ""
                     : what == 0   ? d->last.node_report
                     : what == 2   ? d->last.candidates
                     : what == 3   ? d->groups_report
                     : what == 5   ? d->phases_report
                     : what == 7   ? d->tune_report
                                   : d->partition_report;
  if (!text) text = "";
  size_t len = strlen(text);
  if (size) snprintf(buf, size, "%s", text);
  return len;
}

TFLITE_GPU_EXPORT int tflite_gpu_delegate_capture(const TfLiteDelegate* delegate, int on) {
  const GpuDelegate* d = (const GpuDelegate*)delegate;
  if (!d) return -1;
  pthread_mutex_lock(&d->dev->mutex);
  capture_set(d->capture, on != 0);
  pthread_mutex_unlock(&d->dev->mutex);
  return 0;
}

TFLITE_GPU_EXPORT size_t tflite_gpu_delegate_captured(const TfLiteDelegate* delegate, char* buf, size_t size) {
  const GpuDelegate* d = (const GpuDelegate*)delegate;
  if (size) buf[0] = '\0';
  if (!d) return 0;
  size_t used = 0;
  pthread_mutex_lock(&d->dev->mutex);
  const CaptureStore* s = capture_active(d->capture);
  for (int i = 0; s && i < s->count; ++i) {
    const CapturedTensor* c = &s->items[i];
    int n = snprintf(used < size ? buf + used : NULL, used < size ? size - used : 0, "%d\t%d\t%d\t%d,%d,%d,%d\t%d\n",
                     c->partition, c->node, c->tflite_index, c->shape[0], c->shape[1], c->shape[2], c->shape[3],
                     c->data != NULL);
    if (n > 0) used += (size_t)n;
  }
  pthread_mutex_unlock(&d->dev->mutex);
  return used;
}

TFLITE_GPU_EXPORT int tflite_gpu_delegate_captured_data(const TfLiteDelegate* delegate, int index, float* out,
                                                         size_t count) {
  const GpuDelegate* d = (const GpuDelegate*)delegate;
  if (!d || !out) return -1;
  pthread_mutex_lock(&d->dev->mutex);
  const CaptureStore* s = capture_active(d->capture);
  int rc = -1;
  if (s && index >= 0 && index < s->count && s->items[index].data &&
      shape_elements(s->items[index].shape) == count) {
    memcpy(out, s->items[index].data, count * sizeof(float));
    rc = s->failed ? 1 : 0;
  }
  pthread_mutex_unlock(&d->dev->mutex);
  return rc;
}

TFLITE_GPU_EXPORT int tflite_gpu_list_devices(char* buf, size_t size, char* err, size_t errlen) {
  return gpu_device_list(buf, size, err, errlen);
}

TFLITE_GPU_EXPORT int tflite_gpu_describe_device(int index, char* buf, size_t size, char* err, size_t errlen) {
  GpuCaps caps;
  if (gpu_device_query_caps(index, &caps, err, errlen)) return -1;
  Policy rule;
  policy_rule(&caps, &rule);
  char policy[2048];
  policy_format(&rule, 0, policy, sizeof(policy));
  size_t used = gpu_caps_format(&caps, buf, size);
  int w = snprintf(used < size ? buf + used : NULL, used < size ? size - used : 0,
                   "kernel_set_auto\t%s\npolicy_rule\t%s\npolicy\t%s\n",
                   kernel_set_name((KernelSet)rule.v[POL_KERNEL_SET]), rule.rule, policy);
  return (int)(used + (w > 0 ? (size_t)w : 0));
}

TFLITE_GPU_EXPORT size_t tflite_gpu_describe_ops(char* buf, size_t size) { return op_table_describe(buf, size); }

TFLITE_GPU_EXPORT size_t tflite_gpu_describe_passes(char* buf, size_t size) { return fuse_passes_text(buf, size); }

TFLITE_GPU_EXPORT size_t tflite_gpu_describe_policy(char* buf, size_t size) { return policy_describe(buf, size); }

TFLITE_GPU_EXPORT size_t tflite_gpu_describe_env(char* buf, size_t size) { return env_describe(buf, size); }

TFLITE_GPU_EXPORT size_t tflite_gpu_describe_options(char* buf, size_t size) {
  return gpu_config_describe(buf, size);
}

TFLITE_GPU_EXPORT int tflite_gpu_delegate_failure(const TfLiteDelegate* delegate, char* buf, size_t size) {
  const GpuDelegate* d = (const GpuDelegate*)delegate;
  if (!d) return -1;
  if (buf && size) snprintf(buf, size, "%s", d->init_failure ? d->init_error : "");
  return d->init_failure;
}

TFLITE_GPU_EXPORT int tflite_gpu_delegate_device(const TfLiteDelegate* delegate, char* buf, size_t size) {
  const GpuDelegate* d = (const GpuDelegate*)delegate;
  if (!d) return -1;
  return snprintf(buf, size, "%s\t%s\t%s\t%s\t%s\t%s", d->dev->caps.platform, d->dev->caps.name,
                  d->dev->caps.version, d->cfg.fp16 ? "fp16" : "fp32",
                  kernel_set_name((KernelSet)policy_build_kernel_set(&d->policy)), d->policy.rule);
}
