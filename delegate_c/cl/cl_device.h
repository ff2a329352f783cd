/* One OpenCL device as the delegate uses it: context, in-order queue and a
 * cache of built programs. Reference-counted so that a partition kernel
 * still alive in an interpreter keeps the device valid after the delegate
 * that created it is destroyed. The mutex serialises queue use, so one
 * delegate may serve interpreters on several threads. */
#ifndef TFLITE_GPU_CL_DEVICE_H
#define TFLITE_GPU_CL_DEVICE_H

#include <pthread.h>
#include <stddef.h>

#include "cl/cl_api.h"
#include "cl/device_caps.h"
#include "cl/target.h"

#define GD_MAX_PROGRAMS 96
#define GD_MAX_PROFILE 64

/* A built program is keyed by (file, defines) on its device: one file
 * specialised by -D defines gives several programs. Its defines are the
 * variant's (GD_MAX_DEFINES), the storage one and the kernel selection
 * (executor.c); the VM program's, its opcode and math masks (vm_defines.h). */
#define GD_MAX_PROGRAM_FILE 64
#define GD_MAX_PROGRAM_DEFINES 288
typedef struct GpuProgram {
  char file[GD_MAX_PROGRAM_FILE]; /* embedded kernel file name, e.g. "conv.cl" */
  char defines[GD_MAX_PROGRAM_DEFINES];
  cl_program program;
  int from_binary; /* loaded from the kernel cache, not compiled here */
} GpuProgram;

enum { GD_MAX_RUNS = 64 };
typedef struct GpuRun {
  int ran, mode, launches;
  char fallback[200];
  /* Per VM phase, profiled persistent invokes with a timer: nanoseconds
   * summed over `timed` invokes (VmPhase.ns; owned, freed with the device). */
  double* phase_ns;
  int num_phase_ns;
  long timed;
} GpuRun;

typedef struct GpuDevice {
  int refcount; /* atomic */
  pthread_mutex_t mutex;
  cl_platform_id platform;
  cl_device_id device;
  cl_context context;
  cl_command_queue queue;
  int fp16;    /* activations stored as half */
  GpuCaps caps;
  /* The device's own choices (the policy's per-device fields, set by the
   * delegate before anything is built; gpu_device_set_choices). */
  int inline_rare, vload4, build_threads;
  GpuProgram programs[GD_MAX_PROGRAMS];
  int num_programs;
  char build_options[160]; /* every program's options (gpu_device_build_options) */
  double compile_seconds; /* total program build time, for reports */
  int source_builds;      /* programs compiled from source so far */
  int build_failures;     /* programs the device's compiler rejected so far */
  struct {
    int hits, misses, writes, rejected; /* partitions; rejected: corrupt or unreadable files */
    int pending;          /* cache writes still running on their threads */
    pthread_cond_t done;  /* signalled when one finishes */
  } cache;                /* the kernel cache (serialization.c), under mutex */
  /* With TFLITE_GPU_PROFILE=1 the queue records event times; invokes add
   * them here per kernel name (under mutex). */
  int profiling;
  int log_level;        /* the delegate's (its warnings from the VM's fallbacks) */
  /* Per partition (its order in the last Prepare): how its last invoke ran
   * (GD_EXEC_KERNELS, _STEPPED or _PERSISTENT), its launches, and why a
   * persistent partition fell back to stepped (vm.h). */
  GpuRun runs[GD_MAX_RUNS];
  struct {
    const char* kernel;
    long calls;
    double total_ns;
  } profile[GD_MAX_PROFILE];
  int num_profile;
  /* Where a launch's time goes besides its kernel, summed over the same
   * launches: QUEUED->SUBMIT (host and driver), SUBMIT->START (waiting for
   * the device), and START minus the previous launch's END within one invoke
   * (the gap between dependent kernels; launches - invokes of them). */
  struct {
    long launches, gaps;
    double queued_to_submit_ns, submit_to_start_ns, gap_ns;
  } intervals;
} GpuDevice;

/* selector: NULL (first GPU, else first device), an index into the list of
 * all devices, or a case-insensitive substring of "platform device". The
 * kernel set and the execution are a partition's (the policy), not the
 * device's. */
int gpu_device_create(const char* selector, int fp16, GpuDevice** out, char* err, size_t errlen);
/* The device's choices (the policy's per-device fields): the rare paths
 * inlined and vload4 on NVIDIA (build options), the threads programs
 * compile on. Before anything is built. */
void gpu_device_set_choices(GpuDevice* dev, int inline_rare, int vload4, int build_threads);
void gpu_device_retain(GpuDevice* dev);
/* Waits until no kernel-cache write of this device is running (dev->mutex
 * held; it is released while waiting). */
void gpu_device_wait_cache_writes(GpuDevice* dev);
void gpu_device_release(GpuDevice* dev);

/* With the device's build_threads N (2-8; 0: the host's cores; 1, the
 * rule's, builds nothing here), compiles the (files[i], defines[i]) programs the device
 * lacks on N threads at once, so that the gpu_device_kernel calls that
 * follow find them built (call as those, with dev->mutex held): a model's
 * first build would wait for its longest program, not their sum, where the
 * driver compiles in the calling thread. A program that fails is left for
 * gpu_device_kernel, which reports why. Returns the programs built. */
int gpu_device_prebuild(GpuDevice* dev, const char* const* files, const char* const* defines, int n);
/* The threads gpu_device_prebuild compiles on: the device's build_threads
 * (0: the host's cores), at most 8; below 2 it builds nothing. */
int gpu_device_build_threads(const GpuDevice* dev);
/* A kernel from an embedded .cl file built with extra `defines` ("" for
 * none), building its program on first use. Call with dev->mutex held. On
 * a build failure (dev->build_failures counts them) err names the program,
 * the device and its driver and holds the compiler's first errors; the
 * whole build log goes to stderr. */
cl_kernel gpu_device_kernel(GpuDevice* dev, const char* file, const char* defines, const char* kernel, char* err,
                            size_t errlen);

/* The options every program is built with: -cl-std from the device's
 * OpenCL C version, -DGD_POCL=1 on PoCL, -DFP16_STORAGE=1 with fp16. */
const char* gpu_device_build_options(const GpuDevice* dev);
/* hash(kernel_abi.h + common.cl + file's source + build options + defines):
 * names a cached binary, so an edited kernel source never loads an old
 * binary. 0 if not embedded. */
unsigned long long gpu_device_source_hash(const GpuDevice* dev, const char* file, const char* defines);
/* Adds the (file, defines) program from a binary (CL_PROGRAM_BINARIES of
 * an earlier run). 1: the program exists already; 0: loaded; -1: rejected
 * (err set). Call with dev->mutex held. */
int gpu_device_add_binary(GpuDevice* dev, const char* file, const char* defines, const unsigned char* binary,
                          size_t size, char* err, size_t errlen);
/* The device binary of a built program (malloc'd), or NULL. On PoCL it
 * includes the work-group functions compiled by the enqueues so far. */
unsigned char* gpu_device_program_binary(GpuDevice* dev, cl_program program, size_t* size);
/* The program a kernel belongs to, or NULL. */
const GpuProgram* gpu_device_kernel_program(GpuDevice* dev, cl_kernel kernel);

/* Forgets every partition's last run (a new Prepare), phase times included. */
void gpu_device_runs_reset(GpuDevice* dev);
/* Adds one measured launch of `kernel` (a string literal) to the profile. */
void gpu_device_profile_add(GpuDevice* dev, const char* kernel, double ns);
/* Adds one launch's QUEUED->SUBMIT and SUBMIT->START, and (gap_ns >= 0) its
 * gap after the launch before it, to dev->intervals. */
void gpu_device_profile_intervals(GpuDevice* dev, double queued_to_submit_ns, double submit_to_start_ns,
                                  double gap_ns);
/* One profiled launch of an invoke: its kernel time to `row` (NULL: no
 * row) and its intervals; *prev_end: the END of the invoke's launch before
 * (0 for its first), updated. Releases the event. */
void gpu_device_profile_event(GpuDevice* dev, cl_event event, const char* row, cl_ulong* prev_end);

/* One line per device: "index\tplatform\tdevice\ttype\tversion\tdriver\tglobal_mem_bytes\tfp16". */
int gpu_device_list(char* buf, size_t size, char* err, size_t errlen);
/* Device `index`'s capabilities. 0, or -1 (err set). */
int gpu_device_query_caps(int index, GpuCaps* caps, char* err, size_t errlen);

#endif
