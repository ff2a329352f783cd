/* See const_fold.h. */
#include "model/const_fold.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/int_fold.h"
#include "model/sparse_densify.h"
#include "model/tflite_builtins.h"

/* A DEQUANTIZE of a constant float16 (always) or int8/uint8 (with
 * ENABLE_QUANT) tensor, a DENSIFY of a constant sparse tensor (FOLD_CONST),
 * or integer shape arithmetic (int_fold.c). 0: not folded. */
static int node_fold_kind(const ModelView* mv, const TfLiteNode* node, const TfLiteRegistration* reg) {
  int kind = int_fold_kind(mv, node, reg);
  if (kind) return kind;
  if (!node->inputs || !node->outputs || node->inputs->size != 1 || node->outputs->size != 1) return 0;
  int in = node->inputs->data[0];
  if (in < 0 || in >= mv->num_tensors || mv->const_kind[in] == CONST_NONE) return 0;
  const TfLiteTensor* t = mv_tensor(mv, in);
  if (reg->builtin_code == kBuiltinDequantize) {
    if (t->type == kTfLiteFloat16) return FOLD_CONST;
    if ((t->type == kTfLiteInt8 || t->type == kTfLiteUInt8) && mv->enable_quant && t->sparsity == NULL)
      return FOLD_CONST;
    return 0;
  }
  if (reg->builtin_code == kBuiltinDensify) {
    /* Folded only when densifying cannot fail: a malformed sparse constant
     * must stay on the CPU (decided here), not fail the partition's build. */
    if (t->sparsity) return mv_sparse_check(mv, in, NULL, 0) == 0 ? FOLD_CONST : 0;
    return mv->const_kind[in] == CONST_FOLDED ? FOLD_CONST : 0;
  }
  return 0;
}

int const_fold_mark(ModelView* mv, char* err, size_t errlen) {
  for (int i = 0; i < mv->num_nodes; ++i) {
    TfLiteNode* node;
    TfLiteRegistration* reg;
    if (mv_node(mv, mv->plan[i], &node, &reg)) {
      snprintf(err, errlen, "GetNodeAndRegistration(%d) failed", mv->plan[i]);
      return -1;
    }
    int kind = node_fold_kind(mv, node, reg);
    if (kind) {
      mv->foldable[i] = (unsigned char)kind;
      mv->const_kind[node->outputs->data[0]] = CONST_FOLDED;
    }
  }
  return 0;
}

/* Dequantizes n int8/uint8/int32 values with the tensor's affine params. */
static int dequantize(const TfLiteTensor* t, size_t n, float* out, char* err, size_t errlen) {
  const TfLiteAffineQuantization* aq =
      t->quantization.type == kTfLiteAffineQuantization ? (const TfLiteAffineQuantization*)t->quantization.params : NULL;
  int per_channel = aq && aq->scale && aq->scale->size > 1;
  int dim = per_channel ? aq->quantized_dimension : 0;
  size_t inner = 1, channels = 1;
  if (per_channel) {
    if (!t->dims || dim < 0 || dim >= t->dims->size || t->dims->data[dim] != aq->scale->size ||
        !aq->zero_point || aq->zero_point->size < aq->scale->size) {
      snprintf(err, errlen, "tensor %s has inconsistent per-channel quantization", t->name ? t->name : "?");
      return -1;
    }
    channels = (size_t)aq->scale->size;
    for (int i = dim + 1; i < t->dims->size; ++i) inner *= (size_t)t->dims->data[i];
  }
  for (size_t i = 0; i < n; ++i) {
    float scale = t->params.scale;
    int zp = t->params.zero_point;
    if (per_channel) {
      size_t c = (i / inner) % channels;
      scale = aq->scale->data[c];
      zp = aq->zero_point->data[c];
    }
    int q = t->type == kTfLiteInt8 ? t->data.int8[i] : t->type == kTfLiteUInt8 ? t->data.uint8[i] : t->data.i32[i];
    out[i] = (float)(q - zp) * scale;
  }
  return 0;
}

static size_t type_size(int type) {
  switch (type) {
    case kTfLiteFloat32: case kTfLiteInt32: return 4;
    case kTfLiteFloat16: return 2;
    case kTfLiteInt8: case kTfLiteUInt8: case kTfLiteBool: return 1;
    case kTfLiteInt64: return 8;
    default: return 0;
  }
}

static int model_const_float(const ModelView* mv, int index, float* out, size_t n, char* err, size_t errlen) {
  const TfLiteTensor* t = mv_tensor(mv, index);
  if (t->sparsity) {
    int dims[8];
    int rank = mv_dims(mv, index, dims, 8);
    return tflite_gpu_densify(t, dims, rank, out, err, errlen);
  }
  size_t es = type_size(t->type);
  if (es == 0 || t->bytes < n * es) {
    snprintf(err, errlen, "constant tensor %s (%s) holds %zu bytes, %zu elements need more",
             t->name ? t->name : "?", type_name(t->type), t->bytes, n);
    return -1;
  }
  switch (t->type) {
    case kTfLiteFloat32:
      memcpy(out, t->data.f, n * sizeof(float));
      return 0;
    case kTfLiteFloat16:
      for (size_t i = 0; i < n; ++i) out[i] = tflite_gpu_half_to_float(t->data.f16[i].data);
      return 0;
    case kTfLiteInt8:
    case kTfLiteUInt8:
    case kTfLiteInt32:
      return dequantize(t, n, out, err, errlen);
    case kTfLiteBool: /* a SELECT condition or LOGICAL_AND operand: 0.0 / 1.0 */
      for (size_t i = 0; i < n; ++i) out[i] = t->data.b[i] ? 1.0f : 0.0f;
      return 0;
    default:
      snprintf(err, errlen, "constant tensor %s has type %s", t->name ? t->name : "?", type_name(t->type));
      return -1;
  }
}

/* Fills out (n elements) for a constant of either kind. */
static int const_into(const ModelView* mv, int index, float* out, size_t n, int depth, char* err, size_t errlen) {
  if (depth > 8) {
    snprintf(err, errlen, "constant folding chain too deep");
    return -1;
  }
  if (mv->const_kind[index] == CONST_MODEL) return model_const_float(mv, index, out, n, err, errlen);
  if (mv->const_kind[index] != CONST_FOLDED) {
    snprintf(err, errlen, "tensor %d is not constant", index);
    return -1;
  }
  TfLiteNode* node;
  TfLiteRegistration* reg;
  if (mv_node(mv, mv->plan[mv->producer[index]], &node, &reg)) {
    snprintf(err, errlen, "GetNodeAndRegistration failed");
    return -1;
  }
  if (int_fold_is_output(mv, index)) {
    int64_t v[INT_FOLD_MAX];
    int count;
    if (int_fold_values(mv, index, v, INT_FOLD_MAX, &count, err, errlen)) return -1;
    if ((size_t)count != n) return snprintf(err, errlen, "folded %s gives %d values, %zu expected",
                                            builtin_name(reg->builtin_code), count, n), -1;
    for (int i = 0; i < count; ++i) out[i] = (float)v[i];
    return 0;
  }
  int src = node->inputs->data[0];
  if (mv_elements(mv, src) != n) {
    snprintf(err, errlen, "%s changes the element count (%zu to %zu)", builtin_name(reg->builtin_code),
             mv_elements(mv, src), n);
    return -1;
  }
  return const_into(mv, src, out, n, depth + 1, err, errlen);
}

int mv_const_float(const ModelView* mv, int index, float** out, char* err, size_t errlen) {
  size_t n = mv_elements(mv, index);
  float* buf = malloc((n ? n : 1) * sizeof(float));
  if (!buf) {
    snprintf(err, errlen, "out of memory for a %zu-element constant", n);
    return -1;
  }
  if (const_into(mv, index, buf, n, 0, err, errlen)) {
    free(buf);
    return -1;
  }
  *out = buf;
  return 0;
}

int mv_const_ints(const ModelView* mv, int index, int* out, int max, int* count, char* err, size_t errlen) {
  if (int_fold_is_output(mv, index)) {
    int64_t v[INT_FOLD_MAX];
    if (int_fold_values(mv, index, v, INT_FOLD_MAX, count, err, errlen)) return -1;
    if (*count > (max < 0 ? 0 : max)) return snprintf(err, errlen, "folded constant holds %d values, at most %d", *count, max), -1;
    for (int i = 0; i < *count; ++i) {
      if (v[i] < INT32_MIN || v[i] > INT32_MAX) return snprintf(err, errlen, "folded value outside the int32 range"), -1;
      out[i] = (int)v[i];
    }
    return 0;
  }
  if (!mv_is_const(mv, index) || mv->const_kind[index] != CONST_MODEL) {
    snprintf(err, errlen, "tensor %d must be a constant in the model", index);
    return -1;
  }
  const TfLiteTensor* t = mv_tensor(mv, index);
  size_t n = mv_elements(mv, index);
  if (n > (size_t)(max < 0 ? 0 : max) || (t->type != kTfLiteInt32 && t->type != kTfLiteInt64) || t->bytes < n * type_size(t->type)) {
    snprintf(err, errlen, "constant %s must hold at most %d int32/int64 values", t->name ? t->name : "?", max);
    return -1;
  }
  for (size_t i = 0; i < n; ++i) {
    if (t->type == kTfLiteInt64 && (t->data.i64[i] < INT32_MIN || t->data.i64[i] > INT32_MAX)) {
      snprintf(err, errlen, "constant %s holds %lld, outside the int32 range", t->name ? t->name : "?",
               (long long)t->data.i64[i]);
      return -1;
    }
    out[i] = t->type == kTfLiteInt32 ? t->data.i32[i] : (int)t->data.i64[i];
  }
  *count = (int)n;
  return 0;
}
