/* Reading back every tensor a partition materialises, for `tflite-gpu
 * check --bisect`: with capture on, an invoke enqueues after each node's
 * last launch a read of what that node wrote, before any later launch can
 * reuse the memory, and converts it to the runtime's BHWC float32 once
 * the invoke's one wait returns. Nothing else changes: the same graph, the
 * same fusion, the same kernels (exposing a tensor as a model output would
 * change what is computed). The store lives on the device, keyed by the
 * delegate that asked (never dereferenced), so that it outlives neither. */
#ifndef TFLITE_GPU_CAPTURE_H
#define TFLITE_GPU_CAPTURE_H

#include <stddef.h>

#include "executor.h"

typedef struct CapturedTensor {
  int partition, node;  /* the partition (its order in the last Prepare) and graph node that wrote it */
  int tflite_index;     /* the TFLite tensor */
  int shape[4];         /* B, H, W, C */
  int layout;           /* how the device held it: CAPTURE_PHWC4_FLOAT, _PHWC4_HALF or _BHWC_FLOAT */
  void* raw;            /* the bytes read back */
  size_t raw_bytes;
  float* data;          /* BHWC float32, once converted */
} CapturedTensor;

enum { CAPTURE_PHWC4_FLOAT = 0, CAPTURE_PHWC4_HALF = 1, CAPTURE_BHWC_FLOAT = 2 };

typedef struct CaptureStore {
  const void* owner;    /* the delegate capturing; NULL: off */
  CapturedTensor* items;
  int count, cap;
  int failed;           /* out of memory or a failed read: the capture is incomplete */
} CaptureStore;

/* Turns capture on (owner) or off (NULL) for the device; a new capture
 * drops what the last one held. -1 on out of memory. */
int capture_set(GpuDevice* dev, const void* owner);
/* The device's store when `owner` is capturing, else NULL. */
CaptureStore* capture_for(GpuDevice* dev, const void* owner);
/* Drops the store if `owner` holds it (a delegate going away). */
void capture_drop(GpuDevice* dev, const void* owner);

/* During an invoke with capture on, after dispatch i: when it is the last
 * dispatch of its node, reads of that node's outputs (those the runtime
 * names) are enqueued. 0, or a CL error. */
int capture_after_dispatch(Executor* ex, CaptureStore* s, int partition, int i);
/* After the invoke's wait: the reads converted to BHWC float32. */
void capture_finish(Executor* ex, CaptureStore* s);

#endif
