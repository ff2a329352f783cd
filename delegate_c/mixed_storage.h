/* Float islands inside an FP16 partition (see mixed_storage.c). */
#ifndef TFLITE_GPU_MIXED_STORAGE_H
#define TFLITE_GPU_MIXED_STORAGE_H

#include "graph.h"

typedef struct MixedStorageStats {
  int float_nodes; /* nodes kept on float storage */
  int casts;       /* conversion nodes added */
} MixedStorageStats;

/* Keeps on float storage every node that the partition outputs flagged in
 * float_outputs (one flag per output; NULL: none) depend on, and inserts
 * the conversions. whole: if any node is kept on float, every node is (the
 * VM program holds one storage, vm.c: a float island would split it). For
 * FP16 partitions, after fusion. -1 on OOM. */
int mixed_storage_apply(Graph* g, const int* outputs, int num_outputs, const char* float_outputs, int whole,
                        MixedStorageStats* stats);

#endif
