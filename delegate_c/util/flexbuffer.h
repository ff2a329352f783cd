/* A minimal, bounds-checked FlexBuffers reader for the custom_options of
 * MediaPipe's custom ops (a map of a few scalars, int vectors and strings).
 * Every read is checked against the buffer, so a corrupt or truncated
 * buffer gives an error, never an out-of-bounds read. */
#ifndef TFLITE_GPU_FLEXBUFFER_H
#define TFLITE_GPU_FLEXBUFFER_H

#include <stddef.h>
#include <stdint.h>

/* FlexBuffers value types (flexbuffers.h). */
enum {
  FLEX_NULL = 0, FLEX_INT = 1, FLEX_UINT = 2, FLEX_FLOAT = 3, FLEX_KEY = 4, FLEX_STRING = 5,
  FLEX_INDIRECT_INT = 6, FLEX_INDIRECT_UINT = 7, FLEX_INDIRECT_FLOAT = 8, FLEX_MAP = 9, FLEX_VECTOR = 10,
  FLEX_VECTOR_INT = 11, FLEX_VECTOR_UINT = 12, FLEX_VECTOR_FLOAT = 13, FLEX_VECTOR_KEY = 14,
  FLEX_VECTOR_INT2 = 16, FLEX_VECTOR_FLOAT4 = 24, FLEX_BLOB = 25, FLEX_BOOL = 26, FLEX_VECTOR_BOOL = 36
};

/* One value: where it sits, the width its parent stores it with, the width
 * of what it points to (for offset types), and its type. */
typedef struct FlexRef {
  const uint8_t* buf;
  size_t size;
  size_t pos;
  int parent_width;
  int byte_width;
  int type;
} FlexRef;

/* The root value of a buffer. 0, or -1 if the buffer is malformed. */
int flex_root(const void* data, size_t size, FlexRef* out);
/* The value of `key` in a map: 0 found, 1 absent, -1 malformed/not a map. */
int flex_map_get(const FlexRef* map, const char* key, FlexRef* out);
/* Scalars (int, uint, float, bool, and their indirect forms), converted. */
int flex_as_int64(const FlexRef* r, int64_t* out);
int flex_as_double(const FlexRef* r, double* out);
/* Vectors (untyped, typed and fixed-size typed): length and element i. */
int flex_vector_size(const FlexRef* r, int* out);
int flex_vector_at(const FlexRef* r, int i, FlexRef* out);
/* A string or key: pointer into the buffer and length (not copied). */
int flex_as_string(const FlexRef* r, const char** s, size_t* len);

#endif
