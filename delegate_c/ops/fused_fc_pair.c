/* kGOpFcPair: two 1x1 convolutions on one pixel in one launch
 * (fuse_fc_pair.c makes the node; fc_gpu.cl's fc_pair_gpu runs it). */
#include "encode/encode.h"
#include "select/selectors.h"
#include "ops/op_kinds.h"

static int encode_fc_pair(Encoder* ex, int node) {
  const GNode* n = &ex->g.nodes[node];
  const GTensor* src = &ex->g.tensors[n->inputs[0]];
  const GTensor* dst = &ex->g.tensors[n->outputs[0]];
  const GTensor* b1 = n->p.conv.first_bias >= 0 ? &ex->g.tensors[n->p.conv.first_bias] : NULL;
  const GTensor* b2 = n->p.conv.bias >= 0 ? &ex->g.tensors[n->p.conv.bias] : NULL;
  int mid[4] = {src->shape[GD_B], 1, 1, n->p.conv.first_channels};
  cl_mem w1, c1, w2, c2;
  if (upload_dense_weights(ex, &ex->g.tensors[n->p.conv.first_weights], src->shape[GD_C], b1, &w1, &c1) ||
      upload_dense_weights(ex, &ex->g.tensors[n->p.conv.weights], mid[GD_C], b2, &w2, &c2))
    return -1;
  KernelVariant v;
  select_fc_pair(&ex->target, &ex->g, n, &v);
  KernelRef k = ex_dispatch_variant(ex, &v, node);
  if (!k) return -1;
  KArgs a = {k, 0, CL_SUCCESS, 0};
  karg_mem(&a, ex_tensor_mem(ex, n->inputs[0]));
  karg_mem(&a, ex_tensor_mem(ex, n->outputs[0]));
  karg_mem(&a, w1);
  karg_mem(&a, c1);
  karg_mem(&a, w2);
  karg_mem(&a, c2);
  karg_shape(&a, src->shape);
  karg_shape(&a, mid);
  karg_shape(&a, dst->shape);
  karg_int(&a, n->p.conv.first_act);
  karg_int(&a, n->act);
  karg_int(&a, (int)v.total);
  return karg_done(ex, &a);
}

const GOpDesc kGOpFcPair = {"CONV2D_1X1+CONV2D_1X1 (one pixel)", encode_fc_pair};
