/* Every environment variable the library reads, listed once (kEnvVars in
 * env_hooks.c) with its kind: a user setting, the policy override for test
 * suites, or a test or fault hook; and the one reader of each kind of
 * value. A name the list lacks reads as unset (and says so on stderr), so
 * nothing can read a variable this list does not show. */
#ifndef TFLITE_GPU_ENV_HOOKS_H
#define TFLITE_GPU_ENV_HOOKS_H

#include <stddef.h>

enum { ENV_USER = 0, ENV_OVERRIDE = 1, ENV_TEST = 2 };

typedef struct EnvVar {
  const char* name;
  int kind;         /* ENV_* */
  const char* what; /* one line */
} EnvVar;
extern const EnvVar kEnvVars[];
extern const int kNumEnvVars;

/* 1 when `name` is set to a value starting with '1', 0 when starting with
 * '0', else (unset, empty, anything else) dflt. */
int env_flag(const char* name, int dflt);
/* The number `name` holds (strtol, base 10), or dflt when unset or empty. */
long env_long(const char* name, long dflt);
/* The value of `name`, or NULL when unset or empty. */
const char* env_text(const char* name);
/* The list, one "name\tuser|override|test\twhat" line each; the length it needed. */
size_t env_describe(char* buf, size_t size);

#endif
