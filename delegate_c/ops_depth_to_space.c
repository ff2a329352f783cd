/* DEPTH_TO_SPACE (opencl_kernels/depth_to_space.cl), NHWC with TFLite's
 * DCR order: output channel c at (y * bs + by, x * bs + bx) comes from
 * input channel (by * bs + bx) * C_out + c at (y, x). */
#include "executor.h"
#include "op_table.h"
#include "tflite_builtins.h"

int check_depth_to_space(const NodeInfo* ni) {
  const TfLiteDepthToSpaceParams* p = ni->node->builtin_data;
  if (!p) return reason(ni, "missing parameters");
  if (ni_num_inputs(ni) != 1 || ni_num_outputs(ni) != 1)
    return reason(ni, "needs 1 input and 1 output, has %d and %d", ni_num_inputs(ni), ni_num_outputs(ni));
  if (mv_is_const(ni->mv, ni_input(ni, 0))) return reason(ni, "input 0 is a constant; a runtime input is required");
  int bs = p->block_size;
  if (bs == 1) return reason(ni, "block_size 1 is a no-op");
  if (bs < 1) return reason(ni, "block_size %d must be > 1", bs);
  int in[4];
  if (ni_shape(ni, ni_input(ni, 0), in) != 4) return reason(ni, "input 0 must have rank 4");
  if (in[GD_C] % (bs * bs) != 0)
    return reason(ni, "input channels %d are not a multiple of block_size^2 = %d", in[GD_C], bs * bs);
  int out[4] = {in[GD_B], in[GD_H] * bs, in[GD_W] * bs, in[GD_C] / (bs * bs)};
  return check_output_shape(ni, ni_output(ni, 0), out);
}

int lower_depth_to_space(Lowering* lw, const NodeInfo* ni) {
  const TfLiteDepthToSpaceParams* p = ni->node->builtin_data;
  int in = lower_tensor(lw, ni_input(ni, 0));
  int out = in < 0 ? -1 : lower_tensor(lw, ni_output(ni, 0));
  if (out < 0) return -1;
  GNode* n = graph_add_node(lw->g, GOP_DEPTH_TO_SPACE);
  if (!n) return lower_error(lw, "out of memory");
  n->inputs[0] = in;
  n->num_inputs = 1;
  n->outputs[0] = out;
  n->num_outputs = 1;
  n->p.depth_to_space.block = p->block_size;
  return 0;
}

int encode_depth_to_space(Executor* ex, int node) {
  const GNode* n = &ex->g.nodes[node];
  KArgs a;
  if (ex_dispatch_src_dst(ex, node, "depth_to_space.cl", "depth_to_space", &a)) return -1;
  karg_int(&a, n->p.depth_to_space.block);
  karg_int(&a, a.total);
  return karg_done(ex, &a);
}

/* SPACE_TO_DEPTH (same file of kernels): the inverse, output channel
 * (by * bs + bx) * C_in + c at (y, x) from input channel c at
 * (y * bs + by, x * bs + bx). */
int check_space_to_depth(const NodeInfo* ni) {
  const TfLiteSpaceToDepthParams* p = ni->node->builtin_data;
  if (!p) return reason(ni, "missing parameters");
  if (ni_num_inputs(ni) != 1 || ni_num_outputs(ni) != 1)
    return reason(ni, "needs 1 input and 1 output, has %d and %d", ni_num_inputs(ni), ni_num_outputs(ni));
  if (mv_is_const(ni->mv, ni_input(ni, 0))) return reason(ni, "input 0 is a constant; a runtime input is required");
  int bs = p->block_size;
  if (bs == 1) return reason(ni, "block_size 1 is a no-op");
  if (bs < 1) return reason(ni, "block_size %d must be > 1", bs);
  int in[4];
  if (ni_shape(ni, ni_input(ni, 0), in) != 4) return reason(ni, "input 0 must have rank 4");
  if (in[GD_H] % bs || in[GD_W] % bs)
    return reason(ni, "input %dx%d is not a multiple of block_size %d", in[GD_H], in[GD_W], bs);
  int out[4] = {in[GD_B], in[GD_H] / bs, in[GD_W] / bs, in[GD_C] * bs * bs};
  return check_output_shape(ni, ni_output(ni, 0), out);
}

int lower_space_to_depth(Lowering* lw, const NodeInfo* ni) {
  const TfLiteSpaceToDepthParams* p = ni->node->builtin_data;
  int in = lower_tensor(lw, ni_input(ni, 0));
  int out = in < 0 ? -1 : lower_tensor(lw, ni_output(ni, 0));
  if (out < 0) return -1;
  GNode* n = graph_add_node(lw->g, GOP_SPACE_TO_DEPTH);
  if (!n) return lower_error(lw, "out of memory");
  n->inputs[0] = in;
  n->num_inputs = 1;
  n->outputs[0] = out;
  n->num_outputs = 1;
  n->p.depth_to_space.block = p->block_size;
  return 0;
}

int encode_space_to_depth(Executor* ex, int node) {
  const GNode* n = &ex->g.nodes[node];
  KArgs a;
  if (ex_dispatch_src_dst(ex, node, "depth_to_space.cl", "space_to_depth", &a)) return -1;
  karg_int(&a, n->p.depth_to_space.block);
  karg_int(&a, a.total);
  return karg_done(ex, &a);
}
