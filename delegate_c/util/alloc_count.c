/* Counts the host allocations made by the library's own code: the link
 * wraps malloc/calloc/realloc (-Wl,--wrap, see the Makefile), so calls from
 * the runtime, PoCL or Python are not counted. Tests read the count around
 * invokes to prove that an invoke after warm-up allocates nothing. A test
 * hook: only counting builds (make ALLOC_COUNT=1, cmake
 * -DTFLITE_GPU_ALLOC_COUNT=ON) compile and link this file; release builds
 * call the C library directly and report the count as -1. */
#include <stddef.h>

void* __real_malloc(size_t n);
void* __real_calloc(size_t n, size_t size);
void* __real_realloc(void* p, size_t n);
void* __wrap_malloc(size_t n);
void* __wrap_calloc(size_t n, size_t size);
void* __wrap_realloc(void* p, size_t n);
long gd_host_allocations(void);

static long g_allocations;

void* __wrap_malloc(size_t n) {
  __atomic_add_fetch(&g_allocations, 1, __ATOMIC_RELAXED);
  return __real_malloc(n);
}
void* __wrap_calloc(size_t n, size_t size) {
  __atomic_add_fetch(&g_allocations, 1, __ATOMIC_RELAXED);
  return __real_calloc(n, size);
}
void* __wrap_realloc(void* p, size_t n) {
  __atomic_add_fetch(&g_allocations, 1, __ATOMIC_RELAXED);
  return __real_realloc(p, n);
}
long gd_host_allocations(void) { return __atomic_load_n(&g_allocations, __ATOMIC_RELAXED); }
