/* Inputs read as the runtime gives them. Float32 partition inputs that
 * only CONV_2D nodes read, each as its source and nothing else, stay in the
 * runtime's BHWC layout (GTensor.bhwc): the convolutions read the staging
 * buffer (conv2d_bhwc_gpu), and the input's conversion to PHWC4, a launch
 * per invoke, goes. Every MediaPipe model starts so. GPU kernel set only,
 * where every conv runs a conv_gpu.cl kernel. */
#ifndef TFLITE_GPU_INPUT_DIRECT_H
#define TFLITE_GPU_INPUT_DIRECT_H

#include "model/graph.h"

/* Marks them; returns how many. */
int input_direct_mark(Graph* g);

#endif
