import os

import gpuprof

# Set by wheel_test.py --hide-toolkit: no file below this directory may be
# mapped into the test process (the CUDA libraries must come from elsewhere).
FORBIDDEN_ROOT = "GPUPROF_FORBIDDEN_LIBRARY_ROOT"


def pytest_configure(config):
    config.addinivalue_line("markers", "gpu: needs PyTorch with a CUDA GPU (skipped without)")


def pytest_report_header(config):
    return f"gpuprof {gpuprof.__version__} from {os.path.dirname(gpuprof.__file__)}"


def mapped_files():
    with open("/proc/self/maps") as maps:
        fields = (line.split(None, 5) for line in maps)
        return sorted({f[5].strip() for f in fields if len(f) == 6 and f[5].startswith("/")})


def cuda_libraries(files):
    names = ("libcuda.so", "libcudart.so", "libcupti.so", "libnvidia-ml.so")
    return [f for f in files if os.path.basename(f).startswith(names)]


def pytest_terminal_summary(terminalreporter):
    files = mapped_files()
    terminalreporter.write_line("CUDA libraries in this process: " + (", ".join(cuda_libraries(files)) or "none"))
    root = os.environ.get(FORBIDDEN_ROOT)
    if root:
        root = os.path.realpath(root)
        inside = [f for f in files if os.path.realpath(f).startswith(root + os.sep)]
        terminalreporter.write_line(f"files mapped from {root}: " + (", ".join(inside) or "none"))


def pytest_sessionfinish(session):
    root = os.environ.get(FORBIDDEN_ROOT)
    if root:
        root = os.path.realpath(root)
        if any(os.path.realpath(f).startswith(root + os.sep) for f in mapped_files()):
            session.exitstatus = 1
