// The public header on its own, compiled as C++ (it must be self-contained).
#include <tflite_gpu/gpu_delegate.h>

int main() {
  TfLiteGpuDelegateOptionsV2 o = TfLiteGpuDelegateOptionsV2Default();
  return o.max_delegated_partitions == 1 ? 0 : 1;
}
