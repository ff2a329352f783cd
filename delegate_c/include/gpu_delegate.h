/* tflite-gpu public C API: an OpenCL GPU delegate for TensorFlow Lite.
 *
 * Source compatible with upstream's tensorflow/lite/delegates/gpu/delegate.h
 * and delegate_options.h (TF 2.14): same option struct (field order, types,
 * defaults), enums and flag values; plain C (C99 and later) or C++. Use
 * with a TfLite build:
 *
 *   TfLiteGpuDelegateOptionsV2 o = TfLiteGpuDelegateOptionsV2Default();
 *   TfLiteDelegate* d = TfLiteGpuDelegateV2Create(&o);
 *   interpreter->ModifyGraphWithDelegate(d);
 *   ...                      // Invoke() as usual
 *   // destroy the interpreter first, then:
 *   TfLiteGpuDelegateV2Delete(d);
 *
 * or load the same library as an external delegate (tflite_plugin_*). */
#ifndef TFLITE_GPU_DELEGATE_H
#define TFLITE_GPU_DELEGATE_H

#include <stddef.h> /* size_t */
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TFLITE_GPU_EXPORT __attribute__((visibility("default")))

/* The Python package's cffi binding reads the declarations between the
 * cffi markers from this text (dropping preprocessor lines and
 * TFLITE_GPU_EXPORT); see gpu_delegate_introspection.h. */
/* cffi-begin */

typedef enum TfLiteGpuInferenceUsage {
  TFLITE_GPU_INFERENCE_PREFERENCE_FAST_SINGLE_ANSWER = 0,
  TFLITE_GPU_INFERENCE_PREFERENCE_SUSTAINED_SPEED = 1,
  TFLITE_GPU_INFERENCE_PREFERENCE_BALANCED = 2,
} TfLiteGpuInferenceUsage;

typedef enum TfLiteGpuInferencePriority {
  TFLITE_GPU_INFERENCE_PRIORITY_AUTO = 0,
  TFLITE_GPU_INFERENCE_PRIORITY_MAX_PRECISION = 1,
  TFLITE_GPU_INFERENCE_PRIORITY_MIN_LATENCY = 2,
  TFLITE_GPU_INFERENCE_PRIORITY_MIN_MEMORY_USAGE = 3,
} TfLiteGpuInferencePriority;

enum TfLiteGpuExperimentalFlags {
  TFLITE_GPU_EXPERIMENTAL_FLAGS_NONE = 0,
  TFLITE_GPU_EXPERIMENTAL_FLAGS_ENABLE_QUANT = 1 << 0,
  TFLITE_GPU_EXPERIMENTAL_FLAGS_CL_ONLY = 1 << 1,
  TFLITE_GPU_EXPERIMENTAL_FLAGS_GL_ONLY = 1 << 2,
  TFLITE_GPU_EXPERIMENTAL_FLAGS_ENABLE_SERIALIZATION = 1 << 3,
};

typedef struct {
  /* -1 (the default): precision follows the priorities below (FP32 by
   * default). 0: FP32. 1: FP16 storage allowed. */
  int32_t is_precision_loss_allowed;
  int32_t inference_preference;   /* TfLiteGpuInferenceUsage */
  int32_t inference_priority1;    /* TfLiteGpuInferencePriority */
  int32_t inference_priority2;
  int32_t inference_priority3;
  int64_t experimental_flags;     /* TfLiteGpuExperimentalFlags bits */
  int32_t max_delegated_partitions;
  const char* serialization_dir;  /* with ENABLE_SERIALIZATION and model_token */
  const char* model_token;
} TfLiteGpuDelegateOptionsV2;

struct TfLiteDelegate;
/* TfLiteDelegate as a type name in C as well, as upstream's common.h makes
 * it (C++ has it from the struct declaration). Not repeated when that header
 * (TF 2.x tensorflow/lite/c/common.h or core/c/common.h) was included first:
 * C99 refuses a second typedef. Included after this one, its typedef is a
 * permitted repeat in C11 and C++. */
#if !defined(__cplusplus) && !defined(TENSORFLOW_LITE_CORE_C_COMMON_H_) && !defined(TENSORFLOW_LITE_C_COMMON_H_) && \
    !defined(TFLITE_GPU_TFLITE_ABI_H)
typedef struct TfLiteDelegate TfLiteDelegate;
#endif

TFLITE_GPU_EXPORT TfLiteGpuDelegateOptionsV2 TfLiteGpuDelegateOptionsV2Default(void);

/* NULL options means the defaults. Returns NULL when no OpenCL device can
 * be used or the options are invalid; the reason goes to stderr. */
TFLITE_GPU_EXPORT struct TfLiteDelegate* TfLiteGpuDelegateV2Create(const TfLiteGpuDelegateOptionsV2* options);

/* NULL is a no-op. Destroy every interpreter using the delegate first. */
TFLITE_GPU_EXPORT void TfLiteGpuDelegateV2Delete(struct TfLiteDelegate* delegate);

/* Library version string, "MAJOR.MINOR.PATCH". */
TFLITE_GPU_EXPORT const char* TfLiteGpuDelegateVersion(void);

/* External-delegate plugin entry points (tflite_runtime / ai_edge_litert
 * load_delegate, benchmark_model --external_delegate_path). */
TFLITE_GPU_EXPORT struct TfLiteDelegate* tflite_plugin_create_delegate(const char* const* options_keys,
                                                                      const char* const* options_values,
                                                                      size_t num_options,
                                                                      void (*report_error)(const char*));
TFLITE_GPU_EXPORT void tflite_plugin_destroy_delegate(struct TfLiteDelegate* delegate);

/* cffi-end */

#ifdef __cplusplus
}
#endif

#endif
