#include "cl/kernel_cache.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- hash ---- */

static uint64_t mix64(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  x ^= x >> 31;
  return x;
}

static uint64_t rotl(uint64_t x, int r) { return (x << r) | (x >> (64 - r)); }

uint64_t kc_hash(const void* data, size_t size, uint64_t seed) {
  const unsigned char* p = data;
  const uint64_t k1 = 0x9e3779b97f4a7c15ull, k2 = 0xc2b2ae3d27d4eb4full;
  /* Two independent lanes over 16-byte blocks keep it fast on large weights. */
  uint64_t a = seed ^ (size * k1), b = rotl(seed, 32) ^ k2;
  size_t i = 0;
  for (; i + 16 <= size; i += 16) {
    uint64_t x, y;
    memcpy(&x, p + i, 8);
    memcpy(&y, p + i + 8, 8);
    a = rotl(a ^ (x * k2), 31) * k1;
    b = rotl(b ^ (y * k1), 29) * k2;
  }
  if (size - i >= 8) {
    uint64_t x;
    memcpy(&x, p + i, 8);
    a = rotl(a ^ (x * k2), 31) * k1;
    i += 8;
  }
  uint64_t tail = 0;
  for (size_t j = 0; i + j < size; ++j) tail |= (uint64_t)p[i + j] << (8 * j);
  b ^= tail * k1;
  return mix64(a ^ mix64(b) ^ size);
}

/* ---- little-endian encoding ---- */

static void put32(unsigned char* p, uint32_t v) {
  for (int i = 0; i < 4; ++i) p[i] = (unsigned char)(v >> (8 * i));
}
static void put64(unsigned char* p, uint64_t v) {
  for (int i = 0; i < 8; ++i) p[i] = (unsigned char)(v >> (8 * i));
}
static uint32_t get32(const unsigned char* p) {
  uint32_t v = 0;
  for (int i = 0; i < 4; ++i) v |= (uint32_t)p[i] << (8 * i);
  return v;
}
static uint64_t get64(const unsigned char* p) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v |= (uint64_t)p[i] << (8 * i);
  return v;
}

/* A bounds-checked reader over the payload. */
typedef struct Cursor {
  const unsigned char* p;
  size_t left;
} Cursor;

static int take(Cursor* c, size_t n, const unsigned char** out) {
  if (n > c->left) return -1;
  *out = c->p;
  c->p += n;
  c->left -= n;
  return 0;
}

static int take32(Cursor* c, uint32_t* v) {
  const unsigned char* p;
  if (take(c, 4, &p)) return -1;
  *v = get32(p);
  return 0;
}

static int take64(Cursor* c, uint64_t* v) {
  const unsigned char* p;
  if (take(c, 8, &p)) return -1;
  *v = get64(p);
  return 0;
}

int kc_parse(const unsigned char* buf, size_t size, const char* key, KcEntry* entries, int max_entries, int* count,
             char* why, size_t whylen) {
  *count = 0;
  if (size == 0) return snprintf(why, whylen, "empty file"), KC_CORRUPT;
  if (size < KC_HEADER_SIZE) return snprintf(why, whylen, "truncated header (%zu bytes)", size), KC_CORRUPT;
  if (memcmp(buf, KC_MAGIC, 8) != 0) return snprintf(why, whylen, "not a tflite-gpu cache file"), KC_CORRUPT;
  uint32_t version = get32(buf + 8);
  if (version != KC_FORMAT_VERSION)
    return snprintf(why, whylen, "format version %u, this library reads version %u", version, KC_FORMAT_VERSION),
           KC_CORRUPT;
  if (get32(buf + 12) != KC_HEADER_SIZE) return snprintf(why, whylen, "bad header size"), KC_CORRUPT;
  uint64_t payload = get64(buf + 16);
  if (payload != size - KC_HEADER_SIZE)
    return snprintf(why, whylen, "payload is %zu bytes, the header says %llu (truncated?)", size - KC_HEADER_SIZE,
                    (unsigned long long)payload),
           KC_CORRUPT;
  if (kc_hash(buf + KC_HEADER_SIZE, (size_t)payload, 0) != get64(buf + 24))
    return snprintf(why, whylen, "checksum mismatch"), KC_CORRUPT;

  Cursor c = {buf + KC_HEADER_SIZE, (size_t)payload};
  uint32_t key_size, n;
  const unsigned char* stored_key;
  if (take32(&c, &key_size) || key_size > KC_MAX_KEY || take(&c, key_size, &stored_key) || take32(&c, &n))
    return snprintf(why, whylen, "malformed key"), KC_CORRUPT;
  int room = max_entries < 0 ? 0 : max_entries < KC_MAX_ENTRIES ? max_entries : KC_MAX_ENTRIES;
  if (n > (uint32_t)room) return snprintf(why, whylen, "%u entries (at most %d)", n, room), KC_CORRUPT;
  for (uint32_t i = 0; i < n; ++i) {
    uint32_t name_size;
    uint64_t data_size;
    const unsigned char *name, *data;
    if (take32(&c, &name_size) || name_size == 0 || name_size > KC_MAX_NAME || take(&c, name_size, &name) ||
        take64(&c, &data_size) || data_size > c.left || take(&c, (size_t)data_size, &data))
      return *count = 0, snprintf(why, whylen, "malformed entry %u", i), KC_CORRUPT;
    entries[i] = (KcEntry){(const char*)name, name_size, data, (size_t)data_size};
  }
  if (c.left != 0) return snprintf(why, whylen, "%zu stray bytes after the entries", c.left), KC_CORRUPT;
  size_t want = strlen(key);
  if (want != key_size || memcmp(stored_key, key, want) != 0)
    return snprintf(why, whylen, "written for another model, options, device or library version"), KC_MISMATCH;
  *count = (int)n;
  return KC_OK;
}

unsigned char* kc_serialize(const char* key, const KcEntry* entries, int count, size_t* size) {
  size_t key_size = strlen(key);
  if (key_size > KC_MAX_KEY || count < 0 || count > KC_MAX_ENTRIES) return NULL;
  size_t total = KC_HEADER_SIZE + 4 + key_size + 4;
  for (int i = 0; i < count; ++i) {
    if (entries[i].name_size == 0 || entries[i].name_size > KC_MAX_NAME) return NULL;
    total += 4 + entries[i].name_size + 8 + entries[i].data_size;
  }
  unsigned char* out = malloc(total);
  if (!out) return NULL;
  unsigned char* p = out + KC_HEADER_SIZE;
  put32(p, (uint32_t)key_size);
  memcpy(p + 4, key, key_size);
  p += 4 + key_size;
  put32(p, (uint32_t)count);
  p += 4;
  for (int i = 0; i < count; ++i) {
    put32(p, (uint32_t)entries[i].name_size);
    memcpy(p + 4, entries[i].name, entries[i].name_size);
    p += 4 + entries[i].name_size;
    put64(p, entries[i].data_size);
    if (entries[i].data_size) memcpy(p + 8, entries[i].data, entries[i].data_size);
    p += 8 + entries[i].data_size;
  }
  size_t payload = total - KC_HEADER_SIZE;
  memcpy(out, KC_MAGIC, 8);
  put32(out + 8, KC_FORMAT_VERSION);
  put32(out + 12, KC_HEADER_SIZE);
  put64(out + 16, payload);
  put64(out + 24, kc_hash(out + KC_HEADER_SIZE, payload, 0));
  *size = total;
  return out;
}

/* ---- files ---- */

int kc_check_dir(const char* dir, char* why, size_t whylen) {
  struct stat st;
  if (!dir || !*dir) return snprintf(why, whylen, "no directory given"), -1;
  if (stat(dir, &st) != 0) return snprintf(why, whylen, "%s: %s", dir, strerror(errno)), -1;
  if (!S_ISDIR(st.st_mode)) return snprintf(why, whylen, "%s is not a directory", dir), -1;
  if ((st.st_mode & (S_IWGRP | S_IWOTH)) && !(st.st_mode & S_ISVTX))
    return snprintf(why, whylen, "%s is writable by other users (mode %03o, no sticky bit)", dir,
                    (unsigned)(st.st_mode & 0777)),
           -1;
  if (access(dir, W_OK | X_OK) != 0) return snprintf(why, whylen, "%s is not writable: %s", dir, strerror(errno)), -1;
  return 0;
}

int kc_file_path(char* out, size_t size, const char* dir, const char* token, const char* tag) {
  for (const char* t = tag; *t; ++t)
    if (!((*t >= 'a' && *t <= 'z') || (*t >= 'A' && *t <= 'Z') || (*t >= '0' && *t <= '9') || *t == '_')) return -1;
  size_t dl = strlen(dir);
  const char* sep = dl && dir[dl - 1] == '/' ? "" : "/";
  int n = snprintf(out, size, "%s%stflite_gpu_%016llx_%s.bin", dir, sep,
                   (unsigned long long)kc_hash(token, strlen(token), 0x746f6b656eull), tag);
  return n > 0 && (size_t)n < size ? 0 : -1;
}

int kc_read_file(const char* path, unsigned char** buf, size_t* size, char* why, size_t whylen) {
  *buf = NULL;
  *size = 0;
  int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) {
    if (errno == ENOENT) return 1;
    return snprintf(why, whylen, "opening %s: %s", path, strerror(errno)), -1;
  }
  struct stat st;
  if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || st.st_size < 0 || (uint64_t)st.st_size > KC_MAX_FILE_BYTES) {
    close(fd);
    return snprintf(why, whylen, "%s is not a regular file of a sane size", path), -1;
  }
  size_t want = (size_t)st.st_size;
  unsigned char* b = malloc(want ? want : 1);
  if (!b) {
    close(fd);
    return snprintf(why, whylen, "out of memory"), -1;
  }
  size_t got = 0;
  while (got < want) {
    ssize_t r = read(fd, b + got, want - got);
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) break;
    got += (size_t)r;
  }
  close(fd);
  *buf = b;
  *size = got; /* a shorter file than stat said is judged by the parser */
  return 0;
}

int kc_write_file(const char* path, const unsigned char* buf, size_t size, char* why, size_t whylen) {
  char tmp[4200];
  static unsigned counter; /* distinct temp names for threads of one process */
  unsigned c = __atomic_add_fetch(&counter, 1, __ATOMIC_RELAXED);
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  int n = snprintf(tmp, sizeof(tmp), "%s.%ld.%u.%lx.tmp", path, (long)getpid(), c, (unsigned long)ts.tv_nsec);
  if (n < 0 || (size_t)n >= sizeof(tmp)) return snprintf(why, whylen, "path too long"), -1;
  int fd = open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0600);
  if (fd < 0) return snprintf(why, whylen, "creating %s: %s", tmp, strerror(errno)), -1;
  size_t done = 0;
  int err = 0;
  while (done < size) {
    ssize_t w = write(fd, buf + done, size - done);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) {
      err = errno ? errno : EIO;
      break;
    }
    done += (size_t)w;
  }
  if (!err && fchmod(fd, 0600) != 0) err = errno; /* whatever the umask did */
  if (!err && fsync(fd) != 0) err = errno;
  if (close(fd) != 0 && !err) err = errno;
  if (!err && rename(tmp, path) != 0) err = errno;
  if (err) {
    unlink(tmp);
    return snprintf(why, whylen, "writing %s: %s", path, strerror(err)), -1;
  }
  return 0;
}
