/* Densification of constant sparse TFLite tensors (the input of a DENSIFY
 * node) into a dense float32 array, done once at prepare time.
 *
 * Format: TFLite's sparsity metadata (schema SparsityParameters, runtime
 * TfLiteSparsity). A tensor of original rank R with B blocked dimensions is
 * traversed over R + B levels. traversal_order[0..R) is a permutation of the
 * original dims and traversal_order[R..R+B) a permutation of R..R+B-1 (block
 * dims); block_map[k] is the original dim that block dim k splits (strictly
 * increasing, as upstream's converter assumes). dim_metadata[l] describes
 * traversal level l: DENSE (dense_size = extent of that level) or SPARSE_CSR
 * (array_segments indexed by the position in the enclosing levels,
 * array_indices holding coordinates of this level). Packed values are
 * consumed in traversal order. Block levels must be DENSE; their dense_size
 * is the block size, and a blocked dim must be divisible by it.
 *
 * The input is treated as untrusted: every count, segment and index is
 * checked before anything is read or written. Within a CSR segment the
 * indices must be strictly increasing (sorted, no repeats). */
#ifndef TFLITE_GPU_SPARSE_DENSIFY_H
#define TFLITE_GPU_SPARSE_DENSIFY_H

#include <stddef.h>
#include <stdint.h>

#include "model/tflite_abi.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Largest original rank accepted (block dims come on top, at most `rank`). */
#define TFLITE_GPU_DENSIFY_MAX_RANK 6

/* Densify a constant sparse tensor into `out` (row-major over `dense_dims`,
 * element count = product of dense_dims), converting values to float32.
 * Value types: kTfLiteFloat32, kTfLiteFloat16 (IEEE half -> float),
 * kTfLiteInt8 (raw cast, no scaling). Elements not present in the sparse
 * encoding are written as 0.0f (the whole of `out` is written).
 * If t->dims is non-NULL it must equal dense_dims.
 * Returns 0 on success; on failure returns -1 and writes a one-line reason to
 * err (errlen bytes; err may be NULL). On failure `out` may be partly
 * written. */
int tflite_gpu_densify(const TfLiteTensor* t, const int* dense_dims, int rank, float* out, char* err,
                       size_t errlen);

/* The same validation as tflite_gpu_densify, writing nothing: 0 when
 * densifying t into dense_dims would succeed, else -1 with the reason. The
 * delegate calls it when it decides whether to take a DENSIFY node, so a
 * malformed sparse constant stays on the CPU instead of failing the build. */
int tflite_gpu_densify_check(const TfLiteTensor* t, const int* dense_dims, int rank, char* err, size_t errlen);

/* IEEE half to float, exact, handles subnormals/inf/nan. */
float tflite_gpu_half_to_float(uint16_t h);

#ifdef __cplusplus
}
#endif

#endif
