#include "delegate/partition.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/log.h"
#include "ops/op_table.h"
#include "config/options.h"
#include "delegate/partition_cost.h"

/* Does every node reading `tensor` satisfy in_set? (0 readers: no.) */
static int all_consumers_in(const ModelView* mv, int tensor, const unsigned char* in_set) {
  int readers = 0;
  for (int i = 0; i < mv->num_nodes; ++i) {
    TfLiteNode* node;
    TfLiteRegistration* reg;
    if (mv_node(mv, mv->plan[i], &node, &reg)) return 0;
    for (int k = 0; node->inputs && k < node->inputs->size; ++k) {
      if (node->inputs->data[k] != tensor) continue;
      if (!in_set[i]) return 0;
      ++readers;
      break;
    }
  }
  return readers > 0;
}

/* Keeps a folded DEQUANTIZE/DENSIFY only while all its readers are in the
 * set: its output then never leaves the partition. Reverse order settles
 * chains (DENSIFY feeding DEQUANTIZE) in one pass. */
static void settle_folds(const ModelView* mv, unsigned char* in_set) {
  for (int i = mv->num_nodes - 1; i >= 0; --i) {
    if (!mv->foldable[i]) continue;
    TfLiteNode* node;
    TfLiteRegistration* reg;
    if (mv_node(mv, mv->plan[i], &node, &reg)) {
      in_set[i] = 0;
      continue;
    }
    in_set[i] = (unsigned char)all_consumers_in(mv, node->outputs->data[0], in_set);
  }
}

/* Appends "OP: reason" unless the same line is already listed. */
static void add_line(char* buf, size_t size, size_t* used, const char* line) {
  const char* p = buf;
  size_t len = strlen(line);
  while (p && *p) {
    const char* nl = strchr(p, '\n');
    size_t l = nl ? (size_t)(nl - p) : strlen(p);
    if (l == len && strncmp(p, line, len) == 0) return;
    p = nl ? nl + 1 : NULL;
  }
  int n = snprintf(buf + *used, size - *used, "%s\n", line);
  if (n > 0 && *used + (size_t)n < size) *used += (size_t)n;
}

static int count_set(const unsigned char* s, int n) {
  int c = 0;
  for (int i = 0; i < n; ++i) c += s[i] != 0;
  return c;
}

typedef struct PartInfo {
  const TfLiteIntArray* nodes;
  int size;
  double gain_us; /* measured: estimated CPU time minus measured device time */
} PartInfo;

static int by_size_desc(const void* a, const void* b) {
  return ((const PartInfo*)b)->size - ((const PartInfo*)a)->size;
}

static int by_gain_desc(const void* a, const void* b) {
  double x = ((const PartInfo*)a)->gain_us, y = ((const PartInfo*)b)->gain_us;
  return x < y ? 1 : x > y ? -1 : 0;
}

/* The measured policy's report: one line per candidate, in the runtime's order. */
static char* candidates_text(const TfLiteDelegateParams* parts, int np, const PartCost* costs,
                             const unsigned char* in_set, const ModelView* mv) {
  size_t size = 64;
  for (int p = 0; p < np; ++p) size += 64 + (size_t)parts[p].nodes_to_replace->size * 12;
  char* buf = malloc(size);
  if (!buf) return NULL;
  size_t used = 0;
  buf[0] = '\0';
  for (int p = 0; p < np; ++p) {
    const TfLiteIntArray* nodes = parts[p].nodes_to_replace;
    int chosen = 0;
    for (int i = 0; i < mv->num_nodes && nodes->size; ++i) chosen |= mv->plan[i] == nodes->data[0] && in_set[i];
    used += (size_t)snprintf(buf + used, size - used, "%d\t%.1f\t%.1f\t%s\t", nodes->size, costs[p].device_us,
                             costs[p].cpu_us, chosen ? "gpu" : "cpu");
    for (int k = 0; k < nodes->size; ++k)
      used += (size_t)snprintf(buf + used, size - used, "%s%d", k ? "," : "", nodes->data[k]);
    used += (size_t)snprintf(buf + used, size - used, "\n");
  }
  return buf;
}

/* Narrows in_set to the partitions the policy keeps among those the
 * runtime would form: the largest max_partitions, all, or (measured) the
 * ones faster on the device than on the CPU, best first, at most
 * max_partitions of them. */
static int choose_partitions(const ModelView* mv, unsigned char* in_set, const PartitionPolicy* pol, int log_level,
                             int* num_parts, char** candidates, char* err, size_t errlen) {
  int n = count_set(in_set, mv->num_nodes);
  TfLiteIntArray* req = malloc(sizeof(TfLiteIntArray) + (size_t)(n + 1) * sizeof(int));
  if (!req) return snprintf(err, errlen, "out of memory"), -1;
  req->size = 0;
  for (int i = 0; i < mv->num_nodes; ++i)
    if (in_set[i]) req->data[req->size++] = mv->plan[i];
  TfLiteDelegateParams* parts = NULL;
  int np = 0;
  TfLiteStatus st = mv->ctx->PreviewDelegatePartitioning(mv->ctx, req, &parts, &np);
  free(req);
  if (st != kTfLiteOk) return snprintf(err, errlen, "PreviewDelegatePartitioning failed"), -1;
  *num_parts = np;
  int measured = pol->policy == GD_PARTS_MEASURED;
  if (pol->policy == GD_PARTS_ALL || (!measured && np <= pol->max_partitions)) return 0;
  PartInfo* info = malloc((size_t)np * sizeof(PartInfo));
  PartCost* costs = measured ? calloc((size_t)np, sizeof(PartCost)) : NULL;
  if (!info || (measured && !costs)) {
    free(info);
    free(costs);
    return snprintf(err, errlen, "out of memory"), -1;
  }
  if (measured) partition_costs(mv, pol->dev, pol->run, parts, np, log_level, costs);
  for (int p = 0; p < np; ++p) {
    info[p] = (PartInfo){parts[p].nodes_to_replace, parts[p].nodes_to_replace->size, 0};
    if (measured) info[p].gain_us = costs[p].device_us < 0 ? -1e300 : costs[p].cpu_us - costs[p].device_us;
  }
  qsort(info, (size_t)np, sizeof(PartInfo), measured ? by_gain_desc : by_size_desc);
  memset(in_set, 0, (size_t)mv->num_nodes);
  int kept = 0;
  for (int p = 0; p < np && kept < pol->max_partitions; ++p) {
    if (measured && info[p].gain_us <= 0) break;
    ++kept;
    for (int k = 0; k < info[p].nodes->size; ++k) {
      for (int i = 0; i < mv->num_nodes; ++i)
        if (mv->plan[i] == info[p].nodes->data[k]) in_set[i] = 1;
    }
  }
  if (measured) *candidates = candidates_text(parts, np, costs, in_set, mv);
  free(info);
  free(costs);
  *num_parts = kept;
  return 0;
}

void partition_result_free(PartitionResult* r) {
  free(r->nodes);
  free(r->node_report);
  free(r->candidates);
  memset(r, 0, sizeof(*r));
}

/* The per-node lines of PartitionResult.node_report. */
/* Why a foldable node (constant-only, or computed from SHAPE) is on the
 * CPU: one wording for explain's per-node report and the runtime's list. */
static const char kFoldedLeft[] = "folded only when every reader of its output is delegated; one is not, so it runs "
                                  "on the CPU";

static char* node_report(const ModelView* mv, const unsigned char* in_set, char** reasons, const char* left_out) {
  size_t size = 256, used = 0;
  for (int i = 0; i < mv->num_nodes; ++i) size += 200 + (reasons[i] ? strlen(reasons[i]) : 0);
  char* buf = malloc(size);
  if (!buf) return NULL;
  buf[0] = '\0';
  for (int i = 0; i < mv->num_nodes; ++i) {
    TfLiteNode* node;
    TfLiteRegistration* reg;
    char name[160] = "?";
    int version = 0;
    if (mv_node(mv, mv->plan[i], &node, &reg) == 0) {
      op_display_name(reg, name, sizeof(name));
      version = reg->version;
    }
    const char* why = reasons[i] ? reasons[i]
                      : in_set[i] ? (mv->foldable[i] ? "constant folded into the partition at prepare" : "")
                      : mv->foldable[i] ? kFoldedLeft
                                        : left_out;
    int n = snprintf(buf + used, size - used, "%d\t%s\t%d\t%s\t%s\n", mv->plan[i], name, version,
                     in_set[i] ? "gpu" : "cpu", why);
    if (n > 0 && used + (size_t)n < size) used += (size_t)n;
  }
  return buf;
}

/* A graph in which a tensor is written by two nodes, or a node writes a
 * constant or its own input, is malformed; the stock runtime's own
 * partitioner (XNNPACK's, run after ours) crashes on some such graphs once
 * any node is delegated, so none is. Returns 0, or -1 with the reason. */
static int graph_malformed(const ModelView* mv, char* why, size_t whylen) {
  int* writer = malloc((size_t)(mv->num_tensors + 1) * sizeof(int));
  if (!writer) return snprintf(why, whylen, "out of memory"), -1;
  for (int t = 0; t < mv->num_tensors; ++t) writer[t] = -1;
  int bad = 0;
  for (int i = 0; i < mv->num_nodes && !bad; ++i) {
    TfLiteNode* node;
    TfLiteRegistration* reg;
    if (mv_node(mv, mv->plan[i], &node, &reg) || !node->outputs) continue;
    for (int j = 0; j < node->outputs->size && !bad; ++j) {
      int t = node->outputs->data[j];
      if (t < 0 || t >= mv->num_tensors) continue;
      if (writer[t] >= 0)
        bad = snprintf(why, whylen, "the graph is malformed: tensor %d is written by nodes %d and %d", t, writer[t],
                       mv->plan[i]);
      else if (mv->const_kind[t] == CONST_MODEL) /* not a folded node's output: those are written by it */
        bad = snprintf(why, whylen, "the graph is malformed: node %d writes constant tensor %d", mv->plan[i], t);
      for (int k = 0; !bad && node->inputs && k < node->inputs->size; ++k)
        if (node->inputs->data[k] == t)
          bad = snprintf(why, whylen, "the graph is malformed: node %d writes its own input (tensor %d)", mv->plan[i], t);
      writer[t] = mv->plan[i];
    }
  }
  free(writer);
  return bad ? -1 : 0;
}

int partition_select(const ModelView* mv, const PartitionPolicy* pol, int log_level, PartitionResult* out,
                     char* err, size_t errlen) {
  memset(out, 0, sizeof(*out));
  int n = mv->num_nodes;
  char malformed[256] = "";
  graph_malformed(mv, malformed, sizeof(malformed));
  unsigned char* in_set = calloc((size_t)n + 1, 1);
  char** reasons = calloc((size_t)n + 1, sizeof(char*));
  size_t report_size = 64 * 1024, used = 0;
  char* report = calloc(report_size, 1);
  if (!in_set || !report || !reasons) {
    free(in_set);
    free(report);
    free(reasons);
    return snprintf(err, errlen, "out of memory"), -1;
  }
  for (int i = 0; i < n; ++i) {
    if (mv->foldable[i]) continue; /* decided by settle_folds */
    NodeInfo ni = {0};
    char why[512] = "";
    ni.mv = mv;
    ni.index = mv->plan[i];
    ni.reason = why;
    ni.reason_len = sizeof(why);
    if (mv_node(mv, ni.index, &ni.node, &ni.reg)) {
      snprintf(why, sizeof(why), "GetNodeAndRegistration failed");
    } else if (malformed[0]) {
      snprintf(why, sizeof(why), "%s", malformed);
    } else if (op_check_node(&ni) == 0) {
      in_set[i] = 1;
      continue;
    }
    char name[160], line[800];
    if (ni.reg)
      op_display_name(ni.reg, name, sizeof(name));
    else
      snprintf(name, sizeof(name), "node %d", ni.index);
    snprintf(line, sizeof(line), "%s: %s", name, why);
    add_line(report, report_size, &used, line);
    reasons[i] = strdup(why);
  }
  settle_folds(mv, in_set);
  /* Folded nodes whose readers stay on the CPU stay there too. */
  for (int i = 0; i < n; ++i) {
    if (!mv->foldable[i] || in_set[i]) continue;
    TfLiteNode* node;
    TfLiteRegistration* reg;
    if (mv_node(mv, mv->plan[i], &node, &reg) == 0) {
      char name[160], line[400];
      op_display_name(reg, name, sizeof(name));
      snprintf(line, sizeof(line), "%s: %s", name, kFoldedLeft);
      if (used) add_line(report, report_size, &used, line);
    }
  }
  int parts = 0;
  int full = count_set(in_set, n) == n && n > 0;
  if (full && pol->policy != GD_PARTS_MEASURED) {
    parts = 1;
  } else if (full) {
    if (choose_partitions(mv, in_set, pol, log_level, &parts, &out->candidates, err, errlen)) {
      for (int i = 0; i < n; ++i) free(reasons[i]);
      free(reasons);
      free(in_set);
      free(report);
      return -1;
    }
  } else {
    /* Partial delegation: the runtime would group the constant-only folded
     * nodes into a partition of their own, away from their readers. Leave
     * them to the CPU (which evaluates a constant DEQUANTIZE/DENSIFY once)
     * and fold from their source constant inside the partition instead.
     * A SHAPE fold reads a runtime tensor, so it groups with its
     * neighbours: it stays as settle_folds decided. */
    for (int i = 0; i < n; ++i)
      if (mv->foldable[i] == FOLD_CONST) in_set[i] = 0;
    if (count_set(in_set, n) > 0 &&
        choose_partitions(mv, in_set, pol, log_level, &parts, &out->candidates, err, errlen)) {
      for (int i = 0; i < n; ++i) free(reasons[i]);
      free(reasons);
      free(in_set);
      free(report);
      return -1;
    }
  }
  int delegated = count_set(in_set, n);
  out->nodes = malloc(sizeof(TfLiteIntArray) + (size_t)(delegated + 1) * sizeof(int));
  if (!out->nodes) {
    for (int i = 0; i < n; ++i) free(reasons[i]);
    free(reasons);
    free(in_set);
    free(report);
    return snprintf(err, errlen, "out of memory"), -1;
  }
  out->nodes->size = 0;
  for (int i = 0; i < n; ++i)
    if (in_set[i]) out->nodes->data[out->nodes->size++] = mv->plan[i];
  out->node_report =
      node_report(mv, in_set, reasons,
                  pol->policy == GD_PARTS_MEASURED
                      ? "supported, but partition_policy=measured left its partition on the CPU (see its costs)"
                      : "supported, but outside the largest max_delegated_partitions partition(s)");
  for (int i = 0; i < n; ++i) free(reasons[i]);
  free(reasons);
  out->delegated = delegated;
  out->cpu = n - delegated;
  out->partitions = parts;
  if (out->cpu > 0) {
    /* Upstream's wording, so existing log scrapers keep working. */
    if (used) gd_log(log_level, GD_LOG_WARNING, "Following operations are not supported by GPU delegate:\n%.*s",
                     (int)(used - 1), report);
    if (delegated)
      gd_log(log_level, GD_LOG_WARNING,
             "%d operations will run on the GPU, and the remaining %d operations will run on the CPU.", delegated,
             out->cpu);
    else
      gd_log(log_level, GD_LOG_WARNING, "No operations will run on the GPU, and all %d operations will run on the CPU.",
             out->cpu);
  }
  gd_log(log_level, GD_LOG_INFO, "delegating %d of %d nodes in %d partition(s)", delegated, n, parts);
  free(in_set);
  free(report);
  return 0;
}
