/* The public C API of gpu_delegate.h that creates and destroys delegates:
 * upstream's TfLiteGpuDelegateV2Create/Delete (option struct) and the
 * external-delegate plugin entry points (string options). Both validate
 * into one GpuConfig (options.c) and build the same GpuDelegate. */
#include <stdio.h>

#include "delegate/delegate.h"
#include "gpu_delegate.h"
#include "util/log.h"
#include "config/options.h"
#include "model/tflite_abi.h"

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
