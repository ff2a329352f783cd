/* The delegate kernel that stands for one partition in the TFLite graph:
 * init lowers the partition's nodes, fuses them and builds an executor
 * (programs from the kernel cache when it is on); prepare re-plans after
 * an input resize; invoke runs the executor; free releases it all. */
#ifndef TFLITE_GPU_PARTITION_KERNEL_H
#define TFLITE_GPU_PARTITION_KERNEL_H

#include "model/tflite_abi.h"

/* The registration Prepare hands to ReplaceNodeSubsetsWithDelegateKernels.
 * Its init reads the running Prepare's GpuDelegate (delegate.h) through
 * TfLiteDelegateParams and adds what it built to the delegate's counts. */
TfLiteRegistration partition_kernel_registration(void);

#endif
