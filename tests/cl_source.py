"""Program sources for the single-kernel pyopencl tests, assembled the way
the library builds them (delegate_c/cl_device.c): the codes shared with C
(kernel_abi.h), then common.cl, then the kernel file."""
import pathlib

KERNELS = pathlib.Path(__file__).resolve().parent.parent / "opencl_kernels"


def program_source(name: str) -> str:
    return "".join((KERNELS / f).read_text() for f in ("kernel_abi.h", "common.cl", name))
