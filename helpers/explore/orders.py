"""explore(): every order of a scenario, run for real, one row per distinct order, and the step after which a
failing order could no longer be saved (doomed_steps)."""

import pandas as pd

from ..lab import trace
from ..lab.backend import connect
from ..lab.waiting import waiting
from .histories import history
from .hold import STREAM_REQUESTS, install_hold, new_session
from .model import model_server, modelled
from .moves import FAULTS
from .reduction import Keys, swaps
from .search import Search, next_prefix, ranking, run_schedule, too_many
from .settings import CLIENT_TIMEOUT, DEFAULT_CONSISTENCY, MAX_SCHEDULES
from .threads import exclusive, working


def check_faults(faults):
    """Raise a clear error unless faults names only the faults the explorer can make."""
    unknown = [fault for fault in faults if fault not in FAULTS]
    if isinstance(faults, str) or unknown:
        raise ValueError(f"faults must be a tuple of {', '.join(map(repr, FAULTS))}; got {faults!r}")


def check_clients(clients):
    """Raise a clear error unless clients is a non-empty dict of name -> function of no arguments."""
    if not isinstance(clients, dict) or not clients:
        raise ValueError('clients must be a dict of name -> function, e.g. {"alice": book_alice, "bob": book_bob}.')
    for name, function in clients.items():
        if not isinstance(name, str) or not callable(function):
            raise ValueError(f"clients[{name!r}] must be a function of no arguments, named by a string "
                             f"(got {function!r}).")


def explore(clients, reset, check, *, max_schedules=MAX_SCHEDULES, lab=None, timeout=CLIENT_TIMEOUT,
            consistency=DEFAULT_CONSISTENCY, faults=(), max_stale=None, stop_after=None):
    """Run every order in which the clients' requests can reach DynamoDB; one row per schedule.

    consistency="dynamodb" (on the lab server) also runs every answer DynamoDB's consistency allows each
    eventually consistent or index read, and every order in which a transaction's items become visible;
    consistency="strong" answers every read as if strongly consistent and applies each transaction at once.
    faults: ("lost_response", "crash") or either, to explore those faults too (moves.py says what each does).
    max_stale: explore only the orders in which at most this many reads get an older answer than the newest the
    model allows ("alice~1"), as CHESS bounds its preemptions: most mistakes show with one stale answer, and a
    scenario with too many orders may have few enough with one. Orders that differ only by commuting moves give
    their reads the same answers, so the bound holds for a behaviour, whichever of its orders is run.
    stop_after: once this many orders have been run, the first order that fails ends the exploration (a wrong answer
    needs one; the depth-first search meets its first ones early): frame.attrs["stopped"] is then True when orders were
    left unexplored, and no step is a point of no return (doomed_at -1: not every continuation was run).

    clients: {name: function of no arguments}; every request sent on its thread, through any DynamoDB client built in
    the kernel (hold.py says which), is a step.
    reset(): restores the starting state before each schedule. check(results) -> True when the invariant
    holds, given {name: what the client returned, or the exception it raised}. reset and check make
    requests freely: they are not steps. Nothing is printed (see `replay` for one schedule's transcript).
    Columns: schedule, steps, requests, answers ("OK" or the error code DynamoDB answered each step with),
    replies (what each answer said, with a cancelled transaction's reasons), results, ok, write units and those
    on refused writes (what the order's requests cost, from the lab server's meter; None elsewhere), history (what
    each request read and wrote, as Jepsen's Elle reads a history: histories.py; None off the lab server's model),
    and doomed_at (see `doomed_steps`).
    """
    check_clients(clients)
    check_faults(faults)
    lab = lab or connect(quiet=True)
    server = model_server(lab, consistency)
    install_hold(lab.client)
    rows, prints, prefix, first, keys = [], [], [], None, Keys(lab.client)
    watch, seen, search, runs = False, STREAM_REQUESTS["seen"], Search(ranking(clients, faults)), 0
    stopped, failing = False, 0
    with exclusive(), trace.tracing(False), working(clients) as workers, modelled(server), \
            waiting("Exploring every order", "distinct orders run", max_schedules) as progress:
        new_session()
        while prefix is not None:
            if len(rows) == max_schedules:
                raise too_many(max_schedules, first)
            run, choices = run_schedule(clients, reset, prefix, timeout, workers, lab, server, faults, keys, watch,
                                        max_stale, search)
            runs += 1
            if not watch and STREAM_REQUESTS["seen"] != seen:  # a client reads a stream: start over, watching them
                watch, rows, prints, prefix, first, runs, failing = True, [], [], [], None, 0, 0
                search = search and Search(search.rank)
                continue
            if search is None:
                prefix, order = next_prefix(choices), range(len(run.taken))
            else:
                more, order = search.finish(run, choices)
                prefix = [] if more else None
            if run.blocked:
                continue
            first = first or run
            steps = [run.steps[place] for place in order]
            prints.append([run.prints[place] for place in order])
            results = {name: run.results[name] for name in clients}
            rows.append({"schedule": tuple(run.taken[place] for place in order),
                         "steps": tuple(request.label for request in steps),
                         "requests": tuple(request.summary for request in steps),
                         "answers": tuple(request.answer for request in steps),
                         "replies": tuple(request.reply for request in steps),
                         "results": results, "ok": bool(check(results)),
                         "write units": run.cost and run.cost[0], "on refused writes": run.cost and run.cost[1],
                         "history": history(steps) if run.modelled else None})
            failing += not rows[-1]["ok"]
            progress.tick(len(rows), f", {failing:,} breaking the invariant" if failing else "")
            if stop_after is not None and len(rows) >= stop_after and failing:
                stopped = prefix is not None
                break
    frame = pd.DataFrame(rows, columns=["schedule", "steps", "requests", "answers", "replies", "results", "ok",
                                        "write units", "on refused writes", "history"])
    frame = frame.assign(doomed_at=[-1] * len(frame) if stopped else doomed_steps(frame, prints))
    frame.attrs.update(runs=runs, stopped=stopped)  # runs: orders run, a behaviour each (a run every move of which
    # slept counts, no row); stopped: the first failing orders ended the exploration (stop_after)
    return frame


def doomed_steps(frame, prints=None):
    """Per failing schedule, the step (0-based) after which every continuation breaks the invariant; -1 if ok.

    Every behaviour was run, so for each prefix of a schedule we know all its continuations: the point of no
    return is the shortest prefix that begins no schedule that holds (0 for a scenario whose every order fails from its
    first step on). With `prints` (the footprint of each step of each schedule, reduction.Footprint), a prefix begins
    a schedule also when its steps can be brought to the schedule's front by swapping steps that commute: the
    explorer ran one order of those.
    """
    schedules, oks = list(frame["schedule"]), list(frame["ok"])
    holding = [row for row, ok in enumerate(oks) if ok]
    literal = {schedules[row][:length] for row in holding for length in range(len(schedules[row]) + 1)}
    known = {}

    def begins(row, length):
        """True when the first `length` steps of schedule `row` begin some schedule that holds."""
        if schedules[row][:length] in literal or not prints:
            return schedules[row][:length] in literal
        prefix = tuple(zip(schedules[row][:length], prints[row][:length]))
        if prefix not in known:
            known[prefix] = any(trace_prefix(prefix, list(zip(schedules[other], prints[other]))) for other in holding)
        return known[prefix]

    doomed = []
    for row, (schedule, ok) in enumerate(zip(schedules, oks)):
        if ok:
            doomed.append(-1)
            continue
        length = next(n for n in range(len(schedule) + 1) if not begins(row, n))
        doomed.append(max(length - 1, 0))
    return doomed


def trace_prefix(prefix, schedule):
    """True when the steps `prefix` ((move, footprint) pairs) can be brought to the front of `schedule`, in their order,
    by swapping neighbouring steps that commute (two steps of one client never do, but items of one of its
    transactions made visible or of one of its BatchGetItems read)."""
    rest = list(schedule)
    for step in prefix:
        place = next((place for place, other in enumerate(rest) if other == step), None)
        if place is None or not all(swaps(other, step) for other in rest[:place]):
            return False
        del rest[place]
    return True
