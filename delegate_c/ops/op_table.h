/* The op descriptors: for every TFLite op the delegate runs, its codes,
 * version limit, the types its runtime tensors may have, a check that
 * gives a precise reason when a node can't be delegated, and a lowering
 * into the delegate's graph. Each op file defines the descriptors of its
 * ops; op_table.c lists them; partitioning, the `ops` listing and the
 * README's op table all come from that list. */
#ifndef TFLITE_GPU_OP_TABLE_H
#define TFLITE_GPU_OP_TABLE_H

#include <stddef.h>

#include "ops/op_helpers.h"

typedef int (*OpCheckFn)(const NodeInfo* ni);                 /* 0: supported; -1: reason set */
typedef int (*OpLowerFn)(Lowering* lw, const NodeInfo* ni);   /* 0, or -1 with lw->err set */
typedef int (*OpParseFn)(const NodeInfo* ni, void* params);   /* 0, or -1 with a reason */
typedef int (*OpInferFn)(const NodeInfo* ni, int k, int shape[4]); /* output k's BHWC shape; 0 or -1 */

/* Room for any op's parsed parameters (OpDef.params_size at most this). */
#define OP_PARAMS_MAX 256
typedef union OpParams {
  max_align_t align;
  unsigned char bytes[OP_PARAMS_MAX];
} OpParams;

typedef struct OpDef {
  int builtin_code;
  const char* custom_name;  /* for CUSTOM ops, else NULL */
  int max_version;
  OpCheckFn check;          /* NULL: nothing beyond the gate and parse */
  OpLowerFn lower;          /* NULL: never lowered (DENSIFY, SHAPE: folded, else check gives the reason) */
  const char* constraints;  /* what the check enforces, for the docs */
  /* Runtime tensor types besides FLOAT32 (and int8/uint8 with
   * ENABLE_QUANT), e.g. "BOOL" or "INT32/BOOL": the partition holds them
   * as floats and the executor converts them at its boundary. */
  const char* extra_input_types;
  unsigned extra_inputs;    /* bit k: input k may have extra_input_types (~0u: every input) */
  const char* extra_output_types;
  unsigned index_inputs;    /* bit k: input k may be a runtime INT32 index tensor, kept raw (GATHER, ONE_HOT) */
  /* Optional, and the form a new op takes: `parse` reads and validates the
   * node's parameters once, into a struct of params_size bytes that check,
   * infer and lower then read as ni->params (one parse, one error channel);
   * `infer` gives each output's BHWC shape, which the check gate compares
   * with the declared one, or settles when re-planning after a resize, so
   * the op's check only checks. Ops without them parse in check and lower
   * and call check_output_shape from their check. */
  OpParseFn parse;
  size_t params_size;
  OpInferFn infer;
} OpDef;

extern const OpDef* const kOps[];
extern const int kNumOps;

/* The entry for a registration, or NULL. */
const OpDef* op_lookup(const TfLiteRegistration* reg);

/* Full support check of one node (op_check.c): op known, version, tensor
 * types and ranks, then the op's own check. Returns 0 or -1 with reason set. */
int op_check_node(const NodeInfo* ni);
/* Runs d->parse (if any) into *buf and points ni->params at it; 0, or -1
 * with ni's reason set. The check gate and the lowering both call it. */
int op_parse(const OpDef* d, NodeInfo* ni, OpParams* buf);

/* Writes "NAME\tcode\tversions\tconstraints\n" per entry; returns bytes needed. */
size_t op_table_describe(char* buf, size_t size);

/* ---- shared between op files ---- */
/* Does a GATHER or ONE_HOT read tensor t as its (raw int32) indices?
 * (ops_elementwise.c) */
int feeds_indices(const ModelView* mv, int t);
/* After lowering node ni (its graph nodes start at first_new): a
 * quantize-dequantize onto the grid of each int8/uint8 output (ops_quantize.c). */
int lower_quant_outputs(Lowering* lw, const NodeInfo* ni, int first_new);

#endif
