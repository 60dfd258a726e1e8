"""Builds the extension gpuprof._gpuprof with CMake for setuptools (pyproject.toml).

The pattern of pybind11's cmake_example: setuptools names the package and
writes the wheel; CMake builds the one target gpuprof_python exactly as the
`python` preset does, for the interpreter running this build. Version and
description are read from CMakeLists.txt's project(). Extra CMake options go
in CMAKE_ARGS (e.g. CMAKE_ARGS=-DGPUPROF_USE_CUDA=OFF for a host-clock build).
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

SOURCE = Path(__file__).resolve().parent


def cmake_project():
    """(version, description) of project(gpuprof ...) in CMakeLists.txt."""
    text = (SOURCE / "CMakeLists.txt").read_text()
    call = re.search(r"^project\(gpuprof\s(.*?)\)", text, re.S | re.M)
    version = call and re.search(r"\bVERSION\s+([0-9]+\.[0-9]+\.[0-9]+)", call.group(1))
    description = call and re.search(r'\bDESCRIPTION\s+"([^"]*)"', call.group(1))
    if not (version and description):
        sys.exit("setup.py: CMakeLists.txt has no project(gpuprof VERSION x.y.z ... DESCRIPTION \"...\")")
    return version.group(1), description.group(1)


class CMakeExtension(Extension):
    def __init__(self, name):
        super().__init__(name, sources=[])


class CMakeBuild(build_ext):
    def build_extension(self, ext):
        build_dir = Path(self.build_temp).resolve() / "cmake"
        configure = ["cmake", "-S", str(SOURCE), "-B", str(build_dir), "-DCMAKE_BUILD_TYPE=Release",
                     f"-DPython_EXECUTABLE={sys.executable}", "-DGPUPROF_BUILD_PYTHON=ON",
                     "-DGPUPROF_BUILD_TESTS=OFF", "-DGPUPROF_BUILD_EXAMPLES=OFF", "-DGPUPROF_BUILD_BENCH=OFF",
                     "-DGPUPROF_BUILD_TOOLS=OFF"]
        if shutil.which("ninja") and not os.environ.get("CMAKE_GENERATOR") and not (build_dir / "CMakeCache.txt").exists():
            configure += ["-G", "Ninja"]
        try:  # pip's pybind11 in the build environment, where it is not the system's
            import pybind11
            configure.append(f"-Dpybind11_DIR={pybind11.get_cmake_dir()}")
        except ImportError:
            pass
        configure += shlex.split(os.environ.get("CMAKE_ARGS", ""))
        subprocess.run(configure, check=True)
        subprocess.run(["cmake", "--build", str(build_dir), "--target", "gpuprof_python"], check=True)
        built = sorted((build_dir / "python" / "gpuprof").glob("_gpuprof.*"))
        if len(built) != 1:
            sys.exit(f"setup.py: expected one extension in {build_dir / 'python' / 'gpuprof'}, found {built}")
        target = Path(self.get_ext_fullpath(ext.name))
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(built[0], target)


version, description = cmake_project()
setup(version=version, description=description, ext_modules=[CMakeExtension("gpuprof._gpuprof")],
      cmdclass={"build_ext": CMakeBuild}, zip_safe=False)
