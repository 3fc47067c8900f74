"""A learner's progress: every checker run is recorded, and progress_table() shows every exercise of the lab.

Only the learner's own attempts count. A notebook's solutions are functions named `..._solution`; a
checker run on one records only when a solution cell ran, never a result, so Run All (which runs the
solution cells too, collapsed or not) never marks an exercise passed or tried, nor overwrites the learner's
own result. Whether the learner read a solution, nothing can tell.

The record is a small JSON file in the user's data directory (platformdirs), or at the path in the
environment variable DYNAMODB_LAB_PROGRESS. The exercises are read from the checker modules
(helpers/checks/*.py: each check_* function and the exercise name it reports), and the notebook of each
from the notebooks' `from helpers.checks.<module> import check_...` lines, so nothing here is a typed list.
"""
import ast
import json
import os
import re
import sys
from datetime import datetime, timezone
from pathlib import Path

import pandas as pd
import platformdirs

PATH_VARIABLE = "DYNAMODB_LAB_PROGRESS"
CHECKS = Path(__file__).resolve().parents[1] / "checks"
NOTEBOOKS = Path(__file__).resolve().parents[2] / "notebooks"
IMPORTS = re.compile(r"from helpers\.checks\.(\w+) import (\([^)]*\)|[\w, ]+)")
COLUMNS = ["notebook", "exercise", "status", "attempts", "latest result", "last run", "solution cell ran"]
SOLUTION_SUFFIX = "_solution"


def progress_path():
    """Where the learner's progress is kept."""
    chosen = os.environ.get(PATH_VARIABLE, "").strip()
    if chosen:
        return Path(chosen)
    return platformdirs.user_data_path("dynamodb-concurrency-lab") / "progress.json"


def warn(message):
    """One line on stderr: progress problems never fail an exercise."""
    print(f"Progress: {message}", file=sys.stderr)


def load_runs(path):
    """{checker key: its record} from the progress file; a broken file gets a warning and a fresh start."""
    if not path.exists():
        return {}
    try:
        runs = json.loads(path.read_text(encoding="utf-8"))["runs"]
        if not isinstance(runs, dict):
            raise ValueError("'runs' is not an object")
        return {checker: run for checker, run in runs.items() if isinstance(run, dict)}
    except (OSError, ValueError, KeyError, TypeError) as error:
        warn(f"{path} could not be read ({type(error).__name__}: {error}); starting a fresh progress file.")
        return {}


def save_runs(path, runs):
    """Write the progress file in one step, so a crash never leaves half a file."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(path.name + ".partial")
        partial.write_text(json.dumps({"runs": runs}, indent=1, sort_keys=True), encoding="utf-8")
        os.replace(partial, path)
    except OSError as error:
        warn(f"could not save to {path} ({error}); set {PATH_VARIABLE} to a writable file to keep your progress.")


def running_checker():
    """('module.check_name', the function it checks) of the helpers.checks checker on the call stack, or None."""
    frame = sys._getframe(1)
    while frame is not None:
        module = frame.f_globals.get("__name__", "")
        if module.startswith("helpers.checks.") and frame.f_code.co_name.startswith("check_"):
            checked = frame.f_locals.get(frame.f_code.co_varnames[0]) if frame.f_code.co_argcount else None
            return f"{module.rsplit('.', 1)[1]}.{frame.f_code.co_name}", checked
        frame = frame.f_back
    return None


def is_solution(function):
    """True for a notebook's own solution (named like buy_solution), which is never the learner's attempt."""
    return getattr(function, "__name__", "").endswith(SOLUTION_SUFFIX)


def record(report):
    """Note a checker's report: the learner's attempt (PASS or FAIL, when), or only that a solution was shown."""
    running = running_checker()
    if running is None:
        return
    checker, checked = running
    path = progress_path()
    runs = load_runs(path)
    now = datetime.now(timezone.utc).isoformat(timespec="seconds")
    run = {"exercise": report.exercise, **runs.get(checker, {})}
    if is_solution(checked):
        run["solution_shown"] = now
    else:
        run.update(result="PASS" if report.passed else "FAIL", last_run=now, attempts=attempts_of(run) + 1,
                   ever_passed=bool(run.get("ever_passed")) or report.passed)
    runs[checker] = run
    save_runs(path, runs)


def attempts_of(run):
    """How many of the learner's own runs a record counts (a record from before attempts were counted: one)."""
    return int(run.get("attempts", 1 if "result" in run else 0))


def reported_exercise(function):
    """The exercise name a check_* function passes to attack(), or its own name without 'check_'."""
    for node in ast.walk(function):
        if (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "attack" and node.args
                and isinstance(node.args[0], ast.Constant)):
            return node.args[0].value
    return function.name.removeprefix("check_")


def lab_exercises():
    """[(checker key, exercise name)] of every check_* function in helpers/checks, in file order."""
    found = []
    for module in sorted(CHECKS.glob("*.py")):
        tree = ast.parse(module.read_text(encoding="utf-8"))
        found += [(f"{module.stem}.{node.name}", reported_exercise(node)) for node in tree.body
                  if isinstance(node, ast.FunctionDef) and node.name.startswith("check_")]
    return found


def notebook_of_checkers():
    """{checker key: (notebook file name, where the notebook first calls it)}, from each notebook's
    `from helpers.checks.X import ...` lines and the checker's first call after them."""
    owners = {}
    for notebook in sorted(NOTEBOOKS.glob("*.ipynb")):
        cells = json.loads(notebook.read_text(encoding="utf-8"))["cells"]
        code = "\n".join("".join(cell["source"]) for cell in cells if cell["cell_type"] == "code")
        for module, names in IMPORTS.findall(code):
            for name in re.findall(r"check_\w+", names):
                called = re.search(rf"\b{name}\(", code)
                owners[f"{module}.{name}"] = (notebook.name, called.start() if called else len(code))
    return owners


def status_of(run):
    """'passed' once any own run passed, 'tried' after own runs that all failed, else 'not tried'."""
    if run.get("ever_passed"):
        return "passed"
    return "tried" if attempts_of(run) else "not tried"


def local_time(moment):
    """A recorded UTC moment as this machine's local time to the minute ('2026-12-03 21:40'), or ''."""
    return datetime.fromisoformat(moment).astimezone().strftime("%Y-%m-%d %H:%M") if moment else ""


def progress_source():
    """One sentence saying which file the progress table comes from and who shares it."""
    path = progress_path()
    if os.environ.get(PATH_VARIABLE, "").strip():
        return f"Progress from {path} (chosen by {PATH_VARIABLE})."
    return (f"Progress from {path}: one file per user of this computer, shared by every copy of the lab; set "
            f"{PATH_VARIABLE} to a file of your own to keep another.")


def progress_table():
    """One row per exercise of the lab, in the order each notebook sets them: notebook, exercise, status, the learner's
    attempts, latest result, when (local time), and when a solution cell last ran its checker."""
    runs = load_runs(progress_path())
    owners = notebook_of_checkers()
    rows = []
    for checker, exercise in lab_exercises():
        run = runs.get(checker, {})
        notebook, place = owners.get(checker, (f"helpers/checks/{checker.split('.')[0]}.py", 0))
        rows.append({"notebook": notebook, "place": place, "exercise": exercise, "status": status_of(run),
                     "attempts": attempts_of(run), "latest result": run.get("result", ""),
                     "last run": local_time(run.get("last_run")),
                     "solution cell ran": local_time(run.get("solution_shown"))})
    ordered = pd.DataFrame(rows, columns=["place", *COLUMNS]).sort_values(["notebook", "place"], kind="stable")
    return ordered[COLUMNS].reset_index(drop=True)
