/* Delegate messages go to stderr: Python's interpreter wrapper buffers
 * context->ReportError and never prints it, so a user would not see why an
 * op stayed on the CPU. The level is per delegate (option log_level). */
#ifndef TFLITE_GPU_LOG_H
#define TFLITE_GPU_LOG_H

/* The size of a message buffer: a failure's text, a node's reason. */
#define GD_ERR_LEN 4096

enum { GD_LOG_SILENT = 0, GD_LOG_WARNING = 1, GD_LOG_INFO = 2, GD_LOG_VERBOSE = 3 };

/* Prints "tflite-gpu: <msg>\n" when level <= threshold. */
void gd_log(int threshold, int level, const char* fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
