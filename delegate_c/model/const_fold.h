/* The delegate's constants at prepare: which plan nodes fold into
 * constants (a DEQUANTIZE or DENSIFY of a constant, and int_fold.c's
 * integer shape arithmetic), and the readers that give any constant, in
 * the model or folded, as float32 or ints. The one owner of folded values:
 * it asks the model view (model_view.h) and int_fold.c, and neither calls
 * back. The readers keep the view's mv_ prefix: they read a ModelView. */
#ifndef TFLITE_GPU_CONST_FOLD_H
#define TFLITE_GPU_CONST_FOLD_H

#include <stddef.h>

#include "model/model_view.h"

/* Marks the view's foldable nodes (ModelView.foldable: FOLD_CONST or
 * FOLD_SHAPE) and their outputs' const_kind (CONST_FOLDED), in execution
 * order so a fold of a fold (DENSIFY then DEQUANTIZE) is seen. Call it
 * right after mv_build, inside the delegate's Prepare. 0, or -1 with err
 * set (the caller frees the view). */
int const_fold_mark(ModelView* mv, char* err, size_t errlen);

/* A constant as row-major float32 (malloc'd, caller frees): float32,
 * float16, int8/uint8/int32 with affine quantization (per-tensor or
 * per-channel) and bool (0/1), through folded DEQUANTIZE / DENSIFY chains. */
int mv_const_float(const ModelView* mv, int index, float** out, char* err, size_t errlen);
/* An int32/int64 constant into out (at most max values). */
int mv_const_ints(const ModelView* mv, int index, int* out, int max, int* count, char* err, size_t errlen);

#endif
