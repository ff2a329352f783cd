"""Builds libgpu_delegate.so with delegate_c/Makefile and ships it inside
the tflite_gpu package, so `pip install .` gives a working delegate, with
the public headers the package reads at import (tflite_gpu/include/: the
cffi declarations and the version). The version is delegate_c/include/version.h's."""
import os
import re
import runpy
import shutil
import subprocess
import sys

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

ROOT = os.path.dirname(os.path.abspath(__file__))
# The headers the package reads (_headers.py needs only the standard library).
HEADERS = runpy.run_path(os.path.join(ROOT, "python", "tflite_gpu", "_headers.py"))["HEADERS"]


def library_version():
    with open(os.path.join(ROOT, "delegate_c", "include", "version.h")) as f:
        return re.search(r'^#define TFLITE_GPU_VERSION "([^"]+)"', f.read(), flags=re.M).group(1)


class BuildWithLibrary(build_py):
    def run(self):
        super().run()
        build_dir = os.path.join(ROOT, "build", "pip")
        subprocess.check_call(
            ["make", "-C", os.path.join(ROOT, "delegate_c"), f"BUILD={build_dir}", f"PYTHON={sys.executable}", "-j2"]
        )
        target = os.path.join(self.build_lib, "tflite_gpu")
        os.makedirs(os.path.join(target, "include"), exist_ok=True)
        shutil.copy2(os.path.join(build_dir, "libgpu_delegate.so"), os.path.join(target, "libgpu_delegate.so"))
        for name in HEADERS:
            shutil.copy2(os.path.join(ROOT, "delegate_c", "include", name), os.path.join(target, "include", name))


class BinaryDistribution(Distribution):
    """The wheel carries a native library: tag it for this platform."""

    def has_ext_modules(self):
        return True


setup(version=library_version(), cmdclass={"build_py": BuildWithLibrary}, distclass=BinaryDistribution)
