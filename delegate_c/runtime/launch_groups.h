/* Which launch computes which TFLite node once the fuse stage merged nodes
 * (graph_merge): the groups report that `tflite-gpu check --bisect` reads,
 * and the test hook that makes one node's launch wrong on purpose. */
#ifndef TFLITE_GPU_LAUNCH_GROUPS_H
#define TFLITE_GPU_LAUNCH_GROUPS_H

#include "encode/encode.h"

/* Appends to *report one line per node of the encoded graph:
 * "partition\tnode\ttflite_node\tmembers\tkernels\ttensors": the TFLite
 * nodes it computes (comma-separated, its own first), the kernels its
 * launches run, and the TFLite tensors it writes. -1 on out of memory. */
int launch_groups_report(const Encoder* enc, int partition, char** report);

/* Test hook TFLITE_GPU_TEST_PERTURB_NODE=K (read when a partition is
 * built): after the launches of the graph node that computes TFLite node K
 * (the last one, where a node lowers to several), one more launch adds 1.0
 * to every value it wrote (opencl_kernels/perturb.cl). Call after node
 * `node` is encoded; 0, or -1 with the encoder's error set. */
int launch_groups_perturb(Encoder* enc, int node);

#endif
