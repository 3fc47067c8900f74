"""Binder: repo2docker's order of steps, replayed in a temporary copy, gives an environment that runs 00-start-here.

repo2docker installs binder/environment.yml into the image first, with only that file present, then
copies the repository in, then runs binder/postBuild from the repository root. Conda is not here, so
the environment step is a fresh venv installing the file's pip section (what conda's pip step runs).
"""
import json
import os
import shutil
import subprocess
import venv
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
NOT_IN_THE_IMAGE = shutil.ignore_patterns(".git", ".venv", "wheelhouse", "build", "*.egg-info", "__pycache__",
                                          ".ipynb_checkpoints")


def run(command, cwd, environment):
    """Run a build step; fail the test with its output when it fails."""
    done = subprocess.run([str(part) for part in command], cwd=cwd, env=environment, capture_output=True, text=True,
                          timeout=600)
    assert done.returncode == 0, f"{command} failed:\n{done.stdout}\n{done.stderr}"
    return done


def test_environment_then_repository_then_postbuild_runs_start_here_from_notebooks(tmp_path):
    image, environment_dir = tmp_path / "repo", tmp_path / "env"
    (image / "binder").mkdir(parents=True)
    shutil.copy(ROOT / "binder" / "environment.yml", image / "binder")
    venv.create(environment_dir, with_pip=True)
    on_path = {**os.environ, "PATH": f"{environment_dir / 'bin'}{os.pathsep}{os.environ['PATH']}"}
    on_path.pop("VIRTUAL_ENV", None)
    pip_section = next(entry["pip"] for entry in yaml.safe_load((image / "binder" / "environment.yml").read_text())
                       ["dependencies"] if isinstance(entry, dict))
    run(["python", "-m", "pip", "install", "--quiet", "--no-compile", *pip_section], image, on_path)

    shutil.copytree(ROOT, image, ignore=NOT_IN_THE_IMAGE, dirs_exist_ok=True)
    run([image / "binder" / "postBuild"], image, on_path)

    settings = environment_dir / "share" / "jupyter" / "lab" / "settings" / "overrides.json"
    assert settings.read_text() == (ROOT / "jupyter" / "overrides.json").read_text()
    server = environment_dir / "etc" / "jupyter" / "jupyter_server_config.json"
    assert json.loads(server.read_text())["MappingKernelManager"]["cull_idle_timeout"] == 3600
    kernel = environment_dir / "etc" / "ipython" / "ipython_kernel_config.json"
    assert json.loads(kernel.read_text())["InteractiveShellApp"]["extensions"] == ["helpers.kernel_hints"]
    run(["jupyter", "nbconvert", "--to", "notebook", "--execute", "--output-dir", tmp_path, "00-start-here.ipynb"],
        image / "notebooks", on_path)
    executed = json.loads((tmp_path / "00-start-here.ipynb").read_text())
    printed = "".join("".join(output.get("text", "")) for cell in executed["cells"] for output in cell.get("outputs", []))
    assert "Backend: embedded lab server at http://127.0.0.1:" in printed
    where = run(["python", "-c", "import helpers; print(helpers.__file__)"], tmp_path, on_path).stdout.strip()
    assert Path(where).is_relative_to(image), "the notebooks must use the helpers from the repository"
