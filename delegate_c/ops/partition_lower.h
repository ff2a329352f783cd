/* Lowering: a partition's TFLite nodes become the delegate's own graph
 * (graph.h), node by node in execution order through the op table's lower
 * functions (ops_*.c). */
#ifndef TFLITE_GPU_PARTITION_LOWER_H
#define TFLITE_GPU_PARTITION_LOWER_H

#include <stddef.h>

#include "model/graph.h"
#include "model/model_view.h"
#include "model/tflite_abi.h"

/* Lowers the nodes to_replace of mv into g; outputs[k] receives the graph
 * tensor of out_tensors[k]. 0, or -1 with err set ("lowering OP (node N):
 * why"). Folded constants have no lower function: their readers read them. */
int lower_partition(const ModelView* mv, const TfLiteIntArray* to_replace, const TfLiteIntArray* out_tensors,
                    Graph* g, int* outputs, char* err, size_t errlen);

#endif
