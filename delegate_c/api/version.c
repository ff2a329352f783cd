/* TfLiteGpuDelegateVersion(): the string of version.h. */
#include "gpu_delegate.h"
#include "version.h"

TFLITE_GPU_EXPORT const char* TfLiteGpuDelegateVersion(void) { return TFLITE_GPU_VERSION; }
