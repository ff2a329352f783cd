/* A reduction that reads its source through the ADD that makes it: the
 * ADD is never launched and its sum never stored. selfie_segmentation's
 * decoder blocks add a skip tensor to an upsampled conv's output and read
 * the sum only in a squeeze-and-excitation block's global average pool
 * (the conv's output has another reader, so the ADD cannot be the conv's
 * epilogue): the pool adds the two as it loads them (reduce.cl reduce,
 * reduce_gpu.cl reduce_gpu and reduce_gpu_part, `addend`). The
 * summed_reduce pass (fuse.c), every kernel set. */
#ifndef TFLITE_GPU_FUSE_SUMMED_REDUCE_H
#define TFLITE_GPU_FUSE_SUMMED_REDUCE_H

#include "model/graph.h"

/* Rewrites each ADD -> reduce pair in place, where the ADD is plain (no
 * activation, no epilogue) over two runtime tensors of the sum's shape and
 * the reduce is the sum's only reader: the reduce reads the ADD's first
 * operand as inputs[0] and its second as inputs[1] (its addend); the ADD
 * is marked in dead[]. outputs: graph tensors read back by the runtime,
 * never fused away. Returns the number of nodes removed. */
int fuse_summed_reduce(Graph* g, const int* outputs, int num_outputs, char* dead);

#endif
