/* See policy_store.h. */
#include "delegate/policy_store.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cl/kernel_cache.h"
#include "util/env_hooks.h"
#include "version.h"

#define POLICY_FORMAT 1u

int policy_store_dir(const GpuConfig* cfg, int cache_on, char* out, size_t size) {
  const char* base;
  int n;
  if (cache_on && cfg->serialization_dir && *cfg->serialization_dir)
    n = snprintf(out, size, "%s", cfg->serialization_dir);
  else if ((base = env_text("TFLITE_GPU_CACHE_DIR")))
    n = snprintf(out, size, "%s", base);
  else if ((base = env_text("XDG_CACHE_HOME")))
    n = snprintf(out, size, "%s/tflite_gpu/kernels", base);
  else if ((base = env_text("HOME")))
    n = snprintf(out, size, "%s/.cache/tflite_gpu/kernels", base);
  else
    return -1;
  return n > 0 && (size_t)n < size ? 0 : -1;
}

int policy_store_open(PolicyStore* ps, const char* dir, const GpuDevice* dev, uint64_t partition) {
  memset(ps, 0, sizeof(*ps));
  const GpuCaps* c = &dev->caps;
  const char* prec = dev->fp16 ? "fp16" : "fp32";
  char key[2048], tag[96], path[4200];
  int n = snprintf(key, sizeof(key),
                   "tflite-gpu %s, policy format %u\nplatform %s\ndevice %s\ndevice version %s\ndriver %s\n"
                   "precision %s\npartition %016llx\n",
                   TFLITE_GPU_VERSION, POLICY_FORMAT, c->platform, c->name, c->version, c->driver, prec,
                   (unsigned long long)partition);
  uint64_t device_hash = kc_hash(c->platform, strlen(c->platform), 0x706f6cull);
  device_hash = kc_hash(c->name, strlen(c->name), kc_hash(c->driver, strlen(c->driver), device_hash));
  snprintf(tag, sizeof(tag), "policy_%016llx_%s_%08llx", (unsigned long long)partition, prec,
           (unsigned long long)(device_hash & 0xffffffffull));
  if (n <= 0 || (size_t)n >= sizeof(key) || kc_file_path(path, sizeof(path), dir, "policy", tag)) return -1;
  ps->path = strdup(path);
  ps->key = strdup(key);
  if (!ps->path || !ps->key) {
    policy_store_free(ps);
    return -1;
  }
  return 0;
}

int policy_store_load(const PolicyStore* ps, Remembered* r, char* why, size_t whylen) {
  memset(r, 0, sizeof(*r));
  if (!ps->path) return 0;
  unsigned char* buf = NULL;
  size_t size = 0;
  char what[600];
  int rc = kc_read_file(ps->path, &buf, &size, what, sizeof(what));
  if (rc == 1) return 0;
  if (rc < 0) return snprintf(why, whylen, "%s", what), -1;
  KcEntry entries[4];
  int count = 0;
  rc = kc_parse(buf, size, ps->key, entries, 4, &count, what, sizeof(what));
  int ok = rc == KC_OK;
  if (!ok) snprintf(why, whylen, "%s is %s: %s", ps->path, rc == KC_MISMATCH ? "another partition's or device's" : "invalid",
                    what);
  for (int i = 0; ok && i < count; ++i) {
    if (entries[i].name_size == 6 && !memcmp(entries[i].name, "policy", 6)) {
      char text[2048];
      if (entries[i].data_size >= sizeof(text)) {
        ok = 0;
        snprintf(why, whylen, "%s: its policy is too long", ps->path);
        break;
      }
      memcpy(text, entries[i].data, entries[i].data_size);
      text[entries[i].data_size] = '\0';
      memset(r->policy.src, POL_SRC_RULE, sizeof(r->policy.src));
      if (policy_apply_text(&r->policy, text, POL_SRC_MEASURED, what, sizeof(what))) {
        ok = 0;
        snprintf(why, whylen, "%s: %s", ps->path, what);
      }
    } else if (entries[i].name_size == 4 && !memcmp(entries[i].name, "tune", 4) && entries[i].data_size) {
      r->tune = malloc(entries[i].data_size);
      if (!r->tune) {
        ok = 0;
        snprintf(why, whylen, "out of memory");
        break;
      }
      memcpy(r->tune, entries[i].data, entries[i].data_size);
      r->tune_len = (int)entries[i].data_size;
      for (int k = 0; ok && k < r->tune_len; ++k)
        if (r->tune[k] < -8 || r->tune[k] > 8) ok = 0, snprintf(why, whylen, "%s: work-group scales out of range", ps->path);
    }
  }
  free(buf);
  if (!ok) remembered_free(r);
  return ok ? 1 : -1;
}

/* mkdir -p with mode 0700 for the parts that are missing. */
static int make_dirs(const char* path) {
  char p[4200];
  int n = snprintf(p, sizeof(p), "%s", path);
  if (n <= 0 || (size_t)n >= sizeof(p)) return -1;
  for (char* s = p + 1; *s; ++s) {
    if (*s != '/') continue;
    *s = '\0';
    if (mkdir(p, 0700) && errno != EEXIST) return -1;
    *s = '/';
  }
  return mkdir(p, 0700) && errno != EEXIST ? -1 : 0;
}

int policy_store_save(const PolicyStore* ps, const Policy* p, const signed char* tune, int tune_len, char* why,
                      size_t whylen) {
  if (!ps->path) return snprintf(why, whylen, "no cache directory"), -1;
  char text[2048];
  size_t used = 0;
  text[0] = '\0';
  for (int f = 0; f < POL_NUM_FIELDS; ++f) {
    if (p->src[f] != POL_SRC_MEASURED) continue;
    char num[32];
    used += (size_t)snprintf(text + used, sizeof(text) - used, "%s%s=%s", used ? "," : "", kPolicyFields[f].name,
                             policy_value_text((PolicyField)f, p->v[f], num, sizeof(num)));
  }
  KcEntry entries[2] = {{"policy", 6, (const unsigned char*)text, strlen(text)},
                        {"tune", 4, (const unsigned char*)tune, tune ? (size_t)tune_len : 0}};
  size_t size;
  unsigned char* buf = kc_serialize(ps->key, entries, tune && tune_len > 0 ? 2 : 1, &size);
  if (!buf) return snprintf(why, whylen, "out of memory"), -1;
  char dir[4200];
  snprintf(dir, sizeof(dir), "%s", ps->path);
  char* slash = strrchr(dir, '/');
  if (slash && slash != dir) *slash = '\0';
  int rc = 0;
  char check[600];
  if (slash && slash != dir && make_dirs(dir)) {
    rc = -1;
    snprintf(why, whylen, "cannot make %s: %s", dir, strerror(errno));
  } else if (slash && slash != dir && kc_check_dir(dir, check, sizeof(check))) {
    rc = -1;
    snprintf(why, whylen, "%s", check);
  } else {
    rc = kc_write_file(ps->path, buf, size, why, whylen);
  }
  free(buf);
  return rc;
}

int policy_store_clear(const PolicyStore* ps) {
  if (!ps->path) return 0;
  if (unlink(ps->path) == 0) return 1;
  return errno == ENOENT ? 0 : -1;
}

void policy_store_free(PolicyStore* ps) {
  free(ps->path);
  free(ps->key);
  ps->path = ps->key = NULL;
}

void remembered_free(Remembered* r) {
  free(r->tune);
  r->tune = NULL;
  r->tune_len = 0;
}
