"""The lock's chores for the Makefile (`make lock`, `make upgrade`, `make test`), run with .venv's Python:

    python tools/lock.py binder requirements.lock binder/environment.yml   copy the lab lock's pins into Binder's file
    python tools/lock.py prune requirements-test.lock                     uninstall what the lock does not name
    python tools/lock.py report BEFORE_DIR JUNIT_XML LOCK...              what an upgrade changed, and what it broke
    python tools/lock.py elsewhere WHEELHOUSE LOCK...                     download the pins only other platforms install
"""
import json
import subprocess
import sys
import sysconfig
import tomllib
import xml.etree.ElementTree as ElementTree
from collections import defaultdict
from pathlib import Path

from helpers.lab import locked

# Where learners run the lab besides Linux, and the Pythons the lock resolves for.
OTHER_PLATFORMS = ("win_amd64", "macosx_11_0_arm64", "macosx_10_9_x86_64", "manylinux_2_28_x86_64")
PYTHONS = ("3.11", "3.12", "3.13", "3.14")
BINDER_HEADER = """\
# Binder / repo2docker installs this before the repository is copied into the image, so it can name no other file:
# its pins are requirements.lock's, copied here by `make lock` (tests/test_lock.py checks); binder/postBuild then
# installs the helpers (`-e .`) and the lab's settings.
name: dynamodb-lab
channels:
  - conda-forge
dependencies:
  - python=3.11
  - pip
  - pip:
"""


def lock_requirements(lock):
    """The requirement lines of a lock, `name==version` plus its environment marker, without uv's comments."""
    return [f"{name}=={version}" + (f" ; {marker}" if marker else "")
            for name, version, marker in locked.pinned_lines(Path(lock).read_text())]


def write_binder(lock, environment_file):
    """Rewrite Binder's environment file with the lock's pins as its pip section."""
    lines = "".join(f"      - {requirement}\n" for requirement in lock_requirements(lock))
    Path(environment_file).write_text(BINDER_HEADER + lines)


def project_name(pyproject=Path("pyproject.toml")):
    """The name of the project in the current directory (installed with `-e .`, never in its lock)."""
    return tomllib.loads(pyproject.read_text())["project"]["name"]


def prune(*locks):
    """Uninstall from this venv's own site-packages every package none of `locks` names; say which."""
    keep = {name: version for lock in locks for name, version in locked.locked_versions(lock).items()}
    own = locked.installed_versions({sysconfig.get_path("purelib"), sysconfig.get_path("platlib")})
    extra = locked.unlocked(keep, own, locked.NEVER_LOCKED | {project_name()})
    if extra:
        print(f"not in {', '.join(map(str, locks))}, so uninstalled: {', '.join(extra)}")
        subprocess.run([sys.executable, "-m", "pip", "uninstall", "--quiet", "--yes", *extra], check=True)


def versions_by_name(locks):
    """{name: sorted versions} over the pins of several locks (a package may have one version per Python)."""
    found = defaultdict(set)
    for lock in locks:
        for name, version, _ in locked.pinned_lines(Path(lock).read_text()):
            found[name].add(version)
    return {name: sorted(versions) for name, versions in found.items()}


def shown(versions):
    """Versions as the change table writes them ("-": not in the lock)."""
    return " / ".join(versions) if versions else "-"


def changes(before, after):
    """[(package, old, new)] for each package whose locked versions differ."""
    return [(name, shown(before.get(name)), shown(after.get(name))) for name in sorted(set(before) | set(after))
            if before.get(name) != after.get(name)]


def failed_tests(junit):
    """[(file, test name)] of each test that failed or errored in pytest's junit report (xunit1: it names files)."""
    if not Path(junit).exists():
        return []
    return [(case.get("file") or case.get("classname"), case.get("name"))
            for case in ElementTree.parse(junit).iter("testcase")
            if case.find("failure") is not None or case.find("error") is not None]


def cell_source_line(notebook, name):
    """The first line of the code of nbval's item `name` ("Cell 7": the notebook's code cell at index 7)."""
    cells = [cell for cell in json.loads(Path(notebook).read_text())["cells"] if cell["cell_type"] == "code"]
    index = int(name.split()[-1])
    source = "".join(cells[index]["source"]).strip().splitlines() if index < len(cells) else []
    return source[0] if source else ""


def table(rows, header):
    """Rows as aligned plain-text columns under a header."""
    rows = [header, *rows]
    widths = [max(len(row[column]) for row in rows) for column in range(len(header))]
    return "\n".join("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in rows)


def report(before_dir, junit, *locks):
    """Print what the upgrade changed, then the notebook cells whose stored output it changes and the failed tests."""
    before = versions_by_name(sorted(Path(before_dir).glob("*.lock")))
    changed = changes(before, versions_by_name(locks))
    print(f"\nmake upgrade: {len(changed)} package(s) changed in {', '.join(map(str, locks))}")
    if changed:
        print(table(changed, ("package", "old", "new")))
    failed = failed_tests(junit)
    cells = [(path, name) for path, name in failed if path and path.endswith(".ipynb")]
    others = [(path, name) for path, name in failed if (path, name) not in cells]
    if cells:
        print("\nStored outputs that change on the new set (re-execute these notebooks and review their diff):")
        print(table([(path, name, cell_source_line(path, name)) for path, name in cells],
                    ("notebook", "nbval cell", "its first line")))
    if others:
        print("\nFailed tests on the new set:")
        print("\n".join(f"{path}::{name}" for path, name in others))
    if not failed:
        print("\nEvery test passed on the new set: review `git diff *.lock` and commit it.")


def pins_elsewhere(*locks):
    """The `name==version` pins of the locks whose markers leave them out here (pywin32 on Linux, say)."""
    here = {f"{name}=={version}" for lock in locks for name, version in locked.locked_versions(lock).items()}
    return sorted({f"{name}=={version}" for lock in locks for name, version, _ in
                   locked.pinned_lines(Path(lock).read_text())} - here)


def download_elsewhere(wheelhouse, *locks):
    """Download a wheel of each pin only other platforms install, so that uv resolves from the wheelhouse alone."""
    for pin in pins_elsewhere(*locks):
        tries = ([f"--python-version={python}", *(f"--platform={platform}" for platform in OTHER_PLATFORMS)]
                 for python in PYTHONS)
        download = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
                    f"--dest={wheelhouse}"]
        if not any(subprocess.run([*download, *options, pin], capture_output=True).returncode == 0 for options in tries):
            sys.exit(f"no wheel of {pin} for {', '.join(OTHER_PLATFORMS)} on Python {', '.join(PYTHONS)}")


COMMANDS = {"binder": write_binder, "prune": prune, "report": report, "elsewhere": download_elsewhere}

if __name__ == "__main__":
    COMMANDS[sys.argv[1]](*sys.argv[2:])
