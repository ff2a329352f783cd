/* Reading back every tensor a partition materialises, for `tflite-gpu
 * check --bisect`: with capture on, an invoke enqueues after each node's
 * last launch a read of what that node wrote, before any later launch can
 * reuse the memory, and converts it to the runtime's BHWC float32 once
 * the invoke's one wait returns. Nothing else changes: the same graph, the
 * same fusion, the same kernels (exposing a tensor as a model output would
 * change what is computed). The delegate owns the store; each of its
 * partition kernels holds a reference, so that the store outlives neither
 * (a kernel freed after its delegate). Read and written under the device's
 * mutex. */
#ifndef TFLITE_GPU_CAPTURE_H
#define TFLITE_GPU_CAPTURE_H

#include <stddef.h>

#include "runtime/executor.h"

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
  int refs;             /* the delegate's and its kernels' references (atomic) */
  int on;               /* capturing */
  CapturedTensor* items;
  int count, cap;
  int failed;           /* out of memory or a failed read: the capture is incomplete */
} CaptureStore;

/* A store, off, with one reference; NULL on out of memory. */
CaptureStore* capture_store_new(void);
/* Another reference to s (NULL: NULL). */
CaptureStore* capture_store_ref(CaptureStore* s);
/* Drops a reference; the last frees the store. NULL is a no-op. */
void capture_store_release(CaptureStore* s);
/* Turns capture on or off; either drops what the last capture held. */
void capture_set(CaptureStore* s, int on);
/* s while it captures, else NULL (s NULL: NULL). */
CaptureStore* capture_active(CaptureStore* s);

/* During an invoke with capture on, after dispatch i: when it is the last
 * dispatch of its node, reads of that node's outputs (those the runtime
 * names) are enqueued. 0, or a CL error. */
int capture_after_dispatch(Executor* ex, CaptureStore* s, int partition, int i);
/* After the invoke's wait: the reads converted to BHWC float32. */
void capture_finish(Executor* ex, CaptureStore* s);

#endif
