"""Create -> apply -> invoke -> destroy, N times (argv[1]), for valgrind
memcheck (tests/test_sanitizers.py). Exits 1 if an output is wrong."""
import gc
import sys

import numpy as np

import tflite_gpu

mod = tflite_gpu.runtime()
sys.path.insert(0, sys.argv[2])  # tests/
from test_lifetime import _small_model  # noqa: E402

model = _small_model()
x = np.random.default_rng(4).uniform(-4, 8, [1, 5, 7, 3]).astype(np.float32)
cpu = mod.Interpreter(model_content=model,
                      experimental_op_resolver_type=mod.OpResolverType.BUILTIN_WITHOUT_DEFAULT_DELEGATES)
cpu.allocate_tensors()
cpu.set_tensor(cpu.get_input_details()[0]["index"], x)
cpu.invoke()
want = cpu.get_tensor(cpu.get_output_details()[0]["index"]).copy()
for _ in range(int(sys.argv[1])):
    delegate = tflite_gpu.load_delegate(log_level="silent")
    it = mod.Interpreter(model_content=model, experimental_delegates=[delegate])
    it.allocate_tensors()
    it.set_tensor(it.get_input_details()[0]["index"], x)
    it.invoke()
    if np.abs(it.get_tensor(it.get_output_details()[0]["index"]) - want).max() > 1e-5:
        sys.exit(1)
    del it, delegate
    gc.collect()
print("LEAK_LOOP_OK")
