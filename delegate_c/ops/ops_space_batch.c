/* SPACE_TO_BATCH_ND and BATCH_TO_SPACE_ND, the pair older converters put
 * around a dilated convolution (opencl_kernels/space_batch.cl). Rank-4
 * tensors; TFLite's batch order: batch (sy * block_w + sx) * B + b holds
 * the pixels at offset (sy, sx) of every block. Channels never move. */
#include <stdint.h>

#include "encode/encode.h"
#include "ops/op_table.h"
#include "model/tflite_builtins.h"
#include "ops/op_kinds.h"

/* The graph ops this file encodes (graph.h: a node points at its op). */
static int encode_space_to_batch(Encoder* ex, int node);
const GOpDesc kGOpSpaceToBatch = {"SPACE_TO_BATCH", encode_space_to_batch};
static int encode_batch_to_space(Encoder* ex, int node);
const GOpDesc kGOpBatchToSpace = {"BATCH_TO_SPACE", encode_batch_to_space};

typedef struct SpaceBatchParams {
  int block[2];  /* H, W */
  int pad[2];    /* top, left: padding (to batch) or crop (to space) */
  int out[4];    /* the BHWC output shape */
} SpaceBatchParams;

/* Reads the constant block shape [2] and paddings / crops [2, 2] (int32,
 * each >= 0, blocks >= 1) and computes the output shape in 64 bits. */
static int parse_space_batch(const NodeInfo* ni, void* out) {
  SpaceBatchParams* p = out;
  int to_batch = ni->reg->builtin_code == kBuiltinSpaceToBatchNd;
  const char* edges = to_batch ? "paddings" : "crops";
  if (check_io(ni, 3, 1) || check_const_input(ni, 1, "block_shape", kTfLiteInt32) ||
      check_const_input(ni, 2, edges, kTfLiteInt32))
    return -1;
  int in[4];
  if (ni_shape(ni, ni_input(ni, 0), in) != 4) return reason(ni, "input 0 must have rank 4 (rank 3 stays on the CPU)");
  int block[8], edge[8], nb, ne;
  char err[200];
  if (mv_const_ints(ni->mv, ni_input(ni, 1), block, 8, &nb, err, sizeof(err)))
    return reason(ni, "block_shape: %s", err);
  if (mv_const_ints(ni->mv, ni_input(ni, 2), edge, 8, &ne, err, sizeof(err))) return reason(ni, "%s: %s", edges, err);
  if (nb != 2 || ne != 4)
    return reason(ni, "block_shape holds %d values and %s %d; 2 and 2x2 are required", nb, edges, ne);
  for (int k = 0; k < 2; ++k)
    if (block[k] < 1) return reason(ni, "block_shape[%d] = %d; it must be >= 1", k, block[k]);
  for (int k = 0; k < 4; ++k)
    if (edge[k] < 0) return reason(ni, "%s[%d][%d] = %d; it must be >= 0", edges, k / 2, k % 2, edge[k]);
  int64_t blocks = (int64_t)block[0] * block[1];
  int64_t e[4];
  if (to_batch) {
    int64_t h = (int64_t)in[GD_H] + edge[0] + edge[1], w = (int64_t)in[GD_W] + edge[2] + edge[3];
    if (h % block[0] || w % block[1])
      return reason(ni, "the padded input %lldx%lld is not a multiple of the block %dx%d", (long long)h,
                    (long long)w, block[0], block[1]);
    e[0] = in[GD_B] * blocks, e[1] = h / block[0], e[2] = w / block[1];
  } else {
    if (in[GD_B] % blocks)
      return reason(ni, "input batch %d is not a multiple of the block's %lld pixels", in[GD_B], (long long)blocks);
    e[0] = in[GD_B] / blocks;
    e[1] = (int64_t)in[GD_H] * block[0] - edge[0] - edge[1];
    e[2] = (int64_t)in[GD_W] * block[1] - edge[2] - edge[3];
    if (e[1] < 1 || e[2] < 1) return reason(ni, "the crops leave an empty output (%lldx%lld)", (long long)e[1], (long long)e[2]);
  }
  e[3] = in[GD_C];
  int64_t el = storage_elements(e);
  if (e[0] > INT32_MAX || e[1] > INT32_MAX || e[2] > INT32_MAX || el > GD_MAX_ELEMENTS)
    return reason(ni, "the output [%lld,%lld,%lld,%lld] is too large", (long long)e[0], (long long)e[1], (long long)e[2],
                  (long long)e[3]);
  for (int d = 0; d < 4; ++d) p->out[d] = (int)e[d];
  p->block[0] = block[0], p->block[1] = block[1];
  p->pad[0] = edge[0], p->pad[1] = edge[2];
  return 0;
}

static int infer_space_batch(const NodeInfo* ni, int k, int shape[4]) {
  const SpaceBatchParams* p = ni->params;
  (void)k;
  for (int d = 0; d < 4; ++d) shape[d] = p->out[d];
  return 0;
}

static int lower_space_batch(Lowering* lw, const NodeInfo* ni) {
  const SpaceBatchParams* p = ni->params;
  int in = lower_tensor(lw, ni_input(ni, 0));
  int out = in < 0 ? -1 : lower_tensor(lw, ni_output(ni, 0));
  if (out < 0) return -1;
  GOp op = ni->reg->builtin_code == kBuiltinSpaceToBatchNd ? GOP_SPACE_TO_BATCH : GOP_BATCH_TO_SPACE;
  GNode* n = graph_add_node_io(lw->g, op, in, out);
  if (!n) return lower_error(lw, "out of memory");
  for (int k = 0; k < 2; ++k) n->p.space_batch.block[k] = p->block[k], n->p.space_batch.pad[k] = p->pad[k];
  return 0;
}

static int encode_space_batch(Encoder* ex, int node, const char* kernel) {
  const GNode* n = &ex->g.nodes[node];
  KArgs a;
  if (ex_dispatch_src_dst(ex, node, "space_batch.cl", kernel, &a)) return -1;
  karg_int4(&a, n->p.space_batch.block[0], n->p.space_batch.block[1], n->p.space_batch.pad[0],
            n->p.space_batch.pad[1]);
  karg_int(&a, a.total);
  return karg_done(ex, &a);
}

static int encode_space_to_batch(Encoder* ex, int node) { return encode_space_batch(ex, node, "space_to_batch"); }
static int encode_batch_to_space(Encoder* ex, int node) { return encode_space_batch(ex, node, "batch_to_space"); }

/* The TFLite ops this file runs (op_table.c lists them). Versions above 1
 * add integer types and rank 3 (refused by the checks). */
const OpDef kOpSpaceToBatchNd = {.builtin_code = kBuiltinSpaceToBatchNd, .max_version = 4,
    .parse = parse_space_batch, .params_size = sizeof(SpaceBatchParams), .infer = infer_space_batch,
    .lower = lower_space_batch,
    .constraints = "rank-4 input; constant int32 block_shape [2] (>= 1) and paddings [2,2] (>= 0; zero fill) that "
                   "make the padded height and width multiples of the block (not in upstream's table)"};
const OpDef kOpBatchToSpaceNd = {.builtin_code = kBuiltinBatchToSpaceNd, .max_version = 4,
    .parse = parse_space_batch, .params_size = sizeof(SpaceBatchParams), .infer = infer_space_batch,
    .lower = lower_space_batch,
    .constraints = "rank-4 input whose batch is a multiple of the block's pixels; constant int32 block_shape [2] "
                   "(>= 1) and crops [2,2] (>= 0) (not in upstream's table)"};
