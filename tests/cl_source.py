"""Shared pieces of the single-kernel pyopencl tests: program sources
assembled the way the library builds them (delegate_c/cl/cl_device.c: the
codes shared with C in kernel_abi.h, then common.cl, then the kernel file),
and the PHWC4 layout on the numpy side."""
import pathlib

import numpy as np

KERNELS = pathlib.Path(__file__).resolve().parent.parent / "opencl_kernels"


def device_options(context, fp16: bool = False) -> str:
    """The options the library builds every program with on this context's
    device (delegate_c/cl/cl_device.c compose_build_options): -cl-std=CL1.2,
    -DGD_POCL=1 on PoCL (its clang-only pragmas and attributes), and
    -DFP16_STORAGE=1 for half storage."""
    platform = context.devices[0].platform.name
    pocl = "Portable Computing Language" in platform or "pocl" in platform.lower()
    return "-cl-std=CL1.2" + (" -DGD_POCL=1" if pocl else "") + (" -DFP16_STORAGE=1" if fp16 else "")


def program_source(name: str) -> str:
    return "".join((KERNELS / f).read_text() for f in ("kernel_abi.h", "common.cl", name))


def buffer(context, a):
    """A read-write device buffer holding a copy of a."""
    import pyopencl as cl

    return cl.Buffer(context, cl.mem_flags.READ_WRITE | cl.mem_flags.COPY_HOST_PTR, hostbuf=np.ascontiguousarray(a))


def phwc4(x):
    """BHWC array -> PHWC4 [B][S][H][W][4], zero padded."""
    b, h, w, c = x.shape
    s = (c + 3) // 4
    p = np.zeros((b, h, w, s * 4), x.dtype)
    p[..., :c] = x
    return p.reshape(b, h, w, s, 4).transpose(0, 3, 1, 2, 4).copy()


def bhwc(p, c):
    """PHWC4 [B][S][H][W][4] -> BHWC with c channels."""
    b, s, h, w, _ = p.shape
    return p.transpose(0, 2, 3, 1, 4).reshape(b, h, w, s * 4)[..., :c]


def shape4(b, h, w, c):
    """A shape as the kernels' int4 (W, H, C, B)."""
    return np.array([w, h, c, b], np.int32)
