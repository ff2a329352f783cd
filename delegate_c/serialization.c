#include "serialization.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "gpu_delegate.h"
#include "kernel_cache.h"
#include "log.h"

/* ---- the key ---- */

static uint64_t hash_int(uint64_t h, long long v) { return kc_hash(&v, sizeof(v), h); }

static uint64_t hash_ints(uint64_t h, const TfLiteIntArray* a) {
  if (!a) return hash_int(h, -1);
  h = hash_int(h, a->size);
  return kc_hash(a->data, (size_t)a->size * sizeof(int), h);
}

static uint64_t hash_str(uint64_t h, const char* s) { return s ? kc_hash(s, strlen(s) + 1, h) : hash_int(h, -2); }

/* Node ids, op codes and versions, tensor ids, types, shapes and
 * quantization, and the bytes of every constant the nodes read. */
static uint64_t partition_fingerprint(const ModelView* mv, const TfLiteDelegateParams* params) {
  uint64_t h = hash_ints(0x7061727469ull, params->nodes_to_replace);
  h = hash_ints(h, params->input_tensors);
  h = hash_ints(h, params->output_tensors);
  for (int k = 0; k < params->nodes_to_replace->size; ++k) {
    TfLiteNode* node;
    TfLiteRegistration* reg;
    if (mv_node(mv, params->nodes_to_replace->data[k], &node, &reg)) {
      h = hash_int(h, -3);
      continue;
    }
    h = hash_int(h, reg->builtin_code);
    h = hash_int(h, reg->version);
    h = hash_str(h, reg->custom_name);
    if (node->custom_initial_data && node->custom_initial_data_size > 0)
      h = kc_hash(node->custom_initial_data, (size_t)node->custom_initial_data_size, h);
    const TfLiteIntArray* lists[2] = {node->inputs, node->outputs};
    for (int l = 0; l < 2; ++l) {
      h = hash_ints(h, lists[l]);
      for (int i = 0; lists[l] && i < lists[l]->size; ++i) {
        int t = lists[l]->data[i];
        if (t < 0 || t >= mv->num_tensors) continue;
        const TfLiteTensor* tensor = mv_tensor(mv, t);
        h = hash_int(h, tensor->type);
        h = hash_ints(h, tensor->dims);
        h = kc_hash(&tensor->params, sizeof(tensor->params), h);
        if (tensor->allocation_type == kTfLiteMmapRo && tensor->data.raw)
          h = kc_hash(tensor->data.raw, tensor->bytes, h);
      }
    }
  }
  return h;
}

static char* make_key(const GpuDevice* dev, const char* token, uint64_t fingerprint) {
  const char* fmt =
      "tflite-gpu %s, cache format %u\nplatform %s\ndevice %s\ndevice version %s\ndriver %s\n"
      "build options %s\ntoken %016llx\npartition %016llx\n";
  unsigned long long tok = (unsigned long long)kc_hash(token, strlen(token), 0x746f6b656eull);
  int n = snprintf(NULL, 0, fmt, TfLiteGpuDelegateVersion(), KC_FORMAT_VERSION, dev->platform_name, dev->name,
                   dev->version, dev->driver, gpu_device_build_options(dev), tok, (unsigned long long)fingerprint);
  char* key = n > 0 ? malloc((size_t)n + 1) : NULL;
  if (key)
    snprintf(key, (size_t)n + 1, fmt, TfLiteGpuDelegateVersion(), KC_FORMAT_VERSION, dev->platform_name, dev->name,
             dev->version, dev->driver, gpu_device_build_options(dev), tok, (unsigned long long)fingerprint);
  return key;
}

/* An entry is named "<file>@<hash of its source and options>". */
static void entry_name(const GpuDevice* dev, const char* file, char* out, size_t size) {
  snprintf(out, size, "%s@%016llx", file, gpu_device_source_hash(dev, file));
}

/* ---- load ---- */

static void load_entries(PartitionCache* pc, GpuDevice* dev, const KcEntry* entries, int count, int log_level) {
  for (int i = 0; i < count; ++i) {
    char name[KC_MAX_NAME + 1], file[KC_MAX_NAME + 1], want[KC_MAX_NAME + 32];
    memcpy(name, entries[i].name, entries[i].name_size);
    name[entries[i].name_size] = '\0';
    const char* at = strrchr(name, '@');
    if (!at || memchr(name, '\0', entries[i].name_size)) continue;
    snprintf(file, sizeof(file), "%.*s", (int)(at - name), name);
    if (gpu_device_source_hash(dev, file) == 0) continue; /* not one of our kernel files */
    entry_name(dev, file, want, sizeof(want));
    if (strcmp(want, name) != 0) continue; /* kernel source changed: compile it */
    char err[1024];
    if (gpu_device_add_binary(dev, file, entries[i].data, entries[i].data_size, err, sizeof(err)) < 0)
      gd_log(log_level, GD_LOG_WARNING, "kernel cache %s: %s; compiling it", pc->path, err);
  }
}

void ser_partition_begin(PartitionCache* pc, const char* dir, const char* token, GpuDevice* dev,
                         const ModelView* mv, const TfLiteDelegateParams* params, int log_level) {
  memset(pc, 0, sizeof(*pc));
  pc->source_builds_before = dev->source_builds;
  uint64_t fp = partition_fingerprint(mv, params);
  pc->key = make_key(dev, token, fp);
  /* One file per (token, partition position, precision): a different
   * model or option under the same token overwrites it. */
  char tag[64], path[4200];
  int first = params->nodes_to_replace->size ? params->nodes_to_replace->data[0] : 0;
  snprintf(tag, sizeof(tag), "n%d_%s", first, dev->fp16 ? "fp16" : "fp32");
  if (!pc->key || kc_file_path(path, sizeof(path), dir, token, tag) || !(pc->path = strdup(path))) {
    gd_log(log_level, GD_LOG_WARNING, "kernel cache: out of memory or path too long; running without it");
    ser_partition_free(pc);
    return;
  }
  pc->state = SER_MISS;
  unsigned char* buf;
  size_t size;
  char why[512];
  int rc = kc_read_file(pc->path, &buf, &size, why, sizeof(why));
  if (rc == 1) {
    gd_log(log_level, GD_LOG_INFO, "kernel cache %s: no file yet (miss)", pc->path);
    return;
  }
  if (rc < 0) {
    dev->cache.rejected++;
    gd_log(log_level, GD_LOG_WARNING, "kernel cache: %s; rebuilding", why);
    return;
  }
  KcEntry entries[KC_MAX_ENTRIES];
  int count = 0;
  rc = kc_parse(buf, size, pc->key, entries, KC_MAX_ENTRIES, &count, why, sizeof(why));
  if (rc == KC_OK) {
    pc->loaded = 1;
    load_entries(pc, dev, entries, count, log_level);
  } else if (rc == KC_MISMATCH) {
    gd_log(log_level, GD_LOG_INFO, "kernel cache %s: %s (miss; rebuilding)", pc->path, why);
  } else {
    dev->cache.rejected++;
    gd_log(log_level, GD_LOG_WARNING, "kernel cache %s is invalid (%s); rebuilding it", pc->path, why);
  }
  free(buf);
}

void ser_partition_built(PartitionCache* pc, GpuDevice* dev, int log_level) {
  if (pc->state == SER_OFF) return;
  if (pc->loaded && dev->source_builds == pc->source_builds_before) {
    pc->state = SER_HIT;
    dev->cache.hits++;
    gd_log(log_level, GD_LOG_INFO, "kernel cache %s: hit", pc->path);
  } else {
    dev->cache.misses++;
  }
}

/* ---- save ---- */

void ser_partition_save(PartitionCache* pc, GpuDevice* dev, const Executor* ex, int log_level) {
  if (pc->state != SER_MISS) return;
  pc->state = SER_SAVED; /* one attempt, whatever happens */
  const char* files[KC_MAX_ENTRIES];
  int nfiles = 0;
  for (int i = 0; i < ex->num_dispatches; ++i) {
    const char* f = gpu_device_kernel_file(dev, ex->dispatches[i].kernel);
    int seen = !f;
    for (int j = 0; j < nfiles && !seen; ++j) seen = strcmp(files[j], f) == 0;
    if (!seen && nfiles < KC_MAX_ENTRIES) files[nfiles++] = f;
  }
  KcEntry entries[KC_MAX_ENTRIES];
  char names[KC_MAX_ENTRIES][KC_MAX_NAME];
  int count = 0, ok = 1;
  for (int i = 0; i < nfiles && ok; ++i) {
    cl_program prog = NULL;
    for (int j = 0; j < dev->num_programs; ++j)
      if (strcmp(dev->programs[j].file, files[i]) == 0) prog = dev->programs[j].program;
    size_t size = 0;
    unsigned char* bin = prog ? gpu_device_program_binary(dev, prog, &size) : NULL;
    if (!bin) {
      ok = 0;
      break;
    }
    entry_name(dev, files[i], names[count], sizeof(names[count]));
    entries[count] = (KcEntry){names[count], strlen(names[count]), bin, size};
    count++;
  }
  size_t size = 0;
  unsigned char* file = ok ? kc_serialize(pc->key, entries, count, &size) : NULL;
  char why[4400];
  if (!file) {
    gd_log(log_level, GD_LOG_WARNING, "kernel cache: could not read back the program binaries; not saved");
  } else if (kc_write_file(pc->path, file, size, why, sizeof(why))) {
    gd_log(log_level, GD_LOG_WARNING, "kernel cache: %s; not saved", why);
  } else {
    dev->cache.writes++;
    gd_log(log_level, GD_LOG_INFO, "kernel cache %s: wrote %zu bytes (%d programs)", pc->path, size, count);
  }
  free(file);
  for (int i = 0; i < count; ++i) free((void*)entries[i].data);
}

void ser_partition_free(PartitionCache* pc) {
  free(pc->path);
  free(pc->key);
  memset(pc, 0, sizeof(*pc));
}
