"""`make bench` (or `python tests/bench_verdicts.py 25 28 p28` for some notebooks and checker test modules): how long a
learner waits for each checker's verdict, on the notebooks' own answers, then on the plausible answers the checker
tests write. Each notebook, and each test module, runs in a process of its own, with a lab server of its own, as in a
learner's kernel.

Every call of a checker (helpers.checks) in every notebook is run again here with the answer as the notebook defines
it (its imports, functions, constants and setup assignments, nothing else), three times; the median is set beside the
budget: a failing verdict within 5 s, a passing one within 10 s (the time a learner in a workshop keeps attempting). A
call whose verdict is not the one the notebook's stored output shows is listed as not reproduced rather than timed:
the answer needs more of its notebook than its functions. Timings swing with the machine's load, printed with the
table; nothing here is asserted. The checker tests' answers (a function of tests/test_checks_*.py passed to a checker
there by name) are timed once each, their verdict whatever the checker says: the tests assert it.
"""
import ast
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("DYNAMODB_LAB_PROGRESS", str(Path(tempfile.mkdtemp()) / "progress.json"))

from helpers import connect, tracing  # noqa: E402  (after the progress file is set: checkers record their runs)

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"
BUDGET = {"FAIL": 5.0, "PASS": 10.0}
RUNS = 3
CALL = re.compile(r"\b(check_\w+)\(([\w, .\-]*)\)")  # several on a line too: `a, b = check_x(f), check_y(g)`


SETUP_CALLS = {"connect", "fresh_table", "global_table"}  # what a notebook's setup assigns from: quick, no race


def definitions(cells):
    """The notebook's imports, functions, UPPER_CASE constants and setup assignments (setup_assignment), run one
    statement at a time in one namespace."""
    namespace = {}
    for source in cells:
        try:
            tree = ast.parse(source)
        except SyntaxError:
            continue
        for node in tree.body:
            if not (isinstance(node, (ast.Import, ast.ImportFrom, ast.FunctionDef)) or setup_assignment(node)):
                continue
            try:
                exec(compile(ast.Module(body=[node], type_ignores=[]), "<notebook>", "exec"), namespace)
            except Exception:  # made from what a race left: the calls that need it are not reproduced
                continue
    return namespace


def setup_assignment(node):
    """True for an assignment to names of an UPPER_CASE constant, or of what the lab's setup makes (a connection, a
    fresh table, a value read from one: `cond_failed = table.meta.client.exceptions...`), calling nothing else."""
    if not isinstance(node, ast.Assign) or not all(isinstance(target, ast.Name) for target in node.targets):
        return False
    if all(target.id.isupper() for target in node.targets):
        return True
    calls = [inner for inner in ast.walk(node.value) if isinstance(inner, ast.Call)]
    return all(isinstance(call.func, ast.Name) and call.func.id in SETUP_CALLS for call in calls)


def stored_verdict(cell, place=0):
    """PASS or FAIL, as the cell's stored output says of its checker call at `place` (0: the first), or None."""
    text = json.dumps(cell.get("outputs", []))
    verdicts = re.findall(r"\b(PASS|FAIL)\b", text)
    return verdicts[place] if place < len(verdicts) else None


def calls(notebook="??"):
    """(notebook, call text, checker name, argument texts, stored verdict, namespace) for every checker call (of the
    notebook numbered `notebook`, if given)."""
    found = []
    for path in sorted(NOTEBOOKS.glob(f"{notebook}-*.ipynb")):
        cells = [cell for cell in json.loads(path.read_text())["cells"] if cell["cell_type"] == "code"]
        sources = ["\n".join(line for line in "".join(cell["source"]).splitlines() if not line.lstrip().startswith("%"))
                   for cell in cells]
        if not any(CALL.search(source) for source in sources):
            continue
        namespace = definitions(sources)
        for cell, source in zip(cells, sources):
            checked = [(checker, arguments) for checker, arguments in CALL.findall(source)
                       if (getattr(namespace.get(checker), "__module__", None) or "").startswith("helpers.checks")]
            for place, (checker, arguments) in enumerate(checked):  # not the notebook's own check_ assertions
                found.append((path.stem[:2], f"{checker}({arguments})", checker,
                              [argument.strip() for argument in arguments.split(",") if argument.strip()],
                              stored_verdict(cell, place), namespace))
    return found


def verdict_and_time(namespace, checker, arguments):
    """(PASS or FAIL, seconds) of one checker call, or (the error's words, None)."""
    try:
        values = [eval(argument, namespace) for argument in arguments]  # noqa: S307  (the notebook's own names)
        start = time.perf_counter()
        with tracing(False):
            report = namespace[checker](*values)
        return ("PASS" if report.passed else "FAIL"), time.perf_counter() - start
    except Exception as error:
        return f"{type(error).__name__}: {error}"[:60], None


TESTS = Path(__file__).resolve().parent
ANSWER_CALL = re.compile(r"\b(check_\w+)\(\s*(\w+)\s*\)")


def test_answers():
    """(test module, call text, checker, answer) for every answer a checker test passes to a checker by name."""
    import importlib
    sys.path.insert(0, str(TESTS))
    found = []
    for path in sorted(TESTS.glob("test_checks_*.py")):
        module = importlib.import_module(path.stem)
        for checker, name in dict.fromkeys(ANSWER_CALL.findall(path.read_text())):
            check, answer = getattr(module, checker, None), getattr(module, name, None)
            if (getattr(check, "__module__", None) or "").startswith("helpers.checks") and callable(answer) \
                    and getattr(answer, "__module__", None) == module.__name__:
                found.append((path.stem.removeprefix("test_checks_"), f"{checker}({name})", check, answer))
    return found


def answer_rows(module):
    """Print the row of each answer the checker test module `module` (p28) writes (one run each); (within, total). The
    lab server is started first, as a notebook's Setup cell starts it."""
    connect(quiet=True)
    within = total = 0
    for found, call, check, answer in test_answers():
        if found != module:
            continue
        start = time.perf_counter()
        try:
            with tracing(False):
                verdict = "PASS" if check(answer).passed else "FAIL"
        except (Exception, KeyboardInterrupt) as error:  # an answer that interrupts its check, as a learner can
            print(f"{module:<9} {call[:60]:<60} raised {type(error).__name__}")
            continue
        seconds = time.perf_counter() - start
        total += 1
        within += seconds <= BUDGET[verdict]
        print(f"{module:<9} {call[:60]:<60} {verdict:<7} {seconds:>6.1f}s {BUDGET[verdict]:>5.0f}s  "
              f"{'yes' if seconds <= BUDGET[verdict] else 'NO'}", flush=True)
    return within, total


def notebook_rows(notebook):
    """Print the row of each checker call of the notebook numbered `notebook` (25): the median of RUNS; (within,
    total)."""
    within = total = 0
    for _, call, checker, arguments, stored, namespace in calls(notebook):
        times, verdict = [], None
        for _ in range(RUNS):
            verdict, seconds = verdict_and_time(namespace, checker, arguments)
            if seconds is None or verdict != stored:
                break
            times.append(seconds)
        if len(times) < RUNS:
            print(f"{notebook:<3} {call[:46]:<46} not reproduced: {verdict} (the notebook shows {stored})")
            continue
        median = statistics.median(times)
        total += 1
        within += median <= BUDGET[verdict]
        print(f"{notebook:<3} {call[:46]:<46} {verdict:<7} {median:>7.1f}s {BUDGET[verdict]:>6.0f}s  "
              f"{'yes' if median <= BUDGET[verdict] else 'NO'}", flush=True)
    return within, total


def in_own_process(flag, name):
    """(within, total) of one notebook's or test module's rows, printed by a process of its own (`flag` --notebook or
    --answers): a learner's kernel runs one notebook, with a lab server of its own."""
    child = subprocess.run([sys.executable, __file__, flag, name], capture_output=True, text=True)
    rows = [line for line in child.stdout.splitlines() if not line.startswith(("Backend:", "Stronger than"))]
    *shown, totals = rows or ["0 0"]
    print("\n".join(shown), flush=True)
    if child.returncode:
        print(f"{name}: exited with {child.returncode}: {child.stderr.strip().splitlines()[-1:]}")
        return 0, 0
    within, total = totals.split()
    return int(within), int(total)


def table(flag, names, heading, columns):
    """Print the rows of each of `names` (notebook numbers, or test modules), each in its own process, under
    `columns`, and the count within budget."""
    print(f"{heading}; load average before: {os.getloadavg()[0]:.2f} (1 min), {os.cpu_count()} CPUs\n{columns}")
    counts = [in_own_process(flag, name) for name in names]
    print(f"{sum(within for within, _ in counts)} of {sum(total for _, total in counts)} verdicts within budget; "
          f"load average after: {os.getloadavg()[0]:.2f}\n")


def checked_notebooks():
    """The numbers of the notebooks that call a checker ("22"...)."""
    return sorted(path.stem[:2] for path in NOTEBOOKS.glob("*.ipynb") if "check_" in path.read_text())


def answer_modules():
    """The checker test modules ("p22"...), by name."""
    return sorted(path.stem.removeprefix("test_checks_") for path in TESTS.glob("test_checks_*.py"))


def main(notebooks=(), answers=()):
    """Print the verdict table of the notebooks' checker calls (median of RUNS), then of the checker tests' answers
    (once each), for the notebooks and test modules given, or all."""
    if notebooks or not answers:
        table("--notebook", notebooks or checked_notebooks(), "the notebooks' checker calls",
              f"{'nb':<3} {'call':<46} {'verdict':<7} {'median':>8} {'budget':>7}  within")
    if answers or not notebooks:
        table("--answers", answers or answer_modules(), "the checker tests' answers, once each",
              f"{'module':<9} {'call':<60} {'verdict':<7} {'time':>7} {'budget':>6}  within")


if __name__ == "__main__":
    if sys.argv[1:2] in (["--notebook"], ["--answers"]) and len(sys.argv) == 3:  # one of them, in its own process
        print(*(notebook_rows if sys.argv[1] == "--notebook" else answer_rows)(sys.argv[2]))
    else:
        arguments = sys.argv[1:]
        main([name for name in arguments if name.isdigit()], [name for name in arguments if not name.isdigit()])
