/* kGOpFcHeads: FULLY_CONNECTED heads of one source row in one launch
 * (fuse_fc_heads.c makes the node; fc_gpu.cl's fc_heads_gpu runs it). */
#include <stdlib.h>
#include <string.h>

#include "encode/encode.h"
#include "select/selectors.h"
#include "ops/op_kinds.h"

/* The heads' weights as one [R, K] matrix, head h's rows from 4 * (its
 * first slice) on, the rows between heads zero, and the bias likewise:
 * then upload_dense_weights packs them as fully_connected_gpu takes one
 * head's. */
static int encode_fc_heads(Encoder* ex, int node) {
  const GNode* n = &ex->g.nodes[node];
  int k = ex->g.tensors[n->inputs[0]].shape[GD_C];
  int ends[4] = {0, 0, 0, 0}, channels[4] = {0, 0, 0, 0}, acts[4] = {0, 0, 0, 0};
  int slices = 0;
  for (int h = 0; h < n->num_outputs; ++h) {
    channels[h] = ex->g.tensors[n->outputs[h]].shape[GD_C];
    acts[h] = n->p.heads.act[h];
    slices += (channels[h] + 3) / 4;
    ends[h] = slices;
  }
  for (int h = n->num_outputs; h < 4; ++h) ends[h] = slices;
  size_t rows = (size_t)slices * 4;
  float* w = calloc(rows * (size_t)k, sizeof(float));
  float* b = calloc(rows, sizeof(float));
  if (!w || !b) {
    free(w);
    free(b);
    return ex_fail(ex, "out of memory packing the heads' weights");
  }
  for (int h = 0, row = 0; h < n->num_outputs; row = 4 * ends[h], ++h) {
    const GTensor* wt = &ex->g.tensors[n->p.heads.weights[h]];
    memcpy(w + (size_t)row * k, wt->data, (size_t)channels[h] * (size_t)k * sizeof(float));
    if (n->p.heads.bias[h] >= 0)
      memcpy(b + row, ex->g.tensors[n->p.heads.bias[h]].data, (size_t)channels[h] * sizeof(float));
  }
  GTensor wt = {0}, bt = {0};
  int ohwi[4] = {(int)rows, 1, 1, k}, bs[4] = {1, 1, 1, (int)rows};
  memcpy(wt.shape, ohwi, sizeof(ohwi));
  memcpy(bt.shape, bs, sizeof(bs));
  wt.data = w;
  bt.data = b;
  cl_mem wm, bm;
  int rc = upload_dense_weights(ex, &wt, k, &bt, &wm, &bm);
  free(w);
  free(b);
  if (rc) return -1;
  KernelVariant v;
  select_fc_heads(&ex->target, &ex->g, n, &v);
  KernelRef kr = ex_dispatch_variant(ex, &v, node);
  if (!kr) return -1;
  KArgs a = {kr, 0, CL_SUCCESS, 0};
  karg_mem(&a, ex_tensor_mem(ex, n->inputs[0]));
  for (int h = 0; h < 4; ++h) karg_mem(&a, ex_tensor_mem(ex, n->outputs[h < n->num_outputs ? h : 0]));
  karg_mem(&a, wm);
  karg_mem(&a, bm);
  karg_shape(&a, ex->g.tensors[n->inputs[0]].shape);
  karg_int4(&a, ends[0], ends[1], ends[2], ends[3]);
  karg_int4(&a, channels[0], channels[1], channels[2], channels[3]);
  karg_int4(&a, acts[0], acts[1], acts[2], acts[3]);
  karg_int(&a, (int)v.total);
  return karg_done(ex, &a);
}

const GOpDesc kGOpFcHeads = {"FULLY_CONNECTED heads", encode_fc_heads};
