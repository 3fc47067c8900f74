"""Holding each request until its turn: botocore hooks on every DynamoDB client (install_hold), the thread-local
state that says which client a thread runs, and time that stands still on a client's thread.

Which client a request belongs to is decided per thread, not per botocore client: a request sent on a client
function's thread is that client's step, whether the lab's client sends it or a client a library built inside
(PynamoDB's connection, Powertools' persistence layer, a lock client). Every DynamoDB client built in the kernel after
`connect()` carries the hold (helpers/lab/clients.py); `install_hold(client)` gives it to one built before. What cannot be
held: a request a library sends from a thread of its own (a lock client's heartbeat, an executor's worker) belongs to
no client; the explorer stops with an ExplorationError naming it rather than let it land in no order.

Time between steps is the explorer's: while a client runs from one of its steps to the next, nothing happens but the
moves the explorer makes, so on a client's thread `time.sleep` returns at once (a learner's backoff, botocore's delay
before it resends a request), and a wait changes no order, only the time an exploration takes. Code that waits for the
clock itself to pass (a lease taken over once it has run out) is explored with its `now` passed in, as 29's is.
"""
import json
import random
import threading
import time
import uuid
import weakref
from contextlib import contextmanager

from .errors import Crashed, ExplorationError
from .settings import (
    ANSWER_ID,
    ARRIVALS_HEADER,
    HOLD_ID,
    MAX_OPTIONS,
    ORDER_COST_HEADER,
    ORDER_HEADER,
    STREAM_READS,
    VERSIONS_HEADER,
    WRITES,
)
from .steps import Choice, Request

CURRENT = threading.local()  # on a client thread: .run (its Run), .name (its client), .driving (making moves)
REAL_SLEEP = time.sleep
HELD = weakref.WeakSet()  # every client with the hold installed
WATCHED = {"run": None, "owner": None}  # the run being explored, and the thread exploring it
STREAM_REQUESTS = {"seen": 0}  # DynamoDB Streams requests a run's clients have sent
LATEST = {"session": 0}  # the last exploration or step-through (re)started in this process: the tables are its


def choice_point(what, options):
    """The place of one of `options` (words): explored, on a client's thread, the explorer's choice, a move of its own
    that every option is tried as ("alice?0", "alice?1", ...); anywhere else, one at random."""
    run = getattr(CURRENT, "run", None)
    if run is None:
        return random.randrange(len(options))
    if len(options) > MAX_OPTIONS:
        run.problem = ExplorationError(f"{CURRENT.name} left the explorer {len(options):,} ways to choose from "
                                       f"({what} …); it tries at most {MAX_OPTIONS}: make the scenario smaller "
                                       "(fewer records in a batch)")
        raise run.problem
    held = Choice(CURRENT.name, what, options)
    run.hold(CURRENT.name, held)
    return held.chosen


def hold_request(request, event_name, **_):
    """botocore before-send hook: on a client thread of a run, wait for this request's turn, then mark the request
    with what the explorer chose for it."""
    run = getattr(CURRENT, "run", None)
    operation = event_name.rpartition(".")[2]
    if run is None:
        note_stray(operation)
    else:
        if operation in STREAM_READS:
            STREAM_REQUESTS["seen"] += 1
        held = Request(CURRENT.name, operation, json.loads(request.body or b"{}"), request)
        if run.modelled:
            request.headers["X-Lab-Step"] = f"{held.client}: {operation}"  # before the hold: choices name the client
            if len(held.items) > 1:
                held.unread = list(range(len(held.items)))
                request.headers["X-Lab-Batch-Read"] = uuid.uuid4().hex
        run.hold(CURRENT.name, held)
        if held.fault == "lost":
            request.headers["X-Lab-Lose-Response"] = "1"
        if run.order:
            request.headers[ORDER_HEADER] = run.order
        if run.modelled:
            if held.choice is not None:
                request.headers["X-Lab-Read-Choice"] = json.dumps(held.choice["versions"])
            if operation in WRITES and held.fault != "lost":  # a transaction, a batch, an MRSC write stays ongoing
                request.headers["X-Lab-Hold-Transaction"] = "1"


def note_stray(operation):
    """Keep an operation sent while a run is explored from a thread that is neither a client's nor the explorer's."""
    run = WATCHED["run"]
    if run is not None and threading.get_ident() != WATCHED["owner"] and not getattr(CURRENT, "driving", False):
        run.strays.append(operation)


@contextmanager
def watched(run):
    """Note the requests no client of `run` sends, while the block runs (run.strays)."""
    WATCHED.update(run=run, owner=threading.get_ident())
    try:
        yield
    finally:
        WATCHED.update(run=None, owner=None)


def strays_error(run):
    """The ExplorationError for requests that reached DynamoDB from a thread no client runs on."""
    return ExplorationError(
        f"{', '.join(sorted(set(run.strays)))} reached DynamoDB from a thread that is none of the clients' (a "
        "library's background thread, such as a lock client's heartbeat or an executor's worker), so the explorer "
        "could not hold it in its turn: it holds the requests made on a client function's own thread, whichever "
        "botocore client sends them. Turn that background work off in the scenario (a lock client without its "
        "heartbeat thread), or make those requests from the client function.")


def note_answer(response, caught_exception, **_):
    """botocore needs-retry hook (once per HTTP attempt, after it): keep what DynamoDB answered the held request;
    a transaction left ongoing holds its client until its items are made visible."""
    run = getattr(CURRENT, "run", None)
    if run is not None and run.steps:
        if caught_exception is not None:
            run.answered(CURRENT.name, type(caught_exception).__name__, {})
            return
        request = run.answered(CURRENT.name, response[1].get("Error", {}).get("Code") or "OK", response[1])
        if run.modelled:
            run.arrivals = json.loads(response[0].headers.get(ARRIVALS_HEADER) or "[]")
            request.versions = json.loads(response[0].headers.get(VERSIONS_HEADER) or "null")
        cost = response[0].headers.get(ORDER_COST_HEADER)
        if cost and run.order:
            run.cost = tuple(float(units) for units in cost.split())
        ongoing = response[0].headers.get("x-lab-transaction")
        if ongoing and run.modelled:
            run.hold_transaction(CURRENT.name, json.loads(ongoing))
        if request.fault == "crash":
            raise Crashed(request.operation)


def install_hold(client):
    """Register the hold on a boto3 DynamoDB (or DynamoDB Streams) client once; threads that are not a run's clients
    pass straight through."""
    service = client.meta.service_model.endpoint_prefix
    client.meta.events.register(f"before-send.{service}", hold_request, unique_id=HOLD_ID)
    client.meta.events.register(f"needs-retry.{service}", note_answer, unique_id=ANSWER_ID)
    if service == "dynamodb":
        HELD.add(client)


def sleep_between_steps(seconds):
    """time.sleep once the explorer has run: at once on a client's thread (see the module docstring), as asked on any
    other thread."""
    REAL_SLEEP(0 if getattr(CURRENT, "run", None) is not None else seconds)


def steps_take_no_time():
    """Make time.sleep sleep_between_steps, for good (every thread but a client's sleeps as before)."""
    time.sleep = sleep_between_steps


def new_session():
    """Note that an exploration or a step-through starts over: a panel started before it must replay to go on."""
    LATEST["session"] += 1
    return LATEST["session"]
