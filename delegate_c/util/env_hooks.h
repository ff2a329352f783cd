/* The environment variables the library reads (switches, test hooks,
 * tuning bounds): every one goes through these helpers, so that each
 * kind of value is parsed one way. The fusion passes' hooks are listed
 * in their table (fuse.c); each other one where it is read. */
#ifndef TFLITE_GPU_ENV_HOOKS_H
#define TFLITE_GPU_ENV_HOOKS_H

/* 1 when `name` is set to a value starting with '1', 0 when starting with
 * '0', else (unset, empty, anything else) dflt. */
int env_flag(const char* name, int dflt);
/* The number `name` holds (strtol, base 10), or dflt when unset or empty. */
long env_long(const char* name, long dflt);
/* The value of `name`, or NULL when unset or empty. */
const char* env_text(const char* name);

#endif
