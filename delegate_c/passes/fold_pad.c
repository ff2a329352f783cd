/* See fold_pad.h. */
#include "passes/fold_pad.h"

/* A PAD that adds zeros around H and W only (MediaPipe pads before its
 * stride-2 and 5x5 depthwise convs). The conv kernels read out-of-bounds
 * taps as zero, so a reader that takes the PAD's input with its own
 * padding grown by the top/left amounts computes the same values; the
 * bottom/right amounts need nothing. Folded only when every reader is a
 * conv reading it as its source. Returns the first reader, or -1. */
static int fold_pad(Graph* g, int k, const int* outputs, int num_outputs) {
  GNode* pad = &g->nodes[k];
  if (pad->op != GOP_REMAP || pad->p.remap.mode != REMAP_PAD || pad->p.remap.value != 0.0f || pad->num_inputs != 1)
    return -1;
  const int* b = pad->p.remap.begin;
  const int* in = g->tensors[pad->inputs[0]].shape;
  const int* out = g->tensors[pad->outputs[0]].shape;
  if (b[GD_B] != 0 || b[GD_C] != 0 || b[GD_H] > 0 || b[GD_W] > 0 || in[GD_B] != out[GD_B] || in[GD_C] != out[GD_C] ||
      out[GD_H] < in[GD_H] - b[GD_H] || out[GD_W] < in[GD_W] - b[GD_W])
    return -1;
  int t = pad->outputs[0], readers = 0, first = -1;
  if (graph_is_output(t, outputs, num_outputs)) return -1;
  for (int c = 0; c < g->num_nodes; ++c) {
    const GNode* n = &g->nodes[c];
    for (int j = 0; j < n->num_inputs; ++j) {
      if (n->inputs[j] != t) continue;
      if ((n->op != GOP_CONV2D && n->op != GOP_DEPTHWISE) || j != 0) return -1;
      if (!readers++) first = c;
    }
  }
  if (readers == 0) return -1;
  for (int c = 0; c < g->num_nodes; ++c) {
    GNode* n = &g->nodes[c];
    if (n->num_inputs == 0 || n->inputs[0] != t) continue;
    n->inputs[0] = pad->inputs[0];
    n->p.conv.pad_x -= b[GD_W];
    n->p.conv.pad_y -= b[GD_H];
  }
  return first;
}

int fold_pads(Graph* g, const int* outputs, int num_outputs, char* dead) {
  int folded = 0;
  for (int k = 0; k < g->num_nodes; ++k) {
    int reader = dead[k] ? -1 : fold_pad(g, k, outputs, num_outputs);
    if (reader < 0) continue;
    graph_merge(g, reader, k, dead); /* its readers share the work: the first names it */
    ++folded;
  }
  return folded;
}
