/* Pinned host staging for a partition's inputs and outputs (issue 28,
 * "one sync per invoke"). A transfer from pageable host memory makes a GPU
 * driver copy the bytes into a pinned bounce buffer of its own, often
 * synchronously, before its DMA engine can start; from pinned memory the
 * write and the read are DMA transfers that queue like kernels. So each
 * boundary tensor gets a CL_MEM_ALLOC_HOST_PTR buffer, mapped once at build
 * and kept mapped: an invoke copies the runtime's input bytes into it and
 * enqueues a non-blocking write from it, and reads outputs into it, copying
 * them out after the one wait. */
#ifndef TFLITE_GPU_PINNED_STAGING_H
#define TFLITE_GPU_PINNED_STAGING_H

#include "runtime/executor.h"

/* With the policy's pinned_staging (by rule on GPUs only: a CPU device's
 * buffers already are host memory and the copy would only add work),
 * gives every input and output of a built executor its mapped pinned
 * buffer. A boundary whose buffer cannot be made or mapped (a driver
 * without ALLOC_HOST_PTR, memory pressure) keeps plain pageable transfers:
 * never an error. */
void pinned_staging_attach(Executor* ex);

/* Unmaps and releases the pinned buffers (before the queue goes). */
void pinned_staging_release(Executor* ex);

/* The host pointer an invoke transfers input b from: its pinned copy, filled
 * from `data` now, or `data` itself when b has none. */
const void* pinned_input(const BoundaryTensor* b, const void* data);

/* The host pointer an invoke reads output b into: its pinned copy, or
 * `data` itself. */
void* pinned_output(const BoundaryTensor* b, void* data);

/* After the wait: output b's bytes from its pinned copy into `data` (nothing
 * when b reads straight into `data`). */
void pinned_output_done(const BoundaryTensor* b, void* data);

#endif
