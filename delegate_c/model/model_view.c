#include "model/model_view.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/graph.h"
#include "model/sparse_densify.h"
#include "model/tflite_builtins.h"

static int is_const_model_tensor(const TfLiteTensor* t) {
  return t->allocation_type == kTfLiteMmapRo && t->data.raw != NULL;
}

int mv_sparse_check(const ModelView* mv, int index, char* err, size_t errlen) {
  const TfLiteTensor* t = mv_tensor(mv, index);
  int dims[8];
  int rank = mv_dims(mv, index, dims, 8);
  if (rank < 0) {
    if (err && errlen) snprintf(err, errlen, "densify: no shape, or rank above 8");
    return -1;
  }
  return tflite_gpu_densify_check(t, dims, rank, err, errlen);
}

int mv_build(ModelView* mv, TfLiteContext* ctx, int enable_quant, char* err, size_t errlen) {
  memset(mv, 0, sizeof(*mv));
  mv->ctx = ctx;
  mv->enable_quant = enable_quant;
  mv->num_tensors = (int)ctx->tensors_size;
  TfLiteIntArray* plan = NULL;
  if (ctx->GetExecutionPlan(ctx, &plan) != kTfLiteOk || !plan) {
    snprintf(err, errlen, "GetExecutionPlan failed");
    return -1;
  }
  /* The plan array belongs to the runtime and the next call reuses it: copy. */
  mv->num_nodes = plan->size;
  size_t nt = (size_t)mv->num_tensors + 1, nn = (size_t)mv->num_nodes + 1;
  mv->plan = malloc(nn * sizeof(int));
  mv->producer = malloc(nt * sizeof(int));
  mv->consumers = calloc(nt, sizeof(int));
  mv->const_kind = calloc(nt, 1);
  mv->foldable = calloc(nn, 1);
  if (!mv->plan || !mv->producer || !mv->consumers || !mv->const_kind || !mv->foldable) {
    snprintf(err, errlen, "out of memory");
    mv_free(mv);
    return -1;
  }
  memcpy(mv->plan, plan->data, (size_t)mv->num_nodes * sizeof(int));
  for (int t = 0; t < mv->num_tensors; ++t) {
    mv->producer[t] = -1;
    if (is_const_model_tensor(&ctx->tensors[t])) mv->const_kind[t] = CONST_MODEL;
  }
  for (int i = 0; i < mv->num_nodes; ++i) {
    TfLiteNode* node;
    TfLiteRegistration* reg;
    if (mv_node(mv, mv->plan[i], &node, &reg)) {
      snprintf(err, errlen, "GetNodeAndRegistration(%d) failed", mv->plan[i]);
      mv_free(mv);
      return -1;
    }
    for (int k = 0; node->inputs && k < node->inputs->size; ++k) {
      int t = node->inputs->data[k];
      if (t >= 0 && t < mv->num_tensors) mv->consumers[t]++;
    }
    for (int k = 0; node->outputs && k < node->outputs->size; ++k) {
      int t = node->outputs->data[k];
      if (t >= 0 && t < mv->num_tensors) mv->producer[t] = i;
    }
  }
  return 0;
}

void mv_free(ModelView* mv) {
  free(mv->plan);
  free(mv->producer);
  free(mv->consumers);
  free(mv->const_kind);
  free(mv->foldable);
  free(mv->snap_nodes);
  free(mv->snap_regs);
  memset(mv, 0, sizeof(*mv));
}

int mv_node(const ModelView* mv, int node_index, TfLiteNode** node, TfLiteRegistration** reg) {
  if (mv->snap_nodes) {
    if (node_index < 0 || node_index >= mv->num_snap || !mv->snap_nodes[node_index].outputs) return -1;
    *node = &mv->snap_nodes[node_index];
    *reg = &mv->snap_regs[node_index];
    return 0;
  }
  return mv->ctx->GetNodeAndRegistration(mv->ctx, node_index, node, reg) == kTfLiteOk ? 0 : -1;
}

int mv_dims(const ModelView* mv, int index, int* dims, int max) {
  const TfLiteTensor* t = mv_tensor(mv, index);
  if (!t->dims || t->dims->size > max) return -1;
  for (int i = 0; i < t->dims->size; ++i) dims[i] = t->dims->data[i];
  return t->dims->size;
}

size_t mv_elements(const ModelView* mv, int index) {
  const TfLiteTensor* t = mv_tensor(mv, index);
  if (!t->dims) return 0;
  size_t n = 1;
  for (int i = 0; i < t->dims->size; ++i) {
    size_t d = (size_t)(t->dims->data[i] < 0 ? 0 : t->dims->data[i]);
    if (d && n > SIZE_MAX / d) return SIZE_MAX; /* saturates: no shape the checks accept */
    n *= d;
  }
  return n;
}

const char* type_name(int type) {
  static const char* const names[] = {"NOTYPE", "FLOAT32", "INT32", "UINT8", "INT64", "STRING", "BOOL",
                                      "INT16", "COMPLEX64", "INT8", "FLOAT16", "FLOAT64", "COMPLEX128",
                                      "UINT64", "RESOURCE", "VARIANT", "UINT32", "UINT16", "INT4"};
  if (type < 0 || type >= (int)(sizeof(names) / sizeof(names[0]))) return "UNKNOWN_TYPE";
  return names[type];
}

static void* dup_bytes(const void* src, size_t n) {
  void* p = malloc(n ? n : 1);
  if (p && n) memcpy(p, src, n);
  return p;
}

int mv_copy(ModelView* dst, const ModelView* src) {
  size_t nt = (size_t)src->num_tensors, nn = (size_t)src->num_nodes;
  *dst = *src;
  dst->plan = dup_bytes(src->plan, nn * sizeof(int));
  dst->producer = dup_bytes(src->producer, nt * sizeof(int));
  dst->consumers = dup_bytes(src->consumers, nt * sizeof(int));
  dst->const_kind = dup_bytes(src->const_kind, nt);
  dst->foldable = dup_bytes(src->foldable, nn);
  dst->snap_nodes = NULL;
  dst->snap_regs = NULL;
  dst->num_snap = 0;
  if (!dst->plan || !dst->producer || !dst->consumers || !dst->const_kind || !dst->foldable) {
    mv_free(dst);
    return -1;
  }
  int max_node = -1;
  for (int i = 0; i < src->num_nodes; ++i)
    if (src->plan[i] > max_node) max_node = src->plan[i];
  dst->snap_nodes = calloc((size_t)max_node + 2, sizeof(TfLiteNode));
  dst->snap_regs = calloc((size_t)max_node + 2, sizeof(TfLiteRegistration));
  if (!dst->snap_nodes || !dst->snap_regs) {
    mv_free(dst);
    return -1;
  }
  /* Shallow copies: the runtime keeps the original nodes (and their input,
   * output and parameter arrays) alive for the interpreter's lifetime. */
  for (int i = 0; i < src->num_nodes; ++i) {
    TfLiteNode* node;
    TfLiteRegistration* reg;
    if (mv_node(src, src->plan[i], &node, &reg) == 0 && node->outputs) {
      dst->snap_nodes[src->plan[i]] = *node;
      dst->snap_regs[src->plan[i]] = *reg;
    }
  }
  dst->num_snap = max_node + 1;
  return 0;
}

void op_display_name(const TfLiteRegistration* reg, char* buf, size_t size) {
  if ((reg->builtin_code == kBuiltinCustom || reg->builtin_code == kBuiltinDelegate) && reg->custom_name)
    snprintf(buf, size, "%s %s", builtin_name(reg->builtin_code), reg->custom_name);
  else
    snprintf(buf, size, "%s", builtin_name(reg->builtin_code));
}

int quant_params(const ModelView* mv, int tensor, int* qtype, float* scale, int* zero_point) {
  if (tensor < 0 || tensor >= mv->num_tensors) return -1;
  const TfLiteTensor* t = mv_tensor(mv, tensor);
  if (t->type != kTfLiteInt8 && t->type != kTfLiteUInt8) return -1;
  if (t->quantization.type != kTfLiteAffineQuantization || !t->quantization.params) return -1;
  const TfLiteAffineQuantization* aq = t->quantization.params;
  if (aq->scale && aq->scale->size > 1) return -1; /* per-channel */
  if (!(t->params.scale > 0.0f)) return -1;
  *qtype = t->type == kTfLiteInt8 ? GD_QINT8 : GD_QUINT8;
  *scale = t->params.scale;
  *zero_point = t->params.zero_point;
  return 0;
}

const char* quant_tensor_problem(const ModelView* mv, int tensor) {
  const TfLiteTensor* t = mv_tensor(mv, tensor);
  if (t->quantization.type != kTfLiteAffineQuantization || !t->quantization.params)
    return "has no quantization parameters";
  const TfLiteAffineQuantization* aq = t->quantization.params;
  if (aq->scale && aq->scale->size > 1) return "is a non-constant per-channel quantized tensor";
  if (!(t->params.scale > 0.0f)) return "has a quantization scale <= 0";
  return NULL;
}
