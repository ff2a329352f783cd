/* A DEPTHWISE_CONV_2D whose output only a 1x1 CONV_2D reads becomes part
 * of that convolution (GOP_DW_CONV1X1, opencl_kernels/conv_gpu.cl's
 * dw_conv2d_1x1_gpu, or conv.cl's conv2d_x4_dw for the VM on a GPU): one
 * launch (or phase) instead of two, and the intermediate
 * tensor is never written. MobileNet, BlazeFace and BlazePose blocks are
 * depthwise -> 1x1 pairs, a third of the MediaPipe models' launches. */
#ifndef TFLITE_GPU_FUSE_DW_CONV_H
#define TFLITE_GPU_FUSE_DW_CONV_H

#include "model/graph.h"
#include "select/conv_geometry.h" /* the bound it keeps pairs within */

/* Rewrites each pair within the bound in place: the 1x1 node takes the
 * depthwise's input and parameters (graph.h, conv.pw_*), the depthwise is
 * marked in dead[] and reads nothing. outputs: graph tensors read back by
 * the runtime, never fused away. x4: the pair runs as conv2d_x4_dw (the
 * VM's fine bodies), whose taps the bound holds: at most `bound` taps per
 * work-item (policy dw_1x1_max_taps; select/conv_geometry.h). Returns the
 * number of nodes removed. */
int fuse_dw_conv(Graph* g, const int* outputs, int num_outputs, char* dead, int x4, long bound);

#endif
