"""The lock (requirements.lock, requirements-<layer>.lock): what it pins here, and where an installed set differs."""
import importlib.metadata
import re
from pathlib import Path

from packaging.markers import Marker
from packaging.utils import canonicalize_name

ROOT = Path(__file__).resolve().parents[2]
LAB_LOCK = ROOT / "requirements.lock"
TEST_LOCK = ROOT / "requirements-test.lock"
# A venv's own installers, and the lab's helpers (installed from the repository with `-e .`): never in a lock.
NEVER_LOCKED = frozenset({"pip", "setuptools", "wheel", "dynamodb-concurrency-lab-helpers"})
PIN = re.compile(r"^(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)(?:\[[^\]]*\])?==(?P<version>[^\s;#]+)"
                 r"\s*(?:;(?P<marker>[^#]*))?")


def pinned_lines(text):
    """(name, version, marker or None) for every `name==version ; marker` line of a lock or requirements text."""
    pins = []
    for line in text.splitlines():
        if found := PIN.match(line.strip()):
            marker = (found["marker"] or "").strip() or None
            pins.append((canonicalize_name(found["name"]), found["version"], marker))
    return pins


def locked_versions(path, environment=None):
    """{name: version} that the lock at `path` installs here (or in `environment`, a dict of marker values)."""
    return {name: version for name, version, marker in pinned_lines(Path(path).read_text())
            if marker is None or Marker(marker).evaluate(environment)}


def installed_versions(paths=None):
    """{name: version} of the distributions installed on `paths` (default: this Python's sys.path)."""
    return {canonicalize_name(dist.metadata["Name"]): dist.version
            for dist in importlib.metadata.distributions(**({"path": list(paths)} if paths else {}))}


def drift(locked, installed):
    """[(name, locked version, installed version or None)] for each locked package not installed at its version."""
    return [(name, version, installed.get(name)) for name, version in sorted(locked.items())
            if installed.get(name) != version]


def unlocked(locked, installed, never_locked=NEVER_LOCKED):
    """The installed packages that the lock does not name (pip, setuptools, wheel and the helpers aside)."""
    return sorted(set(installed) - set(locked) - {canonicalize_name(name) for name in never_locked})
