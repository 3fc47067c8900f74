"""The set-up files agree with each other and describe what the README promises."""
import json
import os
import subprocess
import sys
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent


def pins(lines):
    """{name: 'name==version'} for every pinned requirement line."""
    found = {}
    for line in lines:
        line = line.split("#", 1)[0].strip()
        if "==" in line:
            found[line.split("==")[0].split("[")[0].lower()] = line
    return found


def pinned_in(name):
    """The pins of a requirements file in the repository."""
    return pins((ROOT / name).read_text().splitlines())


def conda_environment(name):
    """(conda dependencies, pip section) of an environment file in the repository."""
    environment = yaml.safe_load((ROOT / name).read_text())
    pip_section = next(entry["pip"] for entry in environment["dependencies"] if isinstance(entry, dict))
    return environment["dependencies"], pip_section


def lock_lines(name):
    """The requirement lines of a lock (`name==version ; marker`), without uv's comments."""
    return [line.split("  #", 1)[0].strip() for line in (ROOT / name).read_text().splitlines()
            if line.strip() and not line.startswith("#")]


def test_environment_yml_installs_the_test_lock_and_the_helpers():
    dependencies, pip_section = conda_environment("environment.yml")
    assert pip_section == ["-r requirements-test.lock", "-e ."]
    assert "python=3.11" in dependencies


def test_the_learner_install_has_no_test_tools():
    learner, test_tools = pinned_in("requirements.txt"), pinned_in("requirements-test.txt")
    assert not set(learner) & set(test_tools)
    assert {"pytest", "nbval", "playwright", "check-jsonschema", "uv"} <= set(test_tools)
    assert not {"pytest", "nbval", "playwright", "check-jsonschema", "uv"} & set(pins(lock_lines("requirements.lock")))


def test_compose_file_is_valid_compose():
    result = subprocess.run([sys.executable, "-m", "check_jsonschema", "--builtin-schema", "vendor.compose-spec",
                             str(ROOT / "docker-compose.yml")], capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


def test_compose_runs_amazons_dynamodb_local_on_loopback_and_points_the_lab_at_it():
    services = yaml.safe_load((ROOT / "docker-compose.yml").read_text())["services"]
    local = services["dynamodb-local"]
    assert local["image"].startswith("amazon/dynamodb-local")
    assert {"-inMemory", "-sharedDb"} <= set(local["command"])
    assert local["ports"] == ["127.0.0.1:8000:8000"]
    lab = services["lab"]
    assert lab["environment"]["AWS_ENDPOINT_URL_DYNAMODB"] == "http://dynamodb-local:8000"
    assert all(port.startswith("127.0.0.1:") for port in lab["ports"])
    assert ".:/lab" in lab["volumes"]


def test_the_repository_ships_no_dynamodb_local_jar():
    tracked = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True).stdout.split()
    assert not [name for name in tracked if name.lower().endswith(".jar") or "dynamodblocal" in name.lower()]


def test_binder_environment_pins_exactly_the_lab_lock_and_leaves_the_helpers_to_postbuild():
    dependencies, pip_section = conda_environment("binder/environment.yml")
    assert pip_section == lock_lines("requirements.lock"), "run `make lock`: it copies the lock into this file"
    assert not [line for line in pip_section if line.startswith("-")], "repo2docker installs this before the repo exists"
    assert "python=3.11" in dependencies
    assert os.access(ROOT / "binder" / "postBuild", os.X_OK)


def test_the_dev_container_is_python_3_11_installs_as_make_lab_forwards_8888_and_opens_start_here():
    container = json.loads((ROOT / ".devcontainer" / "devcontainer.json").read_text())
    assert container["image"].endswith(":3.11")
    assert container["postCreateCommand"] == "make .venv/.installed-lab"
    assert 8888 in container["forwardPorts"]
    assert container["customizations"]["codespaces"]["openFiles"] == ["notebooks/00-start-here.ipynb"]
