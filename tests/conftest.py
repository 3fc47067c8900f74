"""Shared fixtures: the lab on the embedded backend, and how many times to repeat a race."""
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from helpers import connect, tracing
from helpers.knobs import reset_knobs
from helpers.lab import waiting

STRESS_RUNS = int(os.environ.get("LAB_STRESS_RUNS", "1"))
PROGRESS_VARIABLE = "DYNAMODB_LAB_PROGRESS"
SCREENSHOTS = Path(__file__).resolve().parents[1] / "build" / "screenshots"


def pytest_configure(config):
    """Kernels, servers and checkers started by this test run record progress in a temporary file, and show no
    progress bar (nbval compares outputs that must not depend on the machine's speed); the run's browser screenshots
    go to build/screenshots/, emptied once as the run starts (by xdist's controller)."""
    config.progress_dir = tempfile.mkdtemp(prefix="lab-progress-")
    os.environ[PROGRESS_VARIABLE] = os.path.join(config.progress_dir, "progress.json")
    os.environ[waiting.SWITCH] = "off"
    config.screenshots_dir = SCREENSHOTS
    if not hasattr(config, "workerinput"):
        shutil.rmtree(SCREENSHOTS, ignore_errors=True)


def pytest_terminal_summary(terminalreporter):
    """Say where the browser tests saved their screenshots of what a learner sees, if they took any."""
    if any(SCREENSHOTS.glob("*.png")):
        terminalreporter.write_line(f"Browser screenshots (what a learner sees): {SCREENSHOTS}")


def pytest_unconfigure(config):
    """Remove the test run's temporary progress file."""
    shutil.rmtree(config.progress_dir, ignore_errors=True)


@pytest.fixture(autouse=True)
def progress_file(tmp_path, monkeypatch):
    """Each test starts with no progress, in its own file, never the learner's real one."""
    path = tmp_path / "progress.json"
    monkeypatch.setenv(PROGRESS_VARIABLE, str(path))
    return path


@pytest.fixture(scope="session")
def lab():
    """The test session's Lab (the embedded server unless AWS_ENDPOINT_URL_DYNAMODB says otherwise)."""
    return connect(quiet=True)


@pytest.fixture(scope="session")
def client(lab):
    """The low-level boto3 client of the session's Lab."""
    return lab.client


@pytest.fixture
def knobs_off(lab):
    """The test starts and ends with every teaching knob off, the transcript silent (embedded server only)."""
    if lab.kind != "embedded":
        pytest.skip("the teaching knobs exist only on the embedded lab server")
    reset_knobs(lab, quiet=True)
    with tracing(False):
        yield
    reset_knobs(lab, quiet=True)


@pytest.fixture
def ctrl_c_raises():
    """Ctrl-C (interrupt_main) raises KeyboardInterrupt in the test, as in a terminal or a running notebook cell.

    A process started in the background by a shell (`make test &`) ignores SIGINT from birth, and its Python then
    never installs the handler that raises: interrupt_main() does nothing there, and the test would not be run.
    """
    before = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, before)


@pytest.fixture
def standalone_server():
    """A lab server run as `python -m helpers.labserver`, as a learner's other tools would use it."""
    process = subprocess.Popen([sys.executable, "-m", "helpers.labserver", "--port", "0"],
                               stdout=subprocess.PIPE, text=True)
    endpoint = process.stdout.readline().rsplit(" ", 1)[1].strip()
    yield endpoint
    process.terminate()
    process.wait(timeout=5)


def pytest_generate_tests(metafunc):
    """A test that takes `run` is repeated STRESS_RUNS times: once in `make test`, 20 times in `make stress`, to see
    that the order it pins, or the race it must catch, holds run after run."""
    if "run" in metafunc.fixturenames:
        metafunc.parametrize("run", range(STRESS_RUNS))
