/* The kernel cache as the delegate uses it (serialization_dir +
 * model_token): per partition, a key and a file; before the executor is
 * built the cached program binaries are loaded onto the device, and after
 * the first invoke of a miss the binaries (which on PoCL now hold the
 * work-group functions its enqueues compiled) are written back. The file
 * format and I/O live in kernel_cache.c. */
#ifndef TFLITE_GPU_SERIALIZATION_H
#define TFLITE_GPU_SERIALIZATION_H

#include "cl/cl_device.h"
#include "runtime/executor.h"
#include "model/model_view.h"
#include "model/tflite_abi.h"

typedef enum SerState {
  SER_OFF = 0,  /* caching disabled, or this partition gave up on it */
  SER_HIT = 1,  /* every program came from the file */
  SER_MISS = 2, /* to be written after the first invoke */
  SER_SAVED = 3,
} SerState;

typedef struct PartitionCache {
  SerState state;
  char* path; /* owned */
  char* key;  /* owned */
  int source_builds_before;
  int loaded; /* the file was valid for this key */
  /* The VM program (execution=stepped|persistent) depends on the model
   * only through the opcodes it runs (vm.h): one more file per device and
   * precision, shared by every model in the directory. It holds one
   * program, which runs any partition whose opcodes it holds; a partition
   * with others builds the union and replaces it, so the device's program
   * grows to what its models run and a model whose bodies it holds
   * compiles nothing. Its path is known once the partition is encoded
   * (ser_vm_load). */
  char* vm_dir;  /* owned; NULL when the partition does not run the VM */
  char vm_tag[64];
  char* vm_path; /* owned; set by ser_vm_load */
  char* vm_key;  /* owned */
  int vm_loaded; /* the device's VM program came from the shared file */
  pthread_t vm_writer;
  int vm_writer_started;
  pthread_t writer; /* the thread writing the file after the first invoke */
  int writer_started;
} PartitionCache;

/* A hash of the partition's content: node ids, op codes and versions,
 * custom options, tensor ids, types, shapes and quantization, and the
 * bytes of every constant its nodes read (not the model token). */
uint64_t ser_partition_fingerprint(const ModelView* mv, const TfLiteDelegateParams* params);
/* Computes the partition's key and file, and loads the file's programs
 * onto dev (dev->mutex held). Any problem is a miss with one warning line.
 * Hits, misses and writes are counted in dev->cache (dev->mutex held). */
void ser_partition_begin(PartitionCache* pc, const char* dir, const char* token, GpuDevice* dev,
                         const ModelView* mv, const TfLiteDelegateParams* params, KernelSet set, int vm,
                         int log_level);
/* Before the VM program with these build defines is built (dev->mutex
 * held; the executor's VmProgramCache hook): loads the device's shared VM
 * file onto dev, widening defines (size bytes) to its program's opcodes
 * or to the union of both (vm_defines.h). */
void ser_vm_load(PartitionCache* pc, GpuDevice* dev, char* defines, size_t size, int log_level);
/* After executor_build: a hit only if nothing had to be compiled. */
void ser_partition_built(PartitionCache* pc, GpuDevice* dev, int log_level);
/* After the first successful invoke of a miss (dev->mutex held): writes
 * the binaries of the programs this partition's dispatches use (the VM
 * program to the shared file alone, where that was not valid), on a
 * thread of its own (dev->cache.pending counts it until it is done;
 * gpu_device_wait_cache_writes waits for it). */
void ser_partition_save(PartitionCache* pc, GpuDevice* dev, const Executor* ex, int log_level);
/* Waits for the partition's cache write, then frees. */
void ser_partition_free(PartitionCache* pc);

#endif
