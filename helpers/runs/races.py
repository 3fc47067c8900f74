"""Real races: threads released together against the current backend, every call logged, results as pandas.

`race(strategy, threads, operations, think_ms)` runs one counter strategy ("racy", "add", "optimistic",
"conditional floor", or your own function) and returns a `Race`: expected and final values, lost updates,
retries, refusals, wall time, and `log`, one row per attempt (thread, operation, times, value read,
value written, outcome). The log comes from botocore's before-call/after-call events, so it records the
calls exactly as they were sent and answered.
"""
import itertools
import json
import random
import threading
import time
from dataclasses import dataclass, field
from decimal import Decimal

import numpy as np
import pandas as pd
from botocore.exceptions import ClientError

from ..lab.backend import BackendError, connect
from ..lab.meter import metered
from .recorder import CallRecorder
from ..lab.trace import tracing

TABLE = "p24-atomic-counters"
COUNTER = {"PK": "POST#hello-world", "SK": "STATS"}
TICKETS = {"PK": "TICKETS#gig", "SK": "COUNTER"}
LIMITS = {"threads": (1, 64), "operations": (1, 10_000), "think_ms": (0, 50)}
STRATEGIES = ("racy", "add", "optimistic", "conditional floor")
LABELS = {"racy": "read-then-put", "add": "ADD", "optimistic": "version check + retry",
          "conditional floor": "ADD -1 with a floor"}  # what a learner reads: dropdown, tables and charts
JOIN_SLICE = 0.1
STOP_WITHIN = 1.0
CONDITION_FAILED = "ConditionalCheckFailedException"


class RaceStopped(Exception):
    """Raised inside a worker when the race was told to stop."""


class StopSignal(threading.Event):
    """A race's stop signal that remembers why it was set: "stopped" (a Stop button) or "interrupted"."""

    reason = "stopped"

    def set(self, reason="stopped"):
        """Stop the race, for `reason` (the first reason given stands)."""
        if not self.is_set():
            self.reason = reason
        super().set()


class RaceInterrupted(KeyboardInterrupt):
    """Kernel -> Interrupt during a race: every thread was stopped, and `race` holds what ran until then."""

    def __init__(self, race):
        super().__init__(race.note)
        self.race = race


def racy_increment(table, think):
    """Read the counter, think, write back what was read plus one: the lost-update bug."""
    current = table.get_item(Key=COUNTER)["Item"]["views"]
    think()
    table.put_item(Item={**COUNTER, "views": current + 1})


def add_increment(table, think):
    """Let DynamoDB add one on the server: nothing is read, so there is nothing to think about."""
    table.update_item(Key=COUNTER, UpdateExpression="ADD #v :one", ExpressionAttributeNames={"#v": "views"},
                      ExpressionAttributeValues={":one": 1}, ReturnValues="UPDATED_NEW")


def optimistic_increment(table, think):
    """Read value and version, think, write only if the version has not moved; on a conflict read again."""
    while True:
        item = table.get_item(Key=COUNTER, ConsistentRead=True)["Item"]
        think()
        try:
            table.put_item(Item={**COUNTER, "views": item["views"] + 1, "version": item["version"] + 1},
                           ConditionExpression="version = :seen", ExpressionAttributeValues={":seen": item["version"]})
            return
        except ClientError as error:
            if error.response["Error"]["Code"] != CONDITION_FAILED:
                raise


def sell_ticket(table, think):
    """Take one ticket only while some remain: ADD -1 guarded by the floor `remaining > 0`."""
    try:
        table.update_item(Key=TICKETS, UpdateExpression="ADD remaining :minus_one",
                          ConditionExpression="remaining > :zero",
                          ExpressionAttributeValues={":minus_one": -1, ":zero": 0}, ReturnValues="UPDATED_NEW")
    except ClientError as error:
        if error.response["Error"]["Code"] != CONDITION_FAILED:
            raise


@dataclass(frozen=True)
class Strategy:
    """How one strategy runs: its operation, the item and attribute it changes, and what the end should be."""

    operation: object
    key: dict
    attribute: str
    decrements: bool = False


BUILT_IN = {
    "racy": Strategy(racy_increment, COUNTER, "views"),
    "add": Strategy(add_increment, COUNTER, "views"),
    "optimistic": Strategy(optimistic_increment, COUNTER, "views"),
    "conditional floor": Strategy(sell_ticket, TICKETS, "remaining", decrements=True),
}


def check_knobs(threads, operations, think_ms):
    """Raise a ValueError naming the allowed range for any knob outside it."""
    for name, value in (("threads", threads), ("operations", operations), ("think_ms", think_ms)):
        low, high = LIMITS[name]
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value <= high:
            raise ValueError(f"{name} must be a number from {low:,} to {high:,} (got {value!r}).")
        if name != "think_ms" and value != int(value):
            raise ValueError(f"{name} must be a whole number from {low:,} to {high:,} (got {value!r}).")


def strategy_named(strategy):
    """The Strategy for a name, or for your own function f(table) that adds one to `views` of COUNTER."""
    if callable(strategy):
        name = getattr(strategy, "__name__", "your function")
        return name, Strategy(lambda table, think: strategy(table), COUNTER, "views")
    if strategy not in BUILT_IN:
        raise ValueError(f"strategy must be one of {', '.join(map(repr, STRATEGIES))}, or a function "
                         f"f(table) that adds one to 'views' of {COUNTER} (got {strategy!r}).")
    return strategy, BUILT_IN[strategy]


@dataclass
class Race:
    """What one race did: the numbers a learner checks, and the per-attempt event log."""

    strategy: str
    threads: int
    operations: int
    think_ms: float
    start: int
    expected: int
    final: int
    seconds: float
    counts_down: bool
    log: pd.DataFrame = field(repr=False)
    note: str = ""
    completed: int = None
    cost: object = field(default=None, repr=False)

    def __post_init__(self):
        """A race that was not stopped completed all its operations."""
        if self.completed is None:
            self.completed = self.operations

    @property
    def written(self):
        """Attempts whose write DynamoDB accepted."""
        return int((self.log["outcome"] == "written").sum())

    @property
    def lost(self):
        """Updates that were acknowledged (or, for a counter, asked for) but are missing from the final value."""
        if self.counts_down:
            return self.written - (self.start - self.final)
        return self.expected - self.final

    @property
    def successes(self):
        """Updates that took effect: those in the final value (for the floor, the writes accepted)."""
        return self.written if self.counts_down else self.final - self.start

    @property
    def retries(self):
        """Attempts refused by a version check and tried again."""
        return int((self.log["outcome"] == "conflict, retried").sum())

    @property
    def refused(self):
        """Operations refused for good (the floor held)."""
        return int((self.log["outcome"] == "refused").sum())

    @property
    def label(self):
        """The strategy's name as the learner reads it: LABELS for a built-in, name() for your own function."""
        return LABELS.get(self.strategy, f"{self.strategy}()")

    def summary(self):
        """One row for a summary table."""
        return {"strategy": self.label, "threads": self.threads, "operations": self.operations,
                "think ms": self.think_ms, "expected": self.expected, "final": self.final,
                "lost updates": self.lost, "retries": self.retries, "refused": self.refused,
                "seconds": round(self.seconds, 2)}


def summary_table(*races):
    """The summary rows of several races as one DataFrame."""
    return pd.DataFrame([r.summary() for r in races])


def race(strategy="racy", threads=10, operations=50, think_ms=0, *, stock=None, pause_ms=0, table=None,
         on_progress=None, stop=None):
    """Run `operations` operations of `strategy` on `threads` real threads released together; return a Race.

    strategy: one of STRATEGIES, or your own function, called as f(table) once per operation.
    stock: starting tickets for "conditional floor" (default: half the operations, so some are refused).
    pause_ms: each thread waits a random 0 to 2 x pause_ms before each operation (clients that arrive
    spread out rather than all at once; 0 to 1,000 ms).
    on_progress(done, total) is called from this thread about ten times a second. Setting the
    threading.Event `stop` ends the race within a second, every thread joined, and returns the operations
    that completed, with `note` saying "stopped after N of M operations"; a KeyboardInterrupt (Kernel ->
    Interrupt) does the same and raises RaceInterrupted, which holds that partial Race.
    """
    check_knobs(threads, operations, think_ms)
    name, spec = strategy_named(strategy)
    if isinstance(pause_ms, bool) or not isinstance(pause_ms, (int, float)) or not 0 <= pause_ms <= 1000:
        raise ValueError(f"pause_ms must be a number from 0 to 1,000 (got {pause_ms!r}).")
    threads, operations = int(threads), int(operations)
    lab = connect(quiet=True)
    table = table or lab.table(TABLE)
    start = ((operations + 1) // 2 if stock is None else stock) if spec.decrements else 0
    if isinstance(start, bool) or not isinstance(start, int) or not 0 <= start <= LIMITS["operations"][1]:
        raise ValueError(f"stock must be a whole number from 0 to {LIMITS['operations'][1]:,} (got {stock!r}).")
    seed = {**spec.key, spec.attribute: start, "version": 0}
    stop = stop or StopSignal()
    with tracing(False):
        table.put_item(Item=seed)
        with metered(lab, table.name) as cost:
            calls, seconds, done, interrupted = run_threads(table, spec.key, spec.operation, threads, operations,
                                                            think_ms / 1000, pause_ms / 1000, stop, on_progress)
        final = int(table.get_item(Key=spec.key, ConsistentRead=True)["Item"][spec.attribute])
    expected = max(start - done, 0) if spec.decrements else start + done
    note = ""
    if done < operations:
        reason = "interrupted" if interrupted else getattr(stop, "reason", "stopped")
        note = f"{reason} after {done:,} of {operations:,} operations"
    result = Race(name, threads, operations, think_ms, start, expected, final, seconds, spec.decrements,
                  event_log(calls, spec.attribute), note, done, cost if cost.available else None)
    if interrupted:
        raise RaceInterrupted(result)
    return result


def run_threads(table, key, operation, threads, operations, think_seconds, pause_seconds, stop, on_progress):
    """Run the operations on worker threads released by one barrier.

    Returns (recorder, wall seconds, operations completed, whether a KeyboardInterrupt ended it). A failed
    call ends the race and is raised: a BackendError first, since it says why the others failed.
    """
    recorder = CallRecorder(table.meta.client)
    numbers = itertools.count()
    finished = []
    failures = []

    def released():
        recorder.origin = time.perf_counter()

    barrier = threading.Barrier(threads + 1, action=released)

    def think():
        if stop.wait(think_seconds) if think_seconds else stop.is_set():
            raise RaceStopped

    def work(thread_number):
        try:
            table.get_item(Key=key)  # connect before the start, as clients that are already running would be
            recorder.join(thread_number)
            barrier.wait()
            while not stop.is_set():
                number = next(numbers)
                if number >= operations or (pause_seconds and stop.wait(random.uniform(0, 2 * pause_seconds))):
                    return
                recorder.begin(number)
                operation(table, think)
                finished.append(number)
        except (RaceStopped, threading.BrokenBarrierError):
            return
        except Exception as failure:  # a call that fails for real ends the race, and the caller hears of it
            failures.append(failure)
            stop.set()
            barrier.abort()

    workers = [threading.Thread(target=work, args=(n,), name=f"race-worker-{n}", daemon=True)
               for n in range(threads)]
    interrupted = False
    with recorder:
        for worker in workers:
            worker.start()
        try:
            wait_for(workers, barrier, lambda: on_progress and on_progress(len(finished), operations))
        except KeyboardInterrupt:
            interrupted = True
            stop_workers(workers, barrier, stop)
        except BaseException:
            stop_workers(workers, barrier, stop)
            raise
    if failures:
        raise next((failure for failure in failures if isinstance(failure, BackendError)), failures[0])
    if on_progress:
        on_progress(len(finished), operations)
    seconds = time.perf_counter() - (recorder.origin or time.perf_counter())
    return recorder, seconds, len(finished), interrupted


def stop_workers(workers, barrier, stop):
    """Tell every worker to stop and wait up to STOP_WITHIN for them all."""
    stop.set()
    barrier.abort()
    deadline = time.monotonic() + STOP_WITHIN
    for worker in workers:
        worker.join(max(deadline - time.monotonic(), 0))


def wait_for(workers, barrier, report):
    """Release the workers together, then wait for them in short slices (so an interrupt lands at once)."""
    try:
        barrier.wait()
    except threading.BrokenBarrierError:
        return
    while any(worker.is_alive() for worker in workers):
        next(w for w in workers if w.is_alive()).join(JOIN_SLICE)
        report()


def attribute_value(image, attribute):
    """The number stored under `attribute` in a DynamoDB-JSON item, or NaN."""
    value = (image or {}).get(attribute)
    return float(Decimal(value["N"])) if value and "N" in value else np.nan


def event_log(recorder, attribute):
    """One row per attempt: a read (if any) followed by a write, with times in ms since the release."""
    columns = ["thread", "operation", "attempt", "start_ms", "read_ms", "write_ms", "end_ms", "read", "wrote",
               "conditional", "outcome"]
    origin, rows, open_attempt = recorder.origin, [], {}
    for thread, operation, name, began, ended, body, status, content, _ in sorted(
            (call for call in recorder.calls if call.thread is not None), key=lambda call: call.began):
        attempt = open_attempt.setdefault((thread, operation), {"start": began, "read": np.nan, "read_ms": np.nan,
                                                                "attempt": 1})
        answer = json.loads(content or b"{}")
        if name == "GetItem":
            attempt["read"] = attribute_value(answer.get("Item"), attribute)
            attempt["read_ms"] = (ended - origin) * 1000
            continue
        request = json.loads(body or b"{}")
        wrote = attribute_value(request.get("Item") or answer.get("Attributes"), attribute)
        code = answer.get("__type", "").rpartition("#")[2]
        outcome = "written" if status == 200 else ("refused" if code == CONDITION_FAILED else code)
        rows.append([thread, operation, attempt["attempt"], (attempt["start"] - origin) * 1000, attempt["read_ms"],
                     (began - origin) * 1000, (ended - origin) * 1000, attempt["read"], wrote,
                     "ConditionExpression" in request, outcome])
        open_attempt[(thread, operation)] = {"start": ended, "read": np.nan, "read_ms": np.nan,
                                             "attempt": attempt["attempt"] + 1}
    log = pd.DataFrame(rows, columns=columns)
    retried = log.duplicated(["thread", "operation"], keep="last") & (log["outcome"] == "refused")
    log.loc[retried, "outcome"] = "conflict, retried"
    return log.sort_values("end_ms", ignore_index=True)


def clobbers(log, final):
    """The log with `overwritten` and `erased_by` columns: which written updates a later blind write erased.

    The updates that survive form one chain back from the final value (the last write of `final`,
    the value DynamoDB holds at the end): each was built on (read) the
    one before it. Walking that chain from the last write, each link's parent is the write of the
    value it read that was sent before the read returned. Every other accepted write was overwritten,
    so `overwritten.sum()` equals the lost updates exactly. `erased_by` names (by row) the write that
    clobbered it: the first later blind write that had not seen it (it read an older value, or the same
    value before this write returned). Times are the clients' clocks; -1 where no write qualifies.
    """
    written = log["outcome"] == "written"
    overwritten = written & log["read"].notna() & ~log["conditional"]
    if overwritten.any():
        overwritten &= ~log.index.isin(surviving_chain(log[written], final))
    erased_by = np.full(len(log), -1)
    wrote, read = log["wrote"].to_numpy(), log["read"].fillna(np.inf).to_numpy()
    read_ms, end_ms = log["read_ms"].to_numpy(), log["end_ms"].to_numpy()
    blind = (written & ~log["conditional"]).to_numpy()
    for row in np.flatnonzero(overwritten.to_numpy()):
        erased_by[row] = first_unseeing_write(row, wrote, read, read_ms, end_ms, blind)
    return log.assign(overwritten=overwritten, erased_by=erased_by)


def first_unseeing_write(row, wrote, read, read_ms, end_ms, blind):
    """The first blind write after `row` that had not seen it, looking a little further each time; -1 if none."""
    for reach in (64, 1024, len(wrote)):
        ahead = slice(row + 1, row + 1 + reach)
        unseen = (read[ahead] < wrote[row]) | ((read[ahead] == wrote[row]) & (read_ms[ahead] < end_ms[row]))
        later = np.flatnonzero(blind[ahead] & unseen)
        if len(later):
            return row + 1 + later[0]
    return -1


def surviving_chain(writes, final):
    """Rows of the writes whose updates survive: the final write, the write it read from, and so on back."""
    wrote, read = writes["wrote"].to_numpy(), writes["read"].to_numpy()
    write_ms, read_ms, end_ms = (writes[c].to_numpy() for c in ("write_ms", "read_ms", "end_ms"))
    by_value = np.lexsort((write_ms, wrote))
    values = wrote[by_value]
    finals = np.flatnonzero(wrote == final)
    if not len(finals):
        return []
    at = finals[np.argmax(end_ms[finals])]
    chain = [at]
    while not np.isnan(read[at]):
        low, high = np.searchsorted(values, read[at], side="left"), np.searchsorted(values, read[at], side="right")
        if low == high:
            break
        parents = by_value[low:high]
        sent_before = np.searchsorted(write_ms[parents], read_ms[at], side="left")
        at = parents[sent_before - 1] if sent_before else parents[-1]
        if read[at] >= read[chain[-1]]:
            break
        chain.append(at)
    return writes.index[chain]


def sweep(threads=(1, 2, 4, 8, 16), think_ms=(0, 2, 5, 10, 20), fixed_threads=4, fixed_think_ms=0, pause_ms=20,
          operations=40, repeats=3, table=None):
    """Racy runs with more threads (think time fixed), then longer think time (threads fixed); a row per run.

    Clients arrive spread out (pause_ms, see race()), so the window between read and write decides
    how often two of them overlap.
    """
    rows = []
    for varied, values in (("threads", threads), ("think ms", think_ms)):
        for value in values:
            for run in range(repeats):
                knobs = (value, fixed_think_ms) if varied == "threads" else (fixed_threads, value)
                result = race("racy", knobs[0], operations, knobs[1], pause_ms=pause_ms, table=table)
                rows.append({"varied": varied, "value": value, "run": run, "lost": result.lost,
                             "lost %": 100 * result.lost / operations})
    frame = pd.DataFrame(rows)
    frame.attrs.update(fixed_threads=fixed_threads, fixed_think_ms=fixed_think_ms, pause_ms=pause_ms,
                       operations=operations, repeats=repeats)
    return frame
