/* Epilogues: elementwise consumers fused into the convolution (a fully
 * connected or transpose conv: an activation only) that feeds them, so
 * conv -> PRELU -> ADD(residual) is one kernel: each fused node saves a
 * launch and a full write + read of the activation; a RELU-family, TANH,
 * LOGISTIC or HARD_SWISH node after them becomes the last step's
 * activation, any other float unary op a step, any other arithmetic binary
 * op with a constant or a runtime operand an EPI_BINARY step
 * (GD_MAX_EPILOGUE steps, graph.h). A CONV_2D's residual that is a 2x2 max
 * pool, a 2x bilinear upsampling or the first channels of a tensor is read
 * through it (max2_pool_of, up2_resize_of, channel_prefix_of). */
#include "passes/fuse_epilogue.h"

#include <stdlib.h>
#include <string.h>

#include "model/tflite_abi.h"
#include "model/tflite_builtins.h"

/* A shape of one value per channel (B=H=W=1) of `channels` channels. */
static int per_channel_shape(const int* s, int channels) {
  return s[GD_B] == 1 && s[GD_H] == 1 && s[GD_W] == 1 && s[GD_C] == channels;
}

/* A constant that varies along channels only and matches C, or a scalar. */
static int per_channel_const(const Graph* g, int t, int channels) {
  const GTensor* x = &g->tensors[t];
  return x->data && (per_channel_shape(x->shape, channels) || per_channel_shape(x->shape, 1));
}

/* The node that computes t as a zero PAD of trailing channels only, read by
 * node c alone, or -1. BlazeFace-style blocks add such a PAD of the
 * shortcut to a conv's output; the conv can read the shortcut itself as a
 * residual with fewer channels (its missing slices add zero). */
static int channel_pad_of(const Graph* g, int t, int c, const int* outputs, int num_outputs) {
  int k = graph_writer(g, t), only = -1;
  if (k < 0 || graph_is_output(t, outputs, num_outputs) || graph_readers(g, t, &only) != 1 || only != c) return -1;
  const GNode* pad = &g->nodes[k];
  if (pad->op != GOP_REMAP || pad->p.remap.mode != REMAP_PAD || pad->p.remap.value != 0.0f || pad->num_inputs != 1)
    return -1;
  const int* b = pad->p.remap.begin;
  const int* in = g->tensors[pad->inputs[0]].shape;
  const int* out = g->tensors[t].shape;
  if (b[GD_B] || b[GD_H] || b[GD_W] || b[GD_C] || in[GD_B] != out[GD_B] || in[GD_H] != out[GD_H] ||
      in[GD_W] != out[GD_W] || in[GD_C] > out[GD_C] || g->tensors[pad->inputs[0]].data)
    return -1;
  return k;
}

/* The node that computes t as the first channels of its input, all of B,
 * H and W (a STRIDED_SLICE or SLICE from 0 with step 1 on every axis),
 * read by node c alone, or -1. hand_recrop's last blocks narrow their
 * shortcut so (MAX_POOL_2D, then the first half of its channels); the
 * conv reads the slice's input as its residual, slice s of the output at
 * slice s of the input (conv_residual indexes it by the input's own
 * slice count), and its store zeroes the lanes past C. */
static int channel_prefix_of(const Graph* g, int t, int c, const int* outputs, int num_outputs) {
  int k = graph_writer(g, t), only = -1;
  if (k < 0 || graph_is_output(t, outputs, num_outputs) || graph_readers(g, t, &only) != 1 || only != c) return -1;
  const GNode* sl = &g->nodes[k];
  if (sl->op != GOP_REMAP || sl->p.remap.mode != REMAP_SLICE || sl->p.remap.gather || sl->num_inputs != 1 ||
      sl->act != kTfLiteActNone || sl->num_epi || g->tensors[sl->inputs[0]].data)
    return -1;
  for (int a = 0; a < 4; ++a)
    if (sl->p.remap.begin[a] || sl->p.remap.stride[a] != 1 || sl->p.remap.perm[a] != a) return -1;
  const int* in = g->tensors[sl->inputs[0]].shape;
  const int* out = g->tensors[t].shape;
  if (in[GD_B] != out[GD_B] || in[GD_H] != out[GD_H] || in[GD_W] != out[GD_W] || out[GD_C] > in[GD_C]) return -1;
  return k;
}

/* The node that computes t as a 2x2 stride-2 MAX_POOL_2D without padding
 * before its windows, read by node c alone, or -1; *code gets the kernels'
 * EPI_ADD_MAX2 code. BlazeBlock stride-2 blocks add such a pool of the
 * block's input (then maybe a channel PAD) to the conv path; the conv
 * reads the pool's input through the window instead (conv_residual). Its
 * source must be 2W x 2H, or one short (SAME padding of an odd size, the
 * last window holds fewer taps); VALID of an odd size would skip a pixel
 * per row, which the kernel does not know. */
static int max2_pool_of(const Graph* g, int t, int c, const int* outputs, int num_outputs, int* code) {
  int k = graph_writer(g, t), only = -1;
  if (k < 0 || graph_is_output(t, outputs, num_outputs) || graph_readers(g, t, &only) != 1 || only != c) return -1;
  const GNode* pool = &g->nodes[k];
  if (pool->op != GOP_POOL || !pool->p.pool.is_max || pool->p.pool.kw != 2 || pool->p.pool.kh != 2 ||
      pool->p.pool.sx != 2 || pool->p.pool.sy != 2 || pool->p.pool.pad_x || pool->p.pool.pad_y ||
      pool->act != kTfLiteActNone || pool->num_epi || pool->num_inputs != 1 || g->tensors[pool->inputs[0]].data)
    return -1;
  const int* in = g->tensors[pool->inputs[0]].shape;
  const int* out = g->tensors[t].shape;
  int dw = 2 * out[GD_W] - in[GD_W], dh = 2 * out[GD_H] - in[GD_H];
  if (in[GD_B] != out[GD_B] || in[GD_C] != out[GD_C] || dw < 0 || dw > 1 || dh < 0 || dh > 1) return -1;
  *code = EPI_ADD_MAX2 | (dw ? EPI_MAX2_ODD_W : 0) | (dh ? EPI_MAX2_ODD_H : 0);
  return k;
}

/* The node that computes t as a RESIZE_BILINEAR to exactly twice its
 * input's W and H without align_corners (scale 1/2; the top-down path of
 * feature pyramids and segmentation decoders), read by node c alone, or
 * -1; *code gets the kernels' EPI_ADD_UP2 code. */
static int up2_resize_of(const Graph* g, int t, int c, const int* outputs, int num_outputs, int* code) {
  int k = graph_writer(g, t), only = -1;
  if (k < 0 || graph_is_output(t, outputs, num_outputs) || graph_readers(g, t, &only) != 1 || only != c) return -1;
  const GNode* rs = &g->nodes[k];
  if (rs->op != GOP_RESIZE_BILINEAR || rs->p.resize.scale_x != 0.5f || rs->p.resize.scale_y != 0.5f ||
      rs->act != kTfLiteActNone || rs->num_epi || rs->num_inputs != 1 || g->tensors[rs->inputs[0]].data)
    return -1;
  const int* in = g->tensors[rs->inputs[0]].shape;
  const int* out = g->tensors[t].shape;
  if (in[GD_B] != out[GD_B] || in[GD_C] != out[GD_C] || 2 * in[GD_W] != out[GD_W] || 2 * in[GD_H] != out[GD_H])
    return -1;
  *code = EPI_ADD_UP2 | (rs->p.resize.half_pixel_centers ? EPI_UP2_HALF_PIXEL : 0);
  return k;
}

/* A binary node whose runtime operand an epilogue could take (try_fuse):
 * an ADD (its shortcut may be read through a pad or a pool), or another
 * arithmetic op whose operands are of one shape, or one of them of one
 * value per channel at batch 1 (an excitation gate). */
static int hoistable(const Graph* g, const GNode* n) {
  if (n->p.binary.op == BIN_ADD) return 1;
  if (n->p.binary.op < 0 || n->p.binary.op > BIN_FLOOR_MOD) return 0;
  const int* out = g->tensors[n->outputs[0]].shape;
  for (int j = 0; j < 2; ++j) {
    const int* s = g->tensors[n->inputs[j]].shape;
    if (memcmp(s, out, sizeof(int) * 4) != 0 && !(out[GD_B] == 1 && per_channel_shape(s, out[GD_C]))) return 0;
  }
  return 1;
}

/* The node that computes t, or the conv or depthwise under the unary nodes
 * that compute t from it, each the only reader of its input (they will be
 * its epilogue: selfie_segmentation's gate multiplies a RELU of a conv);
 * -1 if t is an output or read twice. */
static int chain_head(const Graph* g, int t, const int* outputs, int num_outputs) {
  int k = graph_writer(g, t), only = -1;
  if (k < 0 || graph_is_output(t, outputs, num_outputs) || graph_readers(g, t, &only) != 1) return -1;
  while (g->nodes[k].op == GOP_UNARY && g->nodes[k].num_inputs == 1) {
    int in = g->nodes[k].inputs[0], w = graph_writer(g, in);
    if (w < 0 || graph_is_output(in, outputs, num_outputs) || graph_readers(g, in, &only) != 1) return k;
    k = w;
  }
  return k;
}

/* Residual ADDs whose shortcut is computed after the convolution that
 * feeds the other operand (BlazeFace / BlazeBlock stride-2 blocks: the
 * conv path, then MAX_POOL and a channel PAD of the block's input, then
 * the ADD). try_fuse needs the residual to exist before its producer
 * runs, so the nodes computing the shortcut that sit between the conv and
 * the ADD move ahead of the conv, in their order, when none of them
 * depends on it. A topological order stays one: they read nothing written
 * after the conv. The shortcut then lives a little longer in the arena.
 * Returns the number of ADDs made fusable. */
int fuse_hoist_residuals(Graph* g, const int* outputs, int num_outputs, char* dead) {
  int hoisted = 0;
  char* mark = calloc((size_t)g->num_nodes + 1, 1);
  GNode* tmp = malloc(sizeof(GNode) * ((size_t)g->num_nodes + 1));
  char* tmp_dead = malloc((size_t)g->num_nodes + 1);
  if (!mark || !tmp || !tmp_dead) {
    free(mark), free(tmp), free(tmp_dead);
    return -1;
  }
  for (int a = 0; a < g->num_nodes; ++a) {
    const GNode* add = &g->nodes[a];
    if (dead[a] || add->op != GOP_BINARY || add->num_inputs != 2 || !hoistable(g, add)) continue;
    for (int j = 0; j < 2; ++j) {
      int t = add->inputs[j], p = chain_head(g, t, outputs, num_outputs), w = graph_writer(g, add->inputs[1 - j]);
      if (p < 0 || w <= p || dead[p] || (g->nodes[p].op != GOP_CONV2D && g->nodes[p].op != GOP_DEPTHWISE))
        continue;
      /* The shortcut's writers after p: w and, walking back, whatever of
       * theirs is written after p; none may be p itself. */
      memset(mark, 0, (size_t)g->num_nodes);
      mark[w] = 1;
      int ok = 1;
      for (int k = w; k > p && ok; --k) {
        if (!mark[k]) continue;
        for (int i = 0; i < g->nodes[k].num_inputs && ok; ++i) {
          int x = graph_writer(g, g->nodes[k].inputs[i]);
          if (x == p) ok = 0;
          else if (x > p) mark[x] = 1;
        }
      }
      if (!ok) continue;
      /* [p, w] becomes: the marked nodes, p, the rest, each in order. */
      int n = 0;
      for (int pass = 0; pass < 3; ++pass)
        for (int k = p; k <= w; ++k) {
          int take = pass == 0 ? k > p && mark[k] : pass == 1 ? k == p : k > p && !mark[k];
          if (!take) continue;
          tmp[n] = g->nodes[k];
          tmp_dead[n++] = dead[k];
        }
      memcpy(&g->nodes[p], tmp, sizeof(GNode) * (size_t)n);
      memcpy(&dead[p], tmp_dead, (size_t)n);
      ++hoisted;
      break;
    }
  }
  free(mark), free(tmp), free(tmp_dead);
  return hoisted;
}

/* A MUL, ADD or SUB (the producer's output first) of t by a constant per
 * channel or scalar becomes an affine step v * a + b with the op's
 * activation, or completes the last one (a MUL then an ADD: batch norm after
 * an activation, which fold_affine cannot fold into the weights; or an ADD
 * then a MUL). 1 when fused. */
static int try_fuse_affine(Graph* g, GNode* prod, const GNode* cons, int t, int other) {
  int op = cons->p.binary.op;
  if (!(op == BIN_MUL || op == BIN_ADD || (op == BIN_SUB && cons->inputs[0] == t)) ||
      !per_channel_const(g, other, g->tensors[t].shape[GD_C]))
    return 0;
  float sign = op == BIN_SUB ? -1.0f : 1.0f;
  Epilogue* last = prod->num_epi ? &prod->epi[prod->num_epi - 1] : NULL;
  if (last && last->op == EPI_AFFINE && last->act == kTfLiteActNone) {
    if (op != BIN_MUL && last->shift < 0) { /* (v * a) + b */
      last->shift = other, last->shift_sign = sign, last->act = cons->act;
      return 1;
    }
    if (op == BIN_MUL && last->tensor < 0) { /* (v + b) * a = v * a + b * a */
      last->tensor = other, last->add_first = 1, last->act = cons->act;
      return 1;
    }
  }
  if (prod->num_epi == GD_MAX_EPILOGUE) return 0;
  prod->epi[prod->num_epi++] = (Epilogue){.op = EPI_AFFINE, .tensor = op == BIN_MUL ? other : -1, .act = cons->act,
                                          .shift_sign = sign, .shift = op == BIN_MUL ? -1 : other};
  return 1;
}

/* Any other binary op of t (either operand) and a constant per channel or
 * scalar, or a runtime tensor of t's shape or (batch 1) of one value per
 * channel that exists before p runs and is p's only runtime operand
 * (`runtime`: p has one already): an EPI_BINARY step of e. 1 when it is
 * one; a runtime operand is then an input of p. */
static int binary_step(Graph* g, int p, const GNode* cons, int t, int other, int runtime, Epilogue* e) {
  GNode* prod = &g->nodes[p];
  const GTensor* o = &g->tensors[other];
  const int* out = g->tensors[t].shape;
  /* The arithmetic ops; comparisons make bools, left to binary_op. */
  if (cons->p.binary.op < 0 || cons->p.binary.op > BIN_FLOOR_MOD) return 0;
  *e = (Epilogue){.op = EPI_BINARY, .tensor = other, .act = cons->act, .shift = -1, .bin = cons->p.binary.op,
                  .swap = cons->inputs[1] == t};
  if (o->data) return per_channel_const(g, other, out[GD_C]);
  if (runtime || o->is_int32 || o->bhwc || graph_writer(g, other) >= p || prod->num_inputs >= GD_MAX_NODE_INPUTS) return 0;
  if (out[GD_B] == 1 && per_channel_shape(o->shape, out[GD_C]) && memcmp(o->shape, out, sizeof(int) * 4) != 0)
    e->via = EPI_RES_CHANNEL;
  else if (memcmp(o->shape, out, sizeof(int) * 4) != 0) return 0;
  prod->inputs[prod->num_inputs++] = other; /* keeps it alive in the memory plan */
  return 1;
}

/* Can node c (reading t, the output of node p) become an epilogue of p? */
static int try_fuse(Graph* g, int p, int c, int t, char* dead, const int* outputs, int num_outputs,
                    int pooled_residual, int* pooled) {
  GNode* prod = &g->nodes[p];
  GNode* cons = &g->nodes[c];
  /* A FULLY_CONNECTED or TRANSPOSE_CONV takes an activation, no epilogue:
   * the hand models' presence and handedness heads (FC then LOGISTIC),
   * selfie_segmentation's mask (TRANSPOSE_CONV then LOGISTIC). */
  int act_only = prod->op == GOP_FULLY_CONNECTED || prod->op == GOP_TRANSPOSE_CONV;
  if (act_only && cons->op != GOP_UNARY) return 0;
  if (cons->op == GOP_QUANTIZE) {
    if (prod->num_epi == GD_MAX_EPILOGUE) return 0;
    prod->epi[prod->num_epi++] = (Epilogue){.op = EPI_QDQ, .tensor = -1, .qscale = cons->p.quant.scale,
                                            .qzero = cons->p.quant.zero_point, .qmin = cons->p.quant.qmin,
                                            .qmax = cons->p.quant.qmax, .shift = -1};
    prod->outputs[0] = cons->outputs[0];
    return 1;
  }
  if (cons->op == GOP_UNARY) {
    /* A RELU-family, TANH, LOGISTIC or HARD_SWISH node after the conv, or
     * after its fused ADD, becomes that step's activation (BlazeFace
     * blocks: ADD then RELU; MobileNetV3's: conv then HARD_SWISH). The
     * kernels compute each as elementwise.cl's unary op does. */
    int u = cons->p.unary.op;
    int act = u == UN_RELU ? ACT_RELU : u == UN_RELU6 ? ACT_RELU6 : u == UN_RELU_N1_TO_1 ? ACT_RELU_N1_TO_1
              : u == UN_TANH ? ACT_TANH : u == UN_LOGISTIC ? ACT_SIGMOID : u == UN_HARD_SWISH ? ACT_HARD_SWISH : -1;
    int last = prod->num_epi ? prod->epi[prod->num_epi - 1].op : EPI_NONE;
    int* slot = prod->num_epi == 0 ? &prod->act
                : last == EPI_ADD || last == EPI_AFFINE || last == EPI_BINARY ? &prod->epi[prod->num_epi - 1].act
                                                                               : NULL;
    if (act >= 0 && slot && *slot == ACT_NONE) {
      *slot = act;
      prod->outputs[0] = cons->outputs[0];
      return 1;
    }
    /* Any other float unary op (or one whose slot is taken) is a step of
     * its own, the op unary_math computes (common.cl, the table unary_op
     * runs): a LEAKY_RELU after a conv, a conv's SQRT of an ABS. The casts
     * change the type. The FULLY_CONNECTED and TRANSPOSE_CONV kernels take no steps. */
    if (act_only || prod->num_epi == GD_MAX_EPILOGUE || u == UN_TRUNC || u == UN_NOT_ZERO ||
        u < 0 || u == UN_IDENTITY)
      return 0;
    prod->epi[prod->num_epi++] =
        (Epilogue){.op = EPI_UNARY, .tensor = -1, .act = u,
                   .qscale = u == UN_LEAKY_RELU ? cons->p.unary.alpha : 0.0f, .shift = -1};
    prod->outputs[0] = cons->outputs[0];
    return 1;
  }
  if (cons->op != GOP_BINARY || cons->num_inputs != 2) return 0;
  const int* out_shape = g->tensors[cons->outputs[0]].shape;
  if (memcmp(out_shape, g->tensors[t].shape, sizeof(int) * 4) != 0) return 0;
  int other = cons->inputs[0] == t ? cons->inputs[1] : cons->inputs[0];
  if (other == t) return 0;
  if (try_fuse_affine(g, prod, cons, t, other)) {
    prod->outputs[0] = cons->outputs[0];
    return 1;
  }
  if (prod->num_epi == GD_MAX_EPILOGUE) return 0;
  Epilogue e = {.op = EPI_NONE, .tensor = other, .act = kTfLiteActNone, .shift = -1};
  /* The kernels take one runtime operand (the residual). */
  int runtime = 0;
  for (int k = 0; k < prod->num_epi; ++k)
    runtime |= prod->epi[k].op == EPI_ADD || (prod->epi[k].op == EPI_BINARY && !g->tensors[prod->epi[k].tensor].data);
  if (cons->p.binary.op == BIN_PRELU && cons->inputs[0] == t && cons->act == kTfLiteActNone &&
      per_channel_const(g, other, out_shape[GD_C])) {
    e.op = EPI_PRELU;
  } else if (cons->p.binary.op == BIN_ADD && !g->tensors[other].data && !runtime &&
             memcmp(g->tensors[other].shape, out_shape, sizeof(int) * 4) == 0) {
    int pad = channel_pad_of(g, other, c, outputs, num_outputs);
    if (pad >= 0) e.tensor = g->nodes[pad].inputs[0];
    /* A CONV_2D's kernels read through a pool or a resize (the
     * pooled_residual pass, fuse.c; common.cl conv_residual). */
    int pool = -1, slice = -1;
    if (pooled_residual && prod->op == GOP_CONV2D) {
      if (pad < 0) slice = channel_prefix_of(g, e.tensor, c, outputs, num_outputs);
      if (slice >= 0) e.tensor = g->nodes[slice].inputs[0];
      int reader = pad >= 0 ? pad : slice >= 0 ? slice : c;
      pool = max2_pool_of(g, e.tensor, reader, outputs, num_outputs, &e.via);
      if (pool < 0) pool = up2_resize_of(g, e.tensor, reader, outputs, num_outputs, &e.via);
    }
    if (pool >= 0) e.tensor = g->nodes[pool].inputs[0];
    if (pool >= 0 || slice >= 0) ++*pooled;
    /* The residual must exist before the producer runs. */
    int w = graph_writer(g, e.tensor);
    if (w >= p) return 0;
    e.op = EPI_ADD;
    e.act = cons->act;
    if (prod->num_inputs >= GD_MAX_NODE_INPUTS) return 0;
    prod->inputs[prod->num_inputs++] = e.tensor; /* keeps it alive in the memory plan */
    for (int k = 0; k < 3; ++k) {
      int x = k == 2 ? slice : k ? pool : pad;
      if (x < 0) continue;
      graph_merge(g, p, x, dead);
    }
  } else if (!binary_step(g, p, cons, t, other, runtime, &e)) {
    return 0;
  }
  prod->epi[prod->num_epi++] = e;
  prod->outputs[0] = cons->outputs[0];
  return 1;
}

int fuse_epilogues(Graph* g, const int* outputs, int num_outputs, char* dead, int pooled_residual, int* pooled) {
  int fused = 0;
  for (int p = 0; p < g->num_nodes; ++p) {
    GNode* prod = &g->nodes[p];
    if (dead[p] || (prod->op != GOP_CONV2D && prod->op != GOP_DEPTHWISE && prod->op != GOP_FULLY_CONNECTED &&
                    prod->op != GOP_TRANSPOSE_CONV))
      continue;
    for (;;) {
      int t = prod->outputs[0], c = -1;
      if (graph_is_output(t, outputs, num_outputs) || graph_readers(g, t, &c) != 1 || dead[c] ||
          !try_fuse(g, p, c, t, dead, outputs, num_outputs, pooled_residual, pooled))
        break;
      graph_merge(g, p, c, dead); /* c no longer reads anything */
      ++fused;
    }
  }
  return fused;
}
