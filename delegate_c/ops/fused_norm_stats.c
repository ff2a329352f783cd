/* GOP_NORM_STATS, the node the layer_norm pass makes (passes/fuse_layer_norm.c):
 * inputs: x; outputs: mean, rstd (C = 1), from opencl_kernels/layer_norm.cl. */
#include "encode/encode.h"
#include "ops/op_kinds.h"

static int encode_norm_stats(Encoder* ex, int node) {
  const GNode* n = &ex->g.nodes[node];
  const int* s = ex->g.tensors[n->inputs[0]].shape;
  size_t items = (size_t)s[GD_B] * s[GD_H] * s[GD_W];
  KernelRef k = ex_dispatch(ex, "layer_norm.cl", "norm_stats", items, node);
  if (!k) return -1;
  KArgs a = {k, 0, CL_SUCCESS, 0};
  karg_mem(&a, ex_tensor_mem(ex, n->inputs[0]));
  karg_mem(&a, ex_tensor_mem(ex, n->outputs[0]));
  karg_mem(&a, ex_tensor_mem(ex, n->outputs[1]));
  karg_shape(&a, s);
  karg_int(&a, (int)items);
  karg_float(&a, n->p.norm.eps);
  return karg_done(ex, &a);
}

const GOpDesc kGOpNormStats = {"LAYER_NORM_STATS", encode_norm_stats};
