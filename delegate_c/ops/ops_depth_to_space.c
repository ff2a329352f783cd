/* DEPTH_TO_SPACE and SPACE_TO_DEPTH (opencl_kernels/depth_to_space.cl),
 * NHWC with TFLite's DCR order. DEPTH_TO_SPACE: output channel c at
 * (y * bs + by, x * bs + bx) comes from input channel (by * bs + bx) * C_out
 * + c at (y, x). SPACE_TO_DEPTH is the inverse. Both params structs hold
 * only block_size. */
#include <stdint.h>

#include "encode/encode.h"
#include "ops/op_table.h"
#include "model/tflite_builtins.h"
#include "ops/op_kinds.h"

/* The graph ops this file encodes (graph.h: a node points at its op). */
static int encode_depth_to_space(Encoder* ex, int node);
const GOpDesc kGOpDepthToSpace = {"DEPTH_TO_SPACE", encode_depth_to_space};
static int encode_space_to_depth(Encoder* ex, int node);
const GOpDesc kGOpSpaceToDepth = {"SPACE_TO_DEPTH", encode_space_to_depth};

typedef struct BlockParams {
  int out[4]; /* the BHWC output shape */
} BlockParams;

/* Both ops: block_size > 1, a rank-4 runtime input, and the output shape
 * (DEPTH_TO_SPACE: channels divided by bs^2, H and W times bs;
 * SPACE_TO_DEPTH: the inverse), computed in 64 bits. */
static int parse_block_op(const NodeInfo* ni, void* out) {
  BlockParams* p = out;
  const int* block_size = ni->node->builtin_data;
  if (!block_size) return reason(ni, "missing parameters");
  if (ni_num_inputs(ni) != 1 || ni_num_outputs(ni) != 1)
    return reason(ni, "needs 1 input and 1 output, has %d and %d", ni_num_inputs(ni), ni_num_outputs(ni));
  if (mv_is_const(ni->mv, ni_input(ni, 0))) return reason(ni, "input 0 is a constant; a runtime input is required");
  int bs = *block_size, in[4];
  if (bs == 1) return reason(ni, "block_size 1 is a no-op");
  if (bs < 1) return reason(ni, "block_size %d must be > 1", bs);
  if (ni_shape(ni, ni_input(ni, 0), in) != 4) return reason(ni, "input 0 must have rank 4");
  const int64_t bs2 = (int64_t)bs * bs;
  int64_t e[4];
  if (ni->reg->builtin_code == kBuiltinDepthToSpace) {
    if (in[GD_C] % bs2 != 0)
      return reason(ni, "input channels %d are not a multiple of block_size^2 = %lld", in[GD_C], (long long)bs2);
    e[0] = in[GD_B], e[1] = (int64_t)in[GD_H] * bs, e[2] = (int64_t)in[GD_W] * bs, e[3] = in[GD_C] / bs2;
  } else {
    if (in[GD_H] % bs || in[GD_W] % bs)
      return reason(ni, "input %dx%d is not a multiple of block_size %d", in[GD_H], in[GD_W], bs);
    e[0] = in[GD_B], e[1] = in[GD_H] / bs, e[2] = in[GD_W] / bs, e[3] = size_mul(size_mul(in[GD_C], bs), bs);
  }
  static const char* const kAxis[4] = {"batch", "height", "width", "channels"};
  for (int d = 0; d < 4; ++d)
    if (e[d] > INT32_MAX)
      return reason(ni, "the computed output %s is %lld, outside 1..%d", kAxis[d], (long long)e[d], INT32_MAX);
  if (check_storage(ni, "the computed output", e)) return -1;
  for (int d = 0; d < 4; ++d) p->out[d] = (int)e[d];
  return 0;
}

static int infer_block_op(const NodeInfo* ni, int k, int shape[4]) {
  const BlockParams* p = ni->params;
  (void)k;
  for (int d = 0; d < 4; ++d) shape[d] = p->out[d];
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

static int encode_block_op(Encoder* ex, int node, const char* kernel) {
  KArgs a;
  if (ex_dispatch_src_dst(ex, node, "depth_to_space.cl", kernel, &a)) return -1;
  karg_int(&a, ex->g.nodes[node].p.depth_to_space.block);
  karg_int(&a, a.total);
  return karg_done(ex, &a);
}

static int lower_depth_to_space(Lowering* lw, const NodeInfo* ni) { return lower_block_op(lw, ni, GOP_DEPTH_TO_SPACE); }
static int lower_space_to_depth(Lowering* lw, const NodeInfo* ni) { return lower_block_op(lw, ni, GOP_SPACE_TO_DEPTH); }
static int encode_depth_to_space(Encoder* ex, int node) { return encode_block_op(ex, node, "depth_to_space"); }
static int encode_space_to_depth(Encoder* ex, int node) { return encode_block_op(ex, node, "space_to_depth"); }

/* The TFLite ops this file runs (op_table.c lists them). */
const OpDef kOpDepthToSpace = {.builtin_code = kBuiltinDepthToSpace, .max_version = 2,
    .parse = parse_block_op, .params_size = sizeof(BlockParams), .infer = infer_block_op,
    .lower = lower_depth_to_space,
    .constraints = "rank-4 input; block_size > 1 dividing the channels evenly (DCR order)"};
const OpDef kOpSpaceToDepth = {.builtin_code = kBuiltinSpaceToDepth, .max_version = 2,
    .parse = parse_block_op, .params_size = sizeof(BlockParams), .infer = infer_block_op,
    .lower = lower_space_to_depth,
    .constraints = "rank-4 input; block_size > 1 dividing height and width"};
