"""The strict-compiler gate (tools/cl_strict.py): every program the library
can build passes clang's OpenCL C 1.2 front end with -pedantic-errors
-Werror and NVIDIA's extension list, and leaves no helper undefined at -O0.
The gate must fail on what stopped NVIDIA's compiler (a variadic macro) and
on a helper a non-inlining compiler cannot link (a plain C99 `inline`), and
its program list must cover every define the kernel files test and every
program the library actually built on real models (both kernel sets, FP32,
FP16 and shrunk work-groups)."""
from __future__ import annotations

import functools
import os
import pathlib
import re
import shutil
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import cl_strict  # noqa: E402


# Not a skip: a gate that silently does not run is no gate. tools/setup.sh
# installs PoCL, which brings its clang (Debian 12: clang-15).
def needs_clang(test):
    @functools.wraps(test)
    def run(*args, **kwargs):
        assert cl_strict.find_clang(), "no clang 15 or later that compiles OpenCL C (apt-get install clang-15)"
        return test(*args, **kwargs)
    return run


def _gate(*args) -> subprocess.CompletedProcess:
    # A bound against a hang: the whole gate takes 2-5 minutes while CI's
    # other steps share the machine.
    return subprocess.run([sys.executable, str(ROOT / "tools" / "cl_strict.py"), *args], capture_output=True,
                          text=True, timeout=900)


@needs_clang
def test_every_program_passes_the_strict_compiler():
    p = _gate()
    assert p.returncode == 0, p.stdout[-4000:] + p.stderr[-2000:]
    n = len(cl_strict.programs())
    assert f"{n} of {n} programs" in p.stdout, p.stdout


def _broken_copy(tmp_path, old, new) -> pathlib.Path:
    kernels = tmp_path / "opencl_kernels"
    shutil.copytree(cl_strict.KERNELS, kernels)
    common = kernels / "common.cl"
    text = common.read_text()
    assert old in text
    common.write_text(text.replace(old, new, 1))
    return kernels


ANCHOR = "/* Shapes travel as int4"
# (what is broken, the text replaced in common.cl, its replacement, what the gate must say)
BREAKAGES = [
    # What NVIDIA's compiler rejected: "error: variadic macros not supported in OpenCL".
    ("variadic macro", ANCHOR, "#define GD_UNPAREN(...) __VA_ARGS__\n" + ANCHOR, "variadic macros"),
    # A C99 inline without static emits no body: at -O0 (no inlining) the
    # kernel calls a function nobody defines.
    ("undefined helper", "GD_INLINE int idx4(", "inline int idx4(", "left undefined at -O0 (a plain C99 inline?): idx4"),
    # clang's diagnostic pragma reached every program; NVIDIA warned about it.
    ("clang pragma outside PoCL", ANCHOR, '#pragma clang diagnostic ignored "-Wno-such-warning"\n' + ANCHOR,
     "-Wunknown-warning-option"),
]


@needs_clang
@pytest.mark.parametrize("what, old, new, said", BREAKAGES, ids=[b[0] for b in BREAKAGES])
def test_the_gate_rejects(tmp_path, what, old, new, said):
    kernels = _broken_copy(tmp_path, old, new)
    p = _gate("--kernels", str(kernels), "--files", "pool.cl")
    assert p.returncode == 1, p.stdout
    assert "REJECTED pool.cl" in p.stdout and said in p.stdout, p.stdout


# Defines the kernel files test that the library never sets: tiles fixed in
# kernel_abi.h (tests/test_cl_conv_gpu.py builds other values), include
# guards, and defaults a file derives itself; GD_VM_SCAN is
# tools/gen_vm.py's, which only preprocesses with it. GD_VM_PROGRAM builds
# a body file inside the VM program, which the gate compiles as
# vm_program.cl.
NOT_SET_BY_THE_LIBRARY = {"CONVG_TP", "CONVG_BS", "CONVG_KT", "DWG_TX", "TFLITE_GPU_KERNEL_ABI_H", "GD_VM_SCAN",
                          "GD_VM_PROGRAM"}
_TESTED = re.compile(r"^\s*#\s*(?:ifdef|ifndef)\s+(\w+)|defined\s*\(\s*(\w+)\s*\)", re.M)


def _tested_defines(text: str) -> set[str]:
    return {a or b for a, b in _TESTED.findall(text)}


def test_the_program_list_covers_every_define_the_kernels_test():
    """A define a kernel file (or the shared prologue) tests must be one the
    gate varies for that file, or a base define (device, storage, kernel
    selection): a new knob without a gate entry fails here."""
    prologue = _tested_defines((cl_strict.KERNELS / "kernel_abi.h").read_text() +
                               (cl_strict.KERNELS / "common.cl").read_text())
    varied = {f: {m for v in vs for m in re.findall(r"-D(\w+)=", v)} for f, vs in cl_strict.VARIANTS.items()}
    missing = {}
    for path in sorted(cl_strict.KERNELS.glob("*.cl")):
        if path.name == "common.cl":
            continue
        body = path.read_text()
        used = _tested_defines(body) | {m for m in prologue if re.search(rf"\b{m}\b", body)}
        left = used - cl_strict.BASE_DEFINES - NOT_SET_BY_THE_LIBRARY - varied.get(path.name, set())
        if left:
            missing[path.name] = sorted(left)
    assert not missing, f"defines the gate never varies (add them to VARIANTS in tools/cl_strict.py): {missing}"


MODELS = ("face_detection_short_range", "hand_recrop", "selfie_segmentation", "face_landmark_with_attention")


def _built_programs(configs) -> set[tuple[str, str]]:
    """(file, options) of every program the library compiled while applying
    the delegate (`explain`: Prepare builds every program, nothing runs) to
    MediaPipe models under each (options, environment) config. Sampled (CI
    time: the whole grid took 6-16 minutes beside CI's other steps): config
    i runs models i and i + 1 of MODELS (cyclic), so each model is seen
    under three configs and each config on two models."""
    seen = set()
    for i, (opts, env_extra) in enumerate(configs):
        env = dict(os.environ, TFLITE_GPU_BUILD_LOG="1", **env_extra)
        for model in (MODELS[i % len(MODELS)], MODELS[(i + 1) % len(MODELS)]):
            args = [sys.executable, "-m", "tflite_gpu", "explain", model]
            for o in opts:
                args += ["--opt", o]
            p = subprocess.run(args, capture_output=True, text=True, env=env, timeout=600)
            assert p.returncode == 0, p.stderr[-3000:]
            seen |= set(re.findall(r"tflite-gpu build (\S+) \[(.*?)\]: ", p.stderr))
    assert seen, "TFLITE_GPU_BUILD_LOG printed no build"
    return seen


def test_a_program_is_covered_by_its_pair_and_its_variant():
    """The coverage rule (cl_strict.covered): the device and storage pair
    must be one the whole file is compiled under, and the variant one the
    gate compiles under some pair."""
    listed = cl_strict.programs(files=["conv_gpu.cl", "pool.cl"])
    pocl_fp16 = ["-DGD_POCL=1", "-DFP16_STORAGE=1"]
    assert cl_strict.covered(listed, "conv_gpu.cl", pocl_fp16 + ["-DCONVG_LX=32", "-DCONVG_LY=2"])
    assert cl_strict.covered(listed, "conv_gpu.cl", ["-DFP16_STORAGE=1", "-DFP32_STORAGE=1", "-DCONVG_LX=8",
                                                     "-DCONVG_LY=4", "-DCONVG_DST_BHWC=1"])
    assert not cl_strict.covered(listed, "conv_gpu.cl", pocl_fp16 + ["-DCONVG_LX=128", "-DCONVG_LY=2"])
    assert not cl_strict.covered(listed, "conv_gpu.cl", pocl_fp16 + ["-DCONVG_LX=32"])
    # every file has NVIDIA's path (common.cl's GD_NOINLINE); no device is both
    assert cl_strict.covered(listed, "pool.cl", ["-DGD_NVIDIA=1", "-DFP16_STORAGE=1"])
    assert not cl_strict.covered(listed, "pool.cl", ["-DGD_NVIDIA=1", "-DGD_POCL=1"])
    assert not cl_strict.covered(listed, "pool.cl", ["-DGD_POCL=1", "-DROW_PIXELS=1"])
    assert cl_strict.covered(listed, "pool.cl", ["-DGD_POCL=1", "-DFP16_STORAGE=1", "-DFP32_STORAGE=1"])


def test_the_program_list_covers_what_the_library_builds():
    """Each program compiled on real models is one the gate compiles: the
    same file, device, storage and variant defines, and every kernel bit of
    its selection mask checked alone. TFLITE_GPU_MAX_GROUP=16 makes the
    library shrink its work-groups (variant_fit_group), as on a device
    whose kernels cannot run the default groups."""
    fp16 = ["is_precision_loss_allowed=1"]
    # fp16_guard's probe runs (mixed storage) with the CPU set only: with the
    # GPU set they ran its kernels on PoCL for 20-100 s a model and added no
    # program the other configs miss (a mixed pair is compiled for every file).
    configs = [(["kernel_set=cpu"], {}), (["kernel_set=gpu"], {}), (["kernel_set=cpu", *fp16, "fp16_guard=on"], {}),
               (["kernel_set=gpu", *fp16], {}), (["kernel_set=gpu"], {"TFLITE_GPU_MAX_GROUP": "16"}),
               (["execution=persistent"], {})]
    listed = cl_strict.programs()
    bits = {f: set(cl_strict.kernel_bits(cl_strict.source_of(cl_strict.KERNELS, f))) for f in {p.file for p in listed}}
    uncovered = []
    for file, options in sorted(_built_programs(configs)):
        words = options.split()
        std = [w for w in words if w.startswith("-cl-std=")]
        assert std == ["-cl-std=CL1.2"], options  # PoCL is an OpenCL C 1.2 device
        mask = [int(w.split("=")[1], 16) for w in words if w.startswith("-DGD_KSEL=")]
        # The VM program's opcode and math masks only drop switch cases: the
        # gate's program of every opcode compiles each body, and one of its
        # programs masks math ops (tools/cl_strict.py VARIANTS). The test
        # suite's -cl-opt-disable (tools/run_tests.sh) changes no source.
        base = [w for w in words if not w.startswith(("-cl-std=", "-DGD_KSEL=", *cl_strict.VM_MASKS))
                and w != "-cl-opt-disable"]
        kernel_bits = [b for b in range(31) if mask and mask[0] >> b & 1]
        if not cl_strict.covered(listed, file, base) or any(b not in bits[file] for b in kernel_bits):
            uncovered.append(f"{file} [{options}]")
    assert not uncovered, f"built but not in the gate's list: {uncovered}"


@needs_clang
def test_a_vm_program_compiles_only_the_bodies_its_masks_call():
    """On PoCL the bodies are static (common.cl GD_NOINLINE), so a body no
    vm_call case calls is not even emitted: the VM program holds every
    kernel file, and its masks only drop cases. Opcode 0 and the float copy
    of opcode 1 (VM_FLOAT_COPY, tools/gen_vm.py), in an FP16 program: those
    two bodies, and no other."""
    table = cl_strict.gen_vm.vm_table(cl_strict.KERNELS)
    copy = int(re.search(r"VM_FLOAT_COPY = (\d+)", (cl_strict.KERNELS / "kernel_abi.h").read_text()).group(1))
    defines = (f"-DGD_POCL=1 -DFP16_STORAGE=1 {cl_strict.VM_BASE} -DVM_OPS_0=0x1 -DVM_OPS_1=0x0 -DVM_OPS_2=0x0 "
               f"-DVM_OPS_{copy // 32}=0x2 -DVM_OPS_{copy // 32 + 1}=0x0 -DVM_OPS_{copy // 32 + 2}=0x0")
    source = "".join(cl_strict.source_of(cl_strict.KERNELS, f)
                     for f in ("kernel_abi.h", "common.cl", cl_strict.VM_PROGRAM))
    p = subprocess.run([cl_strict.find_clang(), *cl_strict._flags(cl_strict.NVIDIA_EXTENSIONS), "-O0", "-emit-llvm",
                        "-S", "-o", "-", *defines.split(), "-"], input=source, capture_output=True, text=True)
    assert p.returncode == 0, p.stderr[-2000:]
    defined = set(re.findall(r"^define\b.*?@([\w.$]+)\(", p.stdout, re.M))
    bodies = {f"{kernel}_body" for _, _, kernel, _ in table} | {f"{kernel}_body__f" for _, _, kernel, _ in table}
    assert defined & bodies == {f"{table[0][2]}_body", f"{table[1][2]}_body__f"}, sorted(defined & bodies)
