/* Stand-in for upstream's tensorflow/lite/c/common.h (TF 2.14), for the
 * install test: like the real one, it only includes the core header. */
#ifndef TENSORFLOW_LITE_C_COMMON_H_
#define TENSORFLOW_LITE_C_COMMON_H_
#include "tensorflow/lite/core/c/common.h"
#endif
