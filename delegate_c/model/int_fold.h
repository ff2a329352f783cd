/* Integer constant folding of shape arithmetic (issue 14: SHAPE). A SHAPE
 * reads only its input's dims, so its int32/int64 result, and the small
 * integer chains converters build on it (STRIDED_SLICE, PACK, GATHER, MUL,
 * ... feeding a RESHAPE's shape input), are constants for a given input
 * shape. const_fold.c marks such nodes foldable; their readers get the
 * values through mv_const_ints / mv_const_float (const_fold.h), evaluated
 * on the current dims each time (so a re-plan after a resize sees the new
 * shape). This file reads the model view and is called by const_fold.c
 * and partition_kernel.c: the view never calls it. */
#ifndef TFLITE_GPU_INT_FOLD_H
#define TFLITE_GPU_INT_FOLD_H

#include <stddef.h>
#include <stdint.h>

#include "model/model_view.h"

/* The most values one folded tensor may hold: shape vectors, not data. */
#define INT_FOLD_MAX 64

/* Is the node an integer op this file folds, with every input already
 * constant (SHAPE: any input with dims)? Evaluates it once to be sure: 0
 * (not foldable), FOLD_CONST or FOLD_SHAPE. */
int int_fold_kind(const ModelView* mv, const TfLiteNode* node, const TfLiteRegistration* reg);

/* Is `tensor` the output of a folded integer node? */
int int_fold_is_output(const ModelView* mv, int tensor);

/* The values of a constant int32/int64 tensor (in the model, or folded by
 * this file) into out (at most max). 0, or -1 with err set. */
int int_fold_values(const ModelView* mv, int tensor, int64_t* out, int max, int* count, char* err, size_t errlen);

/* The ops int_fold_kind folds besides SHAPE: one list for the evaluator
 * and the op table's text (ops_shape.c). */
#define INT_FOLD_OPS(X)                                                                                        \
  X(kBuiltinStridedSlice, "STRIDED_SLICE") X(kBuiltinSlice, "SLICE") X(kBuiltinPack, "PACK")                   \
  X(kBuiltinConcatenation, "CONCATENATION") X(kBuiltinGather, "GATHER") X(kBuiltinCast, "CAST")                \
  X(kBuiltinReshape, "RESHAPE") X(kBuiltinSqueeze, "SQUEEZE") X(kBuiltinExpandDims, "EXPAND_DIMS")             \
  X(kBuiltinAdd, "ADD") X(kBuiltinSub, "SUB") X(kBuiltinMul, "MUL") X(kBuiltinFloorDiv, "FLOOR_DIV")           \
  X(kBuiltinMaximum, "MAXIMUM") X(kBuiltinMinimum, "MINIMUM") X(kBuiltinReduceProd, "REDUCE_PROD")
#define INT_FOLD_AS_TEXT(code, name) " " name
#define INT_FOLD_OPS_TEXT INT_FOLD_OPS(INT_FOLD_AS_TEXT)

#endif
