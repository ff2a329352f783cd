/* Outputs stored by the kernels that make them. A float32 partition
 * output (or a part of an assembled one, output_assembly.h) that a
 * CONV_2D or a fused depthwise + 1x1 writes, and no node reads, needs no
 * conversion launch: the conv stores it as the runtime's BHWC float32,
 * straight into the output's staging buffer at the part's offset
 * (conv_gpu.cl built with CONVG_DST_BHWC, executor.c). A pass of the fuse
 * stage (fuse.c), after output_assembly. The detectors'
 * heads are such parts, one conversion each (29 launches over the 14
 * MediaPipe models). GPU kernel set only, where every conv runs a conv_gpu.cl
 * kernel. */
#ifndef TFLITE_GPU_OUTPUT_DIRECT_H
#define TFLITE_GPU_OUTPUT_DIRECT_H

#include "model/graph.h"

/* Whether a float32 output is read back from its own buffer, needing no
 * conversion: stored as float (fp16: the partition's storage is half),
 * with PHWC4 bytes that begin with its BHWC bytes (phwc4_is_bhwc). */
int output_read_back_as_is(const GTensor* t, int fp16);

/* Marks the tensors so stored (GTensor.bhwc_out: the output they go to and
 * their element offset in it) among the runtime outputs outputs[0 ..
 * num_outputs) of g, given their assembly (g->parts; output_assembly.h).
 * Returns the number marked. */
int output_direct_mark(Graph* g, const int* outputs, int num_outputs, int fp16);

#endif
