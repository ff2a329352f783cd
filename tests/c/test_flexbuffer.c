/* uses: util/flexbuffer.c */
/* Standalone test for delegate_c/util/flexbuffer.c: reads a map written by
 * Python's flatbuffers.flexbuffers.Dumps, then every truncation and every
 * single-byte corruption of it (ASan checks that no read leaves the buffer). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/flexbuffer.h"
#include "check.h"


/* flexbuffers.Dumps({'a': 1, 'b': [1, 2, 300], 'c': 1.5, 'mode': 'bilinear',
 *                    'neg': -7, 'big': 300000, 'v': [1, 'x', 2.5]}) */
static const unsigned char kMap[] = {
    97, 0, 98, 0, 3, 0, 1, 0, 2, 0, 44, 1, 5, 5, 5, 99, 0, 109, 111, 100, 101, 0, 8, 98, 105, 108, 105, 110, 101,
    97, 114, 0, 110, 101, 103, 0, 98, 105, 103, 0, 118, 0, 1, 120, 0, 0, 0, 0, 3, 0, 0, 0, 1, 0, 0, 0, 13, 0,
    0, 0, 0, 0, 32, 64, 6, 20, 14, 7, 68, 67, 34, 56, 55, 41, 34, 0, 8, 0, 0, 0, 1, 0, 0, 0, 7, 0, 0, 0, 1,
    0, 0, 0, 86, 0, 0, 0, 224, 147, 4, 0, 0, 0, 192, 63, 81, 0, 0, 0, 249, 255, 255, 255, 60, 0, 0, 0, 6, 41,
    6, 14, 20, 6, 42, 35, 38, 1};

static void check_contents(void) {
  FlexRef root, v, e;
  int64_t i;
  double d;
  int n;
  const char* s;
  size_t len;
  CHECK(flex_root(kMap, sizeof(kMap), &root) == 0 && root.type == FLEX_MAP, "root is a map");
  CHECK(flex_map_get(&root, "a", &v) == 0 && flex_as_int64(&v, &i) == 0 && i == 1, "a = 1");
  CHECK(flex_map_get(&root, "neg", &v) == 0 && flex_as_int64(&v, &i) == 0 && i == -7, "neg = -7");
  CHECK(flex_map_get(&root, "big", &v) == 0 && flex_as_int64(&v, &i) == 0 && i == 300000, "big");
  CHECK(flex_map_get(&root, "c", &v) == 0 && flex_as_double(&v, &d) == 0 && d == 1.5, "c = 1.5");
  CHECK(flex_map_get(&root, "a", &v) == 0 && flex_as_double(&v, &d) == 0 && d == 1.0, "int as double");
  CHECK(flex_map_get(&root, "b", &v) == 0 && flex_vector_size(&v, &n) == 0 && n == 3, "b has 3");
  CHECK(flex_vector_at(&v, 2, &e) == 0 && flex_as_int64(&e, &i) == 0 && i == 300, "b[2] = 300");
  CHECK(flex_vector_at(&v, 3, &e) == -1, "b[3] out of range");
  CHECK(flex_map_get(&root, "mode", &v) == 0 && flex_as_string(&v, &s, &len) == 0 && len == 8 &&
            memcmp(s, "bilinear", 8) == 0,
        "mode = bilinear");
  CHECK(flex_map_get(&root, "v", &v) == 0 && flex_vector_size(&v, &n) == 0 && n == 3, "v has 3");
  CHECK(flex_vector_at(&v, 2, &e) == 0 && flex_as_double(&e, &d) == 0 && d == 2.5, "v[2] = 2.5");
  CHECK(flex_map_get(&root, "missing", &v) == 1, "absent key");
  CHECK(flex_map_get(&root, "b", &v) == 0 && flex_map_get(&v, "a", &e) == -1, "a vector is not a map");
}

/* Walks everything the readers can reach; results are ignored, only the
 * absence of out-of-bounds reads matters. */
static void walk(const unsigned char* buf, size_t size) {
  FlexRef root, v, e;
  int64_t i;
  double d;
  int n;
  const char* s;
  size_t len;
  if (flex_root(buf, size, &root)) return;
  const char* keys[] = {"a", "b", "c", "mode", "neg", "big", "v", "zz"};
  for (size_t k = 0; k < sizeof(keys) / sizeof(keys[0]); ++k) {
    if (flex_map_get(&root, keys[k], &v) != 0) continue;
    (void)flex_as_int64(&v, &i);
    (void)flex_as_double(&v, &d);
    (void)flex_as_string(&v, &s, &len);
    if (flex_vector_size(&v, &n) == 0)
      for (int j = 0; j < n && j < 8; ++j)
        if (flex_vector_at(&v, j, &e) == 0) (void)flex_as_double(&e, &d);
  }
}

int main(void) {
  check_contents();
  for (size_t cut = 0; cut < sizeof(kMap); ++cut) {
    /* A heap copy of exactly `cut` bytes, taken from the end (the root is there). */
    unsigned char* b = malloc(cut ? cut : 1);
    memcpy(b, kMap + sizeof(kMap) - cut, cut);
    walk(b, cut);
    free(b);
  }
  for (size_t pos = 0; pos < sizeof(kMap); ++pos) {
    for (int val = 0; val < 256; val += 17) {
      unsigned char* b = malloc(sizeof(kMap));
      memcpy(b, kMap, sizeof(kMap));
      b[pos] = (unsigned char)val;
      walk(b, sizeof(kMap));
      free(b);
    }
  }
  if (g_failures) {
    fprintf(stderr, "%d failure(s)\n", g_failures);
    return 1;
  }
  printf("ok\n");
  return 0;
}
