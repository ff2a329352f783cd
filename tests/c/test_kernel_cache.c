/* uses: cl/kernel_cache.c */
/* Standalone test for delegate_c/cl/kernel_cache.c: the cache file reader as
 * a pure function over bytes (every truncation, every byte flip, crafted
 * payloads with valid checksums), file names from tokens, atomic 0600
 * writes and the directory checks.
 *
 *   gcc -std=c11 -D_GNU_SOURCE -Wall -Wextra -Werror -fsanitize=address,undefined -I delegate_c \
 *       tests/c/test_kernel_cache.c delegate_c/cl/kernel_cache.c && ./a.out
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cl/kernel_cache.h"
#include "check.h"


static const char* kKey = "tflite-gpu test key\nplatform X\n";

/* Parses a heap copy of exactly `size` bytes, so ASan flags any read past it. */
static int parse_copy(const unsigned char* data, size_t size, const char* key, int* count, char* why) {
  unsigned char* copy = malloc(size ? size : 1);
  if (size) memcpy(copy, data, size);
  KcEntry entries[KC_MAX_ENTRIES];
  int rc = kc_parse(copy, size, key, entries, KC_MAX_ENTRIES, count, why, 256);
  /* Touch every returned byte: they must lie inside the copy. */
  volatile unsigned sum = 0;
  for (int i = 0; rc == KC_OK && i < *count; ++i) {
    for (size_t j = 0; j < entries[i].name_size; ++j) sum += (unsigned char)entries[i].name[j];
    for (size_t j = 0; j < entries[i].data_size; ++j) sum += entries[i].data[j];
  }
  free(copy);
  return rc;
}

static unsigned char* sample_file(size_t* size) {
  unsigned char bin1[37], bin2[300];
  for (size_t i = 0; i < sizeof(bin1); ++i) bin1[i] = (unsigned char)(i * 7 + 1);
  for (size_t i = 0; i < sizeof(bin2); ++i) bin2[i] = (unsigned char)(i * 13 + 5);
  KcEntry e[3] = {{"conv.cl@0123", 12, bin1, sizeof(bin1)}, {"pool.cl@4567", 12, bin2, sizeof(bin2)},
                  {"empty.cl@89", 11, NULL, 0}};
  return kc_serialize(kKey, e, 3, size);
}

static void test_round_trip(void) {
  size_t size;
  unsigned char* f = sample_file(&size);
  CHECK(f != NULL, "serialize");
  KcEntry e[KC_MAX_ENTRIES];
  int count = -1;
  char why[256] = "";
  int rc = kc_parse(f, size, kKey, e, KC_MAX_ENTRIES, &count, why, sizeof(why));
  CHECK(rc == KC_OK && count == 3, "round trip rc %d count %d (%s)", rc, count, why);
  if (rc == KC_OK && count == 3) {
    CHECK(e[0].name_size == 12 && memcmp(e[0].name, "conv.cl@0123", 12) == 0, "name 0");
    CHECK(e[1].data_size == 300 && e[1].data[299] == (unsigned char)(299 * 13 + 5), "data 1");
    CHECK(e[2].data_size == 0, "empty entry");
  }
  rc = kc_parse(f, size, "another key", e, KC_MAX_ENTRIES, &count, why, sizeof(why));
  CHECK(rc == KC_MISMATCH && count == 0, "other key: rc %d", rc);
  /* A key that is a prefix of the stored one is still a mismatch. */
  rc = kc_parse(f, size, "tflite-gpu test key", e, KC_MAX_ENTRIES, &count, why, sizeof(why));
  CHECK(rc == KC_MISMATCH, "prefix key: rc %d", rc);
  rc = kc_parse(f, size, kKey, e, 2, &count, why, sizeof(why));
  CHECK(rc == KC_CORRUPT, "more entries than the caller's room: rc %d", rc);
  free(f);
}

static void test_truncations_and_flips(void) {
  size_t size;
  unsigned char* f = sample_file(&size);
  char why[256];
  int count;
  for (size_t n = 0; n < size; ++n) {
    int rc = parse_copy(f, n, kKey, &count, why);
    CHECK(rc == KC_CORRUPT && count == 0, "truncated to %zu: rc %d", n, rc);
  }
  CHECK(parse_copy(f, 0, kKey, &count, why) == KC_CORRUPT && strstr(why, "empty"), "empty: %s", why);
  const unsigned char masks[3] = {0x01, 0x80, 0xff};
  for (size_t off = 0; off < size; ++off) {
    for (int m = 0; m < 3; ++m) {
      f[off] ^= masks[m];
      int rc = parse_copy(f, size, kKey, &count, why);
      CHECK(rc == KC_CORRUPT, "byte %zu ^ 0x%02x: rc %d", off, masks[m], rc);
      f[off] ^= masks[m];
    }
  }
  /* Appended garbage. */
  unsigned char* longer = malloc(size + 5);
  memcpy(longer, f, size);
  memset(longer + size, 0xab, 5);
  CHECK(parse_copy(longer, size + 5, kKey, &count, why) == KC_CORRUPT, "appended bytes");
  free(longer);
  free(f);
}

/* A header with a correct checksum around an arbitrary payload. */
static unsigned char* wrap(const unsigned char* payload, size_t n, uint32_t version, size_t* size) {
  unsigned char* f = malloc(KC_HEADER_SIZE + n);
  memcpy(f, KC_MAGIC, 8);
  uint64_t fields[3] = {version | ((uint64_t)KC_HEADER_SIZE << 32), n, kc_hash(payload, n, 0)};
  for (int i = 0; i < 3; ++i)
    for (int b = 0; b < 8; ++b) f[8 + 8 * i + b] = (unsigned char)(fields[i] >> (8 * b));
  if (n) memcpy(f + KC_HEADER_SIZE, payload, n);
  *size = KC_HEADER_SIZE + n;
  return f;
}

static size_t put(unsigned char* p, uint64_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) p[i] = (unsigned char)(v >> (8 * i));
  return (size_t)bytes;
}

static void test_crafted_payloads(void) {
  char why[256];
  int count;
  size_t size;
  unsigned char p[256];
  size_t klen = strlen(kKey);
  /* Future version: valid checksum, still refused. */
  size_t n = 0;
  n += put(p + n, klen, 4);
  memcpy(p + n, kKey, klen);
  n += klen;
  n += put(p + n, 0, 4);
  unsigned char* f = wrap(p, n, KC_FORMAT_VERSION, &size);
  CHECK(parse_copy(f, size, kKey, &count, why) == KC_OK && count == 0, "zero entries is valid: %s", why);
  free(f);
  f = wrap(p, n, KC_FORMAT_VERSION + 1, &size);
  CHECK(parse_copy(f, size, kKey, &count, why) == KC_CORRUPT && strstr(why, "version"), "future version: %s", why);
  free(f);
  /* Key size beyond the payload. */
  put(p, 0xffffffffu, 4);
  f = wrap(p, n, KC_FORMAT_VERSION, &size);
  CHECK(parse_copy(f, size, kKey, &count, why) == KC_CORRUPT, "huge key size");
  free(f);
  put(p, klen, 4);
  /* Entry counts and sizes that overflow or overrun. */
  const uint64_t counts[] = {1, 2, 65, 0xffffffffu};
  const uint64_t names[] = {0, 3, 129, 0xffffffffu};
  const uint64_t datas[] = {0, 1, 2, 1000, 0xffffffffffffffffull, 0x8000000000000000ull};
  for (size_t a = 0; a < 4; ++a)
    for (size_t b = 0; b < 4; ++b)
      for (size_t c = 0; c < 6; ++c) {
        size_t m = 4 + klen;
        m += put(p + m, counts[a], 4);
        m += put(p + m, names[b], 4);
        size_t name_bytes = names[b] <= 3 ? names[b] : 0;
        memcpy(p + m, "abc", name_bytes);
        m += name_bytes;
        m += put(p + m, datas[c], 8);
        m += put(p + m, 0x5a5a5a5a, 4);
        f = wrap(p, m, KC_FORMAT_VERSION, &size);
        int rc = parse_copy(f, size, kKey, &count, why);
        CHECK(rc == KC_CORRUPT, "count %llu name %llu data %llu: rc %d", (unsigned long long)counts[a],
              (unsigned long long)names[b], (unsigned long long)datas[c], rc);
        free(f);
      }
  /* Seeded random payloads behind valid headers: never a crash, never OK
   * unless the structure happens to be valid. */
  uint64_t s = 12345;
  for (int it = 0; it < 2000; ++it) {
    size_t m = (size_t)(it % 200);
    for (size_t i = 0; i < m; ++i) {
      s = s * 6364136223846793005ull + 1442695040888963407ull;
      p[i] = (unsigned char)(s >> 56);
    }
    if (m >= 4 && it % 2) put(p, (uint64_t)(it % 16), 4); /* small key sizes reach the entries */
    f = wrap(p, m, KC_FORMAT_VERSION, &size);
    int rc = parse_copy(f, size, kKey, &count, why);
    CHECK(rc == KC_CORRUPT || rc == KC_MISMATCH || rc == KC_OK, "random payload %d: rc %d", it, rc);
    free(f);
  }
}

static void test_hash(void) {
  unsigned char buf[64];
  for (int i = 0; i < 64; ++i) buf[i] = (unsigned char)i;
  uint64_t seen[65];
  for (int n = 0; n <= 64; ++n) {
    seen[n] = kc_hash(buf, (size_t)n, 0);
    CHECK(seen[n] == kc_hash(buf, (size_t)n, 0), "deterministic");
    for (int j = 0; j < n; ++j) CHECK(seen[j] != seen[n], "lengths %d and %d collide", j, n);
  }
  CHECK(kc_hash(buf, 64, 0) != kc_hash(buf, 64, 1), "seed matters");
  /* Every single-bit flip changes the hash (the checksum relies on it). */
  for (int i = 0; i < 64 * 8; ++i) {
    buf[i / 8] ^= (unsigned char)(1u << (i % 8));
    CHECK(kc_hash(buf, 64, 0) != seen[64], "bit %d", i);
    CHECK(kc_hash(buf, 61, 0) != seen[61] || i / 8 >= 61, "bit %d of 61", i);
    buf[i / 8] ^= (unsigned char)(1u << (i % 8));
  }
}

static void test_paths(void) {
  char path[512];
  const char* tokens[] = {"../../etc/x", "/abs/path", "a/b", "..", "tok\nnewline", "", "x"};
  for (size_t i = 0; i < sizeof(tokens) / sizeof(tokens[0]); ++i) {
    CHECK(kc_file_path(path, sizeof(path), "/tmp/cache", tokens[i], "n0_fp32") == 0, "path for %s", tokens[i]);
    CHECK(strncmp(path, "/tmp/cache/tflite_gpu_", 22) == 0, "prefix: %s", path);
    CHECK(strchr(path + 11, '/') == NULL && strstr(path, "..") == NULL && !strchr(path, '\n'), "escapes: %s", path);
  }
  CHECK(kc_file_path(path, sizeof(path), "/tmp/cache/", "x", "n0") == 0 && strstr(path, "//") == NULL, "%s", path);
  char other[512];
  kc_file_path(other, sizeof(other), "/tmp/cache", "y", "n0");
  CHECK(strcmp(path, other) != 0, "different tokens, different files");
  CHECK(kc_file_path(path, sizeof(path), "/tmp/cache", "x", "../x") != 0, "tag with a slash refused");
  CHECK(kc_file_path(path, 20, "/tmp/cache", "x", "n0") != 0, "too small a buffer refused");
}

static void test_files(void) {
  char dir[] = "/tmp/kc_test_XXXXXX";
  CHECK(mkdtemp(dir) != NULL, "mkdtemp");
  char why[512];
  CHECK(kc_check_dir(dir, why, sizeof(why)) == 0, "0700 dir accepted: %s", why);
  chmod(dir, 0777);
  CHECK(kc_check_dir(dir, why, sizeof(why)) != 0 && strstr(why, "writable by other"), "0777 refused: %s", why);
  chmod(dir, 01777);
  CHECK(kc_check_dir(dir, why, sizeof(why)) == 0, "sticky 1777 accepted: %s", why);
  chmod(dir, 0770);
  CHECK(kc_check_dir(dir, why, sizeof(why)) != 0, "group-writable refused");
  chmod(dir, 0700);
  CHECK(kc_check_dir("/nonexistent/kc_dir", why, sizeof(why)) != 0, "missing refused");

  char path[512];
  kc_file_path(path, sizeof(path), dir, "tok", "n0_fp32");
  unsigned char* buf;
  size_t size;
  CHECK(kc_read_file(path, &buf, &size, why, sizeof(why)) == 1, "missing file is a plain miss");
  size_t fsize;
  unsigned char* f = sample_file(&fsize);
  mode_t old = umask(0);
  CHECK(kc_write_file(path, f, fsize, why, sizeof(why)) == 0, "write: %s", why);
  umask(old);
  struct stat st;
  CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600, "mode %o", (unsigned)(st.st_mode & 0777));
  CHECK(kc_read_file(path, &buf, &size, why, sizeof(why)) == 0 && size == fsize && memcmp(buf, f, size) == 0,
        "read back");
  free(buf);
  /* A symlink is not followed. */
  char link[600];
  snprintf(link, sizeof(link), "%s/link.bin", dir);
  CHECK(symlink(path, link) == 0, "symlink");
  CHECK(kc_read_file(link, &buf, &size, why, sizeof(why)) == -1, "symlink refused");
  free(buf);
  unlink(link);
  unlink(path);
  free(f);
  CHECK(rmdir(dir) == 0, "no temp files left behind");
}

int main(void) {
  test_round_trip();
  test_truncations_and_flips();
  test_crafted_payloads();
  test_hash();
  test_paths();
  test_files();
  printf("%d checks, %d failures\n", g_checks, g_failures);
  return g_failures ? 1 : 0;
}
