/* See fuse_fc_pair.h. */
#include "passes/fuse_fc_pair.h"

/* A 1x1, stride-1, unpadded CONV_2D over a one-pixel source that reads it
 * plainly and adds nothing after its activation. */
static int pixel_conv(const Graph* g, const GNode* n) {
  const int* s = g->tensors[n->inputs[0]].shape;
  return graph_plain_1x1(n) && !n->num_epi && n->num_inputs == 1 && s[GD_H] == 1 && s[GD_W] == 1 &&
         !g->tensors[n->inputs[0]].bhwc && (s[GD_C] + 3) / 4 <= FC_PAIR_MAX_SLICES;
}

int fuse_fc_pair(Graph* g, const int* outputs, int num_outputs, char* dead) {
  int fused = 0;
  for (int k = 0; k < g->num_nodes; ++k) {
    GNode* a = &g->nodes[k];
    if (dead[k] || !pixel_conv(g, a)) continue;
    int t = a->outputs[0];
    int c = graph_sole_reader(g, t, dead, outputs, num_outputs);
    if (c < 0 || dead[c] || !pixel_conv(g, &g->nodes[c]) || g->nodes[c].inputs[0] != t ||
        g->nodes[c].fp32 != a->fp32)
      continue;
    graph_take_first_1x1(g, c, k, GOP_FC_PAIR, dead);
    ++fused;
  }
  return fused;
}
