/* tflite-gpu introspection API: what a delegate did (report, per-node and
 * per-partition text, kernel profile), the OpenCL devices and the tables
 * the library decides from, and test hooks (debug counters, fault
 * injection). Plain C (C99 and later) or C++.
 *
 * The Python package's cffi binding (python/tflite_gpu/_capi.py) reads the
 * declarations between the cffi markers from this file's text at import, so
 * they are written once: plain declarations only there (no preprocessor
 * lines; no macro but TFLITE_GPU_EXPORT, which the binding drops). */
#ifndef TFLITE_GPU_DELEGATE_INTROSPECTION_H
#define TFLITE_GPU_DELEGATE_INTROSPECTION_H

#include "gpu_delegate.h"

#ifdef __cplusplus
extern "C" {
#endif

/* cffi-begin */

/* Filled by tflite_gpu_delegate_report(): what the delegate's last Prepare
 * did, and the kernel cache's counters so far. */
typedef struct TfLiteGpuDelegateReport {
  int32_t delegated_nodes;
  int32_t cpu_nodes;
  int32_t partitions;
  int32_t dispatches;        /* kernel launches per invoke */
  uint64_t arena_bytes;      /* device memory for activations */
  uint64_t live_peak_bytes;  /* lower bound: peak of live activation bytes */
  double compile_seconds;    /* OpenCL program builds so far */
  int32_t cache_hits;        /* partitions whose programs all came from the kernel cache */
  int32_t cache_misses;      /* partitions that compiled (and will write the cache) */
  int32_t cache_writes;      /* cache files written */
  int32_t cache_rejected;    /* cache files found corrupt or unreadable */
} TfLiteGpuDelegateReport;

/* 0, or -1 when delegate or out is NULL. */
TFLITE_GPU_EXPORT int tflite_gpu_delegate_report(const struct TfLiteDelegate* delegate, TfLiteGpuDelegateReport* out);

/* The functions below that fill a text buffer write at most size bytes
 * (NUL included) and return the full length, so a call with size 0 sizes
 * the buffer. */

/* "kernel\tcalls\ttotal_ms" per kernel, summed over every invoke since the
 * delegate was created (needs TFLITE_GPU_PROFILE=1 at creation). */
TFLITE_GPU_EXPORT size_t tflite_gpu_delegate_profile(const struct TfLiteDelegate* delegate, char* buf, size_t size);
/* what = 0: one line per node of the last Prepare,
 * "node\top\tversion\twhere\treason"; what = 1: one line per partition
 * built, "nodes\tkernels\tnode,node,...\tpass=n,pass=n,...\texecution:launches:barriers\tdeclined\tpolicy"
 * (the fusion passes that ran on it, tflite_gpu_describe_passes, each with
 * the rewrites it made; how it runs as built: kernels, stepped or
 * persistent, its launches and grid barriers per invoke; why it runs its
 * kernels where the execution option asked for the VM, empty otherwise;
 * the policy it was built with, "field=value:source,..." with source rule,
 * measured, option or override, tflite_gpu_describe_policy); what = 2 (partition_policy=
 * measured): one line per candidate partition, "nodes\tdevice_us\tcpu_us\t
 * gpu|cpu\tnode,node,..." (device time measured, -1 when it did not
 * build; CPU time estimated); what = 3: one line per node of every
 * partition's fused graph, "partition\tnode\ttflite_node\tmembers\t
 * kernels\ttensors": the TFLite nodes its launches compute (its own first),
 * the kernels they run, and the TFLite tensors it writes; what = 4: one
 * line per partition invoked since the last Prepare,
 * "partition\texecution\tlaunches\tfallback": how its last invoke ran
 * (persistent, stepped or kernels), its launches, and why a persistent
 * partition now runs stepped, or one asked for the VM runs its kernels
 * (empty: neither); what = 5: one line per
 * VM phase of the partitions built with execution=stepped|persistent,
 * "partition\tsegment\tlevel\tkernel\twork_items\tgroups\tgroup_size\tnode":
 * the launch it is part of (segments are split by kernels without a
 * body), its level in a persistent launch (grid barriers separate
 * levels), the kernel whose body it runs, its work-items, the grid its
 * launch spreads them over, and its node of the fused graph (what = 3;
 * -1: a boundary conversion); what = 6: one line per VM phase, in the
 * order of what = 5, "partition\tphase\tinvokes\ttotal_ms": its time
 * summed over the profiled persistent invokes that stamped it
 * (TFLITE_GPU_PROFILE=1, a device with a timer: NVIDIA). Each such
 * invoke puts a grid barrier before every phase, so that phases run one at
 * a time; what = 7: one line per candidate policy the tuner timed for a
 * partition of the last Prepare (SUSTAINED_SPEED with nothing remembered,
 * or tune=force), "partition\tcandidate\tus\tchosen\twhy": its best
 * invoke in microseconds (-1: not timed, why says why), 1 for the one
 * chosen. */
TFLITE_GPU_EXPORT size_t tflite_gpu_delegate_nodes(const struct TfLiteDelegate* delegate, int what, char* buf,
                                                  size_t size);
/* Why the delegate's last Prepare failed (the runtime then keeps the CPU
 * graph and reports an error): TFLITE_GPU_FAILURE_NONE, _KERNEL_BUILD (the
 * device's OpenCL compiler rejected one of the library's kernels: a failure
 * of tflite-gpu on that device, not of the model; the text names the
 * device, its driver and the compiler's first errors) or _OTHER (out of
 * memory, a launch the device refuses, ...). The text of the first failure
 * goes to buf (at most size bytes, NUL included). -1 for NULL. */
enum { TFLITE_GPU_FAILURE_NONE = 0, TFLITE_GPU_FAILURE_KERNEL_BUILD = 1, TFLITE_GPU_FAILURE_OTHER = 2 };
TFLITE_GPU_EXPORT int tflite_gpu_delegate_failure(const struct TfLiteDelegate* delegate, char* buf, size_t size);
/* "platform\tdevice\tversion\tfp16|fp32\tkernel set\tpolicy row": the
 * kernel set and rule row of the delegate's policy before any partition's
 * remembered choice; -1 for NULL. */
TFLITE_GPU_EXPORT int tflite_gpu_delegate_device(const struct TfLiteDelegate* delegate, char* buf, size_t size);

/* Capture for `tflite-gpu check --bisect` (on 1, off 0): while on, each
 * invoke of this delegate's partitions also reads back every tensor they
 * materialise, after the launch that wrote it (the same graph, fusion and
 * kernels; only the reads are added). 0, or -1 (NULL, out of memory). */
TFLITE_GPU_EXPORT int tflite_gpu_delegate_capture(const struct TfLiteDelegate* delegate, int on);
/* The tensors captured so far, one line each, in the order they were
 * written: "partition\tnode\ttflite_tensor\tB,H,W,C\tready" (node: the
 * fused graph's, tflite_gpu_delegate_nodes what = 3; ready 0: not read). */
TFLITE_GPU_EXPORT size_t tflite_gpu_delegate_captured(const struct TfLiteDelegate* delegate, char* buf, size_t size);
/* Captured tensor `index` (its line) as BHWC float32 into out (count
 * values): 0, 1 when the capture is incomplete (out of memory on some
 * other tensor), -1 when there is no such tensor or count differs. */
TFLITE_GPU_EXPORT int tflite_gpu_delegate_captured_data(const struct TfLiteDelegate* delegate, int index, float* out,
                                                         size_t count);

/* One line per OpenCL device, "index\tplatform\tdevice\ttype\tversion\tdriver\t
 * global_mem_bytes\tfp16"; returns the length, or -1 (reason in err)
 * without OpenCL. */
TFLITE_GPU_EXPORT int tflite_gpu_list_devices(char* buf, size_t size, char* err, size_t errlen);
/* "key\tvalue" lines: the capabilities the kernel selectors read, the
 * kernel set `auto` picks there (kernel_set_auto), the rule row of the
 * policy (policy_rule) and its fields (policy, "field=value,..."); returns
 * the length, or -1 (reason in err). */
TFLITE_GPU_EXPORT int tflite_gpu_describe_device(int index, char* buf, size_t size, char* err, size_t errlen);
/* The op table: "op\tcode\tversions\tconstraints" per op. */
TFLITE_GPU_EXPORT size_t tflite_gpu_describe_ops(char* buf, size_t size);
/* The string options: "key\taliases\taccepted\tdefault\thelp" per option. */
TFLITE_GPU_EXPORT size_t tflite_gpu_describe_options(char* buf, size_t size);
/* The fusion passes in the order they run: "name\tkernel sets\tswitch\tmatches"
 * per pass (kernel sets "cpu,gpu" or "gpu"; switch: the test hook's
 * environment variable that, set to 0, switches it off, "policy FIELD"
 * for a pass the policy's field switches, or empty). */
TFLITE_GPU_EXPORT size_t tflite_gpu_describe_passes(char* buf, size_t size);
/* The policy's fields: "name\tmin\tmax\tvalues\tscope\thelp" per field
 * (values: names joined by "|", or empty for numbers; scope "partition" or
 * "device"), then "rule\tROW\tfield=value,..." per row of the rule table. */
TFLITE_GPU_EXPORT size_t tflite_gpu_describe_policy(char* buf, size_t size);
/* Every environment variable the library reads: "name\tuser|override|test\twhat". */
TFLITE_GPU_EXPORT size_t tflite_gpu_describe_env(char* buf, size_t size);

/* Test hooks. Live OpenCL objects (created minus released) per kind,
 * program builds, and host allocations of the library's own code. */
typedef struct TfLiteGpuDebugCounters {
  int64_t live_contexts;
  int64_t live_queues;
  int64_t live_buffers;     /* buffers and sub-buffers */
  int64_t live_programs;
  int64_t live_kernels;
  int64_t live_events;
  int64_t program_builds;   /* clBuildProgram calls since the library loaded */
  int64_t host_allocations; /* malloc/calloc/realloc calls by this library;
                               -1: not counted (built without ALLOC_COUNT=1) */
  int32_t fault_injection;  /* 1 in builds with the fault-injection switch */
} TfLiteGpuDebugCounters;

TFLITE_GPU_EXPORT int tflite_gpu_debug_counters(TfLiteGpuDebugCounters* out);
/* "build=N,alloc=N,enqueue=N,transfer=N": fail the Nth OpenCL call of a
 * kind; 0, or -1 when malformed or the build lacks FAULT_INJECTION=1. */
TFLITE_GPU_EXPORT int tflite_gpu_fault_inject(const char* spec);
/* Command buffers alive, and replays enqueued, since the library loaded
 * (cmdbuf.c; policy command_buffer=1 turns the replay on). */
TFLITE_GPU_EXPORT int tflite_gpu_debug_command_buffers(int64_t* live, int64_t* replays);

/* cffi-end */

#ifdef __cplusplus
}
#endif

#endif
