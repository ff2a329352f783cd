/* See input_direct.h. */
#include "passes/input_direct.h"

#include "model/tflite_abi.h"

int input_direct_mark(Graph* g) {
  int kept = 0;
  for (int t = 0; t < g->num_tensors; ++t) {
    GTensor* x = &g->tensors[t];
    if (x->data || x->dtype != kTfLiteFloat32 || x->qtype != GD_QNONE || x->is_int32 || x->write_back >= 0 ||
        graph_writer(g, t) >= 0)
      continue;
    int readers = 0, ok = 1;
    for (int k = 0; k < g->num_nodes && ok; ++k)
      for (int j = 0; j < g->nodes[k].num_inputs; ++j) {
        if (g->nodes[k].inputs[j] != t) continue;
        ok = ok && g->nodes[k].op == GOP_CONV2D && j == 0 && !g->nodes[k].p.conv.scale_input &&
             !g->nodes[k].p.conv.src_via;
        ++readers;
      }
    if (ok && readers) x->bhwc = 1, ++kept;
  }
  return kept;
}
