/* The installed header next to upstream's tensorflow/lite/c/common.h (a
 * stand-in from upstream_stub/): no redefinition error whichever comes
 * first in C11 and C++ (OURS_FIRST), or with upstream's first in C99, and
 * TfLiteDelegate* is upstream's full type. Compiled as C and as C++. */
#ifdef CORE_HEADER /* the header under core/, included directly */
#define UPSTREAM <tensorflow/lite/core/c/common.h>
#else
#define UPSTREAM <tensorflow/lite/c/common.h>
#endif
#ifndef OURS_FIRST
#include UPSTREAM
#endif
#include <tflite_gpu/gpu_delegate.h>
#ifdef OURS_FIRST
#include UPSTREAM
#endif

int main(void) {
  TfLiteGpuDelegateOptionsV2 o = TfLiteGpuDelegateOptionsV2Default();
  TfLiteDelegate* d = TfLiteGpuDelegateV2Create(&o);
  int flags = d ? (int)d->flags : 0; /* the complete struct, from upstream */
  TfLiteGpuDelegateV2Delete(d);
  return flags;
}
