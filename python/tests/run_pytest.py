"""Runs pytest for ctest: exit 77 (skipped) when no test ran, pytest's code otherwise.

pytest exits 5 when it collects nothing and 0 when every test skipped; ctest
would call both "passed". A suite that ran nothing (no GPU, no torch, no
pytest) must show as skipped instead.
"""
import sys

SKIPPED = 77

try:
    import pytest
except ImportError:
    print("pytest is not installed for", sys.executable, "(apt-get install python3-pytest, or pip install pytest)")
    sys.exit(SKIPPED)


class Outcomes:
    def __init__(self):
        self.ran = 0

    def pytest_runtest_logreport(self, report):
        if report.when == "call":
            self.ran += 1


outcomes = Outcomes()
code = pytest.main(sys.argv[1:], plugins=[outcomes])
if code == pytest.ExitCode.NO_TESTS_COLLECTED or (code == pytest.ExitCode.OK and outcomes.ran == 0):
    print("no test ran (all skipped or none collected): reported as skipped")
    sys.exit(SKIPPED)
sys.exit(int(code))
