/* Chooses the nodes to delegate: every node passes op_check_node, folded
 * DEQUANTIZE/DENSIFY nodes join when all their readers are delegated, and
 * only the largest max_partitions partitions are kept. Prints upstream's
 * "not supported" lines to stderr (Python never shows ReportError). */
#ifndef TFLITE_GPU_PARTITION_H
#define TFLITE_GPU_PARTITION_H

#include <stddef.h>

#include "model_view.h"

typedef struct PartitionResult {
  TfLiteIntArray* nodes; /* malloc'd; node indices to replace */
  int delegated;
  int cpu;
  int partitions;
  /* One line per node in execution order, for `explain`:
   * "node\top\tversion\tgpu|cpu\treason" (malloc'd). */
  char* node_report;
} PartitionResult;

void partition_result_free(PartitionResult* r);

int partition_select(const ModelView* mv, int max_partitions, int log_level, PartitionResult* out, char* err,
                     size_t errlen);

#endif
