/* See partition_lower.h. */
#include "ops/partition_lower.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/log.h"
#include "ops/int8_exact.h"
#include "ops/op_table.h"

static int cmp_int(const void* a, const void* b) { return *(const int*)a - *(const int*)b; }

int lower_partition(const ModelView* mv, const TfLiteIntArray* to_replace, const TfLiteIntArray* out_tensors,
                           Graph* g, int* outputs, char* err, size_t errlen) {
  int* map = malloc((size_t)(mv->num_tensors + 1) * sizeof(int));
  int* nodes = malloc((size_t)(to_replace->size + 1) * sizeof(int));
  if (!map || !nodes) {
    free(map);
    free(nodes);
    return snprintf(err, errlen, "out of memory"), -1;
  }
  for (int t = 0; t < mv->num_tensors; ++t) map[t] = -1;
  /* Node indices follow execution order in the model. */
  memcpy(nodes, to_replace->data, (size_t)to_replace->size * sizeof(int));
  qsort(nodes, (size_t)to_replace->size, sizeof(int), cmp_int);
  Lowering lw = {mv, g, map, err, errlen};
  int rc = 0;
  for (int k = 0; k < to_replace->size && rc == 0; ++k) {
    /* One error channel: a parse helper shared with the check (reason())
     * writes straight into the lowering's error. */
    NodeInfo ni = {mv, nodes[k], NULL, NULL, err, errlen, NULL};
    if (mv_node(mv, nodes[k], &ni.node, &ni.reg)) {
      rc = -1;
      snprintf(err, errlen, "GetNodeAndRegistration(%d) failed", nodes[k]);
      break;
    }
    const OpDef* d = op_lookup(ni.reg);
    if (!d || !d->lower) continue; /* folded constants: read by their consumers */
    if (ni.node->outputs && ni.node->outputs->size == 1 && ni.node->outputs->data[0] >= 0 &&
        mv->const_kind[ni.node->outputs->data[0]] == CONST_FOLDED)
      continue; /* a folded DEQUANTIZE or integer op: likewise */
    int first_new = g->num_nodes;
    OpParams params;
    rc = op_parse(d, &ni, &params);
    if (rc == 0) rc = d->lower(&lw, &ni);
    if (rc == 0) rc = lower_int8_exact(&lw, &ni, first_new); /* int8 conv / FC / PRELU: the CPU's integers */
    if (rc == 0) rc = lower_quant_outputs(&lw, &ni, first_new); /* int8/uint8 outputs snap to their grid */
    for (int j = first_new; j < g->num_nodes; ++j) {
      g->nodes[j].tflite_node = nodes[k];
      g->nodes[j].name = builtin_name(ni.reg->builtin_code);
    }
    if (rc) {
      char why[GD_ERR_LEN / 2];
      snprintf(why, sizeof(why), "%s", err);
      snprintf(err, errlen, "lowering %s (node %d): %s", builtin_name(ni.reg->builtin_code), nodes[k], why);
    }
  }
  for (int k = 0; rc == 0 && k < out_tensors->size; ++k) {
    int t = out_tensors->data[k];
    outputs[k] = (t >= 0 && t < mv->num_tensors) ? map[t] : -1;
    if (outputs[k] < 0) rc = -1, snprintf(err, errlen, "partition output tensor %d is not produced by its nodes", t);
  }
  free(map);
  free(nodes);
  return rc;
}
