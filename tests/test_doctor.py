"""`make doctor`: one line per check, an exact fix under every failure, exit 0 and a 'ready' line here."""
import re
import subprocess
import sys
from pathlib import Path

from helpers import doctor
from helpers.lab import locked

ROOT = Path(__file__).resolve().parent.parent
LINE = re.compile(r"^\[(ok|X|!)\] \S")


def test_the_doctor_passes_here_with_one_marked_line_per_check_and_a_line_for_the_chat():
    result = subprocess.run([sys.executable, "-m", "helpers.doctor"], capture_output=True, text=True, timeout=120)
    lines = result.stdout.splitlines()
    checks = [line for line in lines if not line.startswith(("     fix:", "ready:", "not ready:"))]
    assert result.returncode == 0, result.stdout + result.stderr
    assert len(checks) == len(doctor.CHECKS) and all(LINE.match(line) for line in checks), result.stdout
    assert not [line for line in checks if line.startswith("[X]")]
    assert any("read-then-put lost" in line and "ADD lost none" in line for line in checks)
    test_lock = locked.locked_versions(locked.TEST_LOCK)
    assert f"[ok] {len(test_lock)} packages at the versions requirements-test.lock pins" in checks
    assert ("[ok] notebook 36's libraries: aws-lambda-powertools 3.37.0, pynamodb 6.1.0, python-dynamodb-lock 0.9.1"
            in checks)
    assert re.fullmatch(r"ready: Python 3\.\d+\.\d+, lab \S+, JupyterLab \S+, race OK", lines[-1])


def test_a_too_old_python_is_a_cross_with_the_command_that_fixes_it():
    line = str(doctor.check_python((3, 10, 2)))
    assert line.startswith("[X] Python 3.10.2 is too old")
    assert "fix:" in line and "make doctor PYTHON=python3.11" in line


def test_a_package_at_the_wrong_version_is_a_cross_naming_both_versions_and_the_reinstall():
    line = str(doctor.check_packages({"boto3": "0.0.1", "not-a-lab-package": "1.0"}))
    assert line.startswith("[X]")
    assert "boto3 is " in line and "pinned 0.0.1" in line and "not-a-lab-package is not installed" in line
    assert doctor.REINSTALL in line


def test_a_library_of_notebook_36_at_another_version_is_a_cross_naming_it_and_the_reinstall():
    line = str(doctor.check_libraries({"aws-lambda-powertools": "3.37.0", "pynamodb": "5.0.0",
                                       "python-dynamodb-lock": "0.9.1"}))
    assert line.startswith("[X] notebook 36's libraries: pynamodb is 6.1.0, pinned 5.0.0")
    assert doctor.REINSTALL in line


def test_a_full_disk_is_a_cross_saying_how_much_to_free():
    line = str(doctor.check_disk(minimum_gb=10**9))
    assert line.startswith("[X] only") and "fix: free at least" in line


def test_a_missing_chromium_is_only_a_warning():
    result = doctor.check_chromium(names=("no-such-browser-here",))
    assert result.status == "warn" and str(result).startswith("[!]")
    assert doctor.summary([result]).startswith("ready:")


def test_the_doctor_says_what_each_open_notebook_costs_and_how_to_shut_kernels_down():
    line = str(doctor.check_memory(available_mb=8192))
    assert line.startswith(f"[ok] 8.0 GB of memory free: each open notebook uses about {doctor.NOTEBOOK_MEMORY_MB} MB")
    assert "File → Shut Down Kernel" in line and "Running Terminals and Kernels" in line


def test_too_little_memory_for_a_few_notebooks_is_a_warning_saying_to_keep_few_open():
    result = doctor.check_memory(available_mb=doctor.NOTEBOOK_MEMORY_MB * 2)
    assert result.status == "warn" and "keep one or two notebooks open" in str(result)


def test_a_package_drifted_from_the_lock_is_a_cross_naming_it_both_versions_and_the_reinstall():
    lock = locked.locked_versions(locked.LAB_LOCK)
    planted = {**lock, "botocore": "1.44.99"}
    planted.pop("jmespath")
    line = str(doctor.check_lock(locked.LAB_LOCK, planted, doctor.REINSTALL))
    assert line.startswith(f"[X] this environment differs from requirements.lock: botocore is 1.44.99, the lock has "
                           f"{lock['botocore']}; jmespath is not installed, the lock has {lock['jmespath']}\n")
    assert line.endswith(f"fix: reinstall the locked versions: `{doctor.REINSTALL}`")


def test_the_locked_set_itself_is_a_tick_and_packages_the_lock_does_not_name_are_left_alone():
    lock = locked.locked_versions(locked.LAB_LOCK)
    line = str(doctor.check_lock(locked.LAB_LOCK, {**lock, "seaborn": "0.13.2"}, doctor.REINSTALL))
    assert line == f"[ok] {len(lock)} packages at the versions requirements.lock pins"


def test_a_venv_made_by_make_test_is_checked_against_the_test_lock_and_reinstalled_by_it(tmp_path):
    assert doctor.venv_lock(tmp_path) == (locked.LAB_LOCK, doctor.REINSTALL)
    (tmp_path / ".installed-test").touch()
    assert doctor.venv_lock(tmp_path) == (locked.TEST_LOCK, "rm -f .venv/.installed-* && make .venv/.installed-test")


def test_the_readmes_sample_shows_one_line_per_check_and_the_locks_count():
    readme = (ROOT / "README.md").read_text()
    sample = readme.split("**A week before: `make doctor`.**", 1)[1].split("```", 2)[1]
    checks = [line for line in sample.splitlines() if LINE.match(line)]
    assert len(checks) == len(doctor.CHECKS), checks
    lab_lock = locked.locked_versions(locked.LAB_LOCK)
    assert f"[ok] {len(lab_lock)} packages at the versions requirements.lock pins" in checks
    assert f"[ok] {len(doctor.pinned_requirements())} pinned packages import at their pinned versions" in checks


def test_a_missing_lock_is_a_cross_saying_to_run_from_a_clone(tmp_path):
    line = str(doctor.check_lock(tmp_path / "requirements.lock", {}, doctor.REINSTALL))
    assert line.startswith(f"[X] {tmp_path / 'requirements.lock'} is missing") and "in a clone of the lab" in line
