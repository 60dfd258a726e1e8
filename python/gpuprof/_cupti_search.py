"""Where kernel capture looks for libcupti, in order (docs/python.md, "Where CUDA comes from").

1. The CUPTI already in this process (PyTorch imported first loads its own): a
   second copy would be a second CUPTI client, which CUPTI does not allow.
   One of another major version means this build cannot capture here.
2. GPUPROF_CUPTI_LIBRARY, when set: that file and nothing else.
3. The directories on LD_LIBRARY_PATH, as the loader would search them.
4. PyTorch's pip CUDA libraries on sys.path: nvidia/cu<major>/lib (CUDA 13
   wheels) or nvidia/cuda_cupti/lib (CUDA 12 wheels). libtorch_cuda's RUNPATH
   points there, so a later `import torch` reuses the same file.
5. The soname alone: the loader's cache (ldconfig) and default directories.
6. The toolkit: $CUDA_HOME, $CUDA_PATH, /usr/local/cuda.
"""

import os
import re
import sys

ENV_OVERRIDE = "GPUPROF_CUPTI_LIBRARY"
_TOOLKIT_SUBDIRS = ("lib64", "lib", "extras/CUPTI/lib64", "extras/CUPTI/lib", "targets/x86_64-linux/lib",
                    "targets/sbsa-linux/lib")


def loaded_cupti_files(maps_text):
    """The libcupti files mapped into a process, from its /proc/<pid>/maps text."""
    files = []
    for line in maps_text.splitlines():
        fields = line.split(None, 5)
        path = fields[5].strip() if len(fields) == 6 else ""
        if re.match(r"libcupti\.so(\.|$)", os.path.basename(path)) and path not in files:
            files.append(path)
    return files


def _this_process_maps():
    try:
        with open("/proc/self/maps") as maps:
            return maps.read()
    except OSError:
        return ""


def candidates(soname, environ=None, path=None, maps_text=None):
    """The files (or the bare soname) to try, best first. Raises RuntimeError when
    the process already holds a CUPTI of another major version."""
    environ = os.environ if environ is None else environ
    path = sys.path if path is None else path
    maps_text = _this_process_maps() if maps_text is None else maps_text
    major = soname.rsplit(".", 1)[-1]

    loaded = loaded_cupti_files(maps_text)
    mine = [f for f in loaded if os.path.basename(f).startswith(soname)]
    if mine:
        return mine[:1]
    if loaded:
        raise RuntimeError(
            f"this process already has {loaded[0]} (another CUDA major version, e.g. a PyTorch built for it); "
            f"this gpuprof needs {soname}: build gpuprof with the toolkit of the CUDA version PyTorch reports "
            "(torch.version.cuda)")

    override = environ.get(ENV_OVERRIDE, "")
    if override:
        return [override]

    found = []

    def add(directory):
        file = os.path.join(directory, soname)
        if directory and os.path.isfile(file) and file not in found:
            found.append(file)

    for directory in environ.get("LD_LIBRARY_PATH", "").split(os.pathsep):
        add(directory)
    for entry in path:
        for pip_dir in (f"cu{major}", "cuda_cupti"):
            add(os.path.join(entry or ".", "nvidia", pip_dir, "lib"))
    found.append(soname)
    for root in (environ.get("CUDA_HOME", ""), environ.get("CUDA_PATH", ""), "/usr/local/cuda"):
        if root:
            for sub in _TOOLKIT_SUBDIRS:
                add(os.path.join(root, sub))
    return found
