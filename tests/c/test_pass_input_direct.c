/* uses: passes/input_direct.c model/graph.c */
/* The input_direct pass (a layout pass) alone, on graphs built in memory: a
 * float32 partition input that only CONV_2D nodes read, each as its plain
 * source, stays BHWC; any other input keeps its conversion. */
#include "check.h"
#include "graph_build.h"
#include "model/tflite_abi.h"
#include "passes/input_direct.h"

/* x [1, 11, 9, 3] read by a 3x3 conv and a 1x1 conv (how 0); 'd' by a
 * depthwise instead of the 1x1; '2' the 1x1 reads it as another input; 's'
 * the 1x1 reads it through a scale; 'i' x is int32; 'q' x is quantized;
 * 'w' x is written by a node (not an input); 'v' x is a variable's state. */
static int mark(char how, Graph* g, int* x) {
  memset(g, 0, sizeof(*g));
  *x = t_runtime(g, 1, 11, 9, 3);
  if (how == 'i') g->tensors[*x].dtype = kTfLiteInt32;
  if (how == 'q') g->tensors[*x].qtype = GD_QINT8;
  if (how == 'v') g->tensors[*x].write_back = 0;
  if (how == 'w') n_add(g, GOP_UNARY, (int[]){t_runtime(g, 1, 11, 9, 3)}, 1, *x);
  n_conv(g, GOP_CONV2D, *x, 3, t_runtime(g, 1, 9, 7, 8));
  if (how == 'd') {
    n_conv(g, GOP_DEPTHWISE, *x, 1, t_runtime(g, 1, 11, 9, 3));
  } else if (how == '2') {
    GNode* n = n_conv(g, GOP_CONV2D, t_runtime(g, 1, 11, 9, 3), 1, t_runtime(g, 1, 11, 9, 5));
    n->inputs[n->num_inputs++] = *x;
  } else {
    GNode* n = n_conv(g, GOP_CONV2D, *x, 1, t_runtime(g, 1, 11, 9, 5));
    if (how == 's') n->p.conv.scale_input = 1;
  }
  return input_direct_mark(g);
}

static void test_kept(char how, const char* why) {
  Graph g;
  int x;
  int marked = mark(how, &g, &x);
  CHECK(!g.tensors[x].bhwc, "%s: x keeps its conversion", why);
  /* '2': the 1x1's own source, a second input read as a plain source, is marked. */
  CHECK(marked == (how == '2'), "%s: %d marked", why, marked);
  graph_free(&g);
}

int main(void) {
  Graph g;
  int x;
  CHECK(mark(0, &g, &x) == 1 && g.tensors[x].bhwc, "an input only convolutions read as their source stays BHWC");
  for (int t = 0; t < g.num_tensors; ++t)
    CHECK(t == x || !g.tensors[t].bhwc, "tensor %d (constant or written) is not marked", t);
  graph_free(&g);
  test_kept('d', "a depthwise reader");
  test_kept('2', "read as a conv's other input");
  test_kept('s', "read through a per-channel scale");
  test_kept('i', "an int32 input");
  test_kept('q', "a quantized input");
  test_kept('w', "a tensor a node writes");
  test_kept('v', "a variable's state");
  printf("%d checks, %d failures\n", g_checks, g_failures);
  return g_failures ? 1 : 0;
}
