/* Chooses the nodes to delegate: every node passes op_check_node, folded
 * DEQUANTIZE/DENSIFY nodes join when all their readers are delegated, and
 * the policy picks among the partitions that leaves (options.h). Prints upstream's
 * "not supported" lines to stderr (Python never shows ReportError). */
#ifndef TFLITE_GPU_PARTITION_H
#define TFLITE_GPU_PARTITION_H

#include <stddef.h>

#include "cl/cl_device.h"
#include "model/model_view.h"
#include "select/policy.h"

typedef struct PartitionResult {
  TfLiteIntArray* nodes; /* malloc'd; node indices to replace */
  int delegated;
  int cpu;
  int partitions;
  /* One line per node in execution order, for `explain`:
   * "node\top\tversion\tgpu|cpu\treason" (malloc'd). */
  char* node_report;
  /* partition_policy=measured: one line per candidate partition,
   * "nodes\tdevice_us\tcpu_us\tgpu|cpu\tnode,node,..." (device_us -1: it
   * did not build); NULL for the other policies. malloc'd. */
  char* candidates;
} PartitionResult;

typedef struct PartitionPolicy {
  int policy;         /* GD_PARTS_* (options.h) */
  int max_partitions; /* largest and measured keep at most this many */
  GpuDevice* dev;     /* measured: where candidates are timed, */
  const Policy* run;  /* and how (the delegate's policy: the rule and the options) */
} PartitionPolicy;

void partition_result_free(PartitionResult* r);

int partition_select(const ModelView* mv, const PartitionPolicy* policy, int log_level, PartitionResult* out,
                     char* err, size_t errlen);

#endif
