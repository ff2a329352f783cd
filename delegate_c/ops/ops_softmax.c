/* SOFTMAX and LOG_SOFTMAX over TFLite's last axis (opencl_kernels/reduce.cl).
 * In the right-aligned BHWC shapes the last axis of a rank 1-4 tensor is
 * always C, so one kernel over channels serves every rank. Unlike
 * upstream, any finite beta is taken (upstream only beta == 1). */
#include <math.h>

#include "encode/encode.h"
#include "ops/op_table.h"
#include "select/selectors.h"
#include "model/tflite_builtins.h"
#include "ops/op_kinds.h"

/* The graph ops this file encodes (graph.h: a node points at its op). */
static int encode_softmax(Encoder* ex, int node);
const GOpDesc kGOpSoftmax = {"SOFTMAX", encode_softmax};

static int check_softmax(const NodeInfo* ni) {
  if (check_io(ni, 1, 1)) return -1;
  if (ni->reg->builtin_code == kBuiltinSoftmax) {
    const TfLiteSoftmaxParams* p = ni->node->builtin_data;
    if (!p) return reason(ni, "missing parameters");
    if (!isfinite(p->beta)) return reason(ni, "beta is %g; a finite beta is required", p->beta);
  }
  int dims[8];
  int rank = mv_dims(ni->mv, ni_input(ni, 0), dims, 8);
  if (rank < 1 || rank > 4) return reason(ni, "input 0 must have rank 1-4, has %d", rank);
  return 0; /* the output shape: infer_input_shape, settled by the gate */
}

static int lower_softmax(Lowering* lw, const NodeInfo* ni) {
  int in = lower_tensor(lw, ni_input(ni, 0));
  int out = in < 0 ? -1 : lower_tensor(lw, ni_output(ni, 0));
  if (out < 0) return -1;
  GNode* n = graph_add_node_io(lw->g, GOP_SOFTMAX, in, out);
  if (!n) return lower_error(lw, "out of memory");
  n->p.softmax.log = ni->reg->builtin_code == kBuiltinLogSoftmax;
  n->p.softmax.beta = n->p.softmax.log ? 1.0f : ((const TfLiteSoftmaxParams*)ni->node->builtin_data)->beta;
  return 0;
}

static int encode_softmax(Encoder* ex, int node) {
  const GNode* n = &ex->g.nodes[node];
  const int* s = ex->g.tensors[n->inputs[0]].shape;
  KernelVariant v;
  select_softmax(&ex->target, &ex->g, n, &v);
  KernelRef k = ex_dispatch_variant(ex, &v, node);
  if (!k) return -1;
  KArgs a = {k, 0, CL_SUCCESS, 0};
  karg_mem(&a, ex_tensor_mem(ex, n->inputs[0]));
  karg_mem(&a, ex_tensor_mem(ex, n->outputs[0]));
  karg_shape(&a, s);
  karg_float(&a, n->p.softmax.beta);
  karg_int(&a, n->p.softmax.log);
  karg_int(&a, (int)v.total);
  return karg_done(ex, &a);
}

/* The TFLite ops this file runs (op_table.c lists them). */
const OpDef kOpLogSoftmax = {.builtin_code = kBuiltinLogSoftmax, .max_version = 2,
    .check = check_softmax, .infer = infer_input_shape, .lower = lower_softmax,
    .constraints = "over the last axis of a rank 1-4 tensor (not in upstream's table); max-subtracted, float32 sums"};
const OpDef kOpSoftmax = {.builtin_code = kBuiltinSoftmax, .max_version = 2,
    .check = check_softmax, .infer = infer_input_shape, .lower = lower_softmax,
    .constraints = "over the last axis of a rank 1-4 tensor; any finite beta (upstream: beta 1 only); max-subtracted, "
     "float32 sums"};
