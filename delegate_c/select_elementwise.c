/* Kernel selection for the row-wise binary ops (elementwise.cl) and the
 * float boundary conversions (layout.cl): the same kernels in both sets,
 * built with several pixels per work-item for CPU cores (the index
 * arithmetic is paid once per row piece) and one on GPUs (neighbouring
 * work-items on neighbouring memory, so loads coalesce). */
#include <stdio.h>

#include "selectors.h"

void select_binary_rows(const GpuDevice* dev, const int ds[4], KernelVariant* v) {
  int gpu = dev->kernel_set == GD_KSET_GPU;
  size_t pixels = gpu ? 1 : ROW_TILE;
  size_t slices = (size_t)(ds[GD_C] + 3) / 4;
  *v = variant_1d("elementwise.cl", "binary_op_rows",
                  div_up((size_t)ds[GD_H] * ds[GD_W], pixels) * slices * (size_t)ds[GD_B]);
  if (gpu) snprintf(v->defines, sizeof(v->defines), "-DROW_PIXELS=1");
}

void select_boundary(const GpuDevice* dev, const int shape[4], int to_device, KernelVariant* v) {
  int gpu = dev->kernel_set == GD_KSET_GPU;
  int pixels = gpu ? 1 : LAYOUT_TILE;
  int tiled[4] = {shape[GD_B], shape[GD_H], (shape[GD_W] + pixels - 1) / pixels, shape[GD_C]};
  *v = variant_1d("layout.cl", to_device ? "bhwc_to_phwc4" : "phwc4_to_bhwc", phwc4_items(tiled));
  if (gpu) snprintf(v->defines, sizeof(v->defines), "-DLAYOUT_PIXELS=1");
}
