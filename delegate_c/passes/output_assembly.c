/* Outputs assembled from their parts (output_assembly.h). */
#include "passes/output_assembly.h"

#include <stdlib.h>

#include "model/tflite_abi.h"

typedef struct Walk {
  Graph* g;
  int* producer; /* per tensor: the node writing it, or -1 */
  int* reads;    /* per tensor: input slots reading it */
  char* dead;    /* per node: replaced by an assembly */
  int* killed;   /* this output's dead nodes, to undo a failed walk */
  int num_killed;
} Walk;

static int bhwc_identity(const Graph* g, const GNode* n) {
  if (n->op == GOP_REMAP) return n->p.remap.mode == REMAP_RESHAPE && !n->p.remap.gather && n->num_inputs == 1;
  if (n->op != GOP_CONCAT) return 0;
  const int* s = g->tensors[n->outputs[0]].shape;
  for (int d = 0; d < n->p.concat.axis; ++d)
    if (s[d] != 1) return 0;
  return 1;
}

/* A runtime float tensor (not quantized, not int32 indices, not a constant). */
static int plain_float(const GTensor* t) {
  return (t->dtype == kTfLiteFloat32 || t->tflite_index < 0) && t->qtype == GD_QNONE && !t->is_int32 && !t->data &&
         shape_elements(t->shape) > 0;
}

/* Whether tensor t (the output, or read once by the assembly above it) is
 * taken apart itself: its producer is a layout-only node nobody else needs. */
static int expands(const Walk* w, int t, int top) {
  int p = w->producer[t];
  if (p < 0 || w->dead[p] || !bhwc_identity(w->g, &w->g->nodes[p])) return 0;
  return top ? w->reads[t] == 0 : w->reads[t] == 1 && !w->g->tensors[t].is_output;
}

/* 0: t's parts appended from element `offset` on; 1: t cannot be
 * assembled; -1: out of memory. */
static int walk_parts(Walk* w, int out, int t, size_t offset, int top) {
  if (!plain_float(&w->g->tensors[t])) return 1;
  if (!expands(w, t, top)) {
    Graph* as = w->g;
    if (as->num_parts == as->cap_parts) {
      int cap = as->cap_parts ? as->cap_parts * 2 : 16;
      OutPart* q = realloc(as->parts, (size_t)cap * sizeof(*q));
      if (!q) return -1;
      as->parts = q;
      as->cap_parts = cap;
    }
    as->parts[as->num_parts++] = (OutPart){out, t, offset};
    return 0;
  }
  int p = w->producer[t];
  w->dead[p] = 1;
  w->killed[w->num_killed++] = p;
  const GNode* n = &w->g->nodes[p];
  for (int j = 0; j < n->num_inputs; ++j) {
    int rc = walk_parts(w, out, n->inputs[j], offset, 0);
    if (rc) return rc;
    offset += shape_elements(w->g->tensors[n->inputs[j]].shape);
  }
  return 0;
}

static int plan(Walk* w, Graph* g, const int* outputs, int num_outputs) {
  for (int i = 0; i < g->num_tensors; ++i) w->producer[i] = -1;
  for (int k = 0; k < g->num_nodes; ++k) {
    const GNode* n = &g->nodes[k];
    for (int j = 0; j < n->num_outputs; ++j) w->producer[n->outputs[j]] = k;
    for (int j = 0; j < n->num_inputs; ++j) w->reads[n->inputs[j]]++;
    for (int e = 0; e < n->num_epi; ++e) { /* a residual read counts even where it is not an input too */
      if (n->epi[e].tensor >= 0) w->reads[n->epi[e].tensor]++;
      if (n->epi[e].op == EPI_AFFINE && n->epi[e].shift >= 0) w->reads[n->epi[e].shift]++;
    }
  }
  int removed = 0;
  for (int k = 0; k < num_outputs; ++k) {
    int o = outputs[k];
    if (!expands(w, o, 1)) continue;
    int first = g->num_parts;
    w->num_killed = 0;
    int rc = walk_parts(w, o, o, 0, 1);
    if (rc < 0) return -1;
    if (rc) { /* back to the plain conversion */
      for (int i = 0; i < w->num_killed; ++i) w->dead[w->killed[i]] = 0;
      g->num_parts = first;
      continue;
    }
    removed += w->num_killed;
    for (int i = first; i < g->num_parts; ++i) g->tensors[g->parts[i].tensor].out_part = 1;
  }
  if (removed) {
    int n = 0;
    for (int k = 0; k < g->num_nodes; ++k)
      if (w->dead[k]) graph_merge(g, -1, k, w->dead); /* into the outputs' conversions */
    for (int k = 0; k < g->num_nodes; ++k)
      if (!w->dead[k]) g->nodes[n++] = g->nodes[k];
    g->num_nodes = n;
  }
  return removed;
}

int output_assembly_plan(Graph* g, const int* outputs, int num_outputs) {
  Walk w = {g, NULL, NULL, NULL, NULL, 0};
  w.producer = malloc((size_t)(g->num_tensors + 1) * sizeof(int));
  w.reads = calloc((size_t)g->num_tensors + 1, sizeof(int));
  w.dead = calloc((size_t)g->num_nodes + 1, 1);
  w.killed = malloc((size_t)(g->num_nodes + 1) * sizeof(int));
  int rc = w.producer && w.reads && w.dead && w.killed ? plan(&w, g, outputs, num_outputs) : -1;
  free(w.producer);
  free(w.reads);
  free(w.dead);
  free(w.killed);
  return rc;
}

int output_assembled(const Graph* g, int t) {
  for (int i = 0; i < g->num_parts; ++i)
    if (g->parts[i].output == t) return 1;
  return 0;
}
