"""`make bench` (or `python tests/bench_verdicts.py 25 28` for some notebooks, `--answers p28` for some checker test
modules): how long a learner waits for each checker's verdict, on the notebooks' own answers, then on the plausible
answers the checker tests write.

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
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("DYNAMODB_LAB_PROGRESS", str(Path(tempfile.mkdtemp()) / "progress.json"))

from helpers import tracing  # noqa: E402  (after the progress file is set: checkers record their runs)

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


def calls():
    """(notebook, call text, checker name, argument texts, stored verdict, namespace) for every checker call."""
    found = []
    for path in sorted(NOTEBOOKS.glob("*.ipynb")):
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


def answers_table(only=()):
    """Print each checker test answer's verdict and time (one run each, of the test modules named in `only` such as
    p28, if given) beside the budget."""
    print(f"\nthe checker tests' answers, once each; load average before: {os.getloadavg()[0]:.2f}")
    within = total = 0
    for module, call, check, answer in test_answers():
        if only and module not in only:
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
              f"{'yes' if seconds <= BUDGET[verdict] else 'NO'}")
        sys.stdout.flush()
    print(f"{within} of {total} verdicts within budget; load average after: {os.getloadavg()[0]:.2f}")


def main(only=()):
    """Print the verdict table, one row per checker call (of the notebooks numbered in `only`, if given)."""
    print(f"load average before: {os.getloadavg()[0]:.2f} (1 min), {os.cpu_count()} CPUs")
    print(f"{'nb':<3} {'call':<46} {'verdict':<7} {'median':>8} {'budget':>7}  within")
    within = total = 0
    for notebook, call, checker, arguments, stored, namespace in calls():
        if only and notebook not in only:
            continue
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
              f"{'yes' if median <= BUDGET[verdict] else 'NO'}")
        sys.stdout.flush()
    print(f"{within} of {total} verdicts within budget; load average after: {os.getloadavg()[0]:.2f}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["--answers"]:
        answers_table(sys.argv[2:])
    else:
        main(sys.argv[1:])
        if not sys.argv[1:]:
            answers_table()
