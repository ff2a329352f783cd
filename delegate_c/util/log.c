#include "util/log.h"

#include <stdarg.h>
#include <stdio.h>

void gd_log(int threshold, int level, const char* fmt, ...) {
  if (level > threshold) return;
  char line[2048];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(line, sizeof(line), fmt, ap);
  va_end(ap);
  /* One fputs per line so lines from concurrent threads do not interleave. */
  fprintf(stderr, "%s%s\n", level == GD_LOG_WARNING ? "" : "tflite-gpu: ", line);
}
