/* Replays a partition's dispatch list as one recorded command buffer
 * (cl_khr_command_buffer) instead of enqueueing every kernel per invoke.
 * Optional everywhere: a device without the extension, a loader or driver
 * missing one of its functions, a queue whose properties the extension
 * refuses or a profiling queue (per-kernel events) keep the per-kernel
 * enqueue path, and so does a policy without command_buffer (the rule's
 * everywhere: it measured no gain on PoCL, see cmdbuf.c). */
#ifndef TFLITE_GPU_CMDBUF_H
#define TFLITE_GPU_CMDBUF_H

#include "cl/cl_api.h"

typedef struct Executor Executor;

/* Records ex's dispatches into ex->replay (kernel arguments are captured
 * now, so call it after the arguments are final). Returns 1 when the
 * replay is ready, 0 when it is off or unavailable (nothing is kept and the
 * caller enqueues per kernel). Call with dev->mutex held. */
int cmdbuf_record(Executor* ex);
/* Enqueues the recorded buffer on the device queue. */
cl_int cmdbuf_enqueue(Executor* ex);
void cmdbuf_release(Executor* ex);

#endif
