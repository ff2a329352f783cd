/* Kernel selection for the memory-bound row kernels: the row-wise binary
 * ops (elementwise.cl), the float boundary conversions (layout.cl) and
 * bilinear resize (resize.cl). Each set runs the same kernel source: the
 * CPU set with several pixels per work-item (the index arithmetic is paid
 * once per row piece), the GPU set with one, so neighbouring work-items
 * touch neighbouring memory and loads coalesce. */
#include <stdio.h>

#include "select/selectors.h"

/* A kernel over `run` pixels of each of `rows` (slices x rows x batches),
 * cpu_tile pixels per work-item in the CPU set, 1 (via -D<define>=1) in
 * the GPU set. */
static void row_variant(const SelectTarget* t, const char* file, const char* kernel, size_t run, size_t rows,
                        size_t cpu_tile, const char* define, KernelVariant* v) {
  int gpu = t->pol.v[POL_KERNEL_SET] == GD_KSET_GPU;
  *v = variant_1d(file, kernel, div_up(run, gpu ? 1 : cpu_tile) * rows);
  if (gpu) snprintf(v->defines, sizeof(v->defines), "-D%s=1", define);
}

static size_t slices(const int s[4]) { return (size_t)(s[GD_C] + 3) / 4; }

void select_binary_rows(const SelectTarget* t, const int ds[4], KernelVariant* v) {
  row_variant(t, "elementwise.cl", "binary_op_rows", (size_t)ds[GD_H] * ds[GD_W], slices(ds) * (size_t)ds[GD_B],
              ROW_TILE, "ROW_PIXELS", v);
  /* Half arithmetic where the device has it (a node kept on float storage
   * drops it, common.cl). Only the GPU set: CPU runtimes emulate half math. */
  if (t->pol.v[POL_KERNEL_SET] == GD_KSET_GPU && t->fp16 && t->caps->fp16)
    snprintf(v->defines, sizeof(v->defines), "-DROW_PIXELS=1 -DHALF_MATH=1");
}

void select_boundary(const SelectTarget* t, const int s[4], int to_device, KernelVariant* v) {
  row_variant(t, "layout.cl", to_device ? "bhwc_to_phwc4" : "phwc4_to_bhwc", (size_t)s[GD_W],
              (size_t)s[GD_H] * slices(s) * (size_t)s[GD_B], LAYOUT_TILE, "LAYOUT_PIXELS", v);
}

void select_resize_bilinear(const SelectTarget* t, const int ds[4], KernelVariant* v) {
  row_variant(t, "resize.cl", "resize_bilinear", (size_t)ds[GD_W], (size_t)ds[GD_H] * slices(ds) * (size_t)ds[GD_B],
              RESIZE_TILE, "RESIZE_PIXELS", v);
}
