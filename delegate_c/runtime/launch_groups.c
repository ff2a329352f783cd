/* See launch_groups.h. */
#include "runtime/launch_groups.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/env_hooks.h"

/* A growing string. */
typedef struct Text {
  char** s;
  size_t len, cap;
  int failed;
} Text;

static void appendf(Text* t, const char* fmt, ...) __attribute__((format(printf, 2, 3)));
static void appendf(Text* t, const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (t->failed || n < 0) return;
  if (t->len + (size_t)n + 1 > t->cap) {
    size_t cap = (t->cap ? t->cap * 2 : 1024) + (size_t)n;
    char* r = realloc(*t->s, cap);
    if (!r) {
      t->failed = 1;
      return;
    }
    *t->s = r;
    t->cap = cap;
  }
  va_start(ap, fmt);
  vsnprintf(*t->s + t->len, t->cap - t->len, fmt, ap);
  va_end(ap);
  t->len += (size_t)n;
}

int launch_groups_report(const Encoder* enc, int partition, char** report) {
  const Graph* g = &enc->g;
  size_t len = *report ? strlen(*report) : 0;
  Text t = {report, len, *report ? len + 1 : 0, 0};
  for (int k = 0; k < g->num_nodes; ++k) {
    const GNode* n = &g->nodes[k];
    appendf(&t, "%d\t%d\t%d\t%d", partition, k, n->tflite_node, n->tflite_node);
    for (int i = 0; i < g->num_merged && n->tflite_node >= 0; ++i)
      if (graph_home(g, g->merged[i].gone) == n->tflite_node) appendf(&t, ",%d", g->merged[i].gone);
    appendf(&t, "\t");
    for (int i = 0, first = 1; i < enc->num_dispatches; ++i)
      if (enc->dispatches[i].node == k) appendf(&t, "%s%s", first ? "" : ",", enc->dispatches[i].name), first = 0;
    appendf(&t, "\t");
    for (int j = 0, first = 1; j < n->num_outputs; ++j) {
      int x = g->tensors[n->outputs[j]].tflite_index;
      if (x >= 0) appendf(&t, "%s%d", first ? "" : ",", x), first = 0;
    }
    appendf(&t, "\n");
  }
  if (!t.failed && !*report) appendf(&t, "%s", ""); /* an empty graph still leaves a string */
  return t.failed ? -1 : 0;
}

/* Whether node k is the last node of the graph lowered from TFLite node `home`. */
static int last_of(const Graph* g, int k, int home) {
  if (g->nodes[k].tflite_node != home) return 0;
  for (int j = k + 1; j < g->num_nodes; ++j)
    if (g->nodes[j].tflite_node == home) return 0;
  return 1;
}

int launch_groups_perturb(Encoder* enc, int node) {
  long target = env_long("TFLITE_GPU_TEST_PERTURB_NODE", -1);
  Graph* g = &enc->g;
  if (target < 0 || g->nodes[node].tflite_node < 0 || !last_of(g, node, graph_home(g, (int)target))) return 0;
  const GNode* n = &g->nodes[node];
  for (int j = 0; j < n->num_outputs; ++j) {
    const GTensor* t = &g->tensors[n->outputs[j]];
    cl_mem mem = ex_mem(enc, n->outputs[j]);
    if (t->is_int32 || !mem) continue; /* float values only */
    KernelRef k;
    KArgs a;
    if (t->bhwc_out) {
      int count = (int)shape_elements(t->shape);
      if (!(k = ex_dispatch(enc, "perturb.cl", "perturb_bhwc", (size_t)count, node))) return -1;
      a = (KArgs){k, 0, CL_SUCCESS, count};
      karg_mem(&a, mem);
      karg_int(&a, (int)t->bhwc_offset);
    } else {
      size_t items = phwc4_items(t->shape);
      if (!(k = ex_dispatch(enc, "perturb.cl", "perturb_phwc4", items, node))) return -1;
      a = (KArgs){k, 0, CL_SUCCESS, (int)items};
      karg_mem(&a, mem);
      karg_shape(&a, t->shape);
    }
    karg_int(&a, a.total);
    if (karg_done(enc, &a)) return -1;
  }
  return 0;
}
