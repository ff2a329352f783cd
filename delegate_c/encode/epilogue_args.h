/* A node's fused epilogue (fuse_epilogue.c) as the conv and depthwise
 * kernels take it (common.cl's epilogue_r): the alpha operand, the
 * residual (the one runtime operand), epi and the residual's slices. */
#ifndef TFLITE_GPU_EPILOGUE_ARGS_H
#define TFLITE_GPU_EPILOGUE_ARGS_H

#include "encode/encode.h"
#include "cl/target.h"

/* Fills the arguments for node n run by variant v; `placeholder` stands in
 * for buffers the epilogue does not use. Two steps of which at most one
 * uses the alpha operand go as they are, epi = (op0, act0, op1, act1); any
 * other chain as EPI_CHAIN, its steps and their constants in the alpha
 * operand (kernel_abi.h). -1 on error (reported on ex). */
int epilogue_args(Encoder* ex, const GNode* n, const KernelVariant* v, cl_mem placeholder, cl_mem* alpha,
                  cl_mem* residual, int epi[4], int* res_slices);

/* 1 when n's kernels need EPI_UN_DEFINE: a unary step or a chain. */
int epilogue_needs_un(const Graph* g, const GNode* n);

/* The unary and binary ops (bits UN_*, BIN_*) of n's steps, for ex_math. */
void epilogue_math(const GNode* n, unsigned* unary_ops, unsigned* binary_ops);

#endif
