/* See fuse_pw_dw.h. */
#include "passes/fuse_pw_dw.h"

#include <stdlib.h>

/* The 1x1 source loads per work-item of the fused launch (fuse_pw_dw.h),
 * or -1 when no band fits. */
static long item_loads(const Graph* g, const GNode* pw, const GNode* dw) {
  const int* s = g->tensors[pw->inputs[0]].shape;
  const int* d = g->tensors[dw->outputs[0]].shape;
  int rows = pw_dw_band_rows(d[GD_H], s[GD_H], s[GD_W], dw->p.conv.sy, dw->p.conv.kh, dw->p.conv.dy);
  if (!rows) return -1;
  long values = pw_dw_band_src_rows(rows, s[GD_H], dw->p.conv.sy, dw->p.conv.kh, dw->p.conv.dy) * s[GD_W];
  return (values + PWDW_WG - 1) / PWDW_WG * ((s[GD_C] + 3) / 4);
}

/* The MEAN over H and W alone reading node k's output, which then takes it
 * (fuse_pw_dw.h): batch 1 and one band, so one work-group holds every
 * pixel of its slice; the depthwise adds no epilogue. 1 if taken. */
static int take_mean(Graph* g, int k, const int* outputs, int num_outputs, char* dead) {
  GNode* dw = &g->nodes[k];
  int t = dw->outputs[0];
  const int* d = g->tensors[t].shape;
  const int* s = g->tensors[dw->inputs[0]].shape;
  int c = graph_sole_reader(g, t, dead, outputs, num_outputs);
  if (c < 0 || dw->num_epi || d[GD_B] != 1 ||
      pw_dw_band_rows(d[GD_H], s[GD_H], s[GD_W], dw->p.conv.sy, dw->p.conv.kh, dw->p.conv.dy) != d[GD_H])
    return 0;
  GNode* r = &g->nodes[c];
  const int* ax = r->p.reduce.axes;
  if (r->op != GOP_REDUCE || r->p.reduce.op != REDUCE_MEAN || r->num_inputs != 1 || ax[GD_B] || !ax[GD_H] ||
      !ax[GD_W] || ax[GD_C] || r->fp32 != dw->fp32 || g->tensors[r->outputs[0]].shape[GD_C] != d[GD_C] ||
      shape_elements(g->tensors[r->outputs[0]].shape) != (size_t)d[GD_C])
    return 0;
  dw->p.conv.mean_of = t;
  dw->outputs[0] = r->outputs[0];
  graph_merge(g, k, c, dead);
  return 1;
}

int fuse_pw_dw(Graph* g, const int* outputs, int num_outputs, char* dead, long bound) {
  int fused = 0;
  for (int k = 0; k < g->num_nodes; ++k) {
    GNode* pw = &g->nodes[k];
    if (dead[k] || !graph_plain_1x1(pw) || pw->num_epi || pw->num_inputs != 1 || pw->num_outputs != 1 ||
        g->tensors[pw->inputs[0]].bhwc)
      continue;
    int t = pw->outputs[0];
    int c = graph_sole_reader(g, t, dead, outputs, num_outputs);
    if (c < 0) continue;
    GNode* dw = &g->nodes[c];
    /* Read as the depthwise's source only (not as its residual too). */
    if (dw->op != GOP_DEPTHWISE || dw->p.conv.multiplier != 1 || dw->num_outputs != 1 || dw->inputs[0] != t ||
        dw->fp32 != pw->fp32)
      continue;
    int other_use = 0;
    for (int j = 1; j < dw->num_inputs; ++j) other_use |= dw->inputs[j] == t;
    long loads = item_loads(g, pw, dw);
    if (other_use || loads < 0 || loads > bound) continue;
    graph_take_first_1x1(g, c, k, GOP_PW_DEPTHWISE, dead);
    dw->p.conv.mean_of = -1;
    fused += 1 + take_mean(g, c, outputs, num_outputs, dead);
  }
  return fused;
}
