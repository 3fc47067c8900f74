"""Preflight for a workshop laptop: `make doctor` (or `python -m helpers.doctor`) prints one line per check.

Each line starts with [ok], [X] (the lab will not work: the line says the exact fix) or [!] (optional:
only the browser tests need it). The exit status is 0 when no check failed, and the last line is the
one to paste into the workshop chat.
"""
import importlib
import importlib.metadata
import os
import shutil
import socket
import sys
from dataclasses import dataclass
from pathlib import Path

from helpers.lab import locked

ROOT = Path(__file__).resolve().parents[2]
MINIMUM_PYTHON = (3, 11)
MINIMUM_FREE_GB = 1.0
RACE_ATTEMPTS = 3
REINSTALL = "rm -f .venv/.installed-* && make doctor"
REINSTALL_TEST = "rm -f .venv/.installed-* && make .venv/.installed-test"
MARKS = {"ok": "[ok]", "fail": "[X]", "warn": "[!]"}
# Measured (PSS of a kernel and its lab server): 215-220 MB after a notebook's Setup cell (22, 25, 27, 28 and 33);
# 284-292 MB after all of it (25, 33 and 34, 2026-12-05, load average 4-6), 277 MB for 35 and 317 MB for 36 (load 17-21).
NOTEBOOK_MEMORY_MB = 290
MINIMUM_OPEN_NOTEBOOKS = 3
LIBRARIES = ("aws-lambda-powertools", "pynamodb", "python-dynamodb-lock")  # what notebook 36 explores
SHUT_DOWN_KERNELS = ("shut down a notebook's kernel when you are done with it: File → Shut Down Kernel, or the "
                     "Running Terminals and Kernels panel in the left sidebar")


@dataclass
class Check:
    """One line of the preflight: what was checked, how it went, and the fix when it did not go well."""

    status: str
    what: str
    fix: str = ""

    def __str__(self):
        fix = f"\n     fix: {self.fix}" if self.fix else ""
        return f"{MARKS[self.status]} {self.what}{fix}"


def check_python(version=sys.version_info):
    """Python is 3.11 or newer."""
    shown = ".".join(str(part) for part in version[:3])
    if tuple(version[:2]) >= MINIMUM_PYTHON:
        return Check("ok", f"Python {shown}")
    return Check("fail", f"Python {shown} is too old: the lab needs 3.11 or newer",
                 "install Python 3.11 (python.org, or `sudo apt-get install python3.11 python3.11-venv`), "
                 "then `rm -rf .venv && make doctor PYTHON=python3.11`")


def check_venv(prefix=sys.prefix, base_prefix=sys.base_prefix):
    """The doctor runs inside a virtual environment (the one `make lab` made)."""
    if prefix != base_prefix:
        return Check("ok", f"running in the virtual environment {prefix}")
    return Check("fail", f"not running in a virtual environment (Python at {prefix})",
                 "run `make doctor`, which creates .venv and runs the checks inside it "
                 "(on Debian/Ubuntu, `sudo apt-get install python3-venv` first if `python3 -m venv` fails)")


def check_disk(path=ROOT, minimum_gb=MINIMUM_FREE_GB):
    """At least `minimum_gb` GB free where the lab lives."""
    free_gb = shutil.disk_usage(path).free / 1e9
    if free_gb >= minimum_gb:
        return Check("ok", f"{free_gb:.1f} GB free on {path}")
    return Check("fail", f"only {free_gb:.2f} GB free on {path}: the lab needs {minimum_gb:.0f} GB",
                 f"free at least {minimum_gb - free_gb:.1f} GB more on that disk, or clone the lab onto another one")


def pinned_requirements(path=ROOT / "requirements.txt"):
    """{distribution name: pinned version} from a requirements file."""
    pins = {}
    for line in path.read_text().splitlines():
        line = line.split("#", 1)[0].strip()
        if "==" in line:
            name, version = line.split("==")
            pins[name.split("[")[0]] = version
    return pins


def import_names(distribution):
    """The top-level modules a distribution provides (e.g. pyyaml -> yaml)."""
    provided = importlib.metadata.packages_distributions()
    names = [module for module, owners in provided.items()
             if distribution.lower() in (owner.lower() for owner in owners) and not module.startswith("_")]
    return names or [distribution.replace("-", "_")]


def package_problem(distribution, pinned):
    """Why `distribution` is not usable at version `pinned`, or None when it is."""
    try:
        installed = importlib.metadata.version(distribution)
    except importlib.metadata.PackageNotFoundError:
        return f"{distribution} is not installed"
    if installed != pinned:
        return f"{distribution} is {installed}, pinned {pinned}"
    module = min(import_names(distribution), key=len)
    try:
        importlib.import_module(module)
    except Exception as error:  # any import failure is what this check reports
        return f"import {module} failed: {type(error).__name__}: {error}"
    return None


def check_packages(pins=None):
    """Every package pinned in requirements.txt imports, at its pinned version."""
    pins = pinned_requirements() if pins is None else pins
    problems = [problem for name, version in pins.items() if (problem := package_problem(name, version))]
    if not problems:
        return Check("ok", f"{len(pins)} pinned packages import at their pinned versions")
    return Check("fail", "pinned packages: " + "; ".join(problems), f"reinstall them: `{REINSTALL}`")


def check_libraries(pins=None):
    """The libraries notebook 36 explores import at their pinned versions, named with them."""
    pins = pinned_requirements() if pins is None else pins
    problems = [problem for name in LIBRARIES if (problem := package_problem(name, pins.get(name, "(not pinned)")))]
    if problems:
        return Check("fail", "notebook 36's libraries: " + "; ".join(problems), f"reinstall them: `{REINSTALL}`")
    return Check("ok", "notebook 36's libraries: " + ", ".join(f"{name} {pins[name]}" for name in LIBRARIES))


def venv_lock(prefix=sys.prefix):
    """(the lock this environment was installed from, the command that reinstalls it): `make test`'s or `make lab`'s."""
    if (Path(prefix) / ".installed-test").exists():
        return locked.TEST_LOCK, REINSTALL_TEST
    return locked.LAB_LOCK, REINSTALL


def check_lock(lock=None, installed=None, reinstall=None):
    """Every package of the lock is installed at the lock's version (a learner's own `pip install` can change one)."""
    if lock is None:
        lock, reinstall = venv_lock()
    if not Path(lock).exists():
        return Check("fail", f"{lock} is missing, so nothing says which versions the lab needs",
                     "run `make doctor` in a clone of the lab (git clone, then cd into it)")
    versions = locked.locked_versions(lock)
    differences = locked.drift(versions, locked.installed_versions() if installed is None else installed)
    if not differences:
        return Check("ok", f"{len(versions)} packages at the versions {Path(lock).name} pins")
    shown = [f"{name} is {have}, the lock has {want}" if have else f"{name} is not installed, the lock has {want}"
             for name, want, have in differences]
    return Check("fail", f"this environment differs from {Path(lock).name}: " + "; ".join(shown),
                 f"reinstall the locked versions: `{reinstall}`")


def check_loopback_port():
    """A program may listen on a port of 127.0.0.1 (the embedded server and JupyterLab do)."""
    try:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
            listener.bind(("127.0.0.1", 0))
            listener.listen()
            port = listener.getsockname()[1]
    except OSError as error:
        return Check("fail", f"cannot listen on 127.0.0.1: {error}",
                     "allow Python to listen on 127.0.0.1 (a firewall or endpoint-security tool blocks it; "
                     "ask your IT team), or use the Binder or Codespaces launch in the README")
    return Check("ok", f"a loopback port can be bound (127.0.0.1:{port})")


def check_server():
    """The backend starts and answers a ListTables call."""
    from helpers import connect, tracing
    try:
        lab = connect(quiet=True)
        with tracing(False):
            lab.client.list_tables(Limit=1)
    except Exception as error:  # whatever stops the backend is what the learner needs to see
        return Check("fail", f"the lab's DynamoDB server did not answer: {type(error).__name__}: {error}",
                     f"unset AWS_ENDPOINT_URL_DYNAMODB to use the embedded server, or reinstall: `{REINSTALL}`")
    return Check("ok", f"{lab.banner.split(' (')[0]} answers")


def race_lost_updates():
    """(updates lost by a racy read-then-put, updates lost by ADD), 10 threads x 50 operations each."""
    from helpers import fresh_table, tracing
    from helpers.races import TABLE, race
    with tracing(False):
        fresh_table(TABLE)
        racy = 0
        for _ in range(RACE_ATTEMPTS):
            racy = race("racy", 10, 50, think_ms=5).lost
            if racy:
                break
        return racy, race("add", 10, 50).lost


def check_race():
    """A 10-thread race loses updates with read-then-put and loses none with ADD."""
    try:
        racy, add = race_lost_updates()
    except Exception as error:  # a crash of the race is a finding of the preflight
        return Check("fail", f"the race did not run: {type(error).__name__}: {error}", f"reinstall: `{REINSTALL}`")
    if racy and not add:
        return Check("ok", f"10-thread race: read-then-put lost {racy} updates, ADD lost none")
    if add:
        return Check("fail", f"10-thread race: ADD lost {add} updates (it must lose none)",
                     "unset AWS_ENDPOINT_URL_DYNAMODB so the lab uses its embedded server, then run `make doctor`")
    return Check("fail", f"10-thread race: read-then-put lost no updates in {RACE_ATTEMPTS} tries",
                 "close other heavy programs (the race needs threads to overlap) and run `make doctor` again")


def check_jupyterlab():
    """JupyterLab imports and its `jupyter-lab` command sits next to this Python."""
    try:
        version = importlib.metadata.version("jupyterlab")
    except importlib.metadata.PackageNotFoundError:
        return Check("fail", "JupyterLab is not installed", f"`{REINSTALL}`")
    command = Path(sys.executable).with_name("jupyter-lab")
    if not command.exists():
        return Check("fail", f"JupyterLab {version} is installed but {command} is missing", f"`{REINSTALL}`")
    return Check("ok", f"JupyterLab {version}")


def available_memory_mb(meminfo=Path("/proc/meminfo")):
    """Memory the system can give programs now, in MB (Linux's MemAvailable; elsewhere the physical memory)."""
    if meminfo.exists():
        for line in meminfo.read_text().splitlines():
            if line.startswith("MemAvailable:"):
                return int(line.split()[1]) // 1024
    return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2**20


def check_memory(available_mb=None):
    """How many notebooks fit in memory at once, and how to shut down the ones you are done with."""
    available_mb = available_memory_mb() if available_mb is None else available_mb
    room = available_mb // NOTEBOOK_MEMORY_MB
    what = (f"{available_mb / 1024:.1f} GB of memory free: each open notebook uses about {NOTEBOOK_MEMORY_MB} MB (its "
            f"kernel and its own lab server), room for about {room} at once; {SHUT_DOWN_KERNELS}")
    if room >= MINIMUM_OPEN_NOTEBOOKS:
        return Check("ok", what)
    return Check("warn", what, "keep one or two notebooks open at a time, and close other programs")


def check_chromium(names=("chromium", "chromium-browser")):
    """A Chromium for the browser tests (optional: the notebooks do not need it)."""
    found = next(filter(None, map(shutil.which, names)), None)
    if found:
        return Check("ok", f"Chromium at {found} (for the browser tests)")
    return Check("warn", "no Chromium: only the browser tests need it, and they will be skipped",
                 "optional: `sudo apt-get install chromium` (Debian/Ubuntu)")


CHECKS = (check_python, check_venv, check_disk, check_memory, check_packages, check_lock, check_libraries,
          check_loopback_port, check_server, check_race, check_jupyterlab, check_chromium)


def lab_version():
    """The installed version of the lab's helpers package."""
    try:
        return importlib.metadata.version("dynamodb-concurrency-lab-helpers")
    except importlib.metadata.PackageNotFoundError:
        return "not installed"


def summary(results):
    """The line to paste into the workshop chat."""
    failed = [result.what for result in results if result.status == "fail"]
    python = ".".join(str(part) for part in sys.version_info[:3])
    if failed:
        return f"not ready: {len(failed)} check(s) failed, Python {python}, lab {lab_version()}: fix the [X] lines above"
    return f"ready: Python {python}, lab {lab_version()}, JupyterLab {importlib.metadata.version('jupyterlab')}, race OK"


def main():
    """Run every check, print its line as it finishes, then the summary; exit 1 when a check failed."""
    results = []
    for check in CHECKS:
        results.append(check())
        print(results[-1], flush=True)
    print(summary(results))
    return 1 if any(result.status == "fail" for result in results) else 0


if __name__ == "__main__":
    sys.exit(main())
