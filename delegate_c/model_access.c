/* The model view's basic accessors (model_view.h): a node by index, a
 * tensor's dims and element count, type names. Kept apart from the
 * constant readers in model_view.c so int_fold.c can use them without a
 * call circle. */
#include <stdint.h>
#include <stdio.h>

#include "model_view.h"

int mv_node(const ModelView* mv, int node_index, TfLiteNode** node, TfLiteRegistration** reg) {
  if (mv->snap_nodes) {
    if (node_index < 0 || node_index >= mv->num_snap || !mv->snap_nodes[node_index].outputs) return -1;
    *node = &mv->snap_nodes[node_index];
    *reg = &mv->snap_regs[node_index];
    return 0;
  }
  return mv->ctx->GetNodeAndRegistration(mv->ctx, node_index, node, reg) == kTfLiteOk ? 0 : -1;
}

int mv_dims(const ModelView* mv, int index, int* dims, int max) {
  const TfLiteTensor* t = mv_tensor(mv, index);
  if (!t->dims || t->dims->size > max) return -1;
  for (int i = 0; i < t->dims->size; ++i) dims[i] = t->dims->data[i];
  return t->dims->size;
}

size_t mv_elements(const ModelView* mv, int index) {
  const TfLiteTensor* t = mv_tensor(mv, index);
  if (!t->dims) return 0;
  size_t n = 1;
  for (int i = 0; i < t->dims->size; ++i) {
    size_t d = (size_t)(t->dims->data[i] < 0 ? 0 : t->dims->data[i]);
    if (d && n > SIZE_MAX / d) return SIZE_MAX; /* saturates: no shape the checks accept */
    n *= d;
  }
  return n;
}

const char* type_name(int type) {
  static const char* const names[] = {"NOTYPE", "FLOAT32", "INT32", "UINT8", "INT64", "STRING", "BOOL",
                                      "INT16", "COMPLEX64", "INT8", "FLOAT16", "FLOAT64", "COMPLEX128",
                                      "UINT64", "RESOURCE", "VARIANT", "UINT32", "UINT16", "INT4"};
  if (type < 0 || type >= (int)(sizeof(names) / sizeof(names[0]))) return "UNKNOWN_TYPE";
  return names[type];
}
