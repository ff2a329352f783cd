// The public headers on their own, compiled as C++ (they must be self-contained).
#include <tflite_gpu/gpu_delegate_introspection.h>
#include <tflite_gpu/gpu_delegate.h>

int main() {
  TfLiteGpuDelegateOptionsV2 o = TfLiteGpuDelegateOptionsV2Default();
  TfLiteDelegate* (*create)(const TfLiteGpuDelegateOptionsV2*) = TfLiteGpuDelegateV2Create;
  int (*report)(const TfLiteDelegate*, TfLiteGpuDelegateReport*) = tflite_gpu_delegate_report;
  return o.max_delegated_partitions == 1 && create && report ? 0 : 1;
}
