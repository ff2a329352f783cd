"""Device details the library's list leaves out (extensions, compute units,
work-group and allocation limits), read straight from the OpenCL ICD loader
with cffi. Devices are enumerated the way the library does it (platforms in
order, CL_DEVICE_TYPE_ALL), so index i here is the library's device i."""
from __future__ import annotations

import ctypes.util
import os

import cffi

_CDEF = """
typedef int32_t cl_int;
typedef uint32_t cl_uint;
typedef uint64_t cl_ulong;
typedef struct _cl_platform_id* cl_platform_id;
typedef struct _cl_device_id* cl_device_id;
cl_int clGetPlatformIDs(cl_uint, cl_platform_id*, cl_uint*);
cl_int clGetDeviceIDs(cl_platform_id, cl_ulong, cl_uint, cl_device_id*, cl_uint*);
cl_int clGetPlatformInfo(cl_platform_id, cl_uint, size_t, void*, size_t*);
cl_int clGetDeviceInfo(cl_device_id, cl_uint, size_t, void*, size_t*);
"""
_DEVICE_TYPE_ALL = 0xFFFFFFFF
_PLATFORM_NAME, _PLATFORM_VERSION = 0x0902, 0x0901
_DEVICE = {  # cl_device_info codes (CL/cl.h)
    "name": (0x102B, "str"), "extensions": (0x1030, "str"), "opencl_c_version": (0x103D, "str"),
    "compute_units": (0x1002, "uint"), "max_clock_mhz": (0x100C, "uint"),
    "max_work_group_size": (0x1004, "size_t"), "max_alloc_bytes": (0x1010, "ulong"),
    "local_mem_bytes": (0x1023, "ulong"), "image_support": (0x1016, "uint"),
}

_ffi = cffi.FFI()
_ffi.cdef(_CDEF)


def _open():
    """The OpenCL loader: $TFLITE_GPU_OPENCL_LIBRARY and nothing else when it
    is set (OSError when that cannot be loaded: no silent fallback to
    another loader), else the system's; None when there is none."""
    wanted = os.environ.get("TFLITE_GPU_OPENCL_LIBRARY")
    if wanted:
        try:
            return _ffi.dlopen(wanted)
        except OSError as e:
            why = str(e).split("  Additionally")[0]  # cffi appends a note about find_library
            raise OSError(f"TFLITE_GPU_OPENCL_LIBRARY={wanted} cannot be loaded ({why})") from e
    for name in filter(None, ["libOpenCL.so.1", ctypes.util.find_library("OpenCL")]):
        try:
            return _ffi.dlopen(name)
        except OSError:
            continue
    return None


def _string(fn, handle, code) -> str:
    size = _ffi.new("size_t*")
    if fn(handle, code, 0, _ffi.NULL, size) != 0 or size[0] == 0:
        return ""
    buf = _ffi.new("char[]", size[0])
    fn(handle, code, size[0], buf, _ffi.NULL)
    return _ffi.string(buf).decode(errors="replace").strip()


def _scalar(cl, device, code, kind):
    ctype = {"uint": "cl_uint*", "ulong": "cl_ulong*", "size_t": "size_t*"}[kind]
    out = _ffi.new(ctype)
    if cl.clGetDeviceInfo(device, code, _ffi.sizeof(ctype[:-1]), out, _ffi.NULL) != 0:
        return None
    return int(out[0])


def device_details() -> list[dict]:
    """One dict per device in the library's order; [] when OpenCL is absent;
    OSError when $TFLITE_GPU_OPENCL_LIBRARY names a library that cannot be loaded."""
    cl = _open()
    if cl is None:
        return []
    count = _ffi.new("cl_uint*")
    if cl.clGetPlatformIDs(0, _ffi.NULL, count) != 0 or count[0] == 0:
        return []
    n = min(count[0], 16)
    plats = _ffi.new("cl_platform_id[]", n)
    cl.clGetPlatformIDs(n, plats, _ffi.NULL)
    out = []
    for p in range(n):
        nd = _ffi.new("cl_uint*")
        if cl.clGetDeviceIDs(plats[p], _DEVICE_TYPE_ALL, 0, _ffi.NULL, nd) != 0 or nd[0] == 0:
            continue
        devs = _ffi.new("cl_device_id[]", nd[0])
        cl.clGetDeviceIDs(plats[p], _DEVICE_TYPE_ALL, nd[0], devs, _ffi.NULL)
        for d in range(nd[0]):
            info = {"platform_version": _string(cl.clGetPlatformInfo, plats[p], _PLATFORM_VERSION)}
            for key, (code, kind) in _DEVICE.items():
                if kind == "str":
                    info[key] = _string(cl.clGetDeviceInfo, devs[d], code)
                else:
                    info[key] = _scalar(cl, devs[d], code, kind)
            info["extensions"] = sorted(info["extensions"].split())
            info["image_support"] = bool(info["image_support"])
            out.append(info)
    return out
