#include "ops/custom_options.h"

#include <limits.h>
#include <math.h>
#include <string.h>

int custom_options_map(const NodeInfo* ni, FlexRef* map) {
  const void* data = ni->node->custom_initial_data;
  int size = ni->node->custom_initial_data_size;
  if (!data || size <= 0) return reason(ni, "custom_options are missing");
  if (flex_root(data, (size_t)size, map) || map->type != FLEX_MAP)
    return reason(ni, "custom_options (%d bytes) are not a FlexBuffers map", size);
  return 0;
}

static int lookup(const NodeInfo* ni, const FlexRef* map, const char* key, FlexRef* v) {
  int rc = flex_map_get(map, key, v);
  if (rc == 1) return reason(ni, "custom_options lack the key '%s'", key);
  if (rc != 0) return reason(ni, "custom_options are malformed (reading '%s')", key);
  return 0;
}

int custom_has(const FlexRef* map, const char* key) {
  FlexRef v;
  int rc = flex_map_get(map, key, &v);
  return rc == 0 ? 1 : rc == 1 ? 0 : -1;
}

int custom_int(const NodeInfo* ni, const FlexRef* map, const char* key, int* out) {
  FlexRef v;
  int64_t i;
  if (lookup(ni, map, key, &v)) return -1;
  if (flex_as_int64(&v, &i) || i < INT_MIN || i > INT_MAX)
    return reason(ni, "custom_options '%s' is not a 32-bit integer", key);
  *out = (int)i;
  return 0;
}

int custom_float(const NodeInfo* ni, const FlexRef* map, const char* key, float* out) {
  FlexRef v;
  double d;
  if (lookup(ni, map, key, &v)) return -1;
  if (flex_as_double(&v, &d) || !isfinite(d)) return reason(ni, "custom_options '%s' is not a finite number", key);
  *out = (float)d;
  return 0;
}

int custom_ints(const NodeInfo* ni, const FlexRef* map, const char* key, int* out, int max, int* count) {
  FlexRef v, e;
  int n;
  if (lookup(ni, map, key, &v)) return -1;
  if (flex_vector_size(&v, &n)) return reason(ni, "custom_options '%s' is not a vector", key);
  if (n > max) return reason(ni, "custom_options '%s' holds %d values; at most %d are supported", key, n, max);
  for (int i = 0; i < n; ++i) {
    int64_t x;
    if (flex_vector_at(&v, i, &e) || flex_as_int64(&e, &x) || x < INT_MIN || x > INT_MAX)
      return reason(ni, "custom_options '%s'[%d] is not a 32-bit integer", key, i);
    out[i] = (int)x;
  }
  *count = n;
  return 0;
}

int custom_string_is(const NodeInfo* ni, const FlexRef* map, const char* key, const char* expect) {
  FlexRef v;
  const char* s;
  size_t len;
  if (lookup(ni, map, key, &v)) return -1;
  if (flex_as_string(&v, &s, &len)) return reason(ni, "custom_options '%s' is not a string", key);
  if (len != strlen(expect) || memcmp(s, expect, len) != 0)
    return reason(ni, "custom_options '%s' is '%.*s'; only '%s' is supported", key, (int)(len > 40 ? 40 : len), s,
                  expect);
  return 0;
}
