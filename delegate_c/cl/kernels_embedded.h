/* The .cl files of opencl_kernels/, embedded at build time by
 * tools/embed_kernels.py (the generated kernels_embedded.c lives in the
 * build directory, never in the source tree). */
#ifndef TFLITE_GPU_KERNELS_EMBEDDED_H
#define TFLITE_GPU_KERNELS_EMBEDDED_H

/* Source text of an embedded file such as "conv.cl", or NULL. */
const char* embedded_kernel_source(const char* file);
/* The bit of `kernel` in its file's -DGD_KSEL mask (its GD_SELECTED block,
 * common.cl), or -1 where the file does not select that kernel. */
int embedded_kernel_bit(const char* file, const char* kernel);
/* The VM opcode of `kernel` of `file` (tools/gen_vm.py: a kernel's body
 * the VM program calls), its arguments' kinds in *kinds ("p" buffer
 * it may write, "c" one it only reads, "i" int, "f" float, "2" int2, "4" int4, "d" float2, "q" float4); -1 when the VM has no body for it. */
int embedded_vm_opcode(const char* file, const char* kernel, const char** kinds);
/* 1 when opcode's body is a work-group's (GROUP_KERNEL, common.cl), of
 * *lx x *ly work-items sharing *lmem float4s of __local memory; 0 for a
 * body per work-item. */
int embedded_vm_group(int opcode, int* lx, int* ly, int* lmem);

#endif
