"""Shared fixtures: the lab on the embedded backend, and how many times to repeat a race."""
import os
import subprocess
import sys

import pytest

from helpers import connect

STRESS_RUNS = int(os.environ.get("LAB_STRESS_RUNS", "3"))


@pytest.fixture(scope="session")
def lab():
    """The test session's Lab (the embedded server unless AWS_ENDPOINT_URL_DYNAMODB says otherwise)."""
    return connect(quiet=True)


@pytest.fixture(scope="session")
def client(lab):
    """The low-level boto3 client of the session's Lab."""
    return lab.client


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
    """A test that takes `run` is repeated STRESS_RUNS times (3 in `make test`, 20 in `make stress`)."""
    if "run" in metafunc.fixturenames:
        metafunc.parametrize("run", range(STRESS_RUNS))
