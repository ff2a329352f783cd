/* Zero PADs of H and W that only feed convolutions, folded into the
 * convolutions' own padding (MediaPipe pads before its stride-2 and 5x5
 * depthwise convs). */
#ifndef TFLITE_GPU_FOLD_PAD_H
#define TFLITE_GPU_FOLD_PAD_H

#include "model/graph.h"

/* Folds each such PAD (marked in dead); returns how many. */
int fold_pads(Graph* g, const int* outputs, int num_outputs, char* dead);

#endif
