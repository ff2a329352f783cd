/* See env_hooks.h. */
#include "util/env_hooks.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const EnvVar kEnvVars[] = {
    /* User settings. */
    {"TFLITE_GPU_OPENCL_LIBRARY", ENV_USER, "the OpenCL library to load instead of libOpenCL.so.1"},
    {"TFLITE_GPU_CACHE_DIR", ENV_USER, "the cache directory of remembered policies (and the CLI's kernel cache)"},
    {"XDG_CACHE_HOME", ENV_USER, "its default: $XDG_CACHE_HOME/tflite_gpu/kernels"},
    {"HOME", ENV_USER, "its default without XDG_CACHE_HOME: ~/.cache/tflite_gpu/kernels"},
    {"TFLITE_GPU_PROFILE", ENV_USER, "1: OpenCL event profiling of every launch (a slower queue; tools/gpu_profile.py)"},
    {"TFLITE_GPU_BUILD_LOG", ENV_USER, "1: every program build's time and options on stderr"},
    {"TFLITE_GPU_VM_CHECKED", ENV_USER, "1: the VM's checked mode (guard zones behind every buffer, stepped)"},
    /* The policy override. */
    {"TFLITE_GPU_POLICY", ENV_OVERRIDE, "name=value,... of the policy's fields, as the option policy (test suites)"},
    /* Test and fault hooks. */
    {"TFLITE_GPU_FAULT_INJECT", ENV_TEST, "fail the Nth OpenCL call of a kind (FAULT_INJECTION builds)"},
    {"TFLITE_GPU_TEST_CHECK_ALIGN", ENV_TEST, "1: aligned float4 accesses that report a misaligned address"},
    {"TFLITE_GPU_TEST_OPT_DISABLE", ENV_TEST, "1: programs built with -cl-opt-disable"},
    {"TFLITE_GPU_CACHE_ASYNC", ENV_TEST, "0: kernel-cache files written in the invoke, not on a thread"},
    {"TFLITE_GPU_MAX_GROUP", ENV_TEST, "N: a device's largest work-group taken as N"},
    {"TFLITE_GPU_COMPUTE_UNITS", ENV_TEST, "N: a device's compute units taken as N (occupancy, the VM's lanes)"},
    {"TFLITE_GPU_SEPARATE_BUFFERS", ENV_TEST, "1: every activation a buffer of its own, not a region of the arena"},
    {"TFLITE_GPU_TEST_STALE_INPUTS", ENV_TEST, "1: inputs written by the first invoke only"},
    {"TFLITE_GPU_TEST_PERTURB_NODE", ENV_TEST, "K: the launch computing TFLite node K adds 1.0 to what it writes"},
    {"TFLITE_GPU_VM_GROUPS", ENV_TEST, "N: a persistent grid of at most N groups"},
    {"TFLITE_GPU_TEST_VM_SHIFT_PHASE", ENV_TEST, "K (checked mode): phase K writes one float past its output"},
    {"TFLITE_GPU_TEST_VM_SELFTEST_FAIL", ENV_TEST, "1: the persistent grid's self-test fails"},
    {"TFLITE_GPU_TEST_VM_TIMEOUT", ENV_TEST, "1: a persistent launch's barriers time out"},
    {"TFLITE_GPU_TEST_VM_CLOCK", ENV_TEST, "1: every VM phase stamped 1000 ns (the profile's bookkeeping)"},
    {"TFLITE_GPU_TEST_TUNE_SLOW", ENV_TEST, "NAME: the tuner's candidate NAME made slower"},
    {"TFLITE_GPU_TEST_TUNE_WRONG", ENV_TEST, "NAME: the tuner's candidate NAME read back with 1.0 added"},
    {"TFLITE_GPU_FOLD_AFFINE", ENV_TEST, "0: the channel_affine pass off"},
    {"TFLITE_GPU_FUSE_POOLED_RESIDUAL", ENV_TEST, "0: the pooled_residual pass off"},
    {"TFLITE_GPU_FUSE_CHANNEL_SCALE", ENV_TEST, "0: the channel_scale pass off"},
    {"TFLITE_GPU_FUSE_UPSAMPLED_SOURCE", ENV_TEST, "0: the upsampled_source pass off"},
    {"TFLITE_GPU_FUSE_SUMMED_REDUCE", ENV_TEST, "0: the summed_reduce pass off"},
    {"TFLITE_GPU_FUSE_FC_PAIR", ENV_TEST, "0: the fc_pair pass off"},
    {"TFLITE_GPU_FUSE_FC_HEADS", ENV_TEST, "0: the fc_heads pass off"},
    {"TFLITE_GPU_FUSE_PRELU_SOURCE", ENV_TEST, "0: the prelu_source pass off"},
    {"TFLITE_GPU_BHWC_INPUT", ENV_TEST, "0: the input_direct pass off"},
    {"TFLITE_GPU_BHWC_OUTPUT", ENV_TEST, "0: the output_direct pass off"},
};
const int kNumEnvVars = sizeof(kEnvVars) / sizeof(kEnvVars[0]);

static int listed(const char* name) {
  for (int i = 0; i < kNumEnvVars; ++i)
    if (!strcmp(kEnvVars[i].name, name)) return 1;
  return 0;
}

const char* env_text(const char* name) {
  if (!listed(name)) {
    fprintf(stderr, "tflite-gpu: internal: %s is not in env_hooks.c's list; read as unset\n", name);
    return NULL;
  }
  const char* v = getenv(name);
  return v && *v ? v : NULL;
}

int env_flag(const char* name, int dflt) {
  const char* v = env_text(name);
  return !v ? dflt : v[0] == '1' ? 1 : v[0] == '0' ? 0 : dflt;
}

long env_long(const char* name, long dflt) {
  const char* v = env_text(name);
  return v ? strtol(v, NULL, 10) : dflt;
}

size_t env_describe(char* buf, size_t size) {
  static const char* const kinds[] = {"user", "override", "test"};
  size_t used = 0;
  if (size) buf[0] = '\0';
  for (int i = 0; i < kNumEnvVars; ++i) {
    int n = snprintf(used < size ? buf + used : NULL, used < size ? size - used : 0, "%s\t%s\t%s\n", kEnvVars[i].name,
                     kinds[kEnvVars[i].kind], kEnvVars[i].what);
    if (n > 0) used += (size_t)n;
  }
  return used;
}
