"""Builds libgpu_delegate.so with delegate_c/Makefile and ships it inside
the tflite_gpu package, so `pip install .` gives a working delegate."""
import os
import shutil
import subprocess
import sys

from setuptools import setup
from setuptools.command.build_py import build_py
from setuptools.dist import Distribution

ROOT = os.path.dirname(os.path.abspath(__file__))


class BuildWithLibrary(build_py):
    def run(self):
        super().run()
        build_dir = os.path.join(ROOT, "build", "pip")
        subprocess.check_call(
            ["make", "-C", os.path.join(ROOT, "delegate_c"), f"BUILD={build_dir}", f"PYTHON={sys.executable}", "-j2"]
        )
        target = os.path.join(self.build_lib, "tflite_gpu")
        os.makedirs(target, exist_ok=True)
        shutil.copy2(os.path.join(build_dir, "libgpu_delegate.so"), os.path.join(target, "libgpu_delegate.so"))


class BinaryDistribution(Distribution):
    """The wheel carries a native library: tag it for this platform."""

    def has_ext_modules(self):
        return True


setup(cmdclass={"build_py": BuildWithLibrary}, distclass=BinaryDistribution)
