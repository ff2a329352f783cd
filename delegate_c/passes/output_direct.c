/* See output_direct.h. */
#include "passes/output_direct.h"

#include "passes/output_assembly.h"

#include "model/tflite_abi.h"

/* Whether the kernel of the node that writes t can store t as BHWC: a
 * CONV_2D or fused depthwise + 1x1 (conv_gpu.cl; common.cl's convg_store). */
static int conv_writes(const Graph* g, int t) {
  int k = graph_writer(g, t);
  const GNode* n = k >= 0 ? &g->nodes[k] : NULL;
  return n && n->num_outputs == 1 && (n->op == GOP_CONV2D || n->op == GOP_DW_CONV1X1);
}

static int mark(Graph* g, int t, int output, size_t offset) {
  GTensor* x = &g->tensors[t];
  int reader;
  if (x->data || x->is_input || x->qtype != GD_QNONE || x->is_int32 || !conv_writes(g, t) ||
      graph_readers(g, t, &reader) > 0)
    return 0;
  x->bhwc_out = 1;
  x->bhwc_output = output;
  x->bhwc_offset = offset;
  return 1;
}

int output_read_back_as_is(const GTensor* t, int fp16) {
  return t->dtype == kTfLiteFloat32 && t->qtype == GD_QNONE && !t->is_int32 && (!fp16 || t->fp32) &&
         phwc4_is_bhwc(t->shape);
}

int output_direct_mark(Graph* g, const int* outputs, int num_outputs, int fp16) {
  const Graph* as = g;
  int marked = 0;
  for (int k = 0; k < num_outputs; ++k) {
    int o = outputs[k];
    if (g->tensors[o].dtype != kTfLiteFloat32 || g->tensors[o].bhwc_out) continue;
    if (!output_assembled(g, o)) {
      /* Not if it is also a part of an assembled output, which needs its
       * bytes too. */
      int part = 0;
      for (int i = 0; i < as->num_parts; ++i) part |= as->parts[i].tensor == o;
      if (!output_read_back_as_is(&g->tensors[o], fp16) && !part) marked += mark(g, o, o, 0);
      continue;
    }
    /* A part that is an output itself, or that another output also holds,
     * keeps its conversion. */
    for (int i = 0; i < as->num_parts; ++i) {
      const OutPart* p = &as->parts[i];
      if (p->output != o || g->tensors[p->tensor].is_output) continue;
      int shared = 0;
      for (int j = 0; j < as->num_parts; ++j) shared |= j != i && as->parts[j].tensor == p->tensor;
      if (!shared) marked += mark(g, p->tensor, o, p->offset);
    }
  }
  return marked;
}
