/* Float islands inside an FP16 partition (see mixed_storage.c). */
#ifndef TFLITE_GPU_MIXED_STORAGE_H
#define TFLITE_GPU_MIXED_STORAGE_H

#include "model/graph.h"

typedef struct MixedStorageStats {
  int float_nodes; /* nodes kept on float storage */
  int casts;       /* conversion nodes added */
} MixedStorageStats;

/* Keeps on float storage every node that the partition outputs flagged in
 * float_outputs (one flag per output; NULL: none) depend on, and inserts
 * the conversions. For FP16 partitions, after fusion. In the VM modes (vm)
 * the float nodes run their bodies' float copies (vm.c), and an island of
 * at least half the nodes makes every node float: no conversion runs, and
 * the program holds float copies alone, the same program as fp16_guard's
 * float build of the partition, so it is compiled once (pose_landmark_full
 * keeps 103 of its nodes on float; with half and float bodies its cold
 * start on PoCL went from 12 s to 22 s). -1 on OOM. */
int mixed_storage_apply(Graph* g, const int* outputs, int num_outputs, const char* float_outputs, int vm,
                        MixedStorageStats* stats);

#endif
