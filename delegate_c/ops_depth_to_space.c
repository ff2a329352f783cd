/* DEPTH_TO_SPACE and SPACE_TO_DEPTH (opencl_kernels/depth_to_space.cl),
 * NHWC with TFLite's DCR order. DEPTH_TO_SPACE: output channel c at
 * (y * bs + by, x * bs + bx) comes from input channel (by * bs + bx) * C_out
 * + c at (y, x). SPACE_TO_DEPTH is the inverse. Both params structs hold
 * only block_size. */
#include "executor.h"
#include "op_table.h"
#include "tflite_builtins.h"

/* The graph ops this file encodes (graph.h: a node points at its op). */
static int encode_depth_to_space(Executor* ex, int node);
static const GOpDesc kGOpDepthToSpace = {"DEPTH_TO_SPACE", encode_depth_to_space};
static int encode_space_to_depth(Executor* ex, int node);
static const GOpDesc kGOpSpaceToDepth = {"SPACE_TO_DEPTH", encode_space_to_depth};

/* The checks both ops share; fills bs and the rank-4 input shape. */
static int check_block_op(const NodeInfo* ni, int* bs, int in[4]) {
  const int* block_size = ni->node->builtin_data;
  if (!block_size) return reason(ni, "missing parameters");
  if (ni_num_inputs(ni) != 1 || ni_num_outputs(ni) != 1)
    return reason(ni, "needs 1 input and 1 output, has %d and %d", ni_num_inputs(ni), ni_num_outputs(ni));
  if (mv_is_const(ni->mv, ni_input(ni, 0))) return reason(ni, "input 0 is a constant; a runtime input is required");
  *bs = *block_size;
  if (*bs == 1) return reason(ni, "block_size 1 is a no-op");
  if (*bs < 1) return reason(ni, "block_size %d must be > 1", *bs);
  if (ni_shape(ni, ni_input(ni, 0), in) != 4) return reason(ni, "input 0 must have rank 4");
  return 0;
}

static int lower_block_op(Lowering* lw, const NodeInfo* ni, GOp op) {
  int in = lower_tensor(lw, ni_input(ni, 0));
  int out = in < 0 ? -1 : lower_tensor(lw, ni_output(ni, 0));
  if (out < 0) return -1;
  GNode* n = graph_add_node_io(lw->g, op, in, out);
  if (!n) return lower_error(lw, "out of memory");
  n->p.depth_to_space.block = *(const int*)ni->node->builtin_data;
  return 0;
}

static int encode_block_op(Executor* ex, int node, const char* kernel) {
  KArgs a;
  if (ex_dispatch_src_dst(ex, node, "depth_to_space.cl", kernel, &a)) return -1;
  karg_int(&a, ex->g.nodes[node].p.depth_to_space.block);
  karg_int(&a, a.total);
  return karg_done(ex, &a);
}

static int check_depth_to_space(const NodeInfo* ni) {
  int bs, in[4];
  if (check_block_op(ni, &bs, in)) return -1;
  const int64_t bs2 = (int64_t)bs * bs;
  if (in[GD_C] % bs2 != 0)
    return reason(ni, "input channels %d are not a multiple of block_size^2 = %lld", in[GD_C], (long long)bs2);
  const int64_t out[4] = {in[GD_B], (int64_t)in[GD_H] * bs, (int64_t)in[GD_W] * bs, in[GD_C] / bs2};
  return check_output_shape64(ni, ni_output(ni, 0), out);
}

static int check_space_to_depth(const NodeInfo* ni) {
  int bs, in[4];
  if (check_block_op(ni, &bs, in)) return -1;
  if (in[GD_H] % bs || in[GD_W] % bs)
    return reason(ni, "input %dx%d is not a multiple of block_size %d", in[GD_H], in[GD_W], bs);
  const int64_t out[4] = {in[GD_B], in[GD_H] / bs, in[GD_W] / bs, size_mul(size_mul(in[GD_C], bs), bs)};
  return check_output_shape64(ni, ni_output(ni, 0), out);
}

static int lower_depth_to_space(Lowering* lw, const NodeInfo* ni) { return lower_block_op(lw, ni, &kGOpDepthToSpace); }
static int lower_space_to_depth(Lowering* lw, const NodeInfo* ni) { return lower_block_op(lw, ni, &kGOpSpaceToDepth); }
static int encode_depth_to_space(Executor* ex, int node) { return encode_block_op(ex, node, "depth_to_space"); }
static int encode_space_to_depth(Executor* ex, int node) { return encode_block_op(ex, node, "space_to_depth"); }

/* The TFLite ops this file runs (op_table.c lists them). */
const OpDef kOpDepthToSpace = {.builtin_code = kBuiltinDepthToSpace, .max_version = 2,
    .check = check_depth_to_space, .lower = lower_depth_to_space,
    .constraints = "rank-4 input; block_size > 1 dividing the channels evenly (DCR order)"};
const OpDef kOpSpaceToDepth = {.builtin_code = kBuiltinSpaceToDepth, .max_version = 2,
    .check = check_space_to_depth, .lower = lower_space_to_depth,
    .constraints = "rank-4 input; block_size > 1 dividing height and width"};
