/* libFuzzer harness for the kernel-cache reader kc_parse
 * (delegate_c/cl/kernel_cache.c), a pure function over the bytes of a cache
 * file. Every input is parsed twice: as given (header checks, checksum),
 * and with the header repaired (payload size and checksum recomputed) so
 * that mutations reach the payload parser instead of stopping at the
 * checksum. Properties checked on both:
 *   - the result is KC_OK, KC_MISMATCH or KC_CORRUPT; a refusal leaves
 *     count 0 and a non-empty, NUL-terminated reason (also when the reason
 *     buffer is short);
 *   - KC_OK entries lie inside the buffer (ASan checks the reads), and
 *     kc_serialize of the same key and entries gives back the same bytes.
 * Built with -DKC_FUZZ_WRITE_SEEDS it is instead a program that writes a
 * seed corpus of valid files (made by kc_serialize) into the directory
 * argv[1]. tests/test_fuzz_kernel_cache.py builds and runs both. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cl/kernel_cache.h"

static const char kKey[] = "fuzz key\nplatform P\ndevice D\n";

static void put_le(unsigned char* p, uint64_t v, int n) {
  for (int i = 0; i < n; ++i) p[i] = (unsigned char)(v >> (8 * i));
}

static void check(const unsigned char* buf, size_t size, int max_entries, size_t whylen) {
  KcEntry entries[KC_MAX_ENTRIES];
  char why[256];
  int count = -1;
  memset(why, 'x', sizeof(why));
  int rc = kc_parse(buf, size, kKey, entries, max_entries, &count, why, whylen);
  if (rc != KC_OK) {
    if ((rc != KC_MISMATCH && rc != KC_CORRUPT) || count != 0) abort();
    if (!memchr(why, '\0', whylen) || (whylen > 1 && why[0] == '\0')) abort();
    return;
  }
  if (count < 0 || count > max_entries) abort();
  for (int i = 0; i < count; ++i) {
    const unsigned char* name = (const unsigned char*)entries[i].name;
    if (name < buf || name + entries[i].name_size > buf + size) abort();
    if (entries[i].data_size && (entries[i].data < buf || entries[i].data + entries[i].data_size > buf + size))
      abort();
  }
  size_t out_size = 0;
  unsigned char* out = kc_serialize(kKey, entries, count, &out_size);
  if (!out || out_size != size || memcmp(out, buf, size) != 0) abort(); /* the reader is the writer's inverse */
  free(out);
}

int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  /* The last byte picks the room the caller offers and the reason buffer's
   * size, so both limits get exercised. */
  int room = size ? data[size - 1] % (KC_MAX_ENTRIES + 2) : KC_MAX_ENTRIES;
  size_t whylen = size && data[size - 1] >= 0xf0 ? (size_t)(data[size - 1] & 0x0f) + 1 : 256;
  check(data, size, room, whylen);
  check(data, size, KC_MAX_ENTRIES, 256);
  if (size < KC_HEADER_SIZE) return 0;
  unsigned char* fixed = malloc(size); /* exactly size bytes: ASan sees any overread */
  if (!fixed) return 0;
  memcpy(fixed, data, size);
  put_le(fixed + 16, size - KC_HEADER_SIZE, 8);
  put_le(fixed + 24, kc_hash(fixed + KC_HEADER_SIZE, size - KC_HEADER_SIZE, 0), 8);
  check(fixed, size, KC_MAX_ENTRIES, 256);
  free(fixed);
  return 0;
}

#ifdef KC_FUZZ_WRITE_SEEDS
static int write_seed(const char* dir, const char* name, const char* key, const KcEntry* e, int n) {
  size_t size = 0;
  unsigned char* buf = kc_serialize(key, e, n, &size);
  char path[4096];
  snprintf(path, sizeof(path), "%s/%s", dir, name);
  FILE* f = buf ? fopen(path, "wb") : NULL;
  int ok = f && fwrite(buf, 1, size, f) == size;
  if (f && fclose(f) != 0) ok = 0;
  free(buf);
  if (!ok) fprintf(stderr, "cannot write %s\n", path);
  return ok ? 0 : 1;
}

int main(int argc, char** argv) {
  if (argc != 2) return fprintf(stderr, "usage: %s DIR\n", argv[0]), 2;
  unsigned char bin[61];
  for (size_t i = 0; i < sizeof(bin); ++i) bin[i] = (unsigned char)(i * 29 + 3);
  KcEntry e[3] = {{"conv.cl@12ab", 12, bin, sizeof(bin)}, {"reduce.cl@ff", 12, bin + 7, 5}, {"e", 1, NULL, 0}};
  int bad = write_seed(argv[1], "empty", kKey, NULL, 0);
  bad |= write_seed(argv[1], "one", kKey, e, 1);
  bad |= write_seed(argv[1], "three", kKey, e, 3);
  bad |= write_seed(argv[1], "other_key", "another key", e, 2);
  return bad;
}
#endif
