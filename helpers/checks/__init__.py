"""Exercise checkers: attack a learner's function the way production would, report the smallest failing run.

A checker module (one per notebook, e.g. helpers/checks/p22.py) describes an attack: how to set up
fresh state, which calls to fire at once, and the invariant that must hold afterwards. `attack`
runs it at growing concurrency and stops at the first run that breaks the invariant.
"""
import threading
import time
from dataclasses import dataclass, field

import pandas as pd
import plotly.graph_objects as go
from botocore.exceptions import ClientError

from ..trace import tracing

SIZES = (2, 5, 10, 20, 50)
TRIES = 3


@dataclass
class Report:
    """What a checker found: a pass, or the smallest failing run with what went wrong."""

    exercise: str
    passed: bool
    message: str
    calls: int
    log: pd.DataFrame = field(repr=False)

    def __post_init__(self):
        """Record this run in the learner's progress file (helpers.progress)."""
        from ..progress import record
        record(self)

    def __str__(self):
        verdict = "PASS" if self.passed else "FAIL"
        return f"{verdict} {self.exercise}: {self.message}"

    def _repr_markdown_(self):
        mark = "✅" if self.passed else "❌"
        return f"{mark} **{'PASS' if self.passed else 'FAIL'}** {self.exercise}: {self.message}"

    def figure(self):
        """Timeline of the reported run: one lane per call, coloured by what it returned."""
        verdict = "PASS: the last run" if self.passed else "FAIL: the smallest failing run"
        return run_timeline(self.log, f"{self.exercise}, {verdict}<br><sup>{self.message}</sup>")


def attack(exercise, learner, setup, calls, invariant, sizes=SIZES, tries=TRIES):
    """Fire calls(n) at `learner` concurrently for growing n; return the first run breaking invariant.

    setup() -> state; calls(state, n) -> list of argument tuples; invariant(state, log) -> None or a message.
    """
    if not callable(learner):
        raise TypeError(f"Pass your function itself (e.g. {exercise}), not {learner!r}.")
    log = None
    with tracing(False):
        for n in sizes:
            for _ in range(tries):
                state = setup()
                log = run_at_once(learner, calls(state, n))
                problem = invariant(state, log)
                if problem:
                    calls_word = "call" if n == 1 else "calls"
                    return Report(exercise, False, f"{problem} (with {n} concurrent {calls_word})", n, log)
    total = sum(sizes) * tries
    return Report(exercise, True, f"held in {len(sizes) * tries} runs of up to {sizes[-1]} concurrent calls "
                                  f"({total} calls in all)", sizes[-1], log)


def run_at_once(learner, arguments):
    """Call learner(*args) for every args on its own thread, released together; return a log."""
    start = threading.Barrier(len(arguments))
    rows = [None] * len(arguments)
    origin = time.perf_counter()

    def one(i, args):
        start.wait()
        began = time.perf_counter()
        try:
            result, error = learner(*args), None
        except ClientError as failure:
            result, error = None, failure.response["Error"]["Code"]
        except Exception as failure:  # a learner's bug is a finding, not a crash of the checker
            result, error = None, f"{type(failure).__name__}: {failure}"
        rows[i] = {"call": i, "args": args, "result": result, "error": error,
                   "start_ms": (began - origin) * 1000, "end_ms": (time.perf_counter() - origin) * 1000}

    threads = [threading.Thread(target=one, args=(i, args)) for i, args in enumerate(arguments)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return pd.DataFrame(rows)


def run_timeline(log, title):
    """A plotly figure of one run: each call a bar from start to end, coloured by what it returned."""
    outcome = log["error"].fillna(log["result"].map(lambda result: f"returned {result!r}"))
    figure = go.Figure()
    for label, rows in log.groupby(outcome, sort=True):
        figure.add_bar(y=[f"call {c}" for c in rows["call"]], x=rows["end_ms"] - rows["start_ms"],
                       base=rows["start_ms"], orientation="h", name=label, showlegend=True,
                       text=[label] * len(rows), textposition="inside",
                       hovertext=[f"args={a} result={r}" for a, r in zip(rows["args"], rows["result"])])
    figure.update_layout(title=title, xaxis_title="time since release (ms)", yaxis_title="concurrent call",
                         legend_title="outcome", barmode="overlay", height=200 + 18 * len(log))
    return figure
