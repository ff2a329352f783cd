/* Builtin operator codes and the parameter structs the runtime hands us in
 * node->builtin_data (2.14 builtin_ops.h / builtin_op_data.h). LiteRT only
 * appends fields to these structs, so reading the 2.14 prefix is safe. */
#ifndef TFLITE_GPU_TFLITE_BUILTINS_H
#define TFLITE_GPU_TFLITE_BUILTINS_H

#include <stdbool.h>
#include <stdint.h>

enum TfLiteBuiltinCode {
  kBuiltinAdd = 0,
  kBuiltinAveragePool2d = 1,
  kBuiltinConcatenation = 2,
  kBuiltinConv2d = 3,
  kBuiltinDepthwiseConv2d = 4,
  kBuiltinDepthToSpace = 5,
  kBuiltinDequantize = 6,
  kBuiltinFloor = 8,
  kBuiltinFullyConnected = 9,
  kBuiltinLocalResponseNormalization = 13,
  kBuiltinLogistic = 14,
  kBuiltinLstm = 16,
  kBuiltinMaxPool2d = 17,
  kBuiltinMul = 18,
  kBuiltinRelu = 19,
  kBuiltinReluN1To1 = 20,
  kBuiltinRelu6 = 21,
  kBuiltinReshape = 22,
  kBuiltinResizeBilinear = 23,
  kBuiltinSoftmax = 25,
  kBuiltinSpaceToDepth = 26,
  kBuiltinTanh = 28,
  kBuiltinCustom = 32,
  kBuiltinPad = 34,
  kBuiltinGather = 36,
  kBuiltinBatchToSpaceNd = 37,
  kBuiltinSpaceToBatchNd = 38,
  kBuiltinTranspose = 39,
  kBuiltinMean = 40,
  kBuiltinSub = 41,
  kBuiltinDiv = 42,
  kBuiltinSqueeze = 43,
  kBuiltinUnidirectionalSequenceRnn = 35,
  kBuiltinUnidirectionalSequenceLstm = 44,
  kBuiltinBidirectionalSequenceLstm = 52,
  kBuiltinStridedSlice = 45,
  kBuiltinLogSoftmax = 50,
  kBuiltinSplit = 49,
  kBuiltinExp = 47,
  kBuiltinDelegate = 51,
  kBuiltinCast = 53,
  kBuiltinPrelu = 54,
  kBuiltinMaximum = 55,
  kBuiltinMinimum = 57,
  kBuiltinTransposeConv = 67,
  kBuiltinSum = 74,
  kBuiltinReduceProd = 81,
  kBuiltinReduceMax = 82,
  kBuiltinReduceMin = 89,
  kBuiltinPadv2 = 60,
  kBuiltinSlice = 65,
  kBuiltinTile = 69,
  kBuiltinExpandDims = 70,
  kBuiltinPack = 83,
  kBuiltinOneHot = 85,
  kBuiltinUnpack = 88,
  kBuiltinResizeNearestNeighbor = 97,
  kBuiltinMirrorPad = 100,
  kBuiltinSplitV = 102,
  kBuiltinLess = 58,
  kBuiltinNeg = 59,
  kBuiltinGreater = 61,
  kBuiltinGreaterEqual = 62,
  kBuiltinLessEqual = 63,
  kBuiltinSelect = 64,
  kBuiltinSin = 66,
  kBuiltinEqual = 71,
  kBuiltinNotEqual = 72,
  kBuiltinLog = 73,
  kBuiltinSqrt = 75,
  kBuiltinRsqrt = 76,
  kBuiltinShape = 77,
  kBuiltinPow = 78,
  kBuiltinLogicalAnd = 86,
  kBuiltinFloorDiv = 90,
  kBuiltinSquare = 92,
  kBuiltinFloorMod = 95,
  kBuiltinLeakyRelu = 98,
  kBuiltinSquaredDifference = 99,
  kBuiltinAbs = 101,
  kBuiltinAddN = 106,
  kBuiltinCos = 108,
  kBuiltinElu = 111,
  kBuiltinQuantize = 114,
  kBuiltinHardSwish = 117,
  kBuiltinSelectV2 = 123,
  kBuiltinDensify = 124,
  kBuiltinBatchMatmul = 126,
  kBuiltinCumsum = 128,
  kBuiltinGelu = 150,
  kBuiltinL2Normalization = 11,
  kBuiltinArgMax = 56,
  kBuiltinArgMin = 79,
  kBuiltinReverseV2 = 105,
  kBuiltinSign = 158,
};

typedef enum {
  kTfLitePaddingUnknown = 0,
  kTfLitePaddingSame = 1,
  kTfLitePaddingValid = 2,
} TfLitePadding;

typedef enum {
  kTfLiteActNone = 0,
  kTfLiteActRelu = 1,
  kTfLiteActReluN1To1 = 2,
  kTfLiteActRelu6 = 3,
  kTfLiteActTanh = 4,
  kTfLiteActSignBit = 5,
  kTfLiteActSigmoid = 6,
} TfLiteFusedActivation;

typedef struct {
  int width;
  int height;
  int width_offset;
  int height_offset;
} TfLitePaddingValues;

typedef struct {
  TfLitePadding padding;
  int stride_width;
  int stride_height;
  TfLiteFusedActivation activation;
  int dilation_width_factor;
  int dilation_height_factor;
} TfLiteConvParams;

typedef struct {
  TfLitePadding padding;
  int stride_width;
  int stride_height;
  int depth_multiplier;
  TfLiteFusedActivation activation;
  int dilation_width_factor;
  int dilation_height_factor;
} TfLiteDepthwiseConvParams;

typedef struct {
  TfLitePadding padding;
  int stride_width;
  int stride_height;
  int filter_width;
  int filter_height;
  TfLiteFusedActivation activation;
  struct {
    TfLitePaddingValues padding;
  } computed;
} TfLitePoolParams;

typedef struct {
  TfLiteFusedActivation activation;
  int weights_format;
  bool keep_num_dims;
  bool asymmetric_quantize_inputs;
} TfLiteFullyConnectedParams;

typedef struct {
  TfLiteFusedActivation activation;
  bool pot_scale_int16;
} TfLiteAddParams;

typedef struct {
  TfLiteFusedActivation activation;
} TfLiteMulParams;

typedef struct {
  int axis;
  TfLiteFusedActivation activation;
} TfLiteConcatenationParams;

typedef struct {
  bool keep_dims;
} TfLiteReducerParams;

typedef struct {
  int shape[8];
  int num_dimensions;
} TfLiteReshapeParams;

typedef struct {
  int32_t squeeze_dims[8];
  int num_squeeze_dims;
} TfLiteSqueezeParams;

typedef struct {
  bool align_corners;
  bool half_pixel_centers;
} TfLiteResizeBilinearParams;

typedef struct {
  int begin_mask;
  int end_mask;
  int ellipsis_mask;
  int new_axis_mask;
  int shrink_axis_mask;
  bool offset;
} TfLiteStridedSliceParams;

typedef struct {
  int block_size;
} TfLiteDepthToSpaceParams;

/* Versions 1-3 (version 4 appends a fused activation, which 2.14's struct
 * may lack, so it is never read). MediaPipe's Convolution2DTransposeBias
 * stores these same three int32s as its raw custom_options. */
typedef struct {
  TfLitePadding padding;
  int stride_width;
  int stride_height;
} TfLiteTransposeConvParams;
typedef struct {
  float beta;
} TfLiteSoftmaxParams;

typedef struct {
  bool adj_x;
  bool adj_y;
  bool asymmetric_quantize_inputs;
} TfLiteBatchMatMulParams;

typedef struct {
  bool exclusive;
  bool reverse;
} TfLiteCumsumParams;

typedef enum { kTfLiteLSTMFullKernel = 0, kTfLiteLSTMBasicKernel = 1 } TfLiteLSTMKernelType;

typedef struct {
  TfLiteFusedActivation activation;
  float cell_clip;
  float proj_clip;
  TfLiteLSTMKernelType kernel_type;
  bool asymmetric_quantize_inputs;
} TfLiteLSTMParams;
typedef struct {
  int block_size;
} TfLiteSpaceToDepthParams;

typedef struct {
  bool align_corners;
  bool half_pixel_centers;
} TfLiteResizeNearestNeighborParams;

typedef enum {
  kTfLiteMirrorPaddingUnknown = 0,
  kTfLiteMirrorPaddingReflect = 1,
  kTfLiteMirrorPaddingSymmetric = 2,
} TfLiteMirrorPaddingMode;

typedef struct {
  TfLiteMirrorPaddingMode mode;
} TfLiteMirrorPaddingParams;

typedef struct {
  int num_splits;
} TfLiteSplitParams;

typedef struct {
  int num_splits;
} TfLiteSplitVParams;

/* ARG_MAX and ARG_MIN: the output's element type (a TfLiteType). */
typedef struct {
  int output_type;
} TfLiteArgMaxParams;
typedef struct {
  int output_type;
} TfLiteArgMinParams;

typedef struct {
  TfLiteFusedActivation activation;
} TfLiteL2NormParams;

/* 2.14 also appends diagonal_recurrent_tensors to the LSTM's (not read:
 * a diagonal recurrent weight shows as rank 1). */
typedef struct {
  TfLiteFusedActivation activation;
  float cell_clip;
  float proj_clip;
  bool time_major;
  bool asymmetric_quantize_inputs;
} TfLiteUnidirectionalSequenceLSTMParams;

typedef struct {
  bool time_major;
  TfLiteFusedActivation activation;
  bool asymmetric_quantize_inputs;
} TfLiteSequenceRNNParams;

typedef struct {
  TfLiteFusedActivation activation;
  float cell_clip;
  float proj_clip;
  bool merge_outputs;
  bool time_major;
  bool asymmetric_quantize_inputs;
} TfLiteBidirectionalSequenceLSTMParams;

typedef struct {
  int radius;
  float bias;
  float alpha;
  float beta;
} TfLiteLocalResponseNormParams;

typedef struct {
  int values_count;
  int axis;
} TfLitePackParams;

typedef struct {
  int num;
  int axis;
} TfLiteUnpackParams;

typedef struct {
  int axis;
  int batch_dims;
} TfLiteGatherParams;

typedef struct {
  int axis;
} TfLiteOneHotParams;
typedef struct {
  TfLiteFusedActivation activation;
} TfLiteDivParams;

typedef struct {
  float alpha;
} TfLiteLeakyReluParams;

typedef struct {
  bool approximate;
} TfLiteGeluParams;

_Static_assert(sizeof(TfLiteConvParams) == 24, "TfLiteConvParams size");
_Static_assert(sizeof(TfLitePoolParams) == 40, "TfLitePoolParams size");
_Static_assert(sizeof(TfLiteReshapeParams) == 36, "TfLiteReshapeParams size");
_Static_assert(sizeof(TfLiteStridedSliceParams) == 24, "TfLiteStridedSliceParams size");

#endif
