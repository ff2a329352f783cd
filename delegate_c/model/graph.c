#include "model/graph.h"

#include <stdlib.h>
#include <string.h>

int graph_add_tensor(Graph* g, const int shape_in[4], int rank) {
  /* Callers may pass another tensor's shape, which the realloc can move. */
  int shape[4];
  memcpy(shape, shape_in, sizeof(shape));
  if (g->num_tensors == g->cap_tensors) {
    int cap = g->cap_tensors ? g->cap_tensors * 2 : 64;
    GTensor* t = realloc(g->tensors, (size_t)cap * sizeof(*t));
    if (!t) return -1;
    g->tensors = t;
    g->cap_tensors = cap;
  }
  GTensor* t = &g->tensors[g->num_tensors];
  memset(t, 0, sizeof(*t));
  memcpy(t->shape, shape, sizeof(t->shape));
  t->rank = rank;
  t->tflite_index = -1;
  t->write_back = -1;
  t->first_use = -1;
  t->last_use = -1;
  return g->num_tensors++;
}

GNode* graph_add_node(Graph* g, GOp op) {
  if (g->num_nodes == g->cap_nodes) {
    int cap = g->cap_nodes ? g->cap_nodes * 2 : 64;
    GNode* n = realloc(g->nodes, (size_t)cap * sizeof(*n));
    if (!n) return NULL;
    g->nodes = n;
    g->cap_nodes = cap;
  }
  GNode* n = &g->nodes[g->num_nodes++];
  memset(n, 0, sizeof(*n));
  n->op = op;
  n->tflite_node = -1;
  return n;
}

GNode* graph_add_node_io(Graph* g, GOp op, int in, int out) {
  GNode* n = graph_add_node(g, op);
  if (!n) return NULL;
  n->inputs[0] = in;
  n->num_inputs = 1;
  n->outputs[0] = out;
  n->num_outputs = 1;
  return n;
}

void graph_free(Graph* g) {
  for (int i = 0; i < g->num_tensors; ++i) free(g->tensors[i].data);
  free(g->tensors);
  free(g->nodes);
  free(g->parts);
  free(g->merged);
  memset(g, 0, sizeof(*g));
}

int shape_from_dims(const int* dims, int rank, int out[4]) {
  if (rank < 0 || rank > 4) return -1;
  for (int i = 0; i < 4; ++i) out[i] = 1;
  for (int i = 0; i < rank; ++i) out[4 - rank + i] = dims[i];
  return 0;
}

int axis_to_bhwc(int axis, int rank) {
  if (axis < 0) axis += rank;
  return axis + (4 - rank);
}

int graph_is_output(int t, const int* outputs, int num_outputs) {
  for (int k = 0; k < num_outputs; ++k)
    if (outputs[k] == t) return 1;
  return 0;
}

void graph_take_first_1x1(Graph* g, int n, int first, GOp op, char* dead) {
  GNode* b = &g->nodes[n];
  GNode* a = &g->nodes[first];
  b->p.conv.first_weights = a->p.conv.weights;
  b->p.conv.first_bias = a->p.conv.bias;
  b->p.conv.first_act = a->act;
  b->p.conv.first_channels = g->tensors[a->outputs[0]].shape[GD_C];
  b->inputs[0] = a->inputs[0];
  b->op = op;
  graph_merge(g, n, first, dead);
}

void graph_merge(Graph* g, int into, int gone, char* dead) {
  dead[gone] = 1;
  g->nodes[gone].num_inputs = 0;
  int from = g->nodes[gone].tflite_node, to = into >= 0 ? g->nodes[into].tflite_node : -1;
  if (from >= 0 && from != to && g->num_merged < g->cap_merged) g->merged[g->num_merged++] = (GMerge){from, to};
}

int graph_home(const Graph* g, int node) {
  /* Merges only move work forward into surviving nodes: a chain ends. */
  for (int hops = 0; node >= 0 && hops <= g->num_merged; ++hops) {
    int i = 0;
    while (i < g->num_merged && g->merged[i].gone != node) ++i;
    if (i == g->num_merged) return node;
    node = g->merged[i].into;
  }
  return node;
}

int graph_readers(const Graph* g, int t, int* last_reader) {
  int count = 0;
  for (int k = 0; k < g->num_nodes; ++k)
    for (int j = 0; j < g->nodes[k].num_inputs; ++j)
      if (g->nodes[k].inputs[j] == t) {
        ++count;
        *last_reader = k;
        break;
      }
  return count;
}

int graph_writer(const Graph* g, int t) {
  for (int k = 0; k < g->num_nodes; ++k)
    for (int j = 0; j < g->nodes[k].num_outputs; ++j)
      if (g->nodes[k].outputs[j] == t) return k;
  return -1;
}

int graph_plain_1x1(const GNode* n) {
  return n->op == GOP_CONV2D && n->p.conv.kh == 1 && n->p.conv.kw == 1 && n->p.conv.sx == 1 &&
         n->p.conv.sy == 1 && n->p.conv.pad_x == 0 && n->p.conv.pad_y == 0 && !n->p.conv.scale_input &&
         !n->p.conv.src_via && !n->p.conv.prelu_input;
}

int graph_sole_reader(const Graph* g, int t, const char* dead, const int* outputs, int num_outputs) {
  int found = -1;
  if (graph_is_output(t, outputs, num_outputs)) return -1;
  for (int k = 0; k < g->num_nodes; ++k) {
    if (dead[k]) continue;
    for (int j = 0; j < g->nodes[k].num_inputs; ++j) {
      if (g->nodes[k].inputs[j] != t) continue;
      if (found >= 0 && found != k) return -1;
      found = k;
    }
  }
  return found;
}
