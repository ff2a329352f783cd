#include "delegate/serialization.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cl/kernel_cache.h"
#include "util/log.h"
#include "version.h"
#include "vm/vm.h"
#include "vm/vm_defines.h"
#include "util/env_hooks.h"

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
uint64_t ser_partition_fingerprint(const ModelView* mv, const TfLiteDelegateParams* params) {
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

static char* make_key(const GpuDevice* dev, const char* set, const char* token, uint64_t fingerprint) {
  const char* fmt =
      "tflite-gpu %s, cache format %u\nplatform %s\ndevice %s\ndevice version %s\ndriver %s\n"
      "build options %s\nkernel set %s\ntoken %016llx\npartition %016llx\n";
  unsigned long long tok = (unsigned long long)kc_hash(token, strlen(token), 0x746f6b656eull);
  const GpuCaps* c = &dev->caps;
  int n = snprintf(NULL, 0, fmt, TFLITE_GPU_VERSION, KC_FORMAT_VERSION, c->platform, c->name, c->version,
                   c->driver, gpu_device_build_options(dev), set, tok, (unsigned long long)fingerprint);
  char* key = n > 0 ? malloc((size_t)n + 1) : NULL;
  if (key)
    snprintf(key, (size_t)n + 1, fmt, TFLITE_GPU_VERSION, KC_FORMAT_VERSION, c->platform, c->name, c->version,
             c->driver, gpu_device_build_options(dev), set, tok, (unsigned long long)fingerprint);
  return key;
}

/* An entry is named "<file>|<defines>@<hash of its source and options>". */
static void entry_name(const GpuDevice* dev, const char* file, const char* defines, char* out, size_t size) {
  _Static_assert(GD_MAX_PROGRAM_FILE + GD_MAX_PROGRAM_DEFINES + 17 <= KC_MAX_NAME, "entry names fit KC_MAX_NAME");
  snprintf(out, size, "%.*s|%.*s@%016llx", GD_MAX_PROGRAM_FILE - 1, file, GD_MAX_PROGRAM_DEFINES - 1, defines,
           gpu_device_source_hash(dev, file, defines));
}

/* ---- load ---- */

/* An entry's kernel file and defines (entry_name); 0, or -1 for a
 * malformed name. */
static int entry_parts(const KcEntry* entry, char* name, char* file, char* defines) {
  memcpy(name, entry->name, entry->name_size);
  name[entry->name_size] = '\0';
  const char* at = strrchr(name, '@');
  const char* bar = strchr(name, '|');
  if (!at || !bar || bar > at || memchr(name, '\0', entry->name_size)) return -1;
  snprintf(file, KC_MAX_NAME + 1, "%.*s", (int)(bar - name), name);
  snprintf(defines, KC_MAX_NAME + 1, "%.*s", (int)(at - bar - 1), bar + 1);
  return 0;
}

static void load_entries(const char* path, GpuDevice* dev, const KcEntry* entries, int count, int log_level) {
  for (int i = 0; i < count; ++i) {
    char name[KC_MAX_NAME + 1], file[KC_MAX_NAME + 1], defines[KC_MAX_NAME + 1], want[2 * KC_MAX_NAME + 32];
    if (entry_parts(&entries[i], name, file, defines)) continue;
    if (gpu_device_source_hash(dev, file, defines) == 0) continue; /* not one of our kernel files */
    entry_name(dev, file, defines, want, sizeof(want));
    if (strcmp(want, name) != 0) continue; /* kernel source changed: compile it */
    char err[1024];
    if (gpu_device_add_binary(dev, file, defines, entries[i].data, entries[i].data_size, err, sizeof(err)) < 0)
      gd_log(log_level, GD_LOG_WARNING, "kernel cache %s: %s; compiling it", path, err);
  }
}

/* Before its programs load (load_file): the device's VM file widens the
 * partition's VM defines (vm_defines.h) to the opcodes of the program it
 * holds, when that program holds all of them, else to the union of both,
 * which this partition then builds and saves in place of it. */
typedef struct VmWiden {
  char* defines;
  size_t size;
} VmWiden;

static void vm_widen(const char* path, const KcEntry* entries, int count, const VmWiden* vw, int log_level) {
  for (int i = 0; i < count; ++i) {
    char name[KC_MAX_NAME + 1], file[KC_MAX_NAME + 1], defines[KC_MAX_NAME + 1];
    if (entry_parts(&entries[i], name, file, defines) || strcmp(file, "vm_program.cl") != 0) continue;
    unsigned mine[VM_MASK_WORDS], theirs[VM_MASK_WORDS], all[VM_MASK_WORDS];
    const char* rest;
    if (vm_defines_parse(vw->defines, mine, &rest) || vm_defines_parse(defines, theirs, &rest)) continue;
    int holds = vm_defines_merge(vw->defines, vw->size, defines);
    if (holds < 0 || vm_defines_parse(vw->defines, all, &rest)) continue;
    if (holds)
      gd_log(log_level, GD_LOG_INFO, "kernel cache %s: the device's VM program holds this partition's %d bodies (%d in all)",
             path, vm_defines_count(mine), vm_defines_count(theirs));
    else
      gd_log(log_level, GD_LOG_INFO,
             "kernel cache %s: the device's VM program holds %d bodies, not all %d of this partition's: building one "
             "with the %d of both",
             path, vm_defines_count(theirs), vm_defines_count(mine), vm_defines_count(all));
    return;
  }
}

/* Reads one cache file and loads its programs onto dev; 1 when the file
 * was valid for key. A missing file is a quiet miss. vw: the VM's file. */
static int load_file(const char* path, const char* key, GpuDevice* dev, const VmWiden* vw, int log_level) {
  unsigned char* buf;
  size_t size;
  char why[512];
  int rc = kc_read_file(path, &buf, &size, why, sizeof(why));
  if (rc == 1) {
    gd_log(log_level, GD_LOG_INFO, "kernel cache %s: no file yet (miss)", path);
    return 0;
  }
  if (rc < 0) {
    dev->cache.rejected++;
    gd_log(log_level, GD_LOG_WARNING, "kernel cache: %s; rebuilding", why);
    return 0;
  }
  KcEntry entries[KC_MAX_ENTRIES];
  int count = 0, loaded = 0;
  rc = kc_parse(buf, size, key, entries, KC_MAX_ENTRIES, &count, why, sizeof(why));
  if (rc == KC_OK) {
    loaded = 1;
    if (vw) vm_widen(path, entries, count, vw, log_level);
    load_entries(path, dev, entries, count, log_level);
  } else if (rc == KC_MISMATCH) {
    gd_log(log_level, GD_LOG_INFO, "kernel cache %s: %s (miss; rebuilding)", path, why);
  } else {
    dev->cache.rejected++;
    gd_log(log_level, GD_LOG_WARNING, "kernel cache %s is invalid (%s); rebuilding it", path, why);
  }
  free(buf);
  return loaded;
}

void ser_partition_begin(PartitionCache* pc, const char* dir, const char* token, GpuDevice* dev,
                         const ModelView* mv, const TfLiteDelegateParams* params, KernelSet set, int vm,
                         int log_level) {
  memset(pc, 0, sizeof(*pc));
  pc->source_builds_before = dev->source_builds;
  uint64_t fp = ser_partition_fingerprint(mv, params);
  pc->key = make_key(dev, kernel_set_name(set), token, fp);
  /* One file per (token, partition position, precision, kernel set,
   * device): devices sharing a directory keep their own files; a different
   * model or option under the same token overwrites it. */
  char tag[96], path[4200];
  int first = params->nodes_to_replace->size ? params->nodes_to_replace->data[0] : 0;
  const GpuCaps* c = &dev->caps;
  uint64_t device_hash = kc_hash(c->platform, strlen(c->platform), 0x646576ull);
  device_hash = kc_hash(c->name, strlen(c->name), device_hash);
  device_hash = kc_hash(c->driver, strlen(c->driver), device_hash);
  const char* prec = dev->fp16 ? "fp16" : "fp32";
  unsigned long long dh = (unsigned long long)(device_hash & 0xffffffffull);
  snprintf(tag, sizeof(tag), "n%d_%s_%s_%08llx", first, prec, kernel_set_name(set), dh);
  snprintf(pc->vm_tag, sizeof(pc->vm_tag), "vm_%s_%08llx", prec, dh);
  int bad = !pc->key || kc_file_path(path, sizeof(path), dir, token, tag) || !(pc->path = strdup(path));
  /* The shared file's key is the device's and the build options' alone (token "vm", partition 0). */
  if (!bad && vm) bad = !(pc->vm_dir = strdup(dir)) || !(pc->vm_key = make_key(dev, "vm", "vm", 0));
  if (bad) {
    gd_log(log_level, GD_LOG_WARNING, "kernel cache: out of memory or path too long; running without it");
    ser_partition_free(pc);
    return;
  }
  pc->state = SER_MISS;
  pc->loaded = load_file(pc->path, pc->key, dev, NULL, log_level);
}

void ser_vm_load(PartitionCache* pc, GpuDevice* dev, char* defines, size_t size, int log_level) {
  if (pc->state == SER_OFF || !pc->vm_dir || pc->vm_path) return;
  unsigned masks[VM_MASK_WORDS];
  const char* rest;
  if (vm_defines_parse(defines, masks, &rest)) return;
  /* One file per device, precision and the defines besides the opcodes. */
  char tag[96], path[4200];
  unsigned long long h = (unsigned long long)(kc_hash(rest, strlen(rest), 0x766dull) & 0xffffffffull);
  snprintf(tag, sizeof(tag), "%s_%08llx", pc->vm_tag, h);
  if (kc_file_path(path, sizeof(path), pc->vm_dir, "vm", tag) || !(pc->vm_path = strdup(path))) {
    gd_log(log_level, GD_LOG_WARNING, "kernel cache: out of memory or path too long; the VM program is not cached");
    return;
  }
  VmWiden vw = {defines, size};
  load_file(pc->vm_path, pc->vm_key, dev, &vw, log_level);
  /* Loaded: the device holds the program for the (widened) defines from
   * the file; otherwise this partition builds it and saves the file. */
  pc->vm_loaded = 0;
  for (int i = 0; i < dev->num_programs; ++i)
    if (dev->programs[i].from_binary && !strcmp(dev->programs[i].file, "vm_program.cl") &&
        !strcmp(dev->programs[i].defines, defines))
      pc->vm_loaded = 1;
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

/* A save in progress: the binaries are read back, serialized and written
 * on a thread of its own, off the first invoke's path. On PoCL reading
 * CL_PROGRAM_BINARIES is the expensive part: for every kernel of every
 * program it compiles a generic (any local size) work-group function, on
 * top of the specialised ones the first invoke's launches compiled, which
 * made the cache-writing run 2-3x a cold one. The job holds a device
 * reference, so the programs (owned by the device) outlive it. */
typedef struct SaveJob {
  GpuDevice* dev;
  char* path;
  char* key;
  int log_level;
  int count;
  cl_program progs[KC_MAX_ENTRIES];
  char names[KC_MAX_ENTRIES][KC_MAX_NAME];
} SaveJob;

static void save_job_run(SaveJob* job) {
  GpuDevice* dev = job->dev;
  KcEntry entries[KC_MAX_ENTRIES];
  int count = 0, ok = 1;
  for (int i = 0; i < job->count && ok; ++i) {
    size_t size = 0;
    /* Under dev->mutex, which every build and invoke holds: on PoCL 3.1 a
     * read-back (it compiles work-group functions) running beside kernel
     * launches corrupts its handle cache (an assertion in
     * pocl_release_dlhandle_cache). One program per hold, so an invoke
     * waits for at most one program's read-back. */
    pthread_mutex_lock(&dev->mutex);
    unsigned char* bin = gpu_device_program_binary(dev, job->progs[i], &size);
    pthread_mutex_unlock(&dev->mutex);
    if (!bin) {
      ok = 0;
      break;
    }
    entries[count] = (KcEntry){job->names[i], strlen(job->names[i]), bin, size};
    count++;
  }
  size_t size = 0;
  unsigned char* file = ok ? kc_serialize(job->key, entries, count, &size) : NULL;
  char why[4400];
  int written = 0;
  if (!file) {
    gd_log(job->log_level, GD_LOG_WARNING, "kernel cache: could not read back the program binaries; not saved");
  } else if (kc_write_file(job->path, file, size, why, sizeof(why))) {
    gd_log(job->log_level, GD_LOG_WARNING, "kernel cache: %s; not saved", why);
  } else {
    written = 1;
    gd_log(job->log_level, GD_LOG_INFO, "kernel cache %s: wrote %zu bytes (%d programs)", job->path, size, count);
  }
  free(file);
  for (int i = 0; i < count; ++i) free((void*)entries[i].data);
  pthread_mutex_lock(&dev->mutex);
  dev->cache.writes += written;
  dev->cache.pending--;
  pthread_cond_broadcast(&dev->cache.done);
  pthread_mutex_unlock(&dev->mutex);
  free(job->path);
  free(job->key);
  free(job);
  gpu_device_release(dev);
}

/* Writer threads still running, process-wide. exit() waits for them (an
 * atexit handler, which glibc also runs when the library is unloaded):
 * a process that ends while its cache is being written would otherwise
 * tear the OpenCL driver down under the writer, and lose the file. */
static pthread_mutex_t g_writers_mutex = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t g_writers_done = PTHREAD_COND_INITIALIZER;
static int g_writers;
static pthread_once_t g_writers_once = PTHREAD_ONCE_INIT;

static void writers_add(int n) {
  pthread_mutex_lock(&g_writers_mutex);
  g_writers += n;
  if (g_writers == 0) pthread_cond_broadcast(&g_writers_done);
  pthread_mutex_unlock(&g_writers_mutex);
}

static void writers_wait(void) {
  pthread_mutex_lock(&g_writers_mutex);
  while (g_writers > 0) pthread_cond_wait(&g_writers_done, &g_writers_mutex);
  pthread_mutex_unlock(&g_writers_mutex);
}

static void writers_register_exit_wait(void) { atexit(writers_wait); }

static void* save_job_thread(void* arg) {
  save_job_run(arg);
  writers_add(-1);
  return NULL;
}

/* Starts the write of one file holding progs (dev->mutex held). */
static void save_file(GpuDevice* dev, const char* path, const char* key, const GpuProgram* const* progs, int nprogs,
                      pthread_t* writer, int* writer_started, int log_level) {
  SaveJob* job = calloc(1, sizeof(*job));
  if (!job || !(job->path = strdup(path)) || !(job->key = strdup(key))) {
    if (job) free(job->path);
    free(job);
    gd_log(log_level, GD_LOG_WARNING, "kernel cache: out of memory; not saved");
    return;
  }
  for (int i = 0; i < nprogs; ++i) {
    job->progs[i] = progs[i]->program;
    entry_name(dev, progs[i]->file, progs[i]->defines, job->names[i], sizeof(job->names[i]));
  }
  job->count = nprogs;
  job->log_level = log_level;
  job->dev = dev;
  gpu_device_retain(dev);
  dev->cache.pending++; /* dev->mutex is held */
  /* The write runs on a thread of its own, off the first result's path;
   * its read-backs take turns with builds and invokes (save_job_run).
   * TFLITE_GPU_CACHE_ASYNC=0 writes here instead, before the first invoke
   * returns. */
  if (env_flag("TFLITE_GPU_CACHE_ASYNC", 1)) {
    pthread_once(&g_writers_once, writers_register_exit_wait);
    writers_add(1);
    if (pthread_create(writer, NULL, save_job_thread, job) == 0) {
      *writer_started = 1;
      return;
    }
    writers_add(-1);
  }
  /* No thread: write now. The job takes dev->mutex at its end, which the
   * caller holds. */
  pthread_mutex_unlock(&dev->mutex);
  save_job_run(job);
  pthread_mutex_lock(&dev->mutex);
}

void ser_partition_save(PartitionCache* pc, GpuDevice* dev, const Executor* ex, int log_level) {
  if (pc->state != SER_MISS) return;
  pc->state = SER_SAVED; /* one attempt, whatever happens */
  const GpuProgram* progs[KC_MAX_ENTRIES] = {0};
  int nprogs = 0;
  /* The dispatches' programs, and the VM's (its dispatches have no kernel of
   * their own) unless the device's shared file holds it: its binary is read
   * back once, into one file. */
  cl_kernel vm_kernel = ex->vm && ex->vm->num_phases ? ex->vm->steps[0] : NULL;
  for (int i = 0; i <= ex->enc.num_dispatches; ++i) {
    cl_kernel k = i < ex->enc.num_dispatches ? ex->enc.dispatches[i].kernel : pc->vm_path ? NULL : vm_kernel;
    const GpuProgram* p = k ? gpu_device_kernel_program(dev, k) : NULL;
    int seen = !p;
    for (int j = 0; j < nprogs && !seen; ++j) seen = progs[j] == p;
    if (!seen && nprogs < KC_MAX_ENTRIES) progs[nprogs++] = p;
  }
  save_file(dev, pc->path, pc->key, progs, nprogs, &pc->writer, &pc->writer_started, log_level);
  const GpuProgram* vm_prog = vm_kernel ? gpu_device_kernel_program(dev, vm_kernel) : NULL;
  if (pc->vm_path && !pc->vm_loaded && vm_prog)
    save_file(dev, pc->vm_path, pc->vm_key, &vm_prog, 1, &pc->vm_writer, &pc->vm_writer_started, log_level);
}

void ser_partition_free(PartitionCache* pc) {
  if (pc->writer_started) pthread_join(pc->writer, NULL);
  if (pc->vm_writer_started) pthread_join(pc->vm_writer, NULL);
  free(pc->path);
  free(pc->key);
  free(pc->vm_path);
  free(pc->vm_dir);
  free(pc->vm_key);
  memset(pc, 0, sizeof(*pc));
}
