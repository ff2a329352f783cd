"""tools/nvptx_build_time.py (NVIDIA's build time without an NVIDIA GPU):
what it reads from the library and how it turns PoCL's programs into
NVIDIA's. The compiles themselves need libclc and ptxas, which CI does not
install; docs/benchmarks/nvptx-build-time.md has a run."""
import pathlib
import re
import sys

ROOT = pathlib.Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))
import nvptx_build_time as nv  # noqa: E402


def test_it_reads_the_build_log_line_the_library_prints():
    """cl_program.c's TFLITE_GPU_BUILD_LOG format, filled in as printf
    would, is what the tool parses: a changed format fails here, not
    silently in a measurement."""
    src = (ROOT / "delegate_c" / "cl" / "cl_program.c").read_text()
    fmt = re.search(r'fprintf\(stderr, "(tflite-gpu build [^"]*)\\n", file, opts, secs\)', src)
    assert fmt, "cl_program.c's build log line moved"
    line = fmt.group(1).replace("%s", "vm_program.cl", 1).replace("%s", "-cl-std=CL1.2 -DGD_POCL=1 -DVM_OPS_0=0x5", 1)
    line = line.replace("%.3f", "1.250")
    assert nv.BUILD_LINE.findall("noise\n" + line + "\nmore\n") == [
        ("vm_program.cl", "-cl-std=CL1.2 -DGD_POCL=1 -DVM_OPS_0=0x5", "1.250")]


def test_pocl_options_become_nvidias():
    """PoCL's device define goes, NVIDIA's comes first, the program's own
    defines stay in order, and -cl-std is the tool's own."""
    got = nv.nvidia_options("-cl-std=CL1.2 -DGD_POCL=1 -DFP16_STORAGE=1 -DCONVG_LX=8 -DGD_KSEL=0x10", ["-DX=1"])
    assert got == ["-DGD_NVIDIA=1", "-DFP16_STORAGE=1", "-DCONVG_LX=8", "-DGD_KSEL=0x10", "-DX=1"]


def test_the_vm_program_source_is_the_one_the_library_embeds():
    """vm_program.cl is generated (tools/gen_vm.py); every other file is
    read as it is; both behind kernel_abi.h and common.cl, as cl_program.c
    builds them."""
    vm = nv.source(nv.KERNELS, "vm_program.cl")
    assert "__kernel void vm_run(" in vm and vm.index("GD_NOINLINE") < vm.index("vm_run(")
    pool = nv.source(nv.KERNELS, "pool.cl")
    assert pool.startswith((nv.KERNELS / "kernel_abi.h").read_text())
    assert pool.endswith((nv.KERNELS / "pool.cl").read_text())


def test_it_sizes_the_ptx_functions_by_their_definitions():
    """--functions: each .entry or .func from its header to the next one's,
    largest first; a prototype is a function of its own line or two."""
    ptx = ("//\n.func  (.param .b32 func_retval0) rare\n(\n\t.param .b32 rare_param_0\n);\n"
           ".visible .entry vm_run(\n\t.param .u64 a\n)\n{\n\tret;\n\tret;\n\tret;\n}\n"
           ".func  (.param .b32 func_retval0) rare(\n\t.param .b32 rare_param_0\n)\n{\n\tret;\n}\n")
    assert nv.ptx_functions(ptx) == [("vm_run", 8), ("rare", 6), ("rare", 4)]
