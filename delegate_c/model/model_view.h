/* A read-only view of the TFLite graph while the delegate prepares: which
 * tensors are constant, who produces and consumes each tensor, a tensor's
 * dims and quantization. Built in the delegate's Prepare and used by the
 * op checks and by lowering (kernel init runs inside that Prepare). Which
 * nodes fold into constants, and the readers of constant values, are
 * const_fold.c's: it fills the view's foldable / CONST_FOLDED marks, and
 * this file never calls it. */
#ifndef TFLITE_GPU_MODEL_VIEW_H
#define TFLITE_GPU_MODEL_VIEW_H

#include <stddef.h>

#include "model/tflite_abi.h"

typedef enum ConstKind {
  CONST_NONE = 0,     /* a runtime tensor */
  CONST_MODEL = 1,    /* kTfLiteMmapRo data in the model */
  CONST_FOLDED = 2,   /* output of a folded node (const_fold.c): at prepare */
} ConstKind;

/* What a foldable node (ModelView.foldable) folds from (const_fold.c marks them). */
enum {
  FOLD_CONST = 1, /* constants only (DEQUANTIZE, DENSIFY, integer ops on constants) */
  FOLD_SHAPE = 2  /* a SHAPE, or integer ops on one: reads a runtime tensor's dims */
};

typedef struct ModelView {
  TfLiteContext* ctx;
  int num_tensors;
  int num_nodes;        /* nodes in the execution plan */
  int* plan;            /* copy of the execution plan */
  int* producer;        /* per tensor: node index, or -1 */
  int* consumers;       /* per tensor: how many plan nodes read it */
  unsigned char* const_kind;
  unsigned char* foldable; /* per node: 0, or FOLD_CONST / FOLD_SHAPE (set by const_fold_mark) */
  int enable_quant;
  int fp16_storage; /* set before lowering: int8_exact.c's integer path needs FP32 storage */
  /* Re-planning after a resize: op checks write each computed output shape
   * into the TFLite tensor (context->ResizeTensor) instead of comparing. */
  int infer_shapes;
  int* inferred;        /* infer mode: outputs whose shape a check settled (counted) */
  /* In a copy (mv_copy): the plan's nodes and registrations, copied while
   * the runtime still allowed GetNodeAndRegistration; indexed by node. */
  TfLiteNode* snap_nodes;
  TfLiteRegistration* snap_regs;
  int num_snap;
} ModelView;

/* The view with no folds marked yet (const_fold_mark adds them). 0, or -1
 * with err set and the view freed. */
int mv_build(ModelView* mv, TfLiteContext* ctx, int enable_quant, char* err, size_t errlen);
void mv_free(ModelView* mv);
/* A deep copy that outlives the delegate's Prepare (kept by each partition
 * kernel to re-plan after a resize, when the runtime no longer answers
 * GetNodeAndRegistration): call it inside Prepare. 0 or -1. */
int mv_copy(ModelView* dst, const ModelView* src);

static inline const TfLiteTensor* mv_tensor(const ModelView* mv, int index) { return &mv->ctx->tensors[index]; }
static inline int mv_is_const(const ModelView* mv, int index) {
  return index >= 0 && index < mv->num_tensors && mv->const_kind[index] != CONST_NONE;
}
int mv_node(const ModelView* mv, int node_index, TfLiteNode** node, TfLiteRegistration** reg);

/* The tensor's shape as ints; returns its rank, or -1 without dims. */
int mv_dims(const ModelView* mv, int index, int* dims, int max);
/* Element count of the tensor's dims. */
size_t mv_elements(const ModelView* mv, int index);

/* A constant model tensor with sparsity metadata: 0 when it densifies into
 * its declared shape, else -1 with the reason (err may be NULL). */
int mv_sparse_check(const ModelView* mv, int index, char* err, size_t errlen);

/* "CONV_2D", or "CUSTOM Name" for custom ops (upstream's GetOpNameByRegistration). */
void op_display_name(const TfLiteRegistration* reg, char* buf, size_t size);
const char* builtin_name(int code);
const char* type_name(int type);

/* A runtime-style int8/uint8 tensor with per-tensor affine params: fills
 * qtype (GD_QINT8/GD_QUINT8, graph.h), scale, zero point and returns 0;
 * else -1. */
int quant_params(const ModelView* mv, int tensor, int* qtype, float* scale, int* zero_point);
/* Why an int8/uint8 runtime tensor cannot be viewed as float, or NULL. */
const char* quant_tensor_problem(const ModelView* mv, int tensor);

#endif
