/* See env_hooks.h. */
#include "util/env_hooks.h"

#include <stdlib.h>

const char* env_text(const char* name) {
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
