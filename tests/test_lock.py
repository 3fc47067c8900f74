"""The lock: every launch path installs requirements.lock's (or requirements-test.lock's) versions and nothing else,
the lock agrees with the hand-edited inputs, this .venv holds exactly its lock, and `make upgrade` says what it
changed and which notebook cells' stored outputs change, offline, from a wheelhouse."""
import base64
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
import time
import venv
import zipfile
from pathlib import Path

import pytest
import yaml

from helpers.lab import locked

ROOT = Path(__file__).resolve().parent.parent
MAKEFILE = (ROOT / "Makefile").read_text()
LAYERS = re.search(r"^LOCK_LAYERS := (.*)$", MAKEFILE, re.M).group(1).split()
APART = re.search(r"^LOCK_APART := (.*)$", MAKEFILE, re.M).group(1).split()
LOCKS = ["requirements.lock", *(f"requirements-{name}.lock" for name in LAYERS + APART)]
INPUTS = ["requirements.txt", *(f"requirements-{name}.txt" for name in LAYERS + APART)]
SET_UP_FILES = ("Makefile", "pyproject.toml", *LOCKS, *INPUTS)
TARGETS = ("lab", "test", "stress", "bench", "doctor")


def pins_of(name):
    """{name: version} of every `==` line of a file of the repository, markers ignored."""
    return {name: version for name, version, _ in locked.pinned_lines((ROOT / name).read_text())}


def copy_set_up(where):
    """A copy of the files `make` reads to install the lab and build the book (which `make test` builds first)."""
    for name in SET_UP_FILES:
        shutil.copy(ROOT / name, where)
    for folder in ("jupyter", "tools", "helpers"):
        shutil.copytree(ROOT / folder, where / folder)
    (where / "notebooks").mkdir()
    shutil.copy(ROOT / "notebooks" / "33-isolation-atlas.ipynb", where / "notebooks")


def planned(where, target):
    """The commands `make -n <target>` would run in `where`."""
    plan = subprocess.run(["make", "-n", target], cwd=where, capture_output=True, text=True)
    assert plan.returncode == 0, plan.stderr
    return plan.stdout.replace("\\\n", " ").splitlines()


@pytest.mark.parametrize("layer", ["", *LAYERS])
def test_each_lock_pins_its_inputs_direct_pins_at_their_versions(layer):
    inputs = {**pins_of("requirements.txt"), **(pins_of(f"requirements-{layer}.txt") if layer else {})}
    lock = pins_of(f"requirements-{layer}.lock" if layer else "requirements.lock")
    stale = {name: (version, lock.get(name)) for name, version in inputs.items() if lock.get(name) != version}
    assert not stale, f"(input pin, lock) differ: {stale}; run `make lock`"


@pytest.mark.parametrize("layer", LAYERS)
def test_a_layers_lock_keeps_every_version_of_the_lab_lock(layer):
    lab, layered = pins_of("requirements.lock"), pins_of(f"requirements-{layer}.lock")
    assert {name: layered.get(name) for name in lab} == lab


@pytest.mark.parametrize("name", APART)
def test_a_set_apart_pins_its_own_inputs_only_at_the_lab_locks_versions_where_they_share_a_package(name):
    lab, apart = pins_of("requirements.lock"), pins_of(f"requirements-{name}.lock")
    stale = {package: (version, apart.get(package))
             for package, version in pins_of(f"requirements-{name}.txt").items() if apart.get(package) != version}
    assert not stale, f"(input pin, lock) differ: {stale}; run `make lock`"
    shared = set(lab) & set(apart)
    assert {package: apart[package] for package in shared} == {package: lab[package] for package in shared}
    assert "requirements.txt" not in (ROOT / f"requirements-{name}.lock").read_text(), \
        f"requirements-{name}.lock pins the lab's set too: its venv would carry the whole lab"


@pytest.mark.parametrize("target", TARGETS)
def test_every_install_of_a_make_target_reads_a_lock_and_nothing_else(tmp_path, target):
    copy_set_up(tmp_path)
    installs = [line for line in planned(tmp_path, target) if " install " in line]
    assert installs
    for line in installs:
        arguments = line.split(" install ", 1)[1].split()
        named = [argument for argument in arguments if not argument.startswith("-")]
        read = [arguments[place + 1] for place, argument in enumerate(arguments) if argument == "-r"]
        assert read and set(read) <= set(LOCKS), line
        assert set(named) - set(read) <= {"."}, f"installs something not from a lock: {line}"


def test_the_wheelhouse_downloads_every_lock(tmp_path):
    copy_set_up(tmp_path)
    download = next(line for line in planned(tmp_path, "wheelhouse") if " download " in line)
    assert all(f"-r {lock}" in download for lock in LOCKS) and "requirements.txt" not in download


def test_a_changed_lock_reinstalls_and_nothing_else_does(tmp_path):
    copy_set_up(tmp_path)
    later = time.time() + 60
    for stamp in (".venv/.installed-lab", ".venv/.installed-test", ".venv-book/.installed-book"):
        (tmp_path / stamp).parent.mkdir(exist_ok=True)
        (tmp_path / stamp).touch()
        os.utime(tmp_path / stamp, (later, later))
    assert not [line for line in planned(tmp_path, "test") if " install " in line]
    os.utime(tmp_path / "requirements.lock", (later + 60, later + 60))
    installs = [line for line in planned(tmp_path, "lab") if " install " in line]
    assert len(installs) == 1 and "-r requirements.lock" in installs[0]


def test_binder_postbuild_and_the_compose_lab_add_only_the_helpers_to_the_lab_lock():
    assert re.search(r"pip install .*-e \.$", (ROOT / "binder" / "postBuild").read_text(), re.M)
    command = " ".join(yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]["lab"]["command"])
    assert "pip install --no-cache-dir -r requirements.lock -e ." in command


def test_the_dev_container_installs_as_make_lab_does():
    container = json.loads((ROOT / ".devcontainer" / "devcontainer.json").read_text())
    assert container["postCreateCommand"] == "make .venv/.installed-lab"


def test_this_environment_holds_exactly_its_lock():
    stamp = Path(sys.prefix) / ".installed-test"
    if not stamp.exists():
        pytest.skip(f"{sys.prefix} was not made by `make test`, so no lock says what it holds")
    lock = ROOT / "requirements-test.lock"
    assert stamp.stat().st_mtime >= lock.stat().st_mtime, "the lock changed since this .venv was made: run `make test`"
    versions, installed = locked.locked_versions(lock), locked.installed_versions()
    assert not (drifted := locked.drift(versions, installed)), f"(package, lock, installed): {drifted}; run `make test`"
    assert not (extra := locked.unlocked(versions, installed)), f"installed, not in the lock: {extra}; run `make test`"


def test_the_versions_the_docs_name_are_the_locks():
    lock = pins_of("requirements.lock")
    texts = {"docs/sources.md": (ROOT / "docs" / "sources.md").read_text()}
    for notebook in sorted((ROOT / "notebooks").glob("*.ipynb")):
        cells = json.loads(notebook.read_text())["cells"]
        texts[notebook.name] = "\n".join("".join(cell["source"]) for cell in cells if cell["cell_type"] == "markdown")
    named = [(where, package, version) for where, text in texts.items()
             for package, version in re.findall(r"\b(botocore|boto3) (\d+\.\d+\.\d+)", text)]
    assert named and all(version == lock[package] for _, package, version in named), named


# make upgrade, offline: a project of two tiny packages, its wheelhouse holding newer releases, one in range.

def tiny_wheel(house, name, version, requires=()):
    """A pure-Python wheel of module `name` whose VERSION is `version`, requiring `requires`."""
    info = f"{name}-{version}.dist-info"
    metadata = f"Metadata-Version: 2.1\nName: {name}\nVersion: {version}\n" + "".join(
        f"Requires-Dist: {requirement}\n" for requirement in requires)
    files = {f"{name}.py": f"VERSION = {version!r}\n".encode(), f"{info}/METADATA": metadata.encode(),
             f"{info}/WHEEL": b"Wheel-Version: 1.0\nGenerator: test_lock\nRoot-Is-Purelib: true\nTag: py3-none-any\n"}
    digest = {path: base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
              for path, data in files.items()}
    record = [f"{path},sha256={digest[path]},{len(data)}" for path, data in files.items()]
    with zipfile.ZipFile(house / f"{name}-{version}-py3-none-any.whl", "w") as wheel:
        for path, data in files.items():
            wheel.writestr(path, data)
        wheel.writestr(f"{info}/RECORD", "\n".join([*record, f"{info}/RECORD,,"]) + "\n")


def code_cell(source, printed):
    """A notebook's code cell with its stored printed output."""
    return {"cell_type": "code", "id": f"code-{len(source)}", "execution_count": 1, "metadata": {}, "source": source,
            "outputs": [{"output_type": "stream", "name": "stdout", "text": printed}]}


def notebook_printing_tinypkg_version(path):
    """A notebook whose stored output is what `print(tinypkg.VERSION)` printed on tinypkg 1.0."""
    cells = [{"cell_type": "markdown", "id": "title", "metadata": {}, "source": "# tiny"},
             code_cell("print(1 + 1)", "2\n"), code_cell("import tinypkg\nprint(tinypkg.VERSION)", "1.0\n")]
    kernel = {"name": "python3", "display_name": "Python 3", "language": "python"}
    path.write_text(json.dumps({"cells": cells, "metadata": {"kernelspec": kernel}, "nbformat": 4, "nbformat_minor": 5}))


# The tiny project's own build backend (`-e .` offline, with no setuptools): a wheel of its metadata alone.
TINY_BACKEND = '''import zipfile

INFO = "tiny_lab-0.1.dist-info"
FILES = {f"{INFO}/METADATA": "Metadata-Version: 2.1\\nName: tiny-lab\\nVersion: 0.1\\n",
         f"{INFO}/WHEEL": "Wheel-Version: 1.0\\nGenerator: tiny\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n"}


def build_wheel(directory, *options):
    name = "tiny_lab-0.1-py3-none-any.whl"
    with zipfile.ZipFile(f"{directory}/{name}", "w") as wheel:
        for path, text in FILES.items():
            wheel.writestr(path, text)
        wheel.writestr(f"{INFO}/RECORD", "".join(f"{path},,\\n" for path in [*FILES, f"{INFO}/RECORD"]))
    return name


build_editable = build_wheel
'''


@pytest.fixture
def tiny_project(tmp_path):
    """A copy of the lab's Makefile and lock tools around two tiny packages locked at 1.0, with an offline wheelhouse
    and a .venv made by `make test` that sees this .venv's test tools (pytest, nbval, a kernel) behind its own."""
    project = tmp_path / "project"
    for folder in ("tools", "jupyter"):
        shutil.copytree(ROOT / folder, project / folder)
    shutil.copy(ROOT / "Makefile", project)
    for folder in ("tests", "notebooks", "binder"):
        (project / folder).mkdir()
    shutil.copy(ROOT / "tests" / "nbval-sanitize.cfg", project / "tests")
    (project / "tests" / "test_tiny.py").write_text("import tinypkg\n\n\ndef test_tinypkg_has_a_version():\n"
                                                   "    assert tinypkg.VERSION\n")
    notebook_printing_tinypkg_version(project / "notebooks" / "tiny.ipynb")
    (project / "pyproject.toml").write_text('[build-system]\nrequires = []\nbuild-backend = "tiny_backend"\n'
                                            'backend-path = ["."]\n\n[project]\nname = "tiny-lab"\nversion = "0.1"\n')
    (project / "tiny_backend.py").write_text(TINY_BACKEND)
    (project / "requirements.txt").write_text("tinypkg>=1.0,<2\n")
    (project / "requirements-test.txt").write_text("# nothing more\n")
    for lock in ("requirements.lock", "requirements-test.lock"):
        (project / lock).write_text("tinydep==1.0\ntinypkg==1.0\n")
    house = project / "wheelhouse"
    house.mkdir()
    for version in ("1.0", "1.2"):
        tiny_wheel(house, "tinydep", version)
    for version in ("1.0", "1.1", "2.0"):
        tiny_wheel(house, "tinypkg", version, requires=["tinydep>=1.0"])
    environment = project / ".venv"
    venv.create(environment, with_pip=True)
    site_packages = next(environment.glob("lib/python*/site-packages"))
    tools = sysconfig.get_path("purelib")
    (site_packages / "lab_test_tools.pth").write_text(f"import site; site.addsitedir({tools!r})\n")
    (environment / ".installed-lab").touch()
    (environment / ".installed-test").touch()
    return project


def offline_environment(cache):
    """This environment without pip's or uv's configuration and with uv offline, so only the wheelhouse is seen."""
    environment = {name: value for name, value in os.environ.items()
                   if not name.startswith(("PIP_", "UV_")) and name != "VIRTUAL_ENV"}
    return {**environment, "PIP_CONFIG_FILE": os.devnull, "PIP_DISABLE_PIP_VERSION_CHECK": "1", "UV_OFFLINE": "1",
            "UV_NO_CONFIG": "1", "UV_CACHE_DIR": str(cache)}


def test_make_upgrade_offline_moves_within_the_ranges_and_names_what_changed_and_the_cell_it_changes(tiny_project):
    upgrade = subprocess.run(
        ["make", "upgrade", "LOCK_LAYERS=test", "LOCK_APART=", f"PYTHON={sys.executable}",
         f"UV={Path(sys.executable).with_name('uv')}", "TEST_WORKERS=0", "UPGRADE_TESTS=tests/test_tiny.py notebooks/tiny.ipynb"],
        cwd=tiny_project, env=offline_environment(tiny_project.parent / "uv-cache"), capture_output=True, text=True,
        timeout=300)
    printed = upgrade.stdout
    assert upgrade.returncode != 0, "the notebook's stored 1.0 is not what tinypkg 1.1 prints: a test failed"
    assert "make upgrade: 2 package(s) changed" in printed, printed + upgrade.stderr
    assert re.search(r"^tinydep +1\.0 +1\.2$", printed, re.M) and re.search(r"^tinypkg +1\.0 +1\.1$", printed, re.M)
    assert re.search(r"^notebooks/tiny\.ipynb +Cell 1 +import tinypkg$", printed, re.M), printed
    assert "Cell 0 " not in printed and "test_tiny.py" not in printed.split("Stored outputs")[1]
    for lock in ("requirements.lock", "requirements-test.lock"):
        assert locked.locked_versions(tiny_project / lock) == {"tinydep": "1.2", "tinypkg": "1.1"}
    site_packages = next((tiny_project / ".venv").glob("lib/python*/site-packages"))
    assert {"tinydep": "1.2", "tinypkg": "1.1"}.items() <= locked.installed_versions([site_packages]).items()
