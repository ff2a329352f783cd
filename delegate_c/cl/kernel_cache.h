/* The on-disk kernel cache (serialization_dir + model_token): the file
 * format, the hash used for keys and checksums, and safe file I/O. Nothing
 * here touches OpenCL or TFLite, so the reader can be unit-tested and
 * fuzzed as a pure function over bytes.
 *
 * File layout (all integers little-endian):
 *   header, 32 bytes: magic "TFLGPUKC", u32 format version, u32 header size,
 *                     u64 payload size, u64 checksum (kc_hash of the payload)
 *   payload:          u32 key size, key bytes (text, no NUL),
 *                     u32 entry count, then per entry:
 *                     u32 name size, name bytes, u64 data size, data bytes
 * The key holds everything the contents depend on; a different key is a
 * miss, never a load. */
#ifndef TFLITE_GPU_KERNEL_CACHE_H
#define TFLITE_GPU_KERNEL_CACHE_H

#include <stddef.h>
#include <stdint.h>

#define KC_MAGIC "TFLGPUKC"
#define KC_FORMAT_VERSION 1u
#define KC_HEADER_SIZE 32u
#define KC_MAX_ENTRIES 64
#define KC_MAX_NAME 376
#define KC_MAX_KEY 8192
#define KC_MAX_FILE_BYTES (512u << 20) /* refuse to read anything larger */

/* 64-bit non-cryptographic hash (keys, file names, checksums). */
uint64_t kc_hash(const void* data, size_t size, uint64_t seed);

typedef struct KcEntry {
  const char* name; /* points into the parsed buffer; not NUL-terminated */
  size_t name_size;
  const unsigned char* data; /* points into the parsed buffer */
  size_t data_size;
} KcEntry;

enum { KC_OK = 0, KC_MISMATCH = 1, KC_CORRUPT = 2 };

/* Parses a whole cache file held in buf. KC_OK: entries[0..*count) point
 * into buf. KC_MISMATCH: a valid file written for another key. KC_CORRUPT:
 * anything else (empty, truncated, foreign, future version, bad checksum,
 * malformed entries); why says what. Never reads outside buf. */
int kc_parse(const unsigned char* buf, size_t size, const char* key, KcEntry* entries, int max_entries, int* count,
             char* why, size_t whylen);

/* The file's bytes for this key and entries (malloc'd; NULL when out of
 * memory or when a limit is exceeded). */
unsigned char* kc_serialize(const char* key, const KcEntry* entries, int count, size_t* size);

/* 0 when dir can hold the cache; -1 with a reason when it is missing, not
 * a directory, not writable, or writable by others without the sticky
 * bit (anyone could plant a file there). */
int kc_check_dir(const char* dir, char* why, size_t whylen);

/* "<dir>/tflite_gpu_<hash of token>_<tag>.bin": the token never reaches the
 * path, so no token can name a file outside dir. tag: [A-Za-z0-9_] only. */
int kc_file_path(char* out, size_t size, const char* dir, const char* token, const char* tag);

/* Reads a regular file (no symlinks) into a malloc'd buffer. 1: no such
 * file (a plain miss); 0: read; -1: error with why. */
int kc_read_file(const char* path, unsigned char** buf, size_t* size, char* why, size_t whylen);

/* Writes buf to path atomically: a fresh mode-0600 temp file in the same
 * directory, fsync, rename. Readers see the old file or the new one. */
int kc_write_file(const char* path, const unsigned char* buf, size_t size, char* why, size_t whylen);

#endif
