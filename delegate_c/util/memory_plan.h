/* Offsets for the activation tensors of a partition inside one arena,
 * sharing memory between tensors whose lifetimes do not overlap. */
#ifndef TFLITE_GPU_MEMORY_PLAN_H
#define TFLITE_GPU_MEMORY_PLAN_H

#include <stddef.h>

typedef struct MemoryRequest {
  size_t size;
  int first; /* step that writes it */
  int last;  /* last step that reads it (inclusive) */
} MemoryRequest;

/* Fills offsets[n] (multiples of alignment), the arena size and the lower
 * bound (peak of simultaneously live bytes). Returns -1 on OOM. */
int memory_plan(const MemoryRequest* req, int n, size_t alignment, size_t* offsets, size_t* arena_bytes,
                size_t* lower_bound);

#endif
