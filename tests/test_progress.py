"""A learner's progress: every checker run is noted, every exercise of the lab has a row, a bad file never fails one."""
import importlib
import inspect
import json
import re
from pathlib import Path

import nbformat
import pandas as pd
import pytest
from botocore.exceptions import ClientError
from nbclient import NotebookClient

from helpers.checks import Report
from helpers.checks.p22 import check_register
from helpers.progress import progress_path, progress_source, progress_table
from support import refused

CHECKS = Path(__file__).resolve().parent.parent / "helpers" / "checks"
NOTEBOOKS = CHECKS.parent.parent / "notebooks"


def register(table, username, user_id):
    try:
        table.put_item(Item={"PK": f"USERNAME#{username}", "SK": "USERNAME", "user_id": user_id},
                       ConditionExpression="attribute_not_exists(PK)")
        return True
    except ClientError as error:
        if not refused(error):
            raise
        return False


def register_that_crashes(table, username, user_id):
    raise RuntimeError("not written yet")


def row(notebook, exercise):
    """The progress table's row for one exercise."""
    table = progress_table()
    found = table[(table["notebook"] == notebook) & (table["exercise"] == exercise)]
    assert len(found) == 1, table
    return found.iloc[0]


def test_each_notebooks_exercises_are_listed_in_the_order_the_notebook_sets_them():
    table = progress_table()
    exercises = lambda notebook: list(table.loc[table["notebook"] == notebook, "exercise"])
    assert exercises("22-conditional-writes.ipynb") == ["register", "redeem_gift_card", "redeem"]
    assert exercises("35-streams-consumers.ipynb") == ["add_payment", "add_and_notify", "apply_price"]


def test_every_checker_of_the_lab_has_one_row_in_its_notebook_not_tried_before_any_run():
    modules = [importlib.import_module(f"helpers.checks.{path.stem}") for path in CHECKS.glob("[!_]*.py")]
    checkers = [function for module in modules for name, function in inspect.getmembers(module, inspect.isfunction)
                if name.startswith("check_") and function.__module__ == module.__name__]
    table = progress_table()
    assert list(table.columns) == ["notebook", "exercise", "status", "attempts", "latest result", "last run",
                                   "solution cell ran"]
    assert len(table) == len(checkers)
    assert set(table["status"]) == {"not tried"}
    assert table["notebook"].str.fullmatch(r"\d\d-[a-z0-9-]+\.ipynb").all(), table
    assert {("22-conditional-writes.ipynb", "register"), ("28-gsi-eventual-consistency.ipynb", "set_display_name"),
            ("30-seat-booking.ipynb", "book_seat (retried)"), ("32-wallet-interview.ipynb", "withdraw (idempotent)")} \
        <= set(zip(table["notebook"], table["exercise"]))


def test_a_failed_run_is_tried_a_pass_is_passed_and_a_later_failure_keeps_the_pass(lab):
    assert not check_register(register_that_crashes).passed
    assert row("22-conditional-writes.ipynb", "register")["status"] == "tried"
    assert check_register(register).passed
    assert row("22-conditional-writes.ipynb", "register")["status"] == "passed"
    assert not check_register(register_that_crashes).passed
    after = row("22-conditional-writes.ipynb", "register")
    assert after["status"] == "passed" and re.fullmatch(r"\d{4}-\d\d-\d\d \d\d:\d\d", after["last run"])
    assert row("23-optimistic-locking.ipynb", "withdraw")["status"] == "not tried"


def register_solution(table, username, user_id):
    return register(table, username, user_id)


def test_a_solution_run_records_only_when_the_solution_cell_ran_never_a_pass_or_a_try(lab):
    assert check_register(register_solution).passed
    shown = row("22-conditional-writes.ipynb", "register")
    assert (shown["status"], shown["attempts"], shown["latest result"]) == ("not tried", 0, "")
    assert shown["last run"] == "" and shown["solution cell ran"] != ""


def test_a_later_solution_run_never_overwrites_the_learners_own_result(lab):
    assert not check_register(register_that_crashes).passed
    tried = row("22-conditional-writes.ipynb", "register")
    assert check_register(register_solution).passed
    after = row("22-conditional-writes.ipynb", "register")
    assert (after["status"], after["attempts"], after["latest result"]) == ("tried", 1, "FAIL")
    assert after["last run"] == tried["last run"]
    assert check_register(register).passed and check_register(register).passed
    mine = row("22-conditional-writes.ipynb", "register")
    assert (mine["status"], mine["attempts"], mine["latest result"]) == ("passed", 3, "PASS")


def test_a_broken_progress_file_is_one_warning_and_a_fresh_file_never_a_failed_exercise(lab, progress_file, capsys):
    progress_file.write_text("{not json")
    report = check_register(register_that_crashes)
    warning = capsys.readouterr().err.strip().splitlines()
    assert "not written yet" in report.message
    assert len(warning) == 1 and "starting a fresh progress file" in warning[0] and str(progress_file) in warning[0]
    assert list(json.loads(progress_file.read_text())["runs"]) == ["p22.check_register"]


def test_a_progress_file_that_cannot_be_written_is_one_warning_saying_what_to_set(lab, monkeypatch, tmp_path, capsys):
    (tmp_path / "a-file").write_text("")
    monkeypatch.setenv("DYNAMODB_LAB_PROGRESS", str(tmp_path / "a-file" / "progress.json"))
    report = check_register(register_that_crashes)
    warning = capsys.readouterr().err.strip().splitlines()
    assert not report.passed
    assert len(warning) == 1 and "set DYNAMODB_LAB_PROGRESS to a writable file" in warning[0]


def test_the_table_s_source_names_the_file_and_who_shares_it(monkeypatch, tmp_path):
    assert progress_source() == f"Progress from {progress_path()} (chosen by DYNAMODB_LAB_PROGRESS)."
    monkeypatch.delenv("DYNAMODB_LAB_PROGRESS")
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert progress_source().startswith(f"Progress from {tmp_path}/dynamodb-concurrency-lab/progress.json: one file "
                                        "per user of this computer, shared by every copy of the lab")


@pytest.mark.parametrize("passed", [True, False])
def test_a_report_made_outside_a_checker_is_not_recorded(progress_file, passed):
    Report("register", passed, "made by hand", 0, pd.DataFrame())
    assert not progress_file.exists()


def test_running_a_whole_notebook_top_to_bottom_records_no_pass_the_learner_did_not_make(progress_file):
    notebook = nbformat.read(NOTEBOOKS / "22-conditional-writes.ipynb", as_version=4)
    NotebookClient(notebook, kernel_name="python3", resources={"metadata": {"path": str(NOTEBOOKS)}}).execute()
    table = progress_table()
    mine = table[table["notebook"] == "22-conditional-writes.ipynb"]
    assert set(mine["status"]) == {"tried"} and (mine["solution cell ran"] != "").all(), mine
    assert set(mine["latest result"]) == {"FAIL"} and set(mine["attempts"]) == {1}
    assert "passed" not in set(table["status"])
