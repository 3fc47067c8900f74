"""A room without network: installs come from wheelhouse/ alone when it exists.

What this proves, honestly: pip, told `--no-index --find-links <wheelhouse>` with every pip
configuration file and PIP_* variable of this machine removed, installs the lab's helpers from a
wheelhouse into a fresh venv, and refuses (rather than reaching the network) a requirement the
wheelhouse lacks; and the Makefile sends `make lab`, `make test` and `make doctor` through the
wheelhouse whenever wheelhouse/ exists. The test's wheelhouse holds one wheel, the helpers', which
the test assembles itself with zipfile (building it with setuptools would need `wheel` and a newer
setuptools, fetched from the network). It does not download the full wheelhouse (`make wheelhouse`
needs the network and ~200 MB): that was verified by hand, as the README's section describes.
"""
import base64
import hashlib
import os
import shutil
import subprocess
import sys
import tomllib
import venv
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
OFFLINE = "--no-index --find-links wheelhouse"


def offline_environment():
    """This environment without pip's configuration (index URLs, find-links), so pip sees only what it is given."""
    environment = {name: value for name, value in os.environ.items() if not name.startswith("PIP_")}
    return {**environment, "PIP_CONFIG_FILE": os.devnull, "PIP_DISABLE_PIP_VERSION_CHECK": "1"}


def pip(*arguments, python=sys.executable):
    """Run pip with no configuration and no index; return the finished process."""
    return subprocess.run([str(python), "-m", "pip", *arguments], capture_output=True, text=True,
                          env=offline_environment(), timeout=300)


def record_line(name, data):
    """A wheel RECORD line: path, sha256 in urlsafe base64, size."""
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
    return f"{name},sha256={digest},{len(data)}"


def helpers_wheel(house):
    """A pure-Python wheel of the helpers package, named and versioned as pyproject.toml says."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    name, version = project["name"].replace("-", "_"), project["version"]
    info = f"{name}-{version}.dist-info"
    files = {path.relative_to(ROOT).as_posix(): path.read_bytes() for path in (ROOT / "helpers").rglob("*.py")}
    files[f"{info}/METADATA"] = f"Metadata-Version: 2.1\nName: {project['name']}\nVersion: {version}\n".encode()
    files[f"{info}/WHEEL"] = b"Wheel-Version: 1.0\nGenerator: test_wheelhouse\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    record = [record_line(path, data) for path, data in files.items()] + [f"{info}/RECORD,,"]
    with zipfile.ZipFile(house / f"{name}-{version}-py3-none-any.whl", "w") as wheel:
        for path, data in files.items():
            wheel.writestr(path, data)
        wheel.writestr(f"{info}/RECORD", "\n".join(record) + "\n")


@pytest.fixture(scope="module")
def wheelhouse(tmp_path_factory):
    """A wheelhouse holding the helpers' wheel, made without the network."""
    house = tmp_path_factory.mktemp("wheelhouse")
    helpers_wheel(house)
    return house


@pytest.fixture(scope="module")
def fresh_python(tmp_path_factory):
    """The Python of a brand-new venv with nothing but pip in it."""
    where = tmp_path_factory.mktemp("venv")
    venv.create(where, with_pip=True)
    return where / "bin" / "python"


def test_a_fresh_venv_installs_from_the_wheelhouse_with_no_index(wheelhouse, fresh_python):
    installed = pip("install", "--no-index", "--find-links", str(wheelhouse), "--no-deps",
                    "dynamodb-concurrency-lab-helpers", python=fresh_python)
    assert installed.returncode == 0, installed.stdout + installed.stderr
    shown = pip("show", "--files", "dynamodb-concurrency-lab-helpers", python=fresh_python)
    assert "Version: 0.1.0" in shown.stdout and "helpers/lab/doctor.py" in shown.stdout


def test_what_the_wheelhouse_lacks_is_refused_not_fetched(wheelhouse, fresh_python):
    refused = pip("install", "--no-index", "--find-links", str(wheelhouse), "boto3==1.44.5", python=fresh_python)
    assert refused.returncode != 0
    assert "No matching distribution found for boto3==1.44.5" in refused.stderr


def planned_commands(tmp_path, target, with_wheelhouse):
    """What `make -n <target>` would run in a copy of the set-up files, with or without a wheelhouse/."""
    for name in ("Makefile", "requirements.lock", "requirements-test.lock", "requirements-book.lock", "pyproject.toml"):
        shutil.copy(ROOT / name, tmp_path)
    for folder in ("jupyter", "tools", "helpers"):  # `make test` plans the book first: its data needs these
        shutil.copytree(ROOT / folder, tmp_path / folder)
    (tmp_path / "notebooks").mkdir()
    shutil.copy(ROOT / "notebooks" / "33-isolation-atlas.ipynb", tmp_path / "notebooks")
    if with_wheelhouse:
        (tmp_path / "wheelhouse").mkdir()
    plan = subprocess.run(["make", "-n", target], cwd=tmp_path, capture_output=True, text=True)
    assert plan.returncode == 0, plan.stderr
    return [line for line in plan.stdout.splitlines() if " install " in line]


@pytest.mark.parametrize("target", ["lab", "test", "doctor"])
def test_with_a_wheelhouse_every_install_of_the_target_is_offline(tmp_path, target):
    installs = planned_commands(tmp_path, target, with_wheelhouse=True)
    assert installs and all(OFFLINE in line for line in installs), installs


def test_without_a_wheelhouse_the_installs_use_the_index(tmp_path):
    installs = planned_commands(tmp_path, "test", with_wheelhouse=False)
    assert len(installs) == 3 and not any("--no-index" in line for line in installs), installs  # lab, test, book
