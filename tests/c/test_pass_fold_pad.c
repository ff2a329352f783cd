/* uses: passes/fold_pad.c model/graph.c */
/* The pad pass (a fold) alone, on graphs built in memory: a zero PAD of H
 * and W that only convolutions read, as their source, becomes their
 * padding; anything else keeps the PAD. */
#include "check.h"
#include "graph_build.h"
#include "passes/fold_pad.h"

/* x [1, 9, 7, 5] -> PAD (top 2, left 1, bottom 1, right 3; value) -> p [1, 12, 11, 5],
 * read by a 3x3 depthwise and a 1x1 conv (or by `other` instead of the conv: 'b' a
 * binary op, '2' the conv as its second input, 'o' the pad's output a runtime output). */
typedef struct PadCase {
  Graph g;
  char* dead;
  int x, p, pad, dw, conv, outputs[2], num_outputs;
} PadCase;

static void build(PadCase* c, float value, int channel_pad, char other) {
  memset(c, 0, sizeof(*c));
  Graph* g = &c->g;
  c->x = t_runtime(g, 1, 9, 7, 5);
  c->p = t_runtime(g, 1, 12, 11, 5 + channel_pad);
  GNode* pad = n_add(g, GOP_REMAP, &c->x, 1, c->p);
  pad->p.remap.mode = REMAP_PAD;
  pad->p.remap.value = value;
  int begin[4] = {0, -2, -1, -channel_pad};
  memcpy(pad->p.remap.begin, begin, sizeof(begin));
  c->pad = 0;
  c->dw = g->num_nodes;
  n_conv(g, GOP_DEPTHWISE, c->p, 3, t_runtime(g, 1, 10, 9, 5 + channel_pad));
  c->conv = g->num_nodes;
  if (other == 'b') {
    int ins[2] = {c->p, c->p};
    n_add(g, GOP_BINARY, ins, 2, t_runtime(g, 1, 12, 11, 5 + channel_pad));
  } else if (other == '2') {
    GNode* n = n_conv(g, GOP_CONV2D, c->x, 1, t_runtime(g, 1, 9, 7, 5));
    n->inputs[n->num_inputs++] = c->p;
  } else {
    n_conv(g, GOP_CONV2D, c->p, 1, t_runtime(g, 1, 12, 11, 4));
  }
  c->outputs[c->num_outputs++] = g->nodes[c->conv].outputs[0];
  if (other == 'o') c->outputs[c->num_outputs++] = c->p;
  c->dead = g_ready(g);
}

static void done(PadCase* c) {
  graph_free(&c->g);
  free(c->dead);
}

static void test_folded_into_every_reader(void) {
  PadCase c;
  build(&c, 0.0f, 0, 0);
  CHECK(fold_pads(&c.g, c.outputs, c.num_outputs, c.dead) == 1, "one PAD folded");
  CHECK(c.dead[c.pad] && !c.dead[c.dw] && !c.dead[c.conv], "the PAD goes, its readers stay");
  for (int k = c.dw; k <= c.conv; ++k) {
    const GNode* n = &c.g.nodes[k];
    CHECK(n->inputs[0] == c.x, "node %d reads the PAD's input", k);
    CHECK(n->p.conv.pad_x == 1 && n->p.conv.pad_y == 2, "node %d: padding grown by the top and left (%d, %d)", k,
          n->p.conv.pad_x, n->p.conv.pad_y);
  }
  CHECK(c.g.nodes[c.pad].num_inputs == 0, "the folded PAD reads nothing");
  CHECK(c.g.num_merged == 1 && c.g.merged[0].gone == c.pad && c.g.merged[0].into == c.dw,
        "its work recorded as its first reader's");
  CHECK(graph_home(&c.g, c.pad) == c.dw, "graph_home names the first reader");
  done(&c);
}

static void test_kept(float value, int channel_pad, char other, const char* why) {
  PadCase c;
  build(&c, value, channel_pad, other);
  CHECK(fold_pads(&c.g, c.outputs, c.num_outputs, c.dead) == 0, "kept: %s", why);
  CHECK(!c.dead[c.pad] && c.g.nodes[c.dw].inputs[0] == c.p && c.g.nodes[c.dw].p.conv.pad_x == 0,
        "%s: the graph is unchanged", why);
  done(&c);
}

int main(void) {
  test_folded_into_every_reader();
  test_kept(0.5f, 0, 0, "a PAD of a nonzero value");
  test_kept(0.0f, 3, 0, "a PAD of the channels");
  test_kept(0.0f, 0, 'b', "a reader that is not a convolution");
  test_kept(0.0f, 0, '2', "a convolution reading it as another input");
  test_kept(0.0f, 0, 'o', "its output a runtime output");
  printf("%d checks, %d failures\n", g_checks, g_failures);
  return g_failures ? 1 : 0;
}
