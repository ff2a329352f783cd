/* The library's version, written here and nowhere else: CMakeLists.txt
 * (project version), setup.py (the Python package's version) and
 * tflite_gpu.__version__ read it from this line. */
#ifndef TFLITE_GPU_VERSION_H
#define TFLITE_GPU_VERSION_H

#define TFLITE_GPU_VERSION "0.1.0"

#endif
