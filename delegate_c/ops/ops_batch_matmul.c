/* BATCH_MATMUL (opencl_kernels/fully_connected.cl, kernel batch_matmul):
 * out[..., m, n] = sum_k A[..., m, k] * B[..., k, n], with adj_x / adj_y
 * transposing the last two dims of A / B, and batch dims broadcast as
 * TFLite does. In right-aligned BHWC the last two dims are W (rows) and C
 * (columns) at every rank 2-4, and the batch dims are B and H. Either
 * operand may be constant (upstream: a constant RHS only if it is 2-D).
 * Unless both adj_x and adj_y are set (rare), a 4x4 output block per
 * work-item reuses every load 4 times. */
#include "encode/encode.h"
#include "ops/op_table.h"
#include "select/selectors.h"
#include "model/tflite_builtins.h"
#include "ops/op_kinds.h"

/* The graph ops this file encodes (graph.h: a node points at its op). */
static int encode_batch_matmul(Encoder* ex, int node);
const GOpDesc kGOpBatchMatmul = {"BATCH_MATMUL", encode_batch_matmul};

static int check_batch_matmul(const NodeInfo* ni) {
  const TfLiteBatchMatMulParams* p = ni->node->builtin_data;
  if (!p) return reason(ni, "missing parameters");
  if (ni_num_inputs(ni) != 2 || ni_num_outputs(ni) != 1)
    return reason(ni, "needs 2 inputs and 1 output, has %d and %d", ni_num_inputs(ni), ni_num_outputs(ni));
  int a = ni_input(ni, 0), b = ni_input(ni, 1);
  if (a < 0 || b < 0) return reason(ni, "an input is missing");
  if (mv_is_const(ni->mv, a) && mv_is_const(ni->mv, b)) return reason(ni, "both inputs are constants");
  for (int k = 0; k < 2; ++k) {
    int t = ni_input(ni, k);
    int type = mv_tensor(ni->mv, t)->type;
    if (mv_is_const(ni->mv, t) && (type == kTfLiteInt8 || type == kTfLiteUInt8))
      return reason(ni, "input %d has type %s: hybrid quantized BATCH_MATMUL is not supported", k, type_name(type));
  }
  int dims[8];
  int ra = mv_dims(ni->mv, a, dims, 8), rb = mv_dims(ni->mv, b, dims, 8);
  if (ra < 2 || rb < 2) return reason(ni, "inputs must have rank 2-4, have %d and %d", ra, rb);
  int sa[4], sb[4];
  if (ni_shape(ni, a, sa) < 0 || ni_shape(ni, b, sb) < 0) return reason(ni, "inputs must have rank <= 4");
  int m = p->adj_x ? sa[GD_C] : sa[GD_W], ka = p->adj_x ? sa[GD_W] : sa[GD_C];
  int kb = p->adj_y ? sb[GD_C] : sb[GD_W], n = p->adj_y ? sb[GD_W] : sb[GD_C];
  if (ka != kb) return reason(ni, "inner dimensions differ: %d (input 0) and %d (input 1)", ka, kb);
  int out[4] = {0, 0, m, n};
  for (int d = GD_B; d <= GD_H; ++d) {
    if (sa[d] != sb[d] && sa[d] != 1 && sb[d] != 1)
      return reason(ni, "batch dimensions %d and %d do not broadcast", sa[d], sb[d]);
    out[d] = sa[d] > sb[d] ? sa[d] : sb[d];
  }
  int declared[8];
  int out_rank = ra > rb ? ra : rb;
  if (mv_dims(ni->mv, ni_output(ni, 0), declared, 8) != out_rank)
    return reason(ni, "output must have rank %d", out_rank);
  return check_output_shape(ni, ni_output(ni, 0), out);
}

static int lower_batch_matmul(Lowering* lw, const NodeInfo* ni) {
  const TfLiteBatchMatMulParams* p = ni->node->builtin_data;
  int a = lower_tensor(lw, ni_input(ni, 0));
  int b = a < 0 ? -1 : lower_tensor(lw, ni_input(ni, 1));
  int out = b < 0 ? -1 : lower_tensor(lw, ni_output(ni, 0));
  if (out < 0) return -1;
  GNode* n = graph_add_node(lw->g, GOP_BATCH_MATMUL);
  if (!n) return lower_error(lw, "out of memory");
  n->inputs[0] = a;
  n->inputs[1] = b;
  n->num_inputs = 2;
  n->outputs[0] = out;
  n->num_outputs = 1;
  n->p.matmul.adj_x = p->adj_x;
  n->p.matmul.adj_y = p->adj_y;
  return 0;
}

static int encode_batch_matmul(Encoder* ex, int node) {
  const GNode* n = &ex->g.nodes[node];
  const GTensor* dst = &ex->g.tensors[n->outputs[0]];
  const int* d = dst->shape;
  int adj_x = n->p.matmul.adj_x, adj_y = n->p.matmul.adj_y;
  KernelVariant v;
  select_batch_matmul(&ex->target, &ex->g, n, &v);
  KernelRef k = ex_dispatch_variant(ex, &v, node);
  if (!k) return -1;
  KArgs a = {k, 0, CL_SUCCESS, 0};
  karg_mem(&a, ex_tensor_mem(ex, n->inputs[0]));
  karg_mem(&a, ex_tensor_mem(ex, n->inputs[1]));
  karg_mem(&a, ex_tensor_mem(ex, n->outputs[0]));
  karg_shape(&a, ex->g.tensors[n->inputs[0]].shape);
  karg_shape(&a, ex->g.tensors[n->inputs[1]].shape);
  karg_shape(&a, d);
  if (v.form == MATMUL_ARGS_GENERAL) {
    karg_int2(&a, adj_x, adj_y);
  } else {
    /* The 4-row kernels' grid: the output with the rows (W) divided by 4. */
    int grid[4] = {d[GD_B], d[GD_H], (d[GD_W] + 3) / 4, d[GD_C]};
    karg_shape(&a, grid);
    if (v.form == MATMUL_ARGS_ROWS4_ADJ_Y) karg_int(&a, adj_y);
  }
  karg_int(&a, (int)v.total);
  return karg_done(ex, &a);
}

/* The TFLite ops this file runs (op_table.c lists them). */
const OpDef kOpBatchMatmul = {.builtin_code = kBuiltinBatchMatmul, .max_version = 4,
    .check = check_batch_matmul, .lower = lower_batch_matmul,
    .constraints = "2 inputs of rank 2-4, either one constant (upstream: a constant RHS only if 2-D); adj_x, adj_y; batch "
     "dims broadcast; float32 sums; no hybrid int8 operand"};
