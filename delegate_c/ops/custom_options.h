/* Reading a custom op's FlexBuffers custom_options during an op check:
 * each helper sets the node's reason (naming the key) on failure. */
#ifndef TFLITE_GPU_CUSTOM_OPTIONS_H
#define TFLITE_GPU_CUSTOM_OPTIONS_H

#include "util/flexbuffer.h"
#include "ops/op_table.h"

/* The root map of node->custom_initial_data. */
int custom_options_map(const NodeInfo* ni, FlexRef* map);
/* Scalars: 0, or -1 with the reason set (missing key or not a number). */
int custom_int(const NodeInfo* ni, const FlexRef* map, const char* key, int* out);
int custom_float(const NodeInfo* ni, const FlexRef* map, const char* key, float* out);
/* Whether the map has `key` (1), lacks it (0), or is malformed (-1). */
int custom_has(const FlexRef* map, const char* key);
/* An int vector of at most `max` values. */
int custom_ints(const NodeInfo* ni, const FlexRef* map, const char* key, int* out, int max, int* count);
/* A string value compared with `expect`: 0 equal, -1 (reason set) otherwise. */
int custom_string_is(const NodeInfo* ni, const FlexRef* map, const char* key, const char* expect);

#endif
