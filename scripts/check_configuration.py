#!/usr/bin/env python3
"""Every GPUPROF_ setting the code uses is on the settings page.

Collects every GPUPROF_<NAME> token in the sources of include/, python/ and
tools/ (C++, CUDA, Python and CMake files; tests excluded) and fails when one
is not written on docs/configuration.md. Left out: function-like macros the
same sources #define (GPUPROF_SCOPE(...), GPUPROF_CUDA_CHECK(...): the API,
documented with their headers) and GPUPROF_DETAIL_* (internal by name).
Prints each missing name as FILE:LINE: NAME: why; exit 1 if any.

usage: check_configuration.py [REPOSITORY_ROOT]   (default: the parent of scripts/)
"""
import re
import sys
from pathlib import Path

FOLDERS = ("include", "python", "tools")
SUFFIXES = {".hpp", ".h", ".cpp", ".cu", ".cuh", ".py", ".cmake", ".txt"}
NAME = re.compile(r"\bGPUPROF_[A-Z0-9_]*[A-Z0-9]\b")
FUNCTION_LIKE = re.compile(r"^\s*#\s*define\s+(GPUPROF_[A-Z0-9_]+)\(", re.M)


def sources(root):
    for folder in FOLDERS:
        for path in sorted((root / folder).rglob("*")):
            relative = path.relative_to(root)
            if path.is_file() and path.suffix in SUFFIXES and "tests" not in relative.parts:
                if path.suffix != ".txt" or path.name == "CMakeLists.txt":
                    yield path, relative


def main():
    root = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parent.parent).resolve()
    page = root / "docs" / "configuration.md"
    listed = set(NAME.findall(page.read_text(encoding="utf-8"))) if page.is_file() else set()
    texts = {relative: path.read_text(encoding="utf-8", errors="replace") for path, relative in sources(root)}
    api = {name for text in texts.values() for name in FUNCTION_LIKE.findall(text)}
    missing, seen = [], set()
    for relative, text in texts.items():
        for number, line in enumerate(text.splitlines(), 1):
            for name in NAME.findall(line):
                if name in listed or name in api or name.startswith("GPUPROF_DETAIL_") or name in seen:
                    continue
                seen.add(name)
                missing.append(f"{relative}:{number}: {name}: not on docs/configuration.md")
    for line in missing:
        print(line)
    print(f"{len(texts)} files, {len(listed)} names on docs/configuration.md, {len(missing)} missing")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
