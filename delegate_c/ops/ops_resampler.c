/* MediaPipe's Resampler (custom op; the upstream OSS GPU delegate has it):
 * source [B,H,W,C] and warp [B,H,W,2] (x, y sample points per output
 * pixel) -> [B,H,W,C], bilinear with zeros outside
 * (mediapipe/util/tflite/operations/resampler.cc; kernel in
 * opencl_kernels/resampler.cl). No options. */
#include <string.h>

#include "encode/encode.h"
#include "ops/op_table.h"
#include "model/tflite_builtins.h"
#include "ops/op_kinds.h"

/* The graph ops this file encodes (graph.h: a node points at its op). */
static int encode_resampler(Encoder* ex, int node);
/* MediaPipe Resampler: inputs (source, warp) */
const GOpDesc kGOpResampler = {"RESAMPLER", encode_resampler};

static int check_resampler(const NodeInfo* ni) {
  if (check_io(ni, 2, 1)) return -1;
  int in[4], warp[4];
  if (ni_shape(ni, ni_input(ni, 0), in) != 4) return reason(ni, "input 0 must have rank 4");
  if (ni_shape(ni, ni_input(ni, 1), warp) != 4 || warp[GD_B] != in[GD_B] || warp[GD_H] != in[GD_H] ||
      warp[GD_W] != in[GD_W] || warp[GD_C] != 2)
    return reason(ni, "input 1 (warp) must have shape [%d,%d,%d,2]", in[GD_B], in[GD_H], in[GD_W]);
  return check_output_shape(ni, ni_output(ni, 0), in);
}

static int lower_resampler(Lowering* lw, const NodeInfo* ni) {
  int in = lower_tensor(lw, ni_input(ni, 0));
  int warp = in < 0 ? -1 : lower_tensor(lw, ni_input(ni, 1));
  int out = warp < 0 ? -1 : lower_tensor(lw, ni_output(ni, 0));
  if (out < 0) return -1;
  GNode* n = graph_add_node(lw->g, GOP_RESAMPLER);
  if (!n) return lower_error(lw, "out of memory");
  n->inputs[0] = in;
  n->inputs[1] = warp;
  n->num_inputs = 2;
  n->outputs[0] = out;
  n->num_outputs = 1;
  return 0;
}

static int encode_resampler(Encoder* ex, int node) {
  const GNode* n = &ex->g.nodes[node];
  KArgs a;
  if (ex_dispatch_src_dst(ex, node, "resampler.cl", "resampler", &a)) return -1;
  karg_mem(&a, ex_tensor_mem(ex, n->inputs[1]));
  karg_shape(&a, ex->g.tensors[n->inputs[1]].shape);
  karg_int(&a, a.total);
  return karg_done(ex, &a);
}

/* The TFLite ops this file runs (op_table.c lists them). */
const OpDef kOpCustomResampler = {.builtin_code = kBuiltinCustom, .custom_name = "Resampler", .max_version = 1,
    .check = check_resampler, .lower = lower_resampler,
    .constraints = "MediaPipe: source [B,H,W,C] and warp [B,H,W,2] -> [B,H,W,C], bilinear, zeros outside"};
