"""The C/C++ packaging: `cmake --install` to a temporary prefix, then small
programs built against the *installed* header and library, found through
pkg-config and through CMake's find_package, calling the C API."""
import json
import os
import pathlib
import shutil
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent
SRC = ROOT / "tests" / "c_install"

pytestmark = pytest.mark.skipif(shutil.which("cmake") is None, reason="needs cmake (tools/setup.sh installs it)")


def _run(cmd, **kw):
    r = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=600, **kw)
    assert r.returncode == 0, f"{' '.join(map(str, cmd))} failed ({r.returncode}):\n{r.stdout[-3000:]}{r.stderr[-3000:]}"
    return r


def _have_device():
    from tflite_gpu import _capi
    try:
        return bool(_capi.devices())
    except RuntimeError:
        return False


def _check_program(exe):
    r = subprocess.run([str(exe)], capture_output=True, text=True, timeout=120)
    if r.returncode == 3 and not _have_device():
        pytest.skip("no OpenCL device: create returned NULL as documented")
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.strip().endswith("ok")


@pytest.fixture(scope="module")
def prefix(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("install")
    build, prefix = tmp / "build", tmp / "prefix"
    _run(["cmake", "-S", ROOT, "-B", build, "-DCMAKE_BUILD_TYPE=Release", "-DCMAKE_EXPORT_COMPILE_COMMANDS=ON"])
    _run(["cmake", "--build", build, "-j", "2"])
    _run(["cmake", "--install", build, "--prefix", prefix])
    return prefix


def test_cmake_and_make_compile_with_the_same_flags(prefix, tmp_path):
    """Both builds read delegate_c/compile_flags.txt: every compile of either
    carries every flag in it."""
    flags = (ROOT / "delegate_c" / "compile_flags.txt").read_text().split()
    assert "-Werror" in flags and "-fvisibility=hidden" in flags
    commands = json.loads((prefix.parent / "build" / "compile_commands.json").read_text())
    cmake = [c["command"].split() for c in commands if c["file"].endswith(".c")]
    make = [line.split() for line in _run(["make", "-n", "-C", ROOT / "delegate_c", f"BUILD={tmp_path}"]).stdout.splitlines()
            if " -c " in line]
    assert len(cmake) >= 40 and len(make) >= 40, (len(cmake), len(make))
    for args in cmake + make:
        missing = [f for f in flags if f not in args]
        assert not missing, (missing, " ".join(args))


def test_release_build_has_no_allocation_wrapper(prefix):
    lib = prefix / "lib" / "libgpu_delegate.so"
    symbols = _run(["nm", lib]).stdout
    assert "__wrap_malloc" not in symbols and "gd_host_allocations" not in symbols


def test_install_layout(prefix):
    lib = prefix / "lib" / "libgpu_delegate.so"
    assert lib.is_file()
    assert (prefix / "include" / "tflite_gpu" / "gpu_delegate.h").is_file()
    assert (prefix / "include" / "tflite_gpu" / "gpu_delegate_introspection.h").is_file()
    assert (prefix / "lib" / "cmake" / "tflite_gpu_delegate" / "tflite_gpu_delegateConfig.cmake").is_file()
    assert (prefix / "lib" / "pkgconfig" / "tflite-gpu-delegate.pc").is_file()
    # Only the public API is exported (-fvisibility=hidden as in the Makefile).
    nm = _run(["nm", "-D", "--defined-only", lib]).stdout
    exported = {line.split()[-1] for line in nm.splitlines() if line.strip()}
    for sym in ("TfLiteGpuDelegateOptionsV2Default", "TfLiteGpuDelegateV2Create", "TfLiteGpuDelegateV2Delete",
                "tflite_plugin_create_delegate", "tflite_plugin_destroy_delegate", "tflite_gpu_delegate_report",
                "tflite_gpu_debug_counters"):
        assert sym in exported
    assert not any(s.startswith(("gpu_", "op_table", "graph_")) for s in exported), sorted(exported)


@pytest.mark.parametrize("compiler,std,source", [("gcc", "-std=c99", "use_installed.c"),
                                                 ("gcc", "-std=c11", "use_installed.c"),
                                                 ("g++", "-std=c++11", "header_only.cc")])
def test_header_is_self_contained(prefix, tmp_path, compiler, std, source):
    """Plain C and C++, with TfLiteDelegate usable as a type name in both."""
    if shutil.which(compiler) is None:
        pytest.skip(f"needs {compiler}")
    _run([compiler, std, "-Wall", "-Wextra", "-Werror", "-pedantic", "-fsyntax-only",
          "-I", prefix / "include", SRC / source])


@pytest.mark.parametrize("compiler,std,defines", [("gcc", "-std=c99", []), ("gcc", "-std=c99", ["-DCORE_HEADER"]),
                                                  ("gcc", "-std=c11", []), ("gcc", "-std=c11", ["-DOURS_FIRST"]),
                                                  ("g++", "-std=c++11", []), ("g++", "-std=c++11", ["-DOURS_FIRST"])])
def test_header_beside_upstream_common_h(prefix, compiler, std, defines):
    """With upstream's tensorflow/lite/c/common.h (a stand-in with its guard
    and typedef) included too: no redefinition of TfLiteDelegate."""
    if shutil.which(compiler) is None:
        pytest.skip(f"needs {compiler}")
    lang = ["-x", "c++"] if compiler == "g++" else []
    _run([compiler, std, *lang, "-Wall", "-Wextra", "-Werror", "-pedantic", "-fsyntax-only",
          *defines, "-I", prefix / "include", "-I", SRC / "upstream_stub",
          SRC / "with_upstream_common.c"])


def test_link_through_pkg_config(prefix, tmp_path):
    if shutil.which("pkg-config") is None:
        pytest.fail("pkg-config missing: tools/setup.sh installs it")
    env = dict(os.environ, PKG_CONFIG_PATH=str(prefix / "lib" / "pkgconfig"))
    flags = _run(["pkg-config", "--cflags", "--libs", "tflite-gpu-delegate"], env=env).stdout.split()
    assert any(f.startswith("-I") for f in flags) and "-lgpu_delegate" in flags
    libdir = _run(["pkg-config", "--variable=libdir", "tflite-gpu-delegate"], env=env).stdout.strip()
    assert pathlib.Path(libdir).resolve() == (prefix / "lib").resolve()
    exe = tmp_path / "use_installed_pc"
    _run(["gcc", "-std=c99", "-Wall", "-Wextra", "-Werror", SRC / "use_installed.c", "-o", exe, *flags,
          f"-Wl,-rpath,{libdir}"])
    _check_program(exe)


def test_link_through_cmake_find_package(prefix, tmp_path):
    build = tmp_path / "consumer"
    _run(["cmake", "-S", SRC, "-B", build, f"-DCMAKE_PREFIX_PATH={prefix}"])
    _run(["cmake", "--build", build])
    _check_program(build / "use_installed")
