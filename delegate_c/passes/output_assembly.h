/* Outputs assembled from their parts. In the runtime's row-major BHWC a
 * reshape (RESHAPE, SQUEEZE, EXPAND_DIMS) moves no byte, and a
 * concatenation whose axis has only size-1 dims before it lays its inputs
 * one after another. So an output computed from tensors T_i through such
 * nodes alone (the detectors' heads: CONV_2D -> RESHAPE -> CONCATENATION)
 * is each T_i converted once, straight into the output's staging buffer at
 * T_i's offset (executor.c); the reshape and concatenation nodes go. A pass
 * of the fuse stage (fuse.c). */
#ifndef TFLITE_GPU_OUTPUT_ASSEMBLY_H
#define TFLITE_GPU_OUTPUT_ASSEMBLY_H

#include <stddef.h>

#include "model/graph.h"

/* For the float32 outputs (graph tensors; not the states) that can be
 * assembled: their parts into g->parts, each part's out_part set (it must
 * live to the end, where it is converted), and the nodes they replace
 * removed from g. Every partition output, states included, must be marked
 * is_output (such a tensor is never taken apart inside another). Returns
 * the nodes removed, -1 on out of memory. */
int output_assembly_plan(Graph* g, const int* outputs, int num_outputs);

/* Whether graph tensor t is an assembled output. */
int output_assembled(const Graph* g, int t);

#endif
