/* Binary ops with broadcasting (ADD, SUB, MUL, MAXIMUM, MINIMUM, PRELU)
 * and unary activations (opencl_kernels/elementwise.cl). */
#include "executor.h"
#include "op_table.h"
#include "tflite_builtins.h"

static int binary_code(int builtin) {
  switch (builtin) {
    case kBuiltinAdd: return BIN_ADD;
    case kBuiltinSub: return BIN_SUB;
    case kBuiltinMul: return BIN_MUL;
    case kBuiltinMaximum: return BIN_MAX;
    case kBuiltinMinimum: return BIN_MIN;
    case kBuiltinPrelu: return BIN_PRELU;
    default: return -1;
  }
}

/* ADD/SUB/MUL carry a fused activation in their params. */
static int binary_activation(const NodeInfo* ni) {
  int code = ni->reg->builtin_code;
  if ((code == kBuiltinAdd || code == kBuiltinSub || code == kBuiltinMul) && ni->node->builtin_data)
    return *(const int*)ni->node->builtin_data; /* activation is the first field of each */
  return kTfLiteActNone;
}

int check_binary(const NodeInfo* ni) {
  if (ni_num_inputs(ni) != 2 || ni_num_outputs(ni) != 1)
    return reason(ni, "needs 2 inputs and 1 output, has %d and %d", ni_num_inputs(ni), ni_num_outputs(ni));
  int a = ni_input(ni, 0), b = ni_input(ni, 1);
  if (a < 0 || b < 0) return reason(ni, "an input is missing");
  if (mv_is_const(ni->mv, a) && mv_is_const(ni->mv, b)) return reason(ni, "both inputs are constants");
  int code = ni->reg->builtin_code;
  if ((code == kBuiltinAdd || code == kBuiltinSub || code == kBuiltinMul) && !ni->node->builtin_data)
    return reason(ni, "missing parameters");
  if (check_activation(ni, binary_activation(ni))) return -1;
  int sa[4], sb[4];
  if (ni_shape(ni, a, sa) < 0 || ni_shape(ni, b, sb) < 0) return reason(ni, "inputs must have rank <= 4");
  int out[4];
  for (int d = 0; d < 4; ++d) {
    if (sa[d] != sb[d] && sa[d] != 1 && sb[d] != 1)
      return reason(ni, "input shapes [%d,%d,%d,%d] and [%d,%d,%d,%d] do not broadcast", sa[0], sa[1], sa[2], sa[3],
                    sb[0], sb[1], sb[2], sb[3]);
    out[d] = sa[d] > sb[d] ? sa[d] : sb[d];
  }
  if (code == kBuiltinPrelu) {
    for (int d = 0; d < 4; ++d)
      if (out[d] != sa[d]) return reason(ni, "alpha is larger than the input in dimension %d", d);
  }
  return check_output_shape(ni, ni_output(ni, 0), out);
}

int lower_binary(Lowering* lw, const NodeInfo* ni) {
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

int encode_binary(Executor* ex, int node) {
  const GNode* n = &ex->g.nodes[node];
  const GTensor* dst = &ex->g.tensors[n->outputs[0]];
  cl_kernel k = ex_dispatch(ex, "elementwise.cl", "binary_op", phwc4_items(dst->shape), node);
  if (!k) return -1;
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

static int unary_code(int builtin) {
  switch (builtin) {
    case kBuiltinRelu: return UN_RELU;
    case kBuiltinRelu6: return UN_RELU6;
    case kBuiltinReluN1To1: return UN_RELU_N1_TO_1;
    case kBuiltinTanh: return UN_TANH;
    case kBuiltinLogistic: return UN_LOGISTIC;
    case kBuiltinHardSwish: return UN_HARD_SWISH;
    default: return -1;
  }
}

int check_unary(const NodeInfo* ni) {
  if (ni_num_inputs(ni) != 1 || ni_num_outputs(ni) != 1) return reason(ni, "needs 1 input and 1 output");
  if (mv_is_const(ni->mv, ni_input(ni, 0))) return reason(ni, "input 0 is a constant");
  int in[4];
  if (ni_shape(ni, ni_input(ni, 0), in) < 0) return reason(ni, "input 0 must have rank <= 4");
  return check_output_shape(ni, ni_output(ni, 0), in);
}

/* Also used by other lowerings to apply a fused activation as its own node. */
int lower_unary_node(Lowering* lw, int in, int out, int op, float alpha, int tflite_node) {
  GNode* n = graph_add_node(lw->g, GOP_UNARY);
  if (!n) return lower_error(lw, "out of memory");
  n->inputs[0] = in;
  n->num_inputs = 1;
  n->outputs[0] = out;
  n->num_outputs = 1;
  n->p.unary.op = op;
  n->p.unary.alpha = alpha;
  n->tflite_node = tflite_node;
  return 0;
}

int lower_unary(Lowering* lw, const NodeInfo* ni) {
  int in = lower_tensor(lw, ni_input(ni, 0));
  int out = in < 0 ? -1 : lower_tensor(lw, ni_output(ni, 0));
  if (out < 0) return -1;
  return lower_unary_node(lw, in, out, unary_code(ni->reg->builtin_code), 0.0f, ni->index);
}

int encode_unary(Executor* ex, int node) {
  const GNode* n = &ex->g.nodes[node];
  const GTensor* dst = &ex->g.tensors[n->outputs[0]];
  cl_kernel k = ex_dispatch(ex, "elementwise.cl", "unary_op", phwc4_items(dst->shape), node);
  if (!k) return -1;
  KArgs a = {k, 0, CL_SUCCESS, 0};
  karg_mem(&a, ex_tensor_mem(ex, n->inputs[0]));
  karg_mem(&a, ex_tensor_mem(ex, n->outputs[0]));
  karg_shape(&a, dst->shape);
  karg_int(&a, n->p.unary.op);
  karg_float(&a, n->p.unary.alpha);
  karg_int(&a, (int)phwc4_items(dst->shape));
  return karg_done(ex, &a);
}
