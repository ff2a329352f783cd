/* Elementwise ops (opencl_kernels/elementwise.cl): binary ops with TFLite
 * broadcasting (arithmetic, comparisons, LOGICAL_AND), SELECT/SELECT_V2,
 * ADD_N, unary math and activations, and CAST. Bool and int32 values are
 * floats inside a partition; the executor converts them at its boundary. */
#include <string.h>

#include "encode/encode.h"
#include "ops/op_table.h"
#include "select/selectors.h"
#include "model/tflite_builtins.h"
#include "ops/op_kinds.h"

/* The graph ops this file encodes (graph.h: a node points at its op). */
static int encode_binary(Encoder* ex, int node);
const GOpDesc kGOpBinary = {"BINARY", encode_binary};
static int encode_unary(Encoder* ex, int node);
const GOpDesc kGOpUnary = {"UNARY", encode_unary};

static int binary_code(int builtin) {
  switch (builtin) {
    case kBuiltinAdd: return BIN_ADD;
    case kBuiltinSub: return BIN_SUB;
    case kBuiltinMul: return BIN_MUL;
    case kBuiltinDiv: return BIN_DIV;
    case kBuiltinMaximum: return BIN_MAX;
    case kBuiltinMinimum: return BIN_MIN;
    case kBuiltinPrelu: return BIN_PRELU;
    case kBuiltinSquaredDifference: return BIN_SQDIFF;
    case kBuiltinPow: return BIN_POW;
    case kBuiltinFloorDiv: return BIN_FLOOR_DIV;
    case kBuiltinFloorMod: return BIN_FLOOR_MOD;
    case kBuiltinEqual: return BIN_EQUAL;
    case kBuiltinNotEqual: return BIN_NOT_EQUAL;
    case kBuiltinLess: return BIN_LESS;
    case kBuiltinLessEqual: return BIN_LESS_EQUAL;
    case kBuiltinGreater: return BIN_GREATER;
    case kBuiltinGreaterEqual: return BIN_GREATER_EQUAL;
    case kBuiltinLogicalAnd: return BIN_LOGICAL_AND;
    default: return -1;
  }
}

static int is_comparison(int builtin) {
  int code = binary_code(builtin);
  return code >= BIN_EQUAL && code <= BIN_GREATER_EQUAL;
}

/* ADD/SUB/MUL/DIV carry a fused activation in their params. */
static int has_activation(int builtin) {
  return builtin == kBuiltinAdd || builtin == kBuiltinSub || builtin == kBuiltinMul || builtin == kBuiltinDiv;
}

static int binary_activation(const NodeInfo* ni) {
  if (has_activation(ni->reg->builtin_code) && ni->node->builtin_data)
    return *(const int*)ni->node->builtin_data; /* activation is the first field of each */
  return kTfLiteActNone;
}

/* The float operands of arithmetic ops: a constant of an integer or bool
 * type would be a malformed model (the CPU kernels refuse mixed types). */
static int check_float_operands(const NodeInfo* ni, int first, int count) {
  for (int k = first; k < first + count; ++k) {
    int type = (int)mv_tensor(ni->mv, ni_input(ni, k))->type;
    if (type == kTfLiteInt32 || type == kTfLiteInt64 || type == kTfLiteBool)
      return reason(ni, "input %d has type %s; a float operand is required", k, type_name(type));
  }
  return 0;
}

static int check_type(const NodeInfo* ni, int tensor, const char* what, int type) {
  int t = (int)mv_tensor(ni->mv, tensor)->type;
  if (t != type) return reason(ni, "%s has type %s; %s is required", what, type_name(t), type_name(type));
  return 0;
}

/* Broadcasts a into out (both BHWC); -1 when the shapes do not broadcast. */
static int broadcast_into(int out[4], const int a[4]) {
  for (int d = 0; d < 4; ++d) {
    if (out[d] != a[d] && out[d] != 1 && a[d] != 1) return -1;
    if (a[d] > out[d]) out[d] = a[d];
  }
  return 0;
}

static int check_binary(const NodeInfo* ni) {
  if (ni_num_inputs(ni) != 2 || ni_num_outputs(ni) != 1)
    return reason(ni, "needs 2 inputs and 1 output, has %d and %d", ni_num_inputs(ni), ni_num_outputs(ni));
  int a = ni_input(ni, 0), b = ni_input(ni, 1);
  if (a < 0 || b < 0) return reason(ni, "an input is missing");
  if (mv_is_const(ni->mv, a) && mv_is_const(ni->mv, b)) return reason(ni, "both inputs are constants");
  int code = ni->reg->builtin_code;
  if (has_activation(code) && !ni->node->builtin_data) return reason(ni, "missing parameters");
  if (check_activation(ni, binary_activation(ni))) return -1;
  if (code == kBuiltinLogicalAnd) {
    if (check_type(ni, a, "input 0", kTfLiteBool) || check_type(ni, b, "input 1", kTfLiteBool)) return -1;
  } else if (check_float_operands(ni, 0, 2)) {
    return -1;
  }
  if ((is_comparison(code) || code == kBuiltinLogicalAnd) && check_type(ni, ni_output(ni, 0), "output", kTfLiteBool))
    return -1;
  int sa[4], sb[4];
  if (ni_shape(ni, a, sa) < 0 || ni_shape(ni, b, sb) < 0) return reason(ni, "inputs must have rank <= 4");
  int out[4] = {sa[0], sa[1], sa[2], sa[3]};
  if (broadcast_into(out, sb))
    return reason(ni, "input shapes [%d,%d,%d,%d] and [%d,%d,%d,%d] do not broadcast", sa[0], sa[1], sa[2], sa[3],
                  sb[0], sb[1], sb[2], sb[3]);
  if (code == kBuiltinPrelu) {
    for (int d = 0; d < 4; ++d)
      if (out[d] != sa[d]) return reason(ni, "alpha is larger than the input in dimension %d", d);
  }
  return 0;
}

/* The broadcast of the two input shapes (check_binary checked they do). */
static int infer_binary(const NodeInfo* ni, int k, int out[4]) {
  int sb[4];
  (void)k;
  if (ni_shape(ni, ni_input(ni, 0), out) < 0 || ni_shape(ni, ni_input(ni, 1), sb) < 0 || broadcast_into(out, sb))
    return reason(ni, "the inputs do not broadcast");
  return 0;
}

static int lower_binary(Lowering* lw, const NodeInfo* ni) {
  int a = lower_tensor(lw, ni_input(ni, 0));
  int b = a < 0 ? -1 : lower_tensor(lw, ni_input(ni, 1));
  int out = b < 0 ? -1 : lower_tensor(lw, ni_output(ni, 0));
  if (out < 0) return -1;
  GNode* n = graph_add_node(lw->g, GOP_BINARY);
  if (!n) return lower_error(lw, "out of memory");
  n->inputs[0] = a;
  n->inputs[1] = b;
  n->num_inputs = 2;
  n->outputs[0] = out;
  n->num_outputs = 1;
  n->act = binary_activation(ni);
  n->p.binary.op = binary_code(ni->reg->builtin_code);
  return 0;
}

/* SELECT (cond, x, y): 3 inputs, each broadcast to the output. */
static int encode_select(Encoder* ex, int node) {
  const GNode* n = &ex->g.nodes[node];
  const GTensor* dst = &ex->g.tensors[n->outputs[0]];
  KernelRef k = ex_dispatch(ex, "elementwise.cl", "select_op", phwc4_items(dst->shape), node);
  if (!k) return -1;
  KArgs a = {k, 0, CL_SUCCESS, 0};
  for (int j = 0; j < 3; ++j) karg_mem(&a, ex_tensor_mem(ex, n->inputs[j]));
  karg_mem(&a, ex_tensor_mem(ex, n->outputs[0]));
  for (int j = 0; j < 3; ++j) karg_shape(&a, ex->g.tensors[n->inputs[j]].shape);
  karg_shape(&a, dst->shape);
  karg_int(&a, (int)phwc4_items(dst->shape));
  return karg_done(ex, &a);
}

static int encode_binary(Encoder* ex, int node) {
  const GNode* n = &ex->g.nodes[node];
  if (n->p.binary.op == BIN_SELECT) return encode_select(ex, node);
  const GTensor* dst = &ex->g.tensors[n->outputs[0]];
  const int* sa = ex->g.tensors[n->inputs[0]].shape;
  const int* sb = ex->g.tensors[n->inputs[1]].shape;
  int same_a = memcmp(sa, dst->shape, sizeof(int) * 4) == 0;
  int same_b = memcmp(sb, dst->shape, sizeof(int) * 4) == 0;
  int per_channel_b = sb[GD_B] == 1 && sb[GD_H] == 1 && sb[GD_W] == 1 && sb[GD_C] == dst->shape[GD_C];
  if (same_a && (same_b || per_channel_b)) {
    KernelVariant v;
    select_binary_rows(&ex->target, dst->shape, &v);
    size_t items = v.total;
    KernelRef k = ex_dispatch_variant(ex, &v, node);
    if (!k) return -1;
    ex_math(k, 0, 1u << n->p.binary.op);
    KArgs a = {k, 0, CL_SUCCESS, 0};
    karg_mem(&a, ex_tensor_mem(ex, n->inputs[0]));
    karg_mem(&a, ex_tensor_mem(ex, n->inputs[1]));
    karg_mem(&a, ex_tensor_mem(ex, n->outputs[0]));
    karg_shape(&a, dst->shape);
    karg_int(&a, !same_b);
    karg_int(&a, n->p.binary.op);
    karg_int(&a, n->act);
    karg_int(&a, (int)items);
    return karg_done(ex, &a);
  }
  KernelRef k = ex_dispatch(ex, "elementwise.cl", "binary_op", phwc4_items(dst->shape), node);
  if (!k) return -1;
  ex_math(k, 0, 1u << n->p.binary.op);
  KArgs a = {k, 0, CL_SUCCESS, 0};
  karg_mem(&a, ex_tensor_mem(ex, n->inputs[0]));
  karg_mem(&a, ex_tensor_mem(ex, n->inputs[1]));
  karg_mem(&a, ex_tensor_mem(ex, n->outputs[0]));
  karg_shape(&a, ex->g.tensors[n->inputs[0]].shape);
  karg_shape(&a, ex->g.tensors[n->inputs[1]].shape);
  karg_shape(&a, dst->shape);
  karg_int(&a, n->p.binary.op);
  karg_int(&a, n->act);
  karg_int(&a, (int)phwc4_items(dst->shape));
  return karg_done(ex, &a);
}

/* ---- SELECT / SELECT_V2 ---- */

/* SELECT (v1) takes a condition of x's shape, a scalar, or a vector along
 * x's first dimension; SELECT_V2 broadcasts all three operands. */
static int check_select(const NodeInfo* ni) {
  if (ni_num_inputs(ni) != 3 || ni_num_outputs(ni) != 1)
    return reason(ni, "needs 3 inputs and 1 output, has %d and %d", ni_num_inputs(ni), ni_num_outputs(ni));
  int c = ni_input(ni, 0), x = ni_input(ni, 1), y = ni_input(ni, 2);
  if (c < 0 || x < 0 || y < 0) return reason(ni, "an input is missing");
  if (mv_is_const(ni->mv, c) && mv_is_const(ni->mv, x) && mv_is_const(ni->mv, y))
    return reason(ni, "all inputs are constants");
  if (check_type(ni, c, "the condition (input 0)", kTfLiteBool) || check_float_operands(ni, 1, 2)) return -1;
  int sc[4], sx[4], sy[4];
  if (ni_shape(ni, c, sc) < 0 || ni_shape(ni, x, sx) < 0 || ni_shape(ni, y, sy) < 0)
    return reason(ni, "inputs must have rank <= 4");
  if (ni->reg->builtin_code == kBuiltinSelect) {
    int dc[8], dx[8], dy[8];
    int rc = mv_dims(ni->mv, c, dc, 8), rx = mv_dims(ni->mv, x, dx, 8), ry = mv_dims(ni->mv, y, dy, 8);
    if (rx != ry || memcmp(dx, dy, sizeof(int) * (size_t)rx) != 0)
      return reason(ni, "SELECT needs x and y of the same shape (SELECT_V2 broadcasts)");
    int same = rc == rx && memcmp(dc, dx, sizeof(int) * (size_t)rx) == 0;
    int rank_one = rc == 1 && rx > 1 && dc[0] == dx[0];
    if (!same && rc != 0 && !rank_one)
      return reason(ni, "SELECT needs a condition of x's shape, a scalar, or a vector along x's first dimension");
    return check_output_shape(ni, ni_output(ni, 0), sx);
  }
  int out[4] = {sc[0], sc[1], sc[2], sc[3]};
  if (broadcast_into(out, sx) || broadcast_into(out, sy))
    return reason(ni, "condition, x and y shapes [%d,%d,%d,%d], [%d,%d,%d,%d], [%d,%d,%d,%d] do not broadcast",
                  sc[0], sc[1], sc[2], sc[3], sx[0], sx[1], sx[2], sx[3], sy[0], sy[1], sy[2], sy[3]);
  return check_output_shape(ni, ni_output(ni, 0), out);
}

static int lower_select(Lowering* lw, const NodeInfo* ni) {
  int c = lower_tensor(lw, ni_input(ni, 0));
  int x = c < 0 ? -1 : lower_tensor(lw, ni_input(ni, 1));
  int y = x < 0 ? -1 : lower_tensor(lw, ni_input(ni, 2));
  int out = y < 0 ? -1 : lower_tensor(lw, ni_output(ni, 0));
  if (out < 0) return -1;
  int c_rank = lw->g->tensors[c].rank, x_rank = lw->g->tensors[x].rank;
  if (ni->reg->builtin_code == kBuiltinSelect && c_rank == 1 && x_rank > 1) {
    /* A vector along x's first dimension: reshape [N] to N there, 1 elsewhere. */
    int shape[4] = {1, 1, 1, 1};
    shape[4 - x_rank] = lw->g->tensors[c].shape[GD_C];
    int moved = graph_add_tensor(lw->g, shape, x_rank);
    if (moved < 0) return lower_error(lw, "out of memory");
    if (lower_reshape_node(lw, c, moved)) return -1;
    c = moved;
  }
  GNode* n = graph_add_node(lw->g, GOP_BINARY);
  if (!n) return lower_error(lw, "out of memory");
  n->inputs[0] = c;
  n->inputs[1] = x;
  n->inputs[2] = y;
  n->num_inputs = 3;
  n->outputs[0] = out;
  n->num_outputs = 1;
  n->p.binary.op = BIN_SELECT;
  return 0;
}

/* ---- ADD_N ---- */

/* Any number of same-shape inputs (upstream: exactly 2), summed as a chain
 * of ADDs in input order, as the CPU sums them. */
static int check_add_n(const NodeInfo* ni) {
  int n = ni_num_inputs(ni);
  if (n < 2 || ni_num_outputs(ni) != 1) return reason(ni, "needs 2 or more inputs and 1 output");
  int out[4], runtime = 0;
  if (ni_shape(ni, ni_output(ni, 0), out) < 0) return reason(ni, "output must have rank <= 4");
  for (int k = 0; k < n; ++k) {
    int t = ni_input(ni, k), s[4];
    if (t < 0) return reason(ni, "input %d is missing", k);
    runtime += !mv_is_const(ni->mv, t);
    if (ni_shape(ni, t, s) < 0 || memcmp(s, out, sizeof(s)) != 0)
      return reason(ni, "input %d's shape differs from the output's (ADD_N does not broadcast)", k);
  }
  if (!runtime) return reason(ni, "all inputs are constants");
  return check_float_operands(ni, 0, n);
}

static int lower_add_n(Lowering* lw, const NodeInfo* ni) {
  int n = ni_num_inputs(ni);
  int acc = lower_tensor(lw, ni_input(ni, 0));
  int out = acc < 0 ? -1 : lower_tensor(lw, ni_output(ni, 0));
  if (out < 0) return -1;
  for (int k = 1; k < n; ++k) {
    int in = lower_tensor(lw, ni_input(ni, k));
    if (in < 0) return -1;
    int dst = out;
    if (k < n - 1) { /* a partial sum */
      dst = graph_add_tensor(lw->g, lw->g->tensors[out].shape, lw->g->tensors[out].rank);
      if (dst < 0) return lower_error(lw, "out of memory");
    }
    GNode* node = graph_add_node(lw->g, GOP_BINARY);
    if (!node) return lower_error(lw, "out of memory");
    node->inputs[0] = acc;
    node->inputs[1] = in;
    node->num_inputs = 2;
    node->outputs[0] = dst;
    node->num_outputs = 1;
    node->p.binary.op = BIN_ADD;
    acc = dst;
  }
  return 0;
}

static int unary_code(const NodeInfo* ni) {
  switch (ni->reg->builtin_code) {
    case kBuiltinRelu: return UN_RELU;
    case kBuiltinRelu6: return UN_RELU6;
    case kBuiltinReluN1To1: return UN_RELU_N1_TO_1;
    case kBuiltinTanh: return UN_TANH;
    case kBuiltinLogistic: return UN_LOGISTIC;
    case kBuiltinHardSwish: return UN_HARD_SWISH;
    case kBuiltinLeakyRelu: return UN_LEAKY_RELU;
    case kBuiltinAbs: return UN_ABS;
    case kBuiltinExp: return UN_EXP;
    case kBuiltinNeg: return UN_NEG;
    case kBuiltinSqrt: return UN_SQRT;
    case kBuiltinRsqrt: return UN_RSQRT;
    case kBuiltinSquare: return UN_SQUARE;
    case kBuiltinLog: return UN_LOG;
    case kBuiltinSin: return UN_SIN;
    case kBuiltinCos: return UN_COS;
    case kBuiltinFloor: return UN_FLOOR;
    case kBuiltinElu: return UN_ELU;
    case kBuiltinSign: return UN_SIGN;
    case kBuiltinGelu:
      return ((const TfLiteGeluParams*)ni->node->builtin_data)->approximate ? UN_GELU_TANH : UN_GELU;
    default: return -1;
  }
}

static int check_unary(const NodeInfo* ni) {
  if (ni_num_inputs(ni) != 1 || ni_num_outputs(ni) != 1) return reason(ni, "needs 1 input and 1 output");
  if (mv_is_const(ni->mv, ni_input(ni, 0))) return reason(ni, "input 0 is a constant");
  int code = ni->reg->builtin_code;
  if ((code == kBuiltinLeakyRelu || code == kBuiltinGelu) && !ni->node->builtin_data)
    return reason(ni, "missing parameters");
  int in[4];
  if (ni_shape(ni, ni_input(ni, 0), in) < 0) return reason(ni, "input 0 must have rank <= 4");
  return 0; /* the output shape: infer_input_shape, settled by the gate */
}

static int lower_unary(Lowering* lw, const NodeInfo* ni) {
  int in = lower_tensor(lw, ni_input(ni, 0));
  int out = in < 0 ? -1 : lower_tensor(lw, ni_output(ni, 0));
  if (out < 0) return -1;
  float alpha = ni->reg->builtin_code == kBuiltinLeakyRelu
                    ? ((const TfLiteLeakyReluParams*)ni->node->builtin_data)->alpha
                    : 0.0f;
  return lower_unary_node(lw, in, out, unary_code(ni), alpha, ni->index);
}

/* CAST between float32, int32 and bool (op_table.c lets these types
 * through; the boundary converts them). float -> int32 truncates as the
 * CPU's static_cast does; anything -> bool is "not zero". */
/* Does a GATHER or ONE_HOT read tensor t as its indices? Those read raw
 * int32 partition inputs, not the float-valued int32 a delegated CAST makes. */
int feeds_indices(const ModelView* mv, int t) {
  for (int i = 0; i < mv->num_nodes; ++i) {
    TfLiteNode* node;
    TfLiteRegistration* reg;
    if (mv_node(mv, mv->plan[i], &node, &reg)) continue;
    int k = reg->builtin_code == kBuiltinGather ? 1 : reg->builtin_code == kBuiltinOneHot ? 0 : -1;
    if (k >= 0 && node->inputs && node->inputs->size > k && node->inputs->data[k] == t) return 1;
  }
  return 0;
}

static int check_cast(const NodeInfo* ni) {
  int out = ni_output(ni, 0);
  if (out >= 0 && mv_tensor(ni->mv, out)->type == kTfLiteInt32 && feeds_indices(ni->mv, out))
    return reason(ni, "its INT32 output is the indices of a GATHER/ONE_HOT, which read raw int32 partition inputs");
  return check_unary(ni);
}

static int lower_cast(Lowering* lw, const NodeInfo* ni) {
  int in = lower_tensor(lw, ni_input(ni, 0));
  int out = in < 0 ? -1 : lower_tensor(lw, ni_output(ni, 0));
  if (out < 0) return -1;
  int from = lw->g->tensors[in].dtype, to = lw->g->tensors[out].dtype;
  int op = to == kTfLiteBool && from != kTfLiteBool   ? UN_NOT_ZERO
           : to == kTfLiteInt32 && from == kTfLiteFloat32 ? UN_TRUNC
                                                          : UN_IDENTITY;
  return lower_unary_node(lw, in, out, op, 0.0f, ni->index);
}

static int encode_unary(Encoder* ex, int node) {
  const GNode* n = &ex->g.nodes[node];
  const GTensor* dst = &ex->g.tensors[n->outputs[0]];
  KernelRef k = ex_dispatch(ex, "elementwise.cl", "unary_op", phwc4_items(dst->shape), node);
  if (!k) return -1;
  ex_math(k, 1u << n->p.unary.op, 0);
  KArgs a = {k, 0, CL_SUCCESS, 0};
  karg_mem(&a, ex_tensor_mem(ex, n->inputs[0]));
  karg_mem(&a, ex_tensor_mem(ex, n->outputs[0]));
  karg_shape(&a, dst->shape);
  karg_int(&a, n->p.unary.op);
  karg_float(&a, n->p.unary.alpha);
  karg_int(&a, (int)phwc4_items(dst->shape));
  return karg_done(ex, &a);
}

/* The TFLite ops this file runs (op_table.c lists them). */
/* The six comparisons share their rules. */
#define CMP_CONSTRAINTS \
  "2 float inputs with broadcasting; BOOL output, also at a partition boundary (upstream: only into CAST/SELECT)"
const OpDef kOpAbs = {.builtin_code = kBuiltinAbs, .max_version = 2,
    .check = check_unary, .infer = infer_input_shape, .lower = lower_unary,
    .constraints = "1 runtime input"};
const OpDef kOpAdd = {.builtin_code = kBuiltinAdd, .max_version = 2,
    .check = check_binary, .infer = infer_binary, .lower = lower_binary,
    .constraints = "2 inputs (runtime or constant) with TFLite broadcasting; fused activation"};
const OpDef kOpAddN = {.builtin_code = kBuiltinAddN, .max_version = 2, .check = check_add_n, .lower = lower_add_n,
    .constraints = "2 or more same-shape inputs (upstream: exactly 2), at least one runtime; summed in input order"};
const OpDef kOpCast = {.builtin_code = kBuiltinCast, .max_version = 5,
    .check = check_cast, .infer = infer_input_shape, .lower = lower_cast,
    .extra_input_types = "INT32/BOOL", .extra_inputs = ~0u, .extra_output_types = "INT32/BOOL",
    .constraints = "1 runtime input; FLOAT32, INT32 and BOOL in any combination (upstream: bool<->float, float/int32 among "
     "themselves); the partition holds them as floats: int32 exact to 2^24 (FP16 storage: 2^11)"};
const OpDef kOpCos = {.builtin_code = kBuiltinCos, .max_version = 2,
    .check = check_unary, .infer = infer_input_shape, .lower = lower_unary,
    .constraints = "1 runtime input"};
const OpDef kOpDiv = {.builtin_code = kBuiltinDiv, .max_version = 2,
    .check = check_binary, .infer = infer_binary, .lower = lower_binary,
    .constraints = "2 inputs with broadcasting; fused activation"};
const OpDef kOpElu = {.builtin_code = kBuiltinElu, .max_version = 2,
    .check = check_unary, .infer = infer_input_shape, .lower = lower_unary,
    .constraints = "1 runtime input"};
const OpDef kOpEqual = {.builtin_code = kBuiltinEqual, .max_version = 2,
    .check = check_binary, .infer = infer_binary, .lower = lower_binary,
    .extra_output_types = "BOOL",
    .constraints = CMP_CONSTRAINTS};
const OpDef kOpExp = {.builtin_code = kBuiltinExp, .max_version = 2,
    .check = check_unary, .infer = infer_input_shape, .lower = lower_unary,
    .constraints = "1 runtime input"};
const OpDef kOpFloor = {.builtin_code = kBuiltinFloor, .max_version = 2,
    .check = check_unary, .infer = infer_input_shape, .lower = lower_unary,
    .constraints = "1 runtime input"};
const OpDef kOpFloorDiv = {.builtin_code = kBuiltinFloorDiv, .max_version = 2,
    .check = check_binary, .infer = infer_binary, .lower = lower_binary,
    .constraints = "2 float inputs with broadcasting; floor of the exact quotient, as the CPU computes it"};
const OpDef kOpFloorMod = {.builtin_code = kBuiltinFloorMod, .max_version = 2,
    .check = check_binary, .infer = infer_binary, .lower = lower_binary,
    .constraints = "2 float inputs with broadcasting; result has the divisor's sign"};
const OpDef kOpGelu = {.builtin_code = kBuiltinGelu, .max_version = 2,
    .check = check_unary, .infer = infer_input_shape, .lower = lower_unary,
    .constraints = "1 runtime input; approximate (tanh) or exact (erf)"};
const OpDef kOpGreater = {.builtin_code = kBuiltinGreater, .max_version = 2,
    .check = check_binary, .infer = infer_binary, .lower = lower_binary,
    .extra_output_types = "BOOL",
    .constraints = CMP_CONSTRAINTS};
const OpDef kOpGreaterEqual = {.builtin_code = kBuiltinGreaterEqual, .max_version = 2,
    .check = check_binary, .infer = infer_binary, .lower = lower_binary,
    .extra_output_types = "BOOL",
    .constraints = CMP_CONSTRAINTS};
const OpDef kOpHardSwish = {.builtin_code = kBuiltinHardSwish, .max_version = 1,
    .check = check_unary, .infer = infer_input_shape, .lower = lower_unary,
    .constraints = "1 runtime input"};
const OpDef kOpLeakyRelu = {.builtin_code = kBuiltinLeakyRelu, .max_version = 2,
    .check = check_unary, .infer = infer_input_shape, .lower = lower_unary,
    .constraints = "1 runtime input; any alpha"};
const OpDef kOpLess = {.builtin_code = kBuiltinLess, .max_version = 2,
    .check = check_binary, .infer = infer_binary, .lower = lower_binary,
    .extra_output_types = "BOOL",
    .constraints = CMP_CONSTRAINTS};
const OpDef kOpLessEqual = {.builtin_code = kBuiltinLessEqual, .max_version = 2,
    .check = check_binary, .infer = infer_binary, .lower = lower_binary,
    .extra_output_types = "BOOL",
    .constraints = CMP_CONSTRAINTS};
const OpDef kOpLog = {.builtin_code = kBuiltinLog, .max_version = 2,
    .check = check_unary, .infer = infer_input_shape, .lower = lower_unary,
    .constraints = "1 runtime input"};
const OpDef kOpLogicalAnd = {.builtin_code = kBuiltinLogicalAnd, .max_version = 2,
    .check = check_binary, .infer = infer_binary, .lower = lower_binary,
    .extra_input_types = "BOOL", .extra_inputs = ~0u, .extra_output_types = "BOOL",
    .constraints = "2 BOOL inputs with broadcasting; BOOL output (at a partition boundary too)"};
const OpDef kOpLogistic = {.builtin_code = kBuiltinLogistic, .max_version = 2,
    .check = check_unary, .infer = infer_input_shape, .lower = lower_unary,
    .constraints = "1 runtime input"};
const OpDef kOpMaximum = {.builtin_code = kBuiltinMaximum, .max_version = 2,
    .check = check_binary, .infer = infer_binary, .lower = lower_binary,
    .constraints = "2 inputs with broadcasting"};
const OpDef kOpMinimum = {.builtin_code = kBuiltinMinimum, .max_version = 2,
    .check = check_binary, .infer = infer_binary, .lower = lower_binary,
    .constraints = "2 inputs with broadcasting"};
const OpDef kOpMul = {.builtin_code = kBuiltinMul, .max_version = 3,
    .check = check_binary, .infer = infer_binary, .lower = lower_binary,
    .constraints = "2 inputs with broadcasting; fused activation"};
const OpDef kOpNeg = {.builtin_code = kBuiltinNeg, .max_version = 2,
    .check = check_unary, .infer = infer_input_shape, .lower = lower_unary,
    .constraints = "1 runtime input"};
const OpDef kOpNotEqual = {.builtin_code = kBuiltinNotEqual, .max_version = 2,
    .check = check_binary, .infer = infer_binary, .lower = lower_binary,
    .extra_output_types = "BOOL",
    .constraints = CMP_CONSTRAINTS};
const OpDef kOpPow = {.builtin_code = kBuiltinPow, .max_version = 2,
    .check = check_binary, .infer = infer_binary, .lower = lower_binary,
    .constraints = "2 float inputs with broadcasting"};
const OpDef kOpPrelu = {.builtin_code = kBuiltinPrelu, .max_version = 1,
    .check = check_binary, .infer = infer_binary, .lower = lower_binary,
    .constraints = "alpha constant or runtime, broadcast to the input"};
const OpDef kOpRelu = {.builtin_code = kBuiltinRelu, .max_version = 2,
    .check = check_unary, .infer = infer_input_shape, .lower = lower_unary,
    .constraints = "1 runtime input"};
const OpDef kOpRelu6 = {.builtin_code = kBuiltinRelu6, .max_version = 2,
    .check = check_unary, .infer = infer_input_shape, .lower = lower_unary,
    .constraints = "1 runtime input"};
const OpDef kOpReluN1To1 = {.builtin_code = kBuiltinReluN1To1, .max_version = 1,
    .check = check_unary, .infer = infer_input_shape, .lower = lower_unary,
    .constraints = "1 runtime input"};
const OpDef kOpRsqrt = {.builtin_code = kBuiltinRsqrt, .max_version = 2,
    .check = check_unary, .infer = infer_input_shape, .lower = lower_unary,
    .constraints = "1 runtime input"};
const OpDef kOpSelect = {.builtin_code = kBuiltinSelect, .max_version = 1,
    .check = check_select, .lower = lower_select,
    .extra_input_types = "BOOL", .extra_inputs = 1u << 0,
    .constraints = "BOOL condition of x's shape, a scalar, or a vector along x's first dimension; x and y of one shape"};
const OpDef kOpSelectV2 = {.builtin_code = kBuiltinSelectV2, .max_version = 1,
    .check = check_select, .lower = lower_select,
    .extra_input_types = "BOOL", .extra_inputs = 1u << 0,
    .constraints = "BOOL condition, x and y broadcast together (upstream: x/y of the output's shape or scalars)"};
const OpDef kOpSign = {.builtin_code = kBuiltinSign, .max_version = 2,
    .check = check_unary, .infer = infer_input_shape, .lower = lower_unary,
    .constraints = "1 runtime input"};
const OpDef kOpSin = {.builtin_code = kBuiltinSin, .max_version = 2,
    .check = check_unary, .infer = infer_input_shape, .lower = lower_unary,
    .constraints = "1 runtime input"};
const OpDef kOpSqrt = {.builtin_code = kBuiltinSqrt, .max_version = 2,
    .check = check_unary, .infer = infer_input_shape, .lower = lower_unary,
    .constraints = "1 runtime input"};
const OpDef kOpSquare = {.builtin_code = kBuiltinSquare, .max_version = 2,
    .check = check_unary, .infer = infer_input_shape, .lower = lower_unary,
    .constraints = "1 runtime input"};
const OpDef kOpSquaredDifference = {.builtin_code = kBuiltinSquaredDifference, .max_version = 2,
    .check = check_binary, .infer = infer_binary, .lower = lower_binary,
    .constraints = "2 inputs with broadcasting"};
const OpDef kOpSub = {.builtin_code = kBuiltinSub, .max_version = 2,
    .check = check_binary, .infer = infer_binary, .lower = lower_binary,
    .constraints = "2 inputs with broadcasting; fused activation"};
const OpDef kOpTanh = {.builtin_code = kBuiltinTanh, .max_version = 2,
    .check = check_unary, .infer = infer_input_shape, .lower = lower_unary,
    .constraints = "1 runtime input"};
