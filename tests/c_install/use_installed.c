/* Built against an *installed* tflite-gpu (header + library found through
 * pkg-config or CMake's find_package): the upstream-compatible C API and
 * the external-delegate entry points, end to end.
 * Exit codes: 0 ok, 1 an API result was wrong, 3 no usable OpenCL device. */
#include <tflite_gpu/gpu_delegate.h>
#include <tflite_gpu/gpu_delegate_introspection.h>

#include <stdio.h>
#include <string.h>

static int g_reported = 0;
static void report_error(const char* msg) {
  g_reported = 1;
  fprintf(stderr, "report_error: %s\n", msg);
}

#define EXPECT(cond)                                          \
  do {                                                        \
    if (!(cond)) {                                            \
      fprintf(stderr, "%s:%d: failed: %s\n", __FILE__, __LINE__, #cond); \
      return 1;                                               \
    }                                                         \
  } while (0)

int main(void) {
  printf("version %s\n", TfLiteGpuDelegateVersion());
  EXPECT(strlen(TfLiteGpuDelegateVersion()) > 0);

  TfLiteGpuDelegateOptionsV2 o = TfLiteGpuDelegateOptionsV2Default();
  /* Upstream's defaults (TF 2.14 delegate_options.cc). */
  EXPECT(o.is_precision_loss_allowed == -1);
  EXPECT(o.inference_preference == TFLITE_GPU_INFERENCE_PREFERENCE_FAST_SINGLE_ANSWER);
  EXPECT(o.inference_priority1 == TFLITE_GPU_INFERENCE_PRIORITY_MAX_PRECISION);
  EXPECT(o.inference_priority2 == TFLITE_GPU_INFERENCE_PRIORITY_AUTO);
  EXPECT(o.inference_priority3 == TFLITE_GPU_INFERENCE_PRIORITY_AUTO);
  EXPECT(o.experimental_flags == TFLITE_GPU_EXPERIMENTAL_FLAGS_ENABLE_QUANT);
  EXPECT(o.max_delegated_partitions == 1);
  EXPECT(o.serialization_dir == NULL && o.model_token == NULL);

  /* Invalid options are refused with NULL, not a crash. */
  TfLiteGpuDelegateOptionsV2 bad = o;
  bad.inference_priority1 = TFLITE_GPU_INFERENCE_PRIORITY_AUTO;
  EXPECT(TfLiteGpuDelegateV2Create(&bad) == NULL);
  TfLiteGpuDelegateV2Delete(NULL); /* a no-op */

  const char* keys[] = {"no_such_option"};
  const char* values[] = {"1"};
  EXPECT(tflite_plugin_create_delegate(keys, values, 1, report_error) == NULL);
  EXPECT(g_reported);
  tflite_plugin_destroy_delegate(NULL);

  o.is_precision_loss_allowed = 1;
  /* TfLiteDelegate is a type name in C too, as with upstream's header. */
  TfLiteDelegate* d = TfLiteGpuDelegateV2Create(&o);
  if (!d) {
    fprintf(stderr, "TfLiteGpuDelegateV2Create returned NULL: no usable OpenCL device\n");
    return 3;
  }
  /* The introspection header: a delegate that has not prepared anything. */
  TfLiteGpuDelegateReport report;
  EXPECT(tflite_gpu_delegate_report(d, &report) == 0);
  EXPECT(report.partitions == 0 && report.delegated_nodes == 0);
  EXPECT(tflite_gpu_delegate_report(NULL, &report) == -1);
  TfLiteGpuDebugCounters counters;
  EXPECT(tflite_gpu_debug_counters(&counters) == 0);
  EXPECT(counters.host_allocations == -1); /* a release build does not count */
  TfLiteGpuDelegateV2Delete(d);

  const char* pkeys[] = {"is_precision_loss_allowed", "log_level"};
  const char* pvalues[] = {"0", "silent"};
  d = tflite_plugin_create_delegate(pkeys, pvalues, 2, report_error);
  EXPECT(d != NULL);
  tflite_plugin_destroy_delegate(d);
  printf("ok\n");
  return 0;
}
