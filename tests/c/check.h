/* The CHECK macro the standalone C tests share: counts checks, reports
 * each failure with its file and line, and keeps going so one run lists
 * every failure. A test's main returns g_failures ? 1 : 0. */
#ifndef TFLITE_GPU_TEST_CHECK_H
#define TFLITE_GPU_TEST_CHECK_H

#include <stdio.h>

static int g_failures = 0;
static int g_checks = 0;

#define CHECK(cond, ...)                                   \
  do {                                                     \
    g_checks++;                                            \
    if (!(cond)) {                                         \
      g_failures++;                                        \
      fprintf(stderr, "FAIL %s:%d: ", __FILE__, __LINE__); \
      fprintf(stderr, __VA_ARGS__);                        \
      fprintf(stderr, "\n");                               \
    }                                                      \
  } while (0)

#endif
