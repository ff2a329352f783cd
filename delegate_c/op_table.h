/* The one op table: for every TFLite op the delegate runs, its version
 * limit, a check that gives a precise reason when a node can't be
 * delegated, and a lowering into the delegate's graph. Partitioning, the
 * `ops` listing and the README's op table all come from kOps. */
#ifndef TFLITE_GPU_OP_TABLE_H
#define TFLITE_GPU_OP_TABLE_H

#include <stddef.h>
#include <stdint.h>

#include "graph.h"
#include "model_view.h"

typedef struct NodeInfo {
  const ModelView* mv;
  int index;               /* node index in the TFLite graph */
  TfLiteNode* node;
  TfLiteRegistration* reg;
  char* reason;            /* check: why not, one line */
  size_t reason_len;
} NodeInfo;

typedef struct Lowering {
  const ModelView* mv;
  Graph* g;
  int* map;                /* TFLite tensor index -> graph tensor, or -1 */
  char* err;
  size_t errlen;
} Lowering;

typedef int (*OpCheckFn)(const NodeInfo* ni);                 /* 0: supported; -1: reason set */
typedef int (*OpLowerFn)(Lowering* lw, const NodeInfo* ni);   /* 0, or -1 with lw->err set */

typedef struct OpDef {
  int builtin_code;
  const char* custom_name;  /* for CUSTOM ops, else NULL */
  int max_version;
  OpCheckFn check;
  OpLowerFn lower;
  const char* constraints;  /* what the check enforces, for the docs */
} OpDef;

extern const OpDef kOps[];
extern const int kNumOps;

/* The entry for a registration, or NULL. */
const OpDef* op_lookup(const TfLiteRegistration* reg);

/* Full support check of one node: op known, version, tensor types and
 * ranks, then the op's own check. Returns 0 or -1 with reason set. */
int op_check_node(const NodeInfo* ni);

/* ---- helpers for the op files ---- */
int reason(const NodeInfo* ni, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
int lower_error(Lowering* lw, const char* fmt, ...) __attribute__((format(printf, 2, 3)));

/* Input k / output k tensor index (-1 when absent). */
int ni_input(const NodeInfo* ni, int k);
int ni_output(const NodeInfo* ni, int k);
int ni_num_inputs(const NodeInfo* ni);
int ni_num_outputs(const NodeInfo* ni);
/* BHWC shape of a tensor; -1 for rank > 4. Returns the rank. */
int ni_shape(const NodeInfo* ni, int tensor, int out[4]);
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
/* Indices (GATHER, ONE_HOT): a constant int32/int64 tensor as exact
 * floats, or a runtime int32 tensor kept raw (is_int32). */
int lower_indices(Lowering* lw, int tflite_index);

/* Op families (one file each). */
int check_conv2d(const NodeInfo* ni);
int lower_conv2d(Lowering* lw, const NodeInfo* ni);
int check_depthwise(const NodeInfo* ni);
int lower_depthwise(Lowering* lw, const NodeInfo* ni);
int check_pool(const NodeInfo* ni);
int lower_pool(Lowering* lw, const NodeInfo* ni);
int check_binary(const NodeInfo* ni);
int lower_binary(Lowering* lw, const NodeInfo* ni);
int check_unary(const NodeInfo* ni);
int lower_unary(Lowering* lw, const NodeInfo* ni);
int check_select(const NodeInfo* ni);
int lower_select(Lowering* lw, const NodeInfo* ni);
int check_add_n(const NodeInfo* ni);
int lower_add_n(Lowering* lw, const NodeInfo* ni);
int check_cast(const NodeInfo* ni);
int lower_cast(Lowering* lw, const NodeInfo* ni);
int check_concat(const NodeInfo* ni);
int lower_concat(Lowering* lw, const NodeInfo* ni);
int check_reshape(const NodeInfo* ni);
int lower_reshape(Lowering* lw, const NodeInfo* ni);
int check_expand_dims(const NodeInfo* ni);
int check_squeeze(const NodeInfo* ni);
int check_pad(const NodeInfo* ni);
int lower_pad(Lowering* lw, const NodeInfo* ni);
int check_strided_slice(const NodeInfo* ni);
int lower_strided_slice(Lowering* lw, const NodeInfo* ni);
int check_resize_bilinear(const NodeInfo* ni);
int lower_resize_bilinear(Lowering* lw, const NodeInfo* ni);
int check_reduce(const NodeInfo* ni);
int lower_reduce(Lowering* lw, const NodeInfo* ni);
int check_fully_connected(const NodeInfo* ni);
int lower_fully_connected(Lowering* lw, const NodeInfo* ni);
int check_depth_to_space(const NodeInfo* ni);
int lower_depth_to_space(Lowering* lw, const NodeInfo* ni);
int check_transpose_conv(const NodeInfo* ni);
int lower_transpose_conv(Lowering* lw, const NodeInfo* ni);
int check_landmarks_to_matrix(const NodeInfo* ni);
int lower_landmarks_to_matrix(Lowering* lw, const NodeInfo* ni);
int check_transform_landmarks(const NodeInfo* ni);
int lower_transform_landmarks(Lowering* lw, const NodeInfo* ni);
int check_transform_tensor(const NodeInfo* ni);
int lower_transform_tensor(Lowering* lw, const NodeInfo* ni);
int check_pool_argmax(const NodeInfo* ni);
int lower_pool_argmax(Lowering* lw, const NodeInfo* ni);
int check_unpool(const NodeInfo* ni);
int lower_unpool(Lowering* lw, const NodeInfo* ni);
int check_resampler(const NodeInfo* ni);
int lower_resampler(Lowering* lw, const NodeInfo* ni);
int check_softmax(const NodeInfo* ni);
int lower_softmax(Lowering* lw, const NodeInfo* ni);
int check_cumsum(const NodeInfo* ni);
int lower_cumsum(Lowering* lw, const NodeInfo* ni);
int check_batch_matmul(const NodeInfo* ni);
int lower_batch_matmul(Lowering* lw, const NodeInfo* ni);
int check_lstm(const NodeInfo* ni);
int lower_lstm(Lowering* lw, const NodeInfo* ni);
int check_space_to_depth(const NodeInfo* ni);
int lower_space_to_depth(Lowering* lw, const NodeInfo* ni);
int check_resize_nearest(const NodeInfo* ni);
int lower_resize_nearest(Lowering* lw, const NodeInfo* ni);
int check_transpose(const NodeInfo* ni);
int lower_transpose(Lowering* lw, const NodeInfo* ni);
int check_tile(const NodeInfo* ni);
int lower_tile(Lowering* lw, const NodeInfo* ni);
int check_slice(const NodeInfo* ni);
int lower_slice(Lowering* lw, const NodeInfo* ni);
int check_split(const NodeInfo* ni);
int lower_split(Lowering* lw, const NodeInfo* ni);
int check_pack(const NodeInfo* ni);
int lower_pack(Lowering* lw, const NodeInfo* ni);
int check_unpack(const NodeInfo* ni);
int lower_unpack(Lowering* lw, const NodeInfo* ni);
int check_gather(const NodeInfo* ni);
int lower_gather(Lowering* lw, const NodeInfo* ni);
int check_one_hot(const NodeInfo* ni);
int lower_one_hot(Lowering* lw, const NodeInfo* ni);
int check_arg_minmax(const NodeInfo* ni);
int lower_arg_minmax(Lowering* lw, const NodeInfo* ni);
int check_l2_norm(const NodeInfo* ni);
int lower_l2_norm(Lowering* lw, const NodeInfo* ni);
int check_reverse(const NodeInfo* ni);
int lower_reverse(Lowering* lw, const NodeInfo* ni);
/* Does a GATHER or ONE_HOT read tensor t as its (raw int32) indices?
 * (ops_elementwise.c) */
int feeds_indices(const ModelView* mv, int t);

/* DENSIFY is folded or stays on the CPU: this gives the reason. */
int check_densify(const NodeInfo* ni);

int check_quantize(const NodeInfo* ni);
int lower_quantize(Lowering* lw, const NodeInfo* ni);
int check_dequantize(const NodeInfo* ni);
int lower_dequantize(Lowering* lw, const NodeInfo* ni);

/* ---- quantized graphs (ops_quantize.c) ---- */
/* A runtime-style int8/uint8 tensor with per-tensor affine params: fills
 * qtype (GD_QINT8/GD_QUINT8), scale, zero point and returns 0; else -1. */
int quant_params(const ModelView* mv, int tensor, int* qtype, float* scale, int* zero_point);
/* Why an int8/uint8 runtime tensor cannot be viewed as float, or NULL. */
const char* quant_tensor_problem(const ModelView* mv, int tensor);
/* After lowering node ni (its graph nodes start at first_new): a
 * quantize-dequantize onto the grid of each int8/uint8 output. */
int lower_quant_outputs(Lowering* lw, const NodeInfo* ni, int first_new);

/* Writes "NAME\tversions\tconstraints\n" per entry; returns bytes needed. */
size_t op_table_describe(char* buf, size_t size);

#endif
