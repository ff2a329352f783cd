/* Our own declarations of the TensorFlow Lite C ABI that a delegate plugin
 * exchanges with the runtime: tflite-runtime 2.14 (TF commit 4dacf3f3) and
 * ai-edge-litert 2.x (LiteRT appends fields and enum values only, so the
 * 2.14 prefix read here is valid for both).
 *
 * No TFLite header ships with the Python wheels, and the plugin must not link
 * any TfLite* symbol, so every struct is declared here field for field. The
 * runtime indexes context->tensors by sizeof(TfLiteTensor) and copies
 * TfLiteRegistration by value, so sizes are checked with static asserts
 * (x86-64 / LP64 numbers, confirmed at run time in both runtimes). */
#ifndef TFLITE_GPU_TFLITE_ABI_H
#define TFLITE_GPU_TFLITE_ABI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef enum TfLiteStatus {
  kTfLiteOk = 0,
  kTfLiteError = 1,
  kTfLiteDelegateError = 2,
  kTfLiteApplicationError = 3,
  kTfLiteDelegateDataNotFound = 4,
  kTfLiteDelegateDataWriteError = 5,
  kTfLiteDelegateDataReadError = 6,
  kTfLiteUnresolvedOps = 7,
  kTfLiteCancelled = 8,
} TfLiteStatus;

/* Values 0..18 as in 2.14; LiteRT adds 19..23, which we treat as unsupported. */
typedef enum {
  kTfLiteNoType = 0,
  kTfLiteFloat32 = 1,
  kTfLiteInt32 = 2,
  kTfLiteUInt8 = 3,
  kTfLiteInt64 = 4,
  kTfLiteString = 5,
  kTfLiteBool = 6,
  kTfLiteInt16 = 7,
  kTfLiteComplex64 = 8,
  kTfLiteInt8 = 9,
  kTfLiteFloat16 = 10,
  kTfLiteFloat64 = 11,
  kTfLiteComplex128 = 12,
  kTfLiteUInt64 = 13,
  kTfLiteResource = 14,
  kTfLiteVariant = 15,
  kTfLiteUInt32 = 16,
  kTfLiteUInt16 = 17,
  kTfLiteInt4 = 18,
} TfLiteType;

typedef enum TfLiteAllocationType {
  kTfLiteMemNone = 0,
  kTfLiteMmapRo = 1,
  kTfLiteArenaRw = 2,
  kTfLiteArenaRwPersistent = 3,
  kTfLiteDynamic = 4,
  kTfLitePersistentRo = 5,
  kTfLiteCustom = 6,
  kTfLiteVariantObject = 7,
} TfLiteAllocationType;

typedef enum TfLiteDelegateFlags {
  kTfLiteDelegateFlagsNone = 0,
  kTfLiteDelegateFlagsAllowDynamicTensors = 1,
  kTfLiteDelegateFlagsRequirePropagatedShapes = 2,
  kTfLiteDelegateFlagsPerOperatorProfiling = 4,
  /* LiteRT's bit 8 (HintFullyDelegatedToSingleDelegate) is never set: we
   * delegate partially. */
} TfLiteDelegateFlags;

typedef enum TfLiteQuantizationType {
  kTfLiteNoQuantization = 0,
  kTfLiteAffineQuantization = 1,
} TfLiteQuantizationType;

typedef enum TfLiteDimensionType {
  kTfLiteDimDense = 0,
  kTfLiteDimSparseCSR = 1,
} TfLiteDimensionType;

typedef int TfLiteBufferHandle;
enum { kTfLiteNullBufferHandle = -1 };
#define kTfLiteOptionalTensor (-1)

typedef struct TfLiteIntArray {
  int size;
  int data[];
} TfLiteIntArray;

typedef struct TfLiteFloatArray {
  int size;
  float data[];
} TfLiteFloatArray;

typedef struct TfLiteFloat16 {
  uint16_t data;
} TfLiteFloat16;

typedef struct TfLiteQuantizationParams {
  float scale;
  int32_t zero_point;
} TfLiteQuantizationParams;

typedef struct TfLiteQuantization {
  TfLiteQuantizationType type;
  void* params;
} TfLiteQuantization;

typedef struct TfLiteAffineQuantization {
  TfLiteFloatArray* scale;
  TfLiteIntArray* zero_point;
  int32_t quantized_dimension;
} TfLiteAffineQuantization;

typedef union TfLitePtrUnion {
  int32_t* i32;
  uint32_t* u32;
  int64_t* i64;
  uint64_t* u64;
  float* f;
  TfLiteFloat16* f16;
  double* f64;
  char* raw;
  const char* raw_const;
  uint8_t* uint8;
  bool* b;
  int16_t* i16;
  uint16_t* ui16;
  int8_t* int8;
  void* data;
} TfLitePtrUnion;

typedef struct TfLiteDimensionMetadata {
  TfLiteDimensionType format;
  int dense_size;
  TfLiteIntArray* array_segments;
  TfLiteIntArray* array_indices;
} TfLiteDimensionMetadata;

typedef struct TfLiteSparsity {
  TfLiteIntArray* traversal_order;
  TfLiteIntArray* block_map;
  TfLiteDimensionMetadata* dim_metadata;
  int dim_metadata_size;
} TfLiteSparsity;

struct TfLiteDelegate;
struct TfLiteContext;
struct TfLiteRegistration;

typedef struct TfLiteTensor {
  TfLiteType type;
  TfLitePtrUnion data;
  TfLiteIntArray* dims;
  TfLiteQuantizationParams params;
  TfLiteAllocationType allocation_type;
  size_t bytes;
  const void* allocation;
  const char* name;
  struct TfLiteDelegate* delegate;
  TfLiteBufferHandle buffer_handle;
  bool data_is_stale;
  bool is_variable;
  TfLiteQuantization quantization;
  TfLiteSparsity* sparsity;
  const TfLiteIntArray* dims_signature;
} TfLiteTensor;

typedef struct TfLiteNode {
  TfLiteIntArray* inputs;
  TfLiteIntArray* outputs;
  TfLiteIntArray* intermediates;
  TfLiteIntArray* temporaries;
  void* user_data;
  void* builtin_data;
  const void* custom_initial_data;
  int custom_initial_data_size;
  struct TfLiteDelegate* delegate;
  bool might_have_side_effect;
} TfLiteNode;

typedef struct TfLiteDelegateParams {
  struct TfLiteDelegate* delegate;
  TfLiteIntArray* nodes_to_replace;
  TfLiteIntArray* input_tensors;
  TfLiteIntArray* output_tensors;
} TfLiteDelegateParams;

/* Members we never call are still declared with their real signatures so
 * the layout is exact; their bodies belong to the runtime. */
typedef struct TfLiteContext {
  size_t tensors_size;
  TfLiteStatus (*GetExecutionPlan)(struct TfLiteContext* context, TfLiteIntArray** execution_plan);
  TfLiteTensor* tensors;
  void* impl_;
  TfLiteStatus (*ResizeTensor)(struct TfLiteContext*, TfLiteTensor* tensor, TfLiteIntArray* new_size);
  void (*ReportError)(struct TfLiteContext*, const char* msg, ...);
  TfLiteStatus (*AddTensors)(struct TfLiteContext*, int tensors_to_add, int* first_new_tensor_index);
  TfLiteStatus (*GetNodeAndRegistration)(struct TfLiteContext*, int node_index, TfLiteNode** node,
                                         struct TfLiteRegistration** registration);
  TfLiteStatus (*ReplaceNodeSubsetsWithDelegateKernels)(struct TfLiteContext*,
                                                        struct TfLiteRegistration registration,
                                                        const TfLiteIntArray* nodes_to_replace,
                                                        struct TfLiteDelegate* delegate);
  int recommended_num_threads;
  void* (*GetExternalContext)(struct TfLiteContext*, int type);
  void (*SetExternalContext)(struct TfLiteContext*, int type, void* external_context);
  bool allow_fp32_relax_to_fp16;
  void* profiler;
  void* (*AllocatePersistentBuffer)(struct TfLiteContext* ctx, size_t bytes);
  TfLiteStatus (*AllocateBufferForEval)(struct TfLiteContext* ctx, size_t bytes, void** ptr);
  TfLiteStatus (*RequestScratchBufferInArena)(struct TfLiteContext* ctx, size_t bytes, int* buffer_idx);
  void* (*GetScratchBuffer)(struct TfLiteContext* ctx, int buffer_idx);
  TfLiteStatus (*ResizeTensorExplicit)(struct TfLiteContext* ctx, TfLiteTensor* tensor, int dims,
                                       const int* shape);
  TfLiteStatus (*PreviewDelegatePartitioning)(struct TfLiteContext* context,
                                              const TfLiteIntArray* nodes_to_replace,
                                              TfLiteDelegateParams** partition_params_array,
                                              int* num_partitions);
  /* NULL during delegate Prepare in both runtimes: never call it. */
  TfLiteTensor* (*GetTensor)(const struct TfLiteContext* context, int tensor_idx);
  void* (*GetEvalTensor)(const struct TfLiteContext* context, int tensor_idx);
  TfLiteStatus (*GetModelMetadata)(const struct TfLiteContext* context, const char* name,
                                   const char** ptr, size_t* bytes);
  TfLiteStatus (*AcquireSubgraphContext)(struct TfLiteContext* context, int subgraph_index,
                                         struct TfLiteContext** acquired_context);
  TfLiteStatus (*ReleaseSubgraphContext)(struct TfLiteContext* context, int subgraph_index);
} TfLiteContext;

/* All 11 fields: the runtime copies 88 bytes of this struct by value, so the
 * trailing three must exist and be zero (a non-NULL registration_external
 * redirects the runtime; a garbage inplace_operator aliases buffers). */
typedef struct TfLiteRegistration {
  void* (*init)(TfLiteContext* context, const char* buffer, size_t length);
  void (*free)(TfLiteContext* context, void* buffer);
  TfLiteStatus (*prepare)(TfLiteContext* context, TfLiteNode* node);
  TfLiteStatus (*invoke)(TfLiteContext* context, TfLiteNode* node);
  const char* (*profiling_string)(const TfLiteContext* context, const TfLiteNode* node);
  int32_t builtin_code;
  const char* custom_name;
  int version;
  void* registration_external;
  void* (*async_kernel)(TfLiteContext* context, TfLiteNode* node);
  uint64_t inplace_operator;
} TfLiteRegistration;

typedef struct TfLiteDelegate {
  void* data_;
  TfLiteStatus (*Prepare)(TfLiteContext* context, struct TfLiteDelegate* delegate);
  TfLiteStatus (*CopyFromBufferHandle)(TfLiteContext* context, struct TfLiteDelegate* delegate,
                                       TfLiteBufferHandle buffer_handle, TfLiteTensor* tensor);
  TfLiteStatus (*CopyToBufferHandle)(TfLiteContext* context, struct TfLiteDelegate* delegate,
                                     TfLiteBufferHandle buffer_handle, TfLiteTensor* tensor);
  void (*FreeBufferHandle)(TfLiteContext* context, struct TfLiteDelegate* delegate,
                           TfLiteBufferHandle* handle);
  int64_t flags;
  /* Must stay NULL: with Prepare set and this NULL the runtime takes the
   * classic (non-opaque) path in both 2.14 and LiteRT. */
  void* opaque_delegate_builder;
} TfLiteDelegate;

_Static_assert(sizeof(TfLiteIntArray) == 4, "TfLiteIntArray size");
_Static_assert(sizeof(TfLiteQuantizationParams) == 8, "TfLiteQuantizationParams size");
_Static_assert(sizeof(TfLiteQuantization) == 16, "TfLiteQuantization size");
_Static_assert(sizeof(TfLiteAffineQuantization) == 24, "TfLiteAffineQuantization size");
_Static_assert(sizeof(TfLitePtrUnion) == 8, "TfLitePtrUnion size");
_Static_assert(sizeof(TfLiteTensor) == 112, "TfLiteTensor size");
_Static_assert(offsetof(TfLiteTensor, dims) == 16, "TfLiteTensor.dims");
_Static_assert(offsetof(TfLiteTensor, allocation_type) == 32, "TfLiteTensor.allocation_type");
_Static_assert(offsetof(TfLiteTensor, bytes) == 40, "TfLiteTensor.bytes");
_Static_assert(offsetof(TfLiteTensor, name) == 56, "TfLiteTensor.name");
_Static_assert(offsetof(TfLiteTensor, buffer_handle) == 72, "TfLiteTensor.buffer_handle");
_Static_assert(offsetof(TfLiteTensor, quantization) == 80, "TfLiteTensor.quantization");
_Static_assert(offsetof(TfLiteTensor, sparsity) == 96, "TfLiteTensor.sparsity");
_Static_assert(offsetof(TfLiteTensor, dims_signature) == 104, "TfLiteTensor.dims_signature");
_Static_assert(sizeof(TfLiteNode) == 80, "TfLiteNode size");
_Static_assert(offsetof(TfLiteNode, builtin_data) == 40, "TfLiteNode.builtin_data");
_Static_assert(offsetof(TfLiteNode, custom_initial_data_size) == 56, "TfLiteNode.custom_initial_data_size");
_Static_assert(offsetof(TfLiteNode, delegate) == 64, "TfLiteNode.delegate");
_Static_assert(sizeof(TfLiteDelegateParams) == 32, "TfLiteDelegateParams size");
_Static_assert(sizeof(TfLiteContext) == 200, "TfLiteContext size");
_Static_assert(offsetof(TfLiteContext, tensors) == 16, "TfLiteContext.tensors");
_Static_assert(offsetof(TfLiteContext, ReportError) == 40, "TfLiteContext.ReportError");
_Static_assert(offsetof(TfLiteContext, GetNodeAndRegistration) == 56, "TfLiteContext.GetNodeAndRegistration");
_Static_assert(offsetof(TfLiteContext, ReplaceNodeSubsetsWithDelegateKernels) == 64,
               "TfLiteContext.ReplaceNodeSubsetsWithDelegateKernels");
_Static_assert(offsetof(TfLiteContext, recommended_num_threads) == 72, "TfLiteContext.recommended_num_threads");
_Static_assert(offsetof(TfLiteContext, allow_fp32_relax_to_fp16) == 96, "TfLiteContext.allow_fp32_relax_to_fp16");
_Static_assert(offsetof(TfLiteContext, PreviewDelegatePartitioning) == 152,
               "TfLiteContext.PreviewDelegatePartitioning");
_Static_assert(offsetof(TfLiteContext, GetTensor) == 160, "TfLiteContext.GetTensor");
_Static_assert(offsetof(TfLiteContext, ReleaseSubgraphContext) == 192, "TfLiteContext.ReleaseSubgraphContext");
_Static_assert(sizeof(TfLiteRegistration) == 88, "TfLiteRegistration size");
_Static_assert(offsetof(TfLiteRegistration, builtin_code) == 40, "TfLiteRegistration.builtin_code");
_Static_assert(offsetof(TfLiteRegistration, custom_name) == 48, "TfLiteRegistration.custom_name");
_Static_assert(offsetof(TfLiteRegistration, version) == 56, "TfLiteRegistration.version");
_Static_assert(offsetof(TfLiteRegistration, registration_external) == 64, "TfLiteRegistration.registration_external");
_Static_assert(offsetof(TfLiteRegistration, inplace_operator) == 80, "TfLiteRegistration.inplace_operator");
_Static_assert(sizeof(TfLiteDelegate) == 56, "TfLiteDelegate size");
_Static_assert(offsetof(TfLiteDelegate, flags) == 40, "TfLiteDelegate.flags");
_Static_assert(offsetof(TfLiteDelegate, opaque_delegate_builder) == 48, "TfLiteDelegate.opaque_delegate_builder");

#endif
