// Minimal C++ use of libgpu_delegate.so: load a .tflite model, hand it to
// the GPU delegate, run it once on seeded random inputs, and compare with
// the same model on the CPU.
//
//   minimal_gpu model.tflite [--fp16]
//
// Build: see README.md next to this file (needs your TensorFlow Lite C++
// build and an installed tflite-gpu).
#include <tflite_gpu/gpu_delegate.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "tensorflow/lite/interpreter.h"
#include "tensorflow/lite/kernels/register.h"
#include "tensorflow/lite/model.h"

namespace {

std::unique_ptr<tflite::Interpreter> Build(const tflite::FlatBufferModel& model) {
  tflite::ops::builtin::BuiltinOpResolver resolver;
  std::unique_ptr<tflite::Interpreter> interpreter;
  if (tflite::InterpreterBuilder(model, resolver)(&interpreter) != kTfLiteOk) return nullptr;
  return interpreter;
}

// Same seeded values into every float32 input of both interpreters.
bool FillInputs(tflite::Interpreter* it) {
  std::mt19937 rng(0);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  for (int index : it->inputs()) {
    TfLiteTensor* t = it->tensor(index);
    if (t->type != kTfLiteFloat32) {
      std::fprintf(stderr, "input %s is not float32; this example only fills float inputs\n", t->name);
      return false;
    }
    float* data = it->typed_tensor<float>(index);
    for (size_t i = 0; i < t->bytes / sizeof(float); ++i) data[i] = dist(rng);
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s model.tflite [--fp16]\n", argv[0]);
    return 2;
  }
  const bool fp16 = argc > 2 && std::strcmp(argv[2], "--fp16") == 0;

  auto model = tflite::FlatBufferModel::BuildFromFile(argv[1]);
  if (!model) return 2;
  auto gpu = Build(*model);
  auto cpu = Build(*model);
  if (!gpu || !cpu) return 2;

  // Upstream-compatible options: the same struct and defaults as
  // tensorflow/lite/delegates/gpu/delegate_options.h.
  TfLiteGpuDelegateOptionsV2 options = TfLiteGpuDelegateOptionsV2Default();
  if (fp16) options.is_precision_loss_allowed = 1;
  TfLiteDelegate* delegate = TfLiteGpuDelegateV2Create(&options);
  if (!delegate) {
    std::fprintf(stderr, "no usable OpenCL device (the reason was printed above)\n");
    return 3;
  }
  // Unsupported ops stay on the CPU; the delegate prints which and why.
  if (gpu->ModifyGraphWithDelegate(delegate) != kTfLiteOk) {
    std::fprintf(stderr, "ModifyGraphWithDelegate failed\n");
    return 1;
  }
  if (gpu->AllocateTensors() != kTfLiteOk || cpu->AllocateTensors() != kTfLiteOk) return 1;
  if (!FillInputs(gpu.get()) || !FillInputs(cpu.get())) return 2;
  if (gpu->Invoke() != kTfLiteOk || cpu->Invoke() != kTfLiteOk) return 1;

  for (size_t o = 0; o < gpu->outputs().size(); ++o) {
    const TfLiteTensor* g = gpu->output_tensor(o);
    const TfLiteTensor* c = cpu->output_tensor(o);
    if (g->type != kTfLiteFloat32) continue;
    const size_t n = g->bytes / sizeof(float);
    double diff = 0, ref = 0;
    for (size_t i = 0; i < n; ++i) {
      const double d = g->data.f[i] - c->data.f[i];
      diff += d * d;
      ref += double(c->data.f[i]) * c->data.f[i];
    }
    std::printf("output %zu (%s): %zu values, relative L2 vs CPU %.3g\n", o, g->name, n,
                std::sqrt(diff / (ref > 0 ? ref : 1)));
  }

  // The interpreter uses the delegate: destroy it first.
  gpu.reset();
  TfLiteGpuDelegateV2Delete(delegate);
  return 0;
}
