/* The remembered policy of one partition on one device: what the tuner
 * chose (delegate/tuner.c), read on every later start whatever the
 * options ask, so that an application after `tflite-gpu tune` builds only
 * the chosen programs and times nothing.
 *
 * A file per (device, driver, library version, precision, partition
 * content) in the cache directory, in the kernel cache's format
 * (cl/kernel_cache.h: the key is checked on load), written atomically. A
 * damaged, truncated or foreign file is ignored with a warning and
 * replaced by the next tuning. */
#ifndef TFLITE_GPU_POLICY_STORE_H
#define TFLITE_GPU_POLICY_STORE_H

#include <stddef.h>
#include <stdint.h>

#include "cl/cl_device.h"
#include "config/options.h"
#include "select/policy.h"

typedef struct PolicyStore {
  char* path; /* owned; NULL: no directory (nothing is remembered) */
  char* key;  /* owned */
} PolicyStore;

/* What a file held: the measured fields (src POL_SRC_MEASURED) and the
 * work-group scales (tune, malloc'd, or NULL). */
typedef struct Remembered {
  Policy policy;
  signed char* tune;
  int tune_len;
} Remembered;

/* The directory: serialization_dir when the kernel cache is on, else
 * $TFLITE_GPU_CACHE_DIR, else $XDG_CACHE_HOME/tflite_gpu/kernels, else
 * $HOME/.cache/tflite_gpu/kernels (the tflite_gpu commands' cache too). */
int policy_store_dir(const GpuConfig* cfg, int cache_on, char* out, size_t size);
/* The partition's file and key; 0, or -1 (out of memory, a path too long). */
int policy_store_open(PolicyStore* ps, const char* dir, const GpuDevice* dev, uint64_t partition);
/* 1: loaded into r; 0: no file; -1: a file that is not valid for this key
 * (why says what: corrupt, truncated, made for another partition or device). */
int policy_store_load(const PolicyStore* ps, Remembered* r, char* why, size_t whylen);
/* Writes p's measured fields and tune (the directory made, mode 0700, if
 * missing). 0, or -1 with why. */
int policy_store_save(const PolicyStore* ps, const Policy* p, const signed char* tune, int tune_len, char* why,
                      size_t whylen);
/* Forgets it: 1 removed, 0 none, -1 error. */
int policy_store_clear(const PolicyStore* ps);
void policy_store_free(PolicyStore* ps);
void remembered_free(Remembered* r);

#endif
