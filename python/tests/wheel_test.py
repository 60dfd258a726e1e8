"""The wheel as a user gets it: built by pip, installed into a fresh venv, tested there.

    python3 wheel_test.py --source REPO --work DIR [options]

1. `pip wheel --no-build-isolation` of REPO, in a fresh venv made with
   --system-site-packages (or, with --no-build-venv, by this interpreter:
   the PyTorch venv on the GPU machine, which has pybind11 and setuptools).
2. `pip install` of that wheel into another fresh venv. With --site-from-here
   that venv also sees this interpreter's site-packages through a .pth file
   (a PyTorch venv's packages, which --system-site-packages does not reach);
   its own copy of gpuprof still comes first.
3. Checks that the installed extension names no libcudart, no libcupti and no
   RPATH (it must run wherever CUDA comes from), that the distribution's
   version is gpuprof.__version__ and that gpuprof imports from the venv.
4. Runs the pytest suite (--markers, default "not gpu") from the installed
   copy --repeat times, outside the source tree; with --hide-toolkit DIR once
   more with the loader pointed only at the nvidia/*/lib folders on sys.path,
   the toolkit's variables unset, DIR covered by an empty tmpfs in a mount
   namespace of its own where unshare is allowed, and any file from DIR mapped
   into the test process counted as a failure (conftest.py).

Exit status 0 when every step passed. Needs python3-venv, python3-pip,
python3-setuptools, python3-wheel and pytest (Debian: python3-pytest).
"""
import argparse
import glob
import json
import os
import shutil
import subprocess
import sys
import sysconfig

TESTS = os.path.dirname(os.path.abspath(__file__))
DISTRIBUTION = "gpuprof-toolkit"


def run(command, **kwargs):
    print("+", " ".join(command), flush=True)
    return subprocess.run(command, **kwargs)


def must(command, what, **kwargs):
    if run(command, **kwargs).returncode != 0:
        sys.exit(f"wheel_test: {what} failed")


def make_venv(path):
    must([sys.executable, "-m", "venv", "--system-site-packages", path],
         "creating a venv (Debian: apt-get install python3-venv)")
    return os.path.join(path, "bin", "python")


def python_answer(python, code, env=None):
    done = run([python, "-c", code], capture_output=True, text=True, env=env)
    if done.returncode != 0:
        sys.exit(f"wheel_test: {python} -c ... failed:\n{done.stdout}{done.stderr}")
    return json.loads(done.stdout)


def dynamic_section(extension):
    done = run(["readelf", "-d", extension], capture_output=True, text=True)
    if done.returncode != 0:
        sys.exit(f"wheel_test: readelf -d {extension} failed (binutils):\n{done.stderr}")
    return done.stdout


def check_installed(python, venv):
    facts = python_answer(python, (
        "import gpuprof, glob, json, os, importlib.metadata as m;"
        "d = os.path.dirname(gpuprof.__file__);"
        f"print(json.dumps({{'dir': d, 'version': gpuprof.__version__, 'dist': m.version('{DISTRIBUTION}'),"
        "'extension': glob.glob(os.path.join(d, '_gpuprof.*'))}))"))
    print("installed:", facts, flush=True)
    problems = []
    if not os.path.realpath(facts["dir"]).startswith(os.path.realpath(venv) + os.sep):
        problems.append(f"gpuprof imports from {facts['dir']}, not from the venv {venv}")
    if facts["dist"] != facts["version"]:
        problems.append(f"{DISTRIBUTION} {facts['dist']} but gpuprof.__version__ {facts['version']}")
    if len(facts["extension"]) != 1:
        problems.append(f"expected one extension, found {facts['extension']}")
    else:
        section = dynamic_section(facts["extension"][0])
        for line in section.splitlines():
            if ("NEEDED" in line and ("libcudart" in line or "libcupti" in line)) or "RPATH" in line:
                problems.append("the extension's dynamic section has " + line.strip())
    if problems:
        sys.exit("wheel_test: " + "; ".join(problems))


def nvidia_library_dirs(python):
    return python_answer(python, (
        "import glob, json, os, sys;"
        "print(json.dumps(sorted({d for p in sys.path for d in glob.glob(os.path.join(p or '.', 'nvidia', '*', 'lib'))})))"))


def masking_prefix(toolkit):
    """A command prefix that runs its command with an empty tmpfs over `toolkit`,
    in a mount namespace of its own (nothing outside it changes), or [] where
    unshare is not allowed (a container without the capability)."""
    mount = ["sh", "-c", 'mount -t tmpfs gpuprof-hidden "$0" && exec "$@"', toolkit]
    for unshare in (["unshare", "--mount"], ["unshare", "--user", "--map-root-user", "--mount"]):
        if shutil.which("unshare") and run(unshare + mount + ["true"], capture_output=True).returncode == 0:
            return unshare + mount
    return []


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--source", required=True, help="the repository (pyproject.toml)")
    parser.add_argument("--work", required=True, help="scratch folder, removed first")
    parser.add_argument("--no-build-venv", action="store_true", help="build with this interpreter itself")
    parser.add_argument("--site-from-here", action="store_true", help="the test venv sees this interpreter's packages")
    parser.add_argument("--markers", default="not gpu", help='pytest -m expression (default "not gpu")')
    parser.add_argument("--none-ran", default="fail", choices=("fail", "skip"), help="see run_pytest.py")
    parser.add_argument("--repeat", type=int, default=1, help="runs of the suite (default 1)")
    parser.add_argument("--hide-toolkit", metavar="DIR", help="one more run with the toolkit at DIR hidden")
    args = parser.parse_args()
    if args.repeat < 1:
        parser.error("--repeat must be at least 1")
    if sys.prefix != sys.base_prefix:
        # Run from a venv (a PyTorch venv): a venv made from it with
        # --system-site-packages sees the base interpreter's packages, not
        # this venv's pybind11, setuptools or torch.
        args.no_build_venv = args.site_from_here = True

    work = os.path.abspath(args.work)
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    dist = os.path.join(work, "dist")

    builder = sys.executable if args.no_build_venv else make_venv(os.path.join(work, "build-venv"))
    must([builder, "-m", "pip", "wheel", "-v", "--no-build-isolation", "--no-deps", "--no-index", "-w", dist,
          os.path.abspath(args.source)], "pip wheel")
    wheels = glob.glob(os.path.join(dist, "gpuprof_toolkit-*.whl"))
    if len(wheels) != 1:
        sys.exit(f"wheel_test: expected one gpuprof_toolkit wheel in {dist}, found {os.listdir(dist)}")

    venv = os.path.join(work, "test-venv")
    python = make_venv(venv)
    if args.site_from_here:
        site = python_answer(python, "import json, sysconfig; print(json.dumps(sysconfig.get_path('purelib')))")
        here = sorted({sysconfig.get_path("purelib"), sysconfig.get_path("platlib")})
        with open(os.path.join(site, "_site_from_here.pth"), "w") as pth:
            pth.write("\n".join(here) + "\n")
    must([python, "-m", "pip", "install", "--no-index", "--no-deps", wheels[0]], "pip install of the wheel")
    check_installed(python, venv)

    pytest = [python, os.path.join(TESTS, "run_pytest.py"), f"--none-ran={args.none_ran}", "-q", "-rs",
              "-p", "no:cacheprovider", "-m", args.markers, TESTS]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONDONTWRITEBYTECODE"] = "1"
    failed = 0
    for i in range(1, args.repeat + 1):
        print(f"== suite run {i} of {args.repeat}", flush=True)
        failed += run(pytest, cwd=work, env=env).returncode != 0
    if args.hide_toolkit:
        toolkit = os.path.realpath(args.hide_toolkit)
        hidden = {k: v for k, v in env.items() if k not in ("CUDA_HOME", "CUDA_PATH", "CUDA_ROOT")}
        hidden["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep)
                                         if p and not os.path.realpath(p).startswith(toolkit))
        hidden["LD_LIBRARY_PATH"] = os.pathsep.join(nvidia_library_dirs(python))
        hidden["GPUPROF_FORBIDDEN_LIBRARY_ROOT"] = toolkit
        prefix = masking_prefix(toolkit)
        print(f"== suite run with {toolkit} hidden: LD_LIBRARY_PATH={hidden['LD_LIBRARY_PATH']}; " +
              ("an empty tmpfs mounted over it" if prefix else
               "unshare not allowed here, so it stays on disk (files mapped from it still fail the run)"),
              flush=True)
        failed += run(prefix + pytest, cwd=work, env=hidden).returncode != 0
    print(f"wheel_test: {failed} failed suite run(s)")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
