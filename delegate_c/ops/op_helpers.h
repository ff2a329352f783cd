/* What every op file uses to check and lower a node (op_helpers.c): the
 * node being checked (NodeInfo) or lowered (Lowering), reasons and
 * errors, shared checks, checked sizes and shared graph-building steps;
 * constant values come through const_fold.h. */
#ifndef TFLITE_GPU_OP_HELPERS_H
#define TFLITE_GPU_OP_HELPERS_H

#include <stddef.h>
#include <stdint.h>

#include "model/const_fold.h"
#include "model/graph.h"
#include "model/model_view.h"

typedef struct NodeInfo {
  const ModelView* mv;
  int index;               /* node index in the TFLite graph */
  TfLiteNode* node;
  TfLiteRegistration* reg;
  char* reason;            /* why not (check) or what failed (lower), one line */
  size_t reason_len;
  const void* params;      /* the op's parsed parameters (OpDef.parse), else NULL */
} NodeInfo;

typedef struct Lowering {
  const ModelView* mv;
  Graph* g;
  int* map;                /* TFLite tensor index -> graph tensor, or -1 */
  char* err;
  size_t errlen;
} Lowering;

int reason(const NodeInfo* ni, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
int lower_error(Lowering* lw, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

/* Input k / output k tensor index (-1 when absent). */
int ni_input(const NodeInfo* ni, int k);
int ni_output(const NodeInfo* ni, int k);
int ni_num_inputs(const NodeInfo* ni);
int ni_num_outputs(const NodeInfo* ni);
/* BHWC shape of a tensor; -1 for rank > 4. Returns the rank. */
int ni_shape(const NodeInfo* ni, int tensor, int out[4]);
/* An OpDef.infer for ops whose every output has input 0's shape. */
int infer_input_shape(const NodeInfo* ni, int k, int shape[4]);
/* Checks a fused activation; rejects SIGN_BIT and unknown codes. */
int check_activation(const NodeInfo* ni, int act);
/* n_in inputs (the first a runtime tensor) and n_out outputs. */
int check_io(const NodeInfo* ni, int n_in, int n_out);
/* Input k is present, constant and of the given type; `what` names it. */
int check_const_input(const NodeInfo* ni, int k, const char* what, int type);
/* Checks the declared output shape equals the computed one; when the view
 * infers shapes (re-planning after a resize), resizes the output instead.
 * A check must settle every output this way (or with set_output_dims) for
 * its op to follow a resize; otherwise the re-plan fails cleanly. */
int check_output_shape(const NodeInfo* ni, int tensor, const int expect[4]);
/* ---- checked sizes ----
 * Every size a check derives from shapes and parameters (output dims from
 * stride, filter, dilation and padding; sums and products of dims) is
 * computed in 64 bits and bounded here before anything uses it. The kernels
 * index a tensor's PHWC4 storage (channels padded to 4) with int, hence the
 * limit on its element count. */
#define GD_MAX_ELEMENTS ((int64_t)INT32_MAX)
/* a * b for a, b >= 0, saturating at INT64_MAX (never overflows). */
int64_t size_mul(int64_t a, int64_t b);
/* B * H * W * round_up(C, 4) of a BHWC shape, saturating. */
int64_t storage_elements(const int64_t s[4]);
/* The computed output shape e (64-bit): every dim in 1..INT32_MAX and the
 * storage within GD_MAX_ELEMENTS, then check_output_shape. */
int check_output_shape64(const NodeInfo* ni, int tensor, const int64_t e[4]);
/* The element-count limit alone, for a shape known to fit int dims. */
int check_storage(const NodeInfo* ni, const char* what, const int64_t e[4]);
/* One spatial axis of a conv/pool/transpose-conv window: the dilated filter
 * extent (k - 1) * dilation + 1 and the kernels' coordinate arithmetic
 * (size + extent + stride) must fit an int. k, stride, dilation >= 1. */
int check_window(const NodeInfo* ni, const char* axis, int size, int k, int stride, int dilation);
/* Resizes a TFLite tensor to dims (rank values) through the context. */
int set_output_dims(const NodeInfo* ni, int tensor, const int* dims, int rank);

/* Graph tensor for a TFLite tensor (runtime or constant, created once). */
int lower_tensor(Lowering* lw, int tflite_index);
/* TFLite SAME/VALID output size and leading pad for one spatial axis. */
int conv_out_size(int padding, int in, int k, int stride, int dilation);
int conv_pad_before(int padding, int in, int k, int stride, int dilation);

/* Appends a unary node (elementwise.cl op code) from in to out. */
int lower_unary_node(Lowering* lw, int in, int out, int op, float alpha, int tflite_node);
/* Appends a RESHAPE (remap) node from in to out, which hold the same
 * number of elements: row-major order is kept. */
int lower_reshape_node(Lowering* lw, int in, int out);
/* Appends a remap node (identity map: begin 0, stride 1, perm identity)
 * from in to out for the caller to fill in; NULL with lw->err set. */
GNode* lower_remap_node(Lowering* lw, int in, int out, int mode);

#endif
