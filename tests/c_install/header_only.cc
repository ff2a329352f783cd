// The public header on its own, compiled as C++ (it must be self-contained).
#include <tflite_gpu/gpu_delegate.h>

int main() {
  TfLiteGpuDelegateOptionsV2 o = TfLiteGpuDelegateOptionsV2Default();
  TfLiteDelegate* (*create)(const TfLiteGpuDelegateOptionsV2*) = TfLiteGpuDelegateV2Create;
  return o.max_delegated_partitions == 1 && create ? 0 : 1;
}
