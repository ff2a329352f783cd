/* GOP_STORAGE_CAST, the conversion the mixed_storage pass inserts where a
 * tensor crosses between half and float storage (passes/mixed_storage.c). */
#include "encode/encode.h"
#include "ops/op_kinds.h"

static int encode_storage_cast(Encoder* ex, int node) {
  const GNode* n = &ex->g.nodes[node];
  const GTensor* dst = &ex->g.tensors[n->outputs[0]];
  size_t items = phwc4_items(dst->shape);
  KernelRef k = ex_dispatch(ex, "layout.cl", dst->fp32 ? "storage_half_to_float" : "storage_float_to_half", items,
                            node);
  if (!k) return -1;
  KArgs a = {k, 0, CL_SUCCESS, 0};
  karg_mem(&a, ex_tensor_mem(ex, n->inputs[0]));
  karg_mem(&a, ex_tensor_mem(ex, n->outputs[0]));
  karg_int(&a, (int)items);
  return karg_done(ex, &a);
}

const GOpDesc kGOpStorageCast = {"STORAGE_CAST", encode_storage_cast};
