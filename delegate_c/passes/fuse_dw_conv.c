/* See fuse_dw_conv.h. */
#include "passes/fuse_dw_conv.h"

#include <stdlib.h>

int fuse_dw_conv(Graph* g, const int* outputs, int num_outputs, char* dead, int x4, long bound) {
  int fused = 0;
  for (int k = 0; k < g->num_nodes; ++k) {
    GNode* dw = &g->nodes[k];
    /* The fused kernel applies the depthwise's activation but no
     * epilogue of its own (a PReLU or residual fused into it). */
    if (dead[k] || dw->op != GOP_DEPTHWISE || dw->p.conv.multiplier != 1 || dw->num_epi || dw->num_inputs != 1 ||
        dw->num_outputs != 1)
      continue;
    int t = dw->outputs[0];
    int c = graph_sole_reader(g, t, dead, outputs, num_outputs);
    if (c < 0 || !graph_plain_1x1(&g->nodes[c])) continue;
    GNode* pw = &g->nodes[c];
    int src_c = g->tensors[dw->inputs[0]].shape[GD_C], dst_c = g->tensors[pw->outputs[0]].shape[GD_C];
    long taps = x4 ? dw_x4_item_taps(dw->p.conv.kh, dw->p.conv.kw, src_c)
                   : dw_1x1_item_taps(dw->p.conv.kh, dw->p.conv.kw, src_c, dst_c);
    if (taps > bound) continue;
    /* Read as the source only, not as a residual too; same storage. */
    int other_use = 0;
    for (int j = 1; j < pw->num_inputs; ++j) other_use |= pw->inputs[j] == t;
    if (pw->inputs[0] != t || other_use || pw->fp32 != dw->fp32) continue;
    int pw_weights = pw->p.conv.weights, pw_bias = pw->p.conv.bias;
    pw->p.conv = dw->p.conv;
    pw->p.conv.pw_weights = pw_weights;
    pw->p.conv.pw_bias = pw_bias;
    pw->p.conv.dw_act = dw->act;
    pw->op = GOP_DW_CONV1X1;
    pw->inputs[0] = dw->inputs[0];
    graph_merge(g, c, k, dead);
    ++fused;
  }
  return fused;
}
