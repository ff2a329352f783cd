/* Stand-in for upstream's tensorflow/lite/core/c/common.h (TF 2.14): its
 * include guard and its TfLiteDelegate typedef (first fields only), which
 * is all the install test needs to check the two headers side by side. */
#ifndef TENSORFLOW_LITE_CORE_C_COMMON_H_
#define TENSORFLOW_LITE_CORE_C_COMMON_H_
#include <stdint.h>
typedef struct TfLiteDelegate {
  void* data_;
  void* Prepare;
  void* CopyFromBufferHandle;
  void* CopyToBufferHandle;
  void* FreeBufferHandle;
  int64_t flags;
} TfLiteDelegate;
#endif
