/* uses: passes/fuse_summed_reduce.c model/graph.c */
/* The summed_reduce pass (a fusion) alone, on graphs built in memory: an
 * ADD of two runtime tensors of one shape that only a reduction reads
 * goes, the reduction reading both operands; anything else keeps it. */
#include "check.h"
#include "graph_build.h"
#include "model/tflite_builtins.h"
#include "passes/fuse_summed_reduce.h"

/* a, b [1, 5, 3, 17] -> ADD -> s -> REDUCE (mean over H, W) -> r [1, 1, 1, 17].
 * how: 0 as above; 'r' the ADD with a RELU; 'c' b a constant; 'x' s also read
 * by another node; 'o' s a runtime output; 'w' b broadcast ([1, 1, 1, 17]);
 * 's' both operands one tensor; 'f' the reduction on float storage alone. */
typedef struct SumCase {
  Graph g;
  char* dead;
  int a, b, s, r, add, red, outputs[2], num_outputs;
} SumCase;

static void build(SumCase* c, char how) {
  memset(c, 0, sizeof(*c));
  Graph* g = &c->g;
  c->a = t_runtime(g, 1, 5, 3, 17);
  c->b = how == 'c' ? t_const(g, 1, 5, 3, 17, 1.0f) : how == 'w' ? t_runtime(g, 1, 1, 1, 17)
       : how == 's' ? c->a : t_runtime(g, 1, 5, 3, 17);
  c->s = t_runtime(g, 1, 5, 3, 17);
  c->r = t_runtime(g, 1, 1, 1, 17);
  int ins[2] = {c->a, c->b};
  c->add = g->num_nodes;
  GNode* add = n_add(g, GOP_BINARY, ins, 2, c->s);
  add->p.binary.op = BIN_ADD;
  add->act = how == 'r' ? kTfLiteActRelu : kTfLiteActNone;
  c->red = g->num_nodes;
  GNode* red = n_add(g, GOP_REDUCE, &c->s, 1, c->r);
  red->p.reduce.op = REDUCE_MEAN;
  red->p.reduce.axes[GD_H] = red->p.reduce.axes[GD_W] = 1;
  red->fp32 = how == 'f';
  if (how == 'x') {
    GNode* other = n_add(g, GOP_UNARY, &c->s, 1, t_runtime(g, 1, 5, 3, 17));
    other->p.unary.op = 0;
  }
  c->outputs[c->num_outputs++] = c->r;
  if (how == 'o') c->outputs[c->num_outputs++] = c->s;
  c->dead = g_ready(g);
}

static void done(SumCase* c) {
  graph_free(&c->g);
  free(c->dead);
}

static void test_fused(void) {
  SumCase c;
  build(&c, 0);
  CHECK(fuse_summed_reduce(&c.g, c.outputs, c.num_outputs, c.dead) == 1, "one ADD fused");
  const GNode* red = &c.g.nodes[c.red];
  CHECK(c.dead[c.add] && !c.dead[c.red], "the ADD goes, the reduction stays");
  CHECK(red->num_inputs == 2 && red->inputs[0] == c.a && red->inputs[1] == c.b,
        "the reduction reads the ADD's operands in order (%d inputs: %d, %d)", red->num_inputs, red->inputs[0],
        red->inputs[1]);
  CHECK(red->outputs[0] == c.r && red->op == GOP_REDUCE && red->p.reduce.op == REDUCE_MEAN, "and stays a MEAN into r");
  CHECK(c.g.num_merged == 1 && graph_home(&c.g, c.add) == c.red, "the ADD's work is the reduction's");
  done(&c);
}

static void test_kept(char how, const char* why) {
  SumCase c;
  build(&c, how);
  CHECK(fuse_summed_reduce(&c.g, c.outputs, c.num_outputs, c.dead) == 0, "kept: %s", why);
  CHECK(!c.dead[c.add] && c.g.nodes[c.red].num_inputs == 1 && c.g.nodes[c.red].inputs[0] == c.s,
        "%s: the graph is unchanged", why);
  done(&c);
}

int main(void) {
  test_fused();
  test_kept('r', "an ADD with an activation");
  test_kept('c', "a constant operand");
  test_kept('x', "the sum read by another node");
  test_kept('o', "the sum a runtime output");
  test_kept('w', "a broadcast operand");
  test_kept('s', "one tensor added to itself");
  test_kept('f', "the reduction on other storage");
  printf("%d checks, %d failures\n", g_checks, g_failures);
  return g_failures ? 1 : 0;
}
