/* uses: cl/target.c */
/* The OpenCL C version a device's kernels are built as (target.c
 * gpu_opencl_c_minor, which picks -cl-std): a 1.1 device is not asked for
 * 1.2 (NVIDIA's compiler rejected what PoCL accepted; a 1.1 one rejects
 * 1.2 outright), a 2.0 or 3.0 device builds the 1.2 kernels as 1.2. */
#include "check.h"
#include "cl/target.h"

int main(void) {
  static const struct {
    const char* version;
    int minor;
  } kCases[] = {
      {"OpenCL C 1.2 PoCL", 2},  /* PoCL 3.1 */
      {"OpenCL C 1.2 ", 2},      /* NVIDIA driver 580 */
      {"OpenCL C 3.0 ", 2},      /* Intel's CPU runtime */
      {"OpenCL C 2.0", 2},
      {"OpenCL C 1.1", 1},
      {"OpenCL C 1.0", 0},
      {"OpenCL C 0.9", 0},
      {"", 0},
      {"OpenCL 1.2", 0},         /* a CL_DEVICE_VERSION string by mistake: no -cl-std */
      {"garbage", 0},
  };
  for (unsigned i = 0; i < sizeof kCases / sizeof kCases[0]; ++i) {
    int got = gpu_opencl_c_minor(kCases[i].version);
    CHECK(got == kCases[i].minor, "\"%s\": %d, expected %d", kCases[i].version, got, kCases[i].minor);
  }
  CHECK(gpu_opencl_c_minor(NULL) == 0, "NULL");
  printf("%d checks, %d failures\n", g_checks, g_failures);
  return g_failures ? 1 : 0;
}
