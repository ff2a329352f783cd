/* The one op table: for every TFLite op the delegate runs, its version
 * limit, a check that gives a precise reason when a node can't be
 * delegated, and a lowering into the delegate's graph. Partitioning, the
 * `ops` listing and the README's op table all come from kOps. */
#ifndef TFLITE_GPU_OP_TABLE_H
#define TFLITE_GPU_OP_TABLE_H

#include <stddef.h>

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
int check_concat(const NodeInfo* ni);
int lower_concat(Lowering* lw, const NodeInfo* ni);
int check_reshape(const NodeInfo* ni);
int lower_reshape(Lowering* lw, const NodeInfo* ni);
int check_pad(const NodeInfo* ni);
int lower_pad(Lowering* lw, const NodeInfo* ni);
int check_strided_slice(const NodeInfo* ni);
int lower_strided_slice(Lowering* lw, const NodeInfo* ni);
int check_resize_bilinear(const NodeInfo* ni);
int lower_resize_bilinear(Lowering* lw, const NodeInfo* ni);
int check_mean(const NodeInfo* ni);
int lower_mean(Lowering* lw, const NodeInfo* ni);
int check_fully_connected(const NodeInfo* ni);
int lower_fully_connected(Lowering* lw, const NodeInfo* ni);
int check_depth_to_space(const NodeInfo* ni);
int lower_depth_to_space(Lowering* lw, const NodeInfo* ni);

/* Writes "NAME\tversions\tconstraints\n" per entry; returns bytes needed. */
size_t op_table_describe(char* buf, size_t size);

#endif
