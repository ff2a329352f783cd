#include "cl/cl_device.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cl/kernel_cache.h"
#include "cl/kernels_embedded.h"
#include "util/env_hooks.h"

#define GD_MAX_DEVICES 64

typedef struct DeviceEntry {
  cl_platform_id platform;
  cl_device_id device;
} DeviceEntry;

/* Every device of every platform, in platform order. */
static int enumerate(DeviceEntry* out, int max, char* err, size_t errlen) {
  if (cl_api_load(err, errlen)) return -1;
  cl_uint np = 0;
  cl_int rc = cl.clGetPlatformIDs(0, NULL, &np);
  if (rc != CL_SUCCESS || np == 0) {
    snprintf(err, errlen, "no OpenCL platform found (%s); install an OpenCL driver such as pocl-opencl-icd",
             rc == CL_SUCCESS ? "0 platforms" : cl_error_name(rc));
    return -1;
  }
  cl_platform_id plats[16];
  if (np > 16) np = 16;
  cl.clGetPlatformIDs(np, plats, NULL);
  int n = 0;
  for (cl_uint p = 0; p < np && n < max; ++p) {
    cl_uint nd = 0;
    if (cl.clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, 0, NULL, &nd) != CL_SUCCESS || nd == 0) continue;
    cl_device_id devs[GD_MAX_DEVICES];
    if (nd > GD_MAX_DEVICES) nd = GD_MAX_DEVICES;
    cl.clGetDeviceIDs(plats[p], CL_DEVICE_TYPE_ALL, nd, devs, NULL);
    for (cl_uint d = 0; d < nd && n < max; ++d) out[n++] = (DeviceEntry){plats[p], devs[d]};
  }
  if (n == 0) {
    snprintf(err, errlen, "OpenCL platforms exist but expose no device");
    return -1;
  }
  return n;
}

static void info_string(cl_device_id d, cl_device_info what, char* buf, size_t size) {
  buf[0] = '\0';
  if (cl.clGetDeviceInfo(d, what, size, buf, NULL) != CL_SUCCESS) buf[0] = '\0';
  buf[size - 1] = '\0';
}

static void platform_string(cl_platform_id p, cl_platform_info what, char* buf, size_t size) {
  buf[0] = '\0';
  if (cl.clGetPlatformInfo(p, what, size, buf, NULL) != CL_SUCCESS) buf[0] = '\0';
  buf[size - 1] = '\0';
}

static int pick(const DeviceEntry* list, int n, const char* selector, char* err, size_t errlen) {
  if (!selector) {
    for (int i = 0; i < n; ++i) {
      cl_device_type t = 0;
      cl.clGetDeviceInfo(list[i].device, CL_DEVICE_TYPE, sizeof(t), &t, NULL);
      if (t & CL_DEVICE_TYPE_GPU) return i;
    }
    return 0; /* no GPU: the first device of any type (PoCL's CPU device) */
  }
  char* end = NULL;
  long idx = strtol(selector, &end, 10);
  if (*selector && *end == '\0') {
    if (idx >= 0 && idx < n) return (int)idx;
    snprintf(err, errlen, "option device=%s is out of range; %d OpenCL device(s) exist (0-%d)", selector, n, n - 1);
    return -1;
  }
  for (int i = 0; i < n; ++i) {
    char full[600], pname[256], dname[256];
    platform_string(list[i].platform, CL_PLATFORM_NAME, pname, sizeof(pname));
    info_string(list[i].device, CL_DEVICE_NAME, dname, sizeof(dname));
    snprintf(full, sizeof(full), "%s %s", pname, dname);
    if (gpu_contains_nocase(full, selector)) return i;
  }
  snprintf(err, errlen, "option device=%s matches no OpenCL device (see python -m tflite_gpu devices)", selector);
  return -1;
}

/* -cl-std=CL1.x as the device's OpenCL C version allows (a 1.1 device is
 * not asked for 1.2; none for 1.0). -DGD_POCL=1 on PoCL: its compiler is
 * clang, and common.cl then uses clang's attributes and pragmas there
 * (outlined kernel bodies, forced inlining), which other compilers may
 * reject or warn about. -DGD_NVIDIA=1 on NVIDIA's driver: the grid
 * barrier's device-wide fence and timer (grid_sync.cl), the rare paths
 * out of line (common.cl GD_NOINLINE) and aligned float4 accesses
 * (LOAD4). A/Bs on NVIDIA: TFLITE_GPU_INLINE_RARE=1 adds
 * -DGD_INLINE_RARE=1 (the rare paths inlined), TFLITE_GPU_VLOAD4=1
 * -DGD_VLOAD=1 (vload4). TFLITE_GPU_TEST_CHECK_ALIGN=1, any device:
 * -DGD_CHECK_ALIGN=1 (aligned accesses that report a misaligned address).
 * TFLITE_GPU_TEST_OPT_DISABLE=1, any device: -cl-opt-disable (the test
 * suite's many small graphs beside the portability matrix, which builds
 * as users do: PoCL compiled the GPU set's work-group kernels 4x faster). */
static void compose_build_options(GpuDevice* dev) {
  char std[32] = "";
  if (dev->caps.cl_c_minor > 0) snprintf(std, sizeof(std), "-cl-std=CL1.%d", dev->caps.cl_c_minor);
  int nvidia = dev->caps.vendor_id == GD_VENDOR_NVIDIA;
  snprintf(dev->build_options, sizeof(dev->build_options), "%s%s%s%s%s%s%s%s", std,
           dev->caps.vendor_id == GD_VENDOR_POCL ? " -DGD_POCL=1" : "", nvidia ? " -DGD_NVIDIA=1" : "",
           nvidia && env_flag("TFLITE_GPU_INLINE_RARE", 0) ? " -DGD_INLINE_RARE=1" : "",
           nvidia && env_flag("TFLITE_GPU_VLOAD4", 0) ? " -DGD_VLOAD=1" : "",
           env_flag("TFLITE_GPU_TEST_CHECK_ALIGN", 0) ? " -DGD_CHECK_ALIGN=1" : "", dev->fp16 ? " -DFP16_STORAGE=1" : "",
           env_flag("TFLITE_GPU_TEST_OPT_DISABLE", 0) ? " -cl-opt-disable" : "");
}

int gpu_device_create(const char* selector, int fp16, KernelSet kernel_set, GpuDevice** out, char* err,
                      size_t errlen) {
  DeviceEntry list[GD_MAX_DEVICES];
  int n = enumerate(list, GD_MAX_DEVICES, err, errlen);
  if (n < 0) return -1;
  int i = pick(list, n, selector, err, errlen);
  if (i < 0) return -1;
  GpuDevice* dev = calloc(1, sizeof(*dev));
  if (!dev) {
    snprintf(err, errlen, "out of memory");
    return -1;
  }
  dev->refcount = 1;
  pthread_mutex_init(&dev->mutex, NULL);
  pthread_cond_init(&dev->cache.done, NULL);
  dev->platform = list[i].platform;
  dev->device = list[i].device;
  dev->fp16 = fp16;
  gpu_caps_query(dev->platform, dev->device, &dev->caps);
  dev->kernel_set = kernel_set_resolve(kernel_set, &dev->caps);
  compose_build_options(dev);

  cl_int rc;
  cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)dev->platform, 0};
  dev->context = cl.clCreateContext(props, 1, &dev->device, NULL, NULL, &rc);
  if (!dev->context) {
    snprintf(err, errlen, "clCreateContext failed on %s: %s", dev->caps.name, cl_error_name(rc));
    gpu_device_release(dev);
    return -1;
  }
  dev->profiling = env_flag("TFLITE_GPU_PROFILE", 0);
  cl_command_queue_properties qp = dev->profiling ? CL_QUEUE_PROFILING_ENABLE : 0;
  dev->queue = cl.clCreateCommandQueue(dev->context, dev->device, qp, &rc);
  if (!dev->queue) {
    snprintf(err, errlen, "clCreateCommandQueue failed on %s: %s", dev->caps.name, cl_error_name(rc));
    gpu_device_release(dev);
    return -1;
  }
  *out = dev;
  return 0;
}

void gpu_device_retain(GpuDevice* dev) { __atomic_add_fetch(&dev->refcount, 1, __ATOMIC_ACQ_REL); }

void gpu_device_wait_cache_writes(GpuDevice* dev) {
  while (dev->cache.pending) pthread_cond_wait(&dev->cache.done, &dev->mutex);
}

void gpu_device_runs_reset(GpuDevice* dev) {
  for (int i = 0; i < GD_MAX_RUNS; ++i) free(dev->runs[i].phase_ns);
  memset(dev->runs, 0, sizeof(dev->runs));
}

void gpu_device_release(GpuDevice* dev) {
  if (!dev || __atomic_sub_fetch(&dev->refcount, 1, __ATOMIC_ACQ_REL) != 0) return;
  for (int i = 0; i < dev->num_programs; ++i) cl.clReleaseProgram(dev->programs[i].program);
  gpu_device_runs_reset(dev);
  if (dev->queue) cl.clReleaseCommandQueue(dev->queue);
  if (dev->context) cl.clReleaseContext(dev->context);
  pthread_cond_destroy(&dev->cache.done);
  pthread_mutex_destroy(&dev->mutex);
  free(dev);
}

/* TFLITE_GPU_BUILD_LOG=1: one stderr line per program compiled from source,
 * "tflite-gpu build FILE [OPTIONS]: SECONDS" (cold-start measurements; the
 * strict-compiler gate's coverage test, tests/test_cl_strict.py). */
static int build_log_enabled(void) {
  return env_flag("TFLITE_GPU_BUILD_LOG", 0);
}

/* The options of one (file, defines) program. */
static void program_options(const GpuDevice* dev, const char* defines, char* out, size_t size) {
  snprintf(out, size, "%s%s%s", gpu_device_build_options(dev), *defines ? " " : "", defines);
}

/* The whole build log (its size asked first: a log longer than a fixed
 * buffer made the query fail and the message end at "build log:"); NULL
 * when the driver gives none. */
static char* read_build_log(const GpuDevice* dev, cl_program prog) {
  size_t size = 0;
  if (cl.clGetProgramBuildInfo(prog, dev->device, CL_PROGRAM_BUILD_LOG, 0, NULL, &size) != CL_SUCCESS || size < 2)
    return NULL;
  char* log = malloc(size + 1);
  if (!log) return NULL;
  if (cl.clGetProgramBuildInfo(prog, dev->device, CL_PROGRAM_BUILD_LOG, size, log, NULL) != CL_SUCCESS) {
    free(log);
    return NULL;
  }
  log[size] = '\0';
  return log;
}

/* Appends to out the log's first lines that say "error" (up to max of
 * them, each cut at 300 characters, joined by " | "), or its first lines
 * when none does. */
static void first_errors(const char* log, int max, char* out, size_t size) {
  size_t used = strlen(out);
  for (int pass = 0; pass < 2; ++pass) {
    int found = 0;
    for (const char* line = log; *line && found < max;) {
      size_t len = strcspn(line, "\n");
      char text[301];
      snprintf(text, sizeof(text), "%.*s", (int)(len < 300 ? len : 300), line);
      int blank = text[strspn(text, " \t\r")] == '\0';
      if (!blank && (pass == 1 || (strstr(text, "error") && !strstr(text, "generated")))) {
        int n = snprintf(out + used, size - used, "%s%s", found ? " | " : "", text);
        if (n < 0 || (size_t)n >= size - used) return;
        used += (size_t)n;
        ++found;
      }
      line += len + (line[len] == '\n');
    }
    if (found) return;
  }
}

/* A program the device's compiler rejected: err names it, the device and
 * its driver, and quotes the first errors; the whole log goes to stderr
 * (every log level: without it nobody can tell what the compiler said). */
static void report_build_failure(GpuDevice* dev, cl_program prog, const char* file, const char* defines, cl_int rc,
                                 char* err, size_t errlen) {
  dev->build_failures++;
  char* log = read_build_log(dev, prog);
  const GpuCaps* c = &dev->caps;
  int n = snprintf(err, errlen,
                   "the OpenCL compiler of %s (%s, %s, driver %s) rejected kernel file %s built with \"%s%s%s\" (%s)",
                   c->name, c->platform, c->opencl_c[0] ? c->opencl_c : c->version, c->driver, file,
                   dev->build_options, *defines ? " " : "", defines, cl_error_name(rc));
  if (n >= 0 && (size_t)n < errlen && log) {
    snprintf(err + n, errlen - (size_t)n, "; first errors: ");
    first_errors(log, 3, err, errlen);
    size_t used = strlen(err);
    snprintf(err + used, errlen - used, "; the whole build log (%zu bytes) is on stderr", strlen(log));
    fprintf(stderr, "tflite-gpu: build log of %s %s%s%s on %s:\n%s\n", file, dev->build_options, *defines ? " " : "",
            defines, c->name, log);
  } else if (n >= 0 && (size_t)n < errlen) {
    snprintf(err + n, errlen - (size_t)n, "; the driver gave no build log");
  }
  free(log);
}

static double seconds_since(const struct timespec* t0) {
  struct timespec t1;
  clock_gettime(CLOCK_MONOTONIC, &t1);
  return (double)(t1.tv_sec - t0->tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0->tv_nsec);
}

/* Compiles one program from source; touches nothing of dev's but reads its
 * context and options, so that several run at once (gpu_device_prebuild).
 * NULL with *rc (the program, if one was made, in *failed). */
static cl_program compile_source(const GpuDevice* dev, const char* file, const char* defines, cl_int* rc,
                                 cl_program* failed) {
  const char* abi = embedded_kernel_source("kernel_abi.h");
  const char* common = embedded_kernel_source("common.cl");
  const char* body = embedded_kernel_source(file);
  *failed = NULL;
  if (!abi || !common || !body) return *rc = CL_INVALID_VALUE, NULL;
  const char* sources[3] = {abi, common, body};
  cl_program prog = cl.clCreateProgramWithSource(dev->context, 3, sources, NULL, rc);
  if (!prog) return NULL;
  char opts[512];
  program_options(dev, defines, opts, sizeof(opts));
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  *rc = cl.clBuildProgram(prog, 1, &dev->device, opts, NULL, NULL);
  double secs = seconds_since(&t0);
  if (build_log_enabled()) fprintf(stderr, "tflite-gpu build %s [%s]: %.3f s\n", file, opts, secs);
  if (*rc == CL_SUCCESS) return prog;
  *failed = prog;
  return NULL;
}

static cl_program build_program(GpuDevice* dev, const char* file, const char* defines, char* err, size_t errlen) {
  if (!embedded_kernel_source(file)) {
    snprintf(err, errlen, "kernel file %s is not embedded in the library", file);
    return NULL;
  }
  cl_int rc;
  cl_program failed;
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  cl_program prog = compile_source(dev, file, defines, &rc, &failed);
  dev->compile_seconds += seconds_since(&t0);
  if (failed) {
    report_build_failure(dev, failed, file, defines, rc, err, errlen);
    cl.clReleaseProgram(failed);
    return NULL;
  }
  if (!prog) {
    snprintf(err, errlen, "clCreateProgramWithSource(%s): %s", file, cl_error_name(rc));
    return NULL;
  }
  dev->source_builds++;
  return prog;
}

static GpuProgram* find_program(GpuDevice* dev, const char* file, const char* defines) {
  for (int i = 0; i < dev->num_programs; ++i)
    if (strcmp(dev->programs[i].file, file) == 0 && strcmp(dev->programs[i].defines, defines) == 0)
      return &dev->programs[i];
  return NULL;
}

static int add_program(GpuDevice* dev, const char* file, const char* defines, cl_program prog, int from_binary,
                       char* err, size_t errlen) {
  if (dev->num_programs == GD_MAX_PROGRAMS || strlen(file) >= sizeof(dev->programs[0].file) ||
      strlen(defines) >= sizeof(dev->programs[0].defines)) {
    snprintf(err, errlen, "too many kernel programs, or a name too long (%s %s)", file, defines);
    return -1;
  }
  GpuProgram* p = &dev->programs[dev->num_programs++];
  snprintf(p->file, sizeof(p->file), "%s", file);
  snprintf(p->defines, sizeof(p->defines), "%s", defines);
  p->program = prog;
  p->from_binary = from_binary;
  return 0;
}

const char* gpu_device_build_options(const GpuDevice* dev) { return dev->build_options; }

unsigned long long gpu_device_source_hash(const GpuDevice* dev, const char* file, const char* defines) {
  const char* abi = embedded_kernel_source("kernel_abi.h");
  const char* common = embedded_kernel_source("common.cl");
  const char* body = embedded_kernel_source(file);
  if (!abi || !common || !body) return 0;
  char opts[512];
  program_options(dev, defines, opts, sizeof(opts));
  uint64_t h = kc_hash(abi, strlen(abi), 1);
  h = kc_hash(common, strlen(common), h);
  h = kc_hash(body, strlen(body), h);
  return kc_hash(opts, strlen(opts), h);
}

int gpu_device_add_binary(GpuDevice* dev, const char* file, const char* defines, const unsigned char* binary,
                          size_t size, char* err, size_t errlen) {
  if (find_program(dev, file, defines)) return 1;
  cl_int status = CL_SUCCESS, rc;
  cl_program prog = cl.clCreateProgramWithBinary(dev->context, 1, &dev->device, &size, &binary, &status, &rc);
  if (!prog || rc != CL_SUCCESS || status != CL_SUCCESS) {
    snprintf(err, errlen, "clCreateProgramWithBinary(%s): %s", file, cl_error_name(rc != CL_SUCCESS ? rc : status));
    if (prog) cl.clReleaseProgram(prog);
    return -1;
  }
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  char opts[512];
  program_options(dev, defines, opts, sizeof(opts));
  rc = cl.clBuildProgram(prog, 1, &dev->device, opts, NULL, NULL);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  dev->compile_seconds += (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
  if (rc != CL_SUCCESS) {
    snprintf(err, errlen, "building %s from its cached binary: %s", file, cl_error_name(rc));
    cl.clReleaseProgram(prog);
    return -1;
  }
  if (add_program(dev, file, defines, prog, 1, err, errlen)) {
    cl.clReleaseProgram(prog);
    return -1;
  }
  return 0;
}

unsigned char* gpu_device_program_binary(GpuDevice* dev, cl_program program, size_t* size) {
  (void)dev;
  size_t bin_size = 0;
  if (cl.clGetProgramInfo(program, CL_PROGRAM_BINARY_SIZES, sizeof(bin_size), &bin_size, NULL) != CL_SUCCESS ||
      bin_size == 0)
    return NULL;
  unsigned char* bin = malloc(bin_size);
  if (!bin) return NULL;
  unsigned char* ptrs[1] = {bin};
  if (cl.clGetProgramInfo(program, CL_PROGRAM_BINARIES, sizeof(ptrs), ptrs, NULL) != CL_SUCCESS) {
    free(bin);
    return NULL;
  }
  *size = bin_size;
  return bin;
}

const GpuProgram* gpu_device_kernel_program(GpuDevice* dev, cl_kernel kernel) {
  cl_program prog = NULL;
  if (cl.clGetKernelInfo(kernel, CL_KERNEL_PROGRAM, sizeof(prog), &prog, NULL) != CL_SUCCESS) return NULL;
  for (int i = 0; i < dev->num_programs; ++i)
    if (dev->programs[i].program == prog) return &dev->programs[i];
  return NULL;
}

cl_kernel gpu_device_kernel(GpuDevice* dev, const char* file, const char* defines, const char* kernel, char* err,
                            size_t errlen) {
  if (!defines) defines = "";
  GpuProgram* found = find_program(dev, file, defines);
  cl_program prog = found ? found->program : NULL;
  if (!prog) {
    if (dev->num_programs == GD_MAX_PROGRAMS) {
      snprintf(err, errlen, "too many kernel programs");
      return NULL;
    }
    prog = build_program(dev, file, defines, err, errlen);
    if (!prog) return NULL;
    if (add_program(dev, file, defines, prog, 0, err, errlen)) {
      cl.clReleaseProgram(prog);
      return NULL;
    }
  }
  cl_int rc;
  cl_kernel k = cl.clCreateKernel(prog, kernel, &rc);
  if (!k) snprintf(err, errlen, "clCreateKernel(%s in %s%s%s): %s", kernel, file, *defines ? " " : "", defines,
                   cl_error_name(rc));
  return k;
}

/* gpu_device_prebuild's work: programs[i] of files[i] with defines[i],
 * taken in turn by every thread (next, atomic). */
typedef struct Prebuild {
  const GpuDevice* dev;
  const char* const* files;
  const char* const* defines;
  cl_program* programs;
  int n, next;
} Prebuild;

static void* prebuild_worker(void* arg) {
  Prebuild* pb = arg;
  for (int i; (i = __atomic_fetch_add(&pb->next, 1, __ATOMIC_RELAXED)) < pb->n;) {
    cl_int rc;
    cl_program failed;
    pb->programs[i] = compile_source(pb->dev, pb->files[i], pb->defines[i], &rc, &failed);
    if (failed) cl.clReleaseProgram(failed); /* gpu_device_kernel builds it again and reports why */
  }
  return NULL;
}

/* 1 by default: PoCL and Intel's CPU runtime compile one program at a time
 * whatever the threads (measured); whether NVIDIA's driver does is the GPU
 * run's A/B. */
int gpu_device_build_threads(void) {
  long n = env_long("TFLITE_GPU_BUILD_THREADS", 1);
  if (n <= 0) n = sysconf(_SC_NPROCESSORS_ONLN);
  return n < 1 ? 1 : n > 8 ? 8 : (int)n;
}

int gpu_device_prebuild(GpuDevice* dev, const char* const* files, const char* const* defines, int n) {
  int threads = gpu_device_build_threads(), todo = 0;
  const char** f = malloc((size_t)(n ? n : 1) * 2 * sizeof(char*));
  cl_program* progs = calloc((size_t)(n ? n : 1), sizeof(cl_program));
  if (!f || !progs || threads < 2) {
    free(f);
    free(progs);
    return 0;
  }
  const char** d = f + n;
  for (int i = 0; i < n; ++i) {
    int dup = find_program(dev, files[i], defines[i]) != NULL || !embedded_kernel_source(files[i]);
    for (int j = 0; j < todo && !dup; ++j) dup = !strcmp(f[j], files[i]) && !strcmp(d[j], defines[i]);
    if (!dup && dev->num_programs + todo < GD_MAX_PROGRAMS) f[todo] = files[i], d[todo++] = defines[i];
  }
  Prebuild pb = {dev, f, d, progs, todo, 0};
  pthread_t tid[8];
  int started = 0;
  struct timespec t0;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  if (todo >= 2)
    while (started < threads - 1 && started < todo - 1 && pthread_create(&tid[started], NULL, prebuild_worker, &pb) == 0)
      ++started;
  prebuild_worker(&pb);
  for (int t = 0; t < started; ++t) pthread_join(tid[t], NULL);
  dev->compile_seconds += seconds_since(&t0); /* the wait, not the threads' sum */
  int built = 0;
  char err[256];
  for (int i = 0; i < todo; ++i) {
    if (!progs[i]) continue;
    if (add_program(dev, f[i], d[i], progs[i], 0, err, sizeof(err))) {
      cl.clReleaseProgram(progs[i]);
      continue;
    }
    dev->source_builds++;
    ++built;
  }
  free(f);
  free(progs);
  return built;
}

void gpu_device_profile_add(GpuDevice* dev, const char* kernel, double ns) {
  int i = 0;
  while (i < dev->num_profile && strcmp(dev->profile[i].kernel, kernel) != 0) ++i;
  if (i == dev->num_profile) {
    if (i == GD_MAX_PROFILE) return;
    dev->profile[dev->num_profile++].kernel = kernel;
  }
  dev->profile[i].calls++;
  dev->profile[i].total_ns += ns;
}

void gpu_device_profile_intervals(GpuDevice* dev, double queued_to_submit_ns, double submit_to_start_ns,
                                  double gap_ns) {
  dev->intervals.launches++;
  dev->intervals.queued_to_submit_ns += queued_to_submit_ns;
  dev->intervals.submit_to_start_ns += submit_to_start_ns;
  if (gap_ns >= 0) {
    dev->intervals.gaps++;
    dev->intervals.gap_ns += gap_ns;
  }
}

void gpu_device_profile_event(GpuDevice* dev, cl_event event, const char* row, cl_ulong* prev_end) {
  static const cl_profiling_info kWhen[4] = {CL_PROFILING_COMMAND_QUEUED, CL_PROFILING_COMMAND_SUBMIT,
                                             CL_PROFILING_COMMAND_START, CL_PROFILING_COMMAND_END};
  if (!event) return;
  cl_ulong t[4] = {0, 0, 0, 0};
  int ok = 1;
  for (int w = 0; w < 4 && ok; ++w)
    ok = cl.clGetEventProfilingInfo(event, kWhen[w], sizeof(t[w]), &t[w], NULL) == CL_SUCCESS;
  if (ok) {
    if (row) gpu_device_profile_add(dev, row, (double)(t[3] - t[2]));
    /* Timestamps of one device clock, but drivers may round them: no negative intervals. */
    gpu_device_profile_intervals(dev, t[1] > t[0] ? (double)(t[1] - t[0]) : 0.0, t[2] > t[1] ? (double)(t[2] - t[1]) : 0.0,
                                 !*prev_end ? -1.0 : t[2] > *prev_end ? (double)(t[2] - *prev_end) : 0.0);
    *prev_end = t[3];
  }
  cl.clReleaseEvent(event);
}

int gpu_device_list(char* buf, size_t size, char* err, size_t errlen) {
  DeviceEntry list[GD_MAX_DEVICES];
  int n = enumerate(list, GD_MAX_DEVICES, err, errlen);
  if (n < 0) return -1;
  size_t used = 0;
  if (size) buf[0] = '\0';
  for (int i = 0; i < n; ++i) {
    char pname[256], dname[256], ver[256], drv[256], ext[4096];
    platform_string(list[i].platform, CL_PLATFORM_NAME, pname, sizeof(pname));
    info_string(list[i].device, CL_DEVICE_NAME, dname, sizeof(dname));
    info_string(list[i].device, CL_DEVICE_VERSION, ver, sizeof(ver));
    info_string(list[i].device, CL_DRIVER_VERSION, drv, sizeof(drv));
    info_string(list[i].device, CL_DEVICE_EXTENSIONS, ext, sizeof(ext));
    cl_device_type t = 0;
    cl_ulong mem = 0;
    cl.clGetDeviceInfo(list[i].device, CL_DEVICE_TYPE, sizeof(t), &t, NULL);
    cl.clGetDeviceInfo(list[i].device, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof(mem), &mem, NULL);
    const char* type = (t & CL_DEVICE_TYPE_GPU) ? "GPU" : (t & CL_DEVICE_TYPE_CPU) ? "CPU" : "OTHER";
    int fp16 = strstr(ext, "cl_khr_fp16") != NULL;
    int w = snprintf(used < size ? buf + used : NULL, used < size ? size - used : 0, "%d\t%s\t%s\t%s\t%s\t%s\t%llu\t%d\n",
                     i, pname, dname, type, ver, drv, (unsigned long long)mem, fp16);
    if (w > 0) used += (size_t)w;
  }
  return (int)used;
}

int gpu_device_describe(int index, char* buf, size_t size, char* err, size_t errlen) {
  DeviceEntry list[GD_MAX_DEVICES];
  int n = enumerate(list, GD_MAX_DEVICES, err, errlen);
  if (n < 0) return -1;
  if (index < 0 || index >= n) {
    snprintf(err, errlen, "device %d is out of range; %d OpenCL device(s) exist", index, n);
    return -1;
  }
  GpuCaps caps;
  gpu_caps_query(list[index].platform, list[index].device, &caps);
  size_t used = gpu_caps_format(&caps, buf, size);
  int w = snprintf(used < size ? buf + used : NULL, used < size ? size - used : 0, "kernel_set_auto\t%s\n",
                   kernel_set_name(kernel_set_resolve(GD_KSET_AUTO, &caps)));
  return (int)(used + (w > 0 ? (size_t)w : 0));
}
