/* The device's programs (cl_device.h): each kernel file built once per
 * define set, from source or from the kernel cache's binary, with the
 * build log read back on failure, and a partition's programs built on
 * several threads at once where asked (gpu_device_prebuild). */
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

/* 1 by rule: PoCL and Intel's CPU runtime compile one program at a time
 * whatever the threads (measured); whether NVIDIA's driver does is for a
 * GPU to time. */
int gpu_device_build_threads(const GpuDevice* dev) {
  long n = dev->build_threads;
  if (n <= 0) n = sysconf(_SC_NPROCESSORS_ONLN);
  return n < 1 ? 1 : n > 8 ? 8 : (int)n;
}

int gpu_device_prebuild(GpuDevice* dev, const char* const* files, const char* const* defines, int n) {
  int threads = gpu_device_build_threads(dev), todo = 0;
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
