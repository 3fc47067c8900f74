"""Every order: a few clients' DynamoDB requests released one at a time, every interleaving run for real.

`explore({"alice": f, "bob": g}, reset=..., check=...)` runs each client function on its own thread.
A botocore `before-send` handler (emitted once per HTTP attempt, retries included) holds each request
until its turn, so the backend sees one request at a time in an order the explorer chooses; between
requests a client runs freely. Every distinct order is run once, each from a fresh `reset()` (a
stateless depth-first search over the choice points, as Microsoft's CHESS does), and the answer is one
row per order: the schedule, its steps, what each client returned and whether `check` held.

Two orders are the same (one behaviour) when they differ only by swapping neighbouring requests that commute:
requests on different items, or reads of an item that leave no trace (helpers/reduction.py). Nothing a learner can
see tells such orders apart, not an answer, a result or the final state, so the explorer runs one of them, by sleep
sets: racy incrementers, each a GetItem then a PutItem of one counter, have 6 orders for 2 clients and 90 for 3, of
which 4 and 36 are distinct (their two GetItems, answered the same in either order, commute). Every count it gives
is of distinct orders.

`Stepper` drives the same machinery by hand, one request at a time (the step-through panel uses it).

Which client a request belongs to is decided per thread, not per botocore client: a request sent on a client
function's thread is that client's step, whether the lab's client sends it or a client a library built inside
(PynamoDB's connection, Powertools' persistence layer, a lock client). Every DynamoDB client built in the kernel after
`connect()` carries the hold (helpers/clients.py); `install_hold(client)` gives it to one built before. What cannot be
held: a request a library sends from a thread of its own (a lock client's heartbeat, an executor's worker) belongs to
no client; the explorer stops with an ExplorationError naming it rather than let it land in no order.

On the lab server the explorer also makes every choice DynamoDB's consistency leaves open
(helpers/labserver/consistency.py): which version an eventually consistent or index read answers with, and when
each item of a transaction becomes visible. A step (a "move", as a schedule names it) is then one of:
- "alice": release alice's held request (a read gets the newest answer the model allows);
- "alice~2": release alice's held read with its 2nd other answer (an older version of some item);
- "alice@1": read item 1 of alice's held BatchGetItem now ("alice@1~2": with its 2nd other answer). A BatchGetItem is
  read-committed: DynamoDB reads its items one at a time, so each is a move of its own, and another client's request
  may come between them; the request itself is released with the last item read. Items read back to back are
  counted once (in ascending order), as items made visible back to back are;
- "alice+1": make item 1 of alice's ongoing transaction visible; the last one ends it and her call returns. A
  BatchWriteItem's items become visible the same way, one at a time, though nothing conflicts with them: each put
  or delete takes effect then, so another request's write to its item may land before it. Items made visible back
  to back leave the same state in any order, so the explorer counts such a run once (in ascending order): what it
  counts is when each item becomes visible relative to the other clients' requests.
  DynamoDB publishes no bound on how long a transaction stays ongoing, but it is short, and with no bound at
  all any retry loop could be starved: here each other client sends at most WINDOW (3) requests naming one of its
  items meanwhile, and its next one waits until the transaction has ended (a scenario whose clients make at most
  three requests each never meets the bound; requests on other items do not count, helpers/reduction.py says why);
- "stream#1": stream record 1 enters its table's stream (helpers/labserver/streamlog.py). Each record of a write to a
  table with a stream enabled is on its way until this move, which the explorer may make at any point after the write
  (a transaction's after it ends, a batch's put or delete after it lands), but after the records of the same item
  made before it: so records of different items, and a transaction's records, reach the stream in any order and
  between other writes' records, while each item's stay in order. The consumer's DynamoDB Streams requests
  (ListStreams, DescribeStream, GetShardIterator, GetRecords) are steps like any other, so the explorer knows what
  each one read. DynamoDB publishes no bound on how long a record takes to reach its stream, but with none a
  consumer that polls for one could poll forever: here a client reads a stream at most WINDOW (3) times since a
  record last entered it while records are on their way to it, and its next read waits until one enters. The
  records still on their way when every client has finished are moves too, so `check` reads the streams as they
  ended. Where nobody reads a stream (a replica of a global table has one, which DynamoDB keeps on), the order of its
  records can be seen by no client, so an exploration starts with every record entering its stream at once, as no
  move; once a client sends a DynamoDB Streams request, it starts over (before any check) with the records' arrivals
  as moves. A check that alone reads a stream sees its records as they entered it at once. A schedule replayed, or a
  step-through panel given an exploration's orders, watches the streams as that exploration did (a panel given none
  watches them);
- "eu-west-1#2": write 2 on its way to eu-west-1 arrives there (helpers/labserver/globaltables.py): on a global table
  whose Regions are eventually consistent (MREC), each item a write changes reaches each other Region as a move of
  its own, at any point after the write (a transaction's once it has ended), in any order; last writer wins on arrival;
- "alice+0" after alice's PutItem, UpdateItem or DeleteItem on a global table whose Regions are strongly consistent
  (MRSC): her write, applied in her Region, is replicated and acknowledged, and her call returns. Until then it is in
  flight: no Region's read sees it, a write to its item from another Region meets ReplicatedWriteConflictException
  (botocore retries it, each attempt a step, counted in the WINDOW above), one from her own Region waits;
- "alice?1": alice's function left a choice to the explorer (`choice_point`, as helpers/consumer.py's Kinesis mode
  does) and gets its option 1 (counted from 0): a choice only her own code sees, so it commutes with every other
  client's move;
- with faults=("lost_response", "crash"), a write may also be released as "alice!lost" (applied, then its
  response lost on the way back: the SDK retries it, a step of its own) or "alice!crash" (applied, then alice's
  process dies: the rest of her function never runs, and her result is a Crashed). Each fault happens at most
  once per order; a crash after a read leaves the state a crash after the request before it leaves, so it is
  offered after writes only.
Time between steps is the explorer's: while a client runs from one of its steps to the next, nothing happens but the
moves the explorer makes, so on a client's thread `time.sleep` returns at once (a learner's backoff, botocore's delay
before it resends a request), and a wait changes no order, only the time an exploration takes. Code that waits for the
clock itself to pass (a lease taken over once it has run out) is explored with its `now` passed in, as 29's is.

consistency="dynamodb", the default, makes those choices. consistency="strong" asks for less: every read answered
as if strongly consistent and each transaction applied at once, so only the orders of the requests are counted (a
notebook that asks for it says so). On DynamoDB Local or AWS the explorer can only choose the order of requests.
"""
import ctypes
import json
import os
import queue
import random
import re
import threading
import time
import uuid
import weakref
from contextlib import contextmanager
from dataclasses import replace
from math import factorial, prod

import pandas as pd
from botocore.exceptions import ClientError

from ..lab import labhttp, trace
from ..lab.backend import connect
from .reduction import EVERYTHING, STREAM_RECORDS, Footprint, Keys, asleep, commute, overlap, wake

CLIENT_TIMEOUT = 10
MAX_OPTIONS = 120  # of one choice a client leaves to the explorer
MAX_SCHEDULES = 1000
STOP_WITHIN = 1.0
SLICE = 0.1
ORDER_HEADER = "X-Lab-Order"  # read by helpers/labserver/server.py (not imported: it would load moto here)
ORDER_COST_HEADER = "X-Lab-Order-Cost"  # its answer: what the steps of the order have cost so far
HOLD_ID = "lab-explore-hold"
ANSWER_ID = "lab-explore-answer"
CONSISTENCIES = ("dynamodb", "strong")
WINDOW = 3  # requests naming an ongoing transaction's items another client may send; reads of a stream, records pending
DEFAULT_CONSISTENCY = "dynamodb"
STREAM_REQUESTS = {"seen": 0}  # DynamoDB Streams requests a run's clients have sent
LATEST = {"session": 0}  # the last exploration or step-through (re)started in this process: the tables are its
READS = ("GetItem", "BatchGetItem", "Query", "Scan")
STREAM_READS = ("ListStreams", "DescribeStream", "GetShardIterator", "GetRecords")  # DynamoDB Streams' operations
ARRIVALS_HEADER = "x-lab-arrivals"  # the lab server's: what may arrive now (stream records, replicated writes)
WRITES = ("PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems")
SINGLE_ITEM_WRITES = ("PutItem", "UpdateItem", "DeleteItem")
CREDENTIAL_SCOPE = re.compile(r"Credential=[^/,]*/[0-9]{8}/([a-z0-9-]+)/")  # SigV4: key/date/Region/service/...
FAULTS = ("lost_response", "crash")
FAULT_MOVES = {"lost_response": "lost", "crash": "crash"}
FAULT_WORDS = {"lost": "response lost, the SDK retries", "crash": "then the client crashes"}
CONSISTENCY_PATH = "/lab/consistency"
ONLY_ORDERS = ("Exploring orders only: on {kind} the explorer cannot choose which copy answers a read or when a "
               "transaction's items become visible, so it counts only the orders of the requests.")


class ExplorationError(RuntimeError):
    """The scenario cannot be explored as written; the message names the client and what to change."""


class TooManyOrders(ValueError):
    """A scenario with more possible orders than the exploration may run; the message says how to shrink it."""


class Stopped(BaseException):
    """Raised in a held client when its run is stopped; not an Exception, so `except Exception` cannot keep it."""


class Crashed(BaseException):
    """A client's process died right after a request was applied: the rest of its function never ran (its result)."""

    def __str__(self):
        return f"crashed after its {self.args[0]}"


CURRENT = threading.local()  # on a client thread: .run (its Run), .name (its client), .driving (making moves)
REAL_SLEEP = time.sleep
EXPLORING = threading.Lock()
HELD = weakref.WeakSet()  # every client with the hold installed
WATCHED = {"run": None, "owner": None}  # the run being explored, and the thread exploring it


class Request:
    """One held request: who sends it, the operation, its body as DynamoDB JSON, and the HTTP request itself."""

    def __init__(self, client, operation, body, http=None):
        self.client, self.operation, self.body, self.http = client, operation, body, http
        self.answer, self.reply = None, None
        self.choices = []
        self.choice = None
        self.fault = None
        self.items = batch_items(body) if operation == "BatchGetItem" else []
        self.unread = []  # a BatchGetItem read item by item: the places of its items not read yet
        self.item_choices = {}  # and the answers the model allows each of them now
        self.read_last = None  # and the place of the item it read last, with the request itself

    @property
    def label(self):
        """'alice: GetItem', as the explorer's `steps` column writes a step; a stale answer says what it missed,
        a fault what happened."""
        reads = f" reads {self.items[self.read_last]}" if self.read_last is not None else ""
        return f"{self.client}: {self.operation}{reads}" + (f" ({self.note})" if self.note else "")

    @property
    def note(self):
        """What the model or a fault did to this request, in words ("stale: ... without alice's PutItem"), or ''."""
        return stale_words(self.choice) or (FAULT_WORDS[self.fault] if self.fault else "")

    @property
    def region(self):
        """The Region the request is signed for (its SigV4 credential scope), or None."""
        signed = CREDENTIAL_SCOPE.search(str(self.http.headers.get("Authorization", ""))) if self.http else None
        return signed.group(1) if signed else None

    def moves(self, faults=()):
        """The moves releasing this request: one per answer the model allows a read, one per fault a write may
        meet (of `faults`, those still unused in this order), else just the client."""
        moves = [self.client] + [f"{self.client}~{place}" for place in range(1, len(self.choices))]
        if self.operation in WRITES:
            moves += [f"{self.client}!{FAULT_MOVES[fault]}" for fault in faults]
        return moves

    @property
    def summary(self):
        """The request in one line: 'PutItem {PK: 'seat#14C', holder: 'alice'} if version = 1' (a BatchGetItem read item
        by item: the item it read last, with the request)."""
        if self.read_last is not None:
            return f"{self.operation}: read {self.items[self.read_last]}"
        return request_summary(self.operation, self.body)

    @property
    def block(self):
        """The request's transcript block, as the notebooks print calls."""
        return trace.render_call(self.operation, self.body)


class ItemRead:
    """One item of a held BatchGetItem read before the rest: DynamoDB reads a batch's items one at a time, each as it
    is at that moment (consistency.Model.read_item); the request itself reads the last one."""

    def __init__(self, request, place, choice, item):
        self.client, self.request, self.place, self.choice = request.client, request, place, choice
        self.operation, self.body, self.answer = request.operation, request.body, "OK"
        self.reply = trace.attributes(item) if item else "no such item"

    @property
    def note(self):
        """What the answer missed, in words, or ''."""
        return stale_words(self.choice)

    @property
    def label(self):
        """"alice: BatchGetItem reads {PK: 'A'}", with what it missed if stale."""
        return f"{self.client}: {self.operation} reads {self.request.items[self.place]}" + (
            f" ({self.note})" if self.note else "")

    @property
    def summary(self):
        """What the move does, for the panel's steps."""
        return f"{self.operation}: read {self.request.items[self.place]}"

    @property
    def block(self):
        """The move in the transcript."""
        return f"    ({self.operation} reads {self.request.items[self.place]}: {self.reply})"


def stale_words(choice):
    """What a read's chosen answer missed ("stale: ... without alice's PutItem"), or '' for the latest."""
    return choice["label"] if choice and choice["label"] != "latest" else ""


def batch_items(body):
    """The items a BatchGetItem names, in order, as the transcript writes keys."""
    return [trace.attributes(key) for request in (body.get("RequestItems") or {}).values() if isinstance(request, dict)
            for key in request.get("Keys") or [] if isinstance(key, dict)]


class Arrival:
    """Something the lab server holds on its way arriving (its `arrivals`): a stream record entering its stream, or a
    replicated write its Region. A move the explorer makes, not a client's request."""

    def __init__(self, event):
        self.event = event
        self.client, self.operation, self.answer, self.reply, self.note = event["by"], "arrival", "OK", (
            "entered" if event["by"] == "stream" else "arrived"), ""
        self.body = {}

    @property
    def move(self):
        """'stream#1' (or 'eu-west-1#2'), as a schedule names it."""
        return f"{self.client}#{self.event['id']}"

    @property
    def label(self):
        """"stream: INSERT {PK: 'ORDER#1'} into orders' stream"."""
        return f"{self.client}: {self.event['label']}"

    @property
    def summary(self):
        """What the move does, for the panel's steps."""
        return self.event["label"]

    @property
    def block(self):
        """The move in the transcript."""
        return f"    ({self.event['label']})"


class Choice:
    """A choice a client function leaves to the explorer (`choice_point`): one move per option, "alice?1" for its
    option 1."""

    def __init__(self, client, what, options):
        self.client, self.what, self.options = client, what, list(options)
        self.operation, self.body, self.answer, self.note = "choice", {}, "OK", ""
        self.chosen = None

    @property
    def reply(self):
        """The option chosen, in words."""
        return None if self.chosen is None else self.options[self.chosen]

    @property
    def label(self):
        """"consumer: Kinesis hands over records 1, 2: 2, 1, then 1 again"."""
        return f"{self.client}: {self.summary}"

    @property
    def summary(self):
        """What was chosen, after a colon (while held, what is to be chosen)."""
        return self.what if self.chosen is None else f"{self.what}: {self.reply}"

    @property
    def block(self):
        """The choice in the transcript."""
        return f"    ({self.summary})"

    def moves(self, faults=()):
        """One move per option."""
        return [f"{self.client}?{place}" for place in range(len(self.options))]


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


class Reveal:
    """An ongoing transaction of a held client: its items not yet visible (consistency.Model.reveal)."""

    def __init__(self, client, request, transaction):
        self.client, self.request = client, request
        self.number, self.items = transaction["id"], transaction["items"]
        self.replicating = transaction.get("replicating")  # an MRSC write: the Region it was made in
        self.hidden = list(range(len(self.items)))
        self.operation, self.body, self.answer, self.reply = "reveal", request.body, "OK", "visible"
        self.note = ""
        self.place = None
        self.others = {}  # client -> requests it sent while this transaction was ongoing

    @property
    def label(self):
        """"alice: TransactWriteItems makes {PK: 'B'} visible" ("alice: PutItem of {PK: 'B'} replicated" for MRSC)."""
        return f"{self.client}: {self.request.operation} {self.done(self.items[self.place])}"

    @property
    def summary(self):
        """What the move does (or, while held, what it may do next), for the panel's steps and buttons."""
        if self.replicating:
            return f"{self.request.operation}: replicate {self.items[0]} to another Region, then answer"
        if self.place is not None:
            return f"{self.request.operation}: make {self.items[self.place]} visible"
        return f"{self.request.operation}: make {' or '.join(self.items[place] for place in self.hidden)} visible"

    @property
    def block(self):
        """The move in the transcript."""
        return f"    ({self.request.operation} {self.done(self.items[self.place])})"

    def done(self, item):
        """What the move did to `item`, in words."""
        if self.replicating:
            return f"of {item} replicated from {self.replicating} to another Region: acknowledged"
        return f"makes {item} visible"

    def moves(self):
        """One move per item still hidden."""
        return [f"{self.client}+{place}" for place in self.hidden]


def request_summary(operation, body):
    """One line for a request body: operation (and the index it reads), item or key, update and condition."""
    if "TransactItems" in body:
        kinds = ", ".join(next(iter(action)) for action in body["TransactItems"])
        return f"{operation} [{kinds}]"
    names, values = body.get("ExpressionAttributeNames", {}), body.get("ExpressionAttributeValues", {})
    parts = [operation] + ([f"on {body['IndexName']}"] if "IndexName" in body else [])
    for field in ("Item", "Key"):
        if field in body:
            parts.append(trace.attributes(body[field]))
    for field, word in (("UpdateExpression", ""), ("ConditionExpression", "if ")):
        if field in body:
            parts.append(word + trace.substitute(body[field], names, values))
    return " ".join(parts)


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
        cost = response[0].headers.get(ORDER_COST_HEADER)
        if cost and run.order:
            run.cost = tuple(float(units) for units in cost.split())
        ongoing = response[0].headers.get("x-lab-transaction")
        if ongoing and run.modelled:
            run.hold_transaction(CURRENT.name, json.loads(ongoing))
        if request.fault == "crash":
            raise Crashed(request.operation)


def reply_summary(operation, answer, parsed):
    """What an answer said, in a few words: the error code (with a cancelled transaction's reasons), the item or
    items read, the attributes returned, or 'OK'."""
    if "CancellationReasons" in parsed:
        return f"{answer} [{', '.join(reason.get('Code', 'None') for reason in parsed['CancellationReasons'])}]"
    if answer != "OK":
        return answer
    if operation == "GetItem":
        return trace.attributes(parsed["Item"]) if "Item" in parsed else "no such item"
    if "Attributes" in parsed:
        return trace.attributes(parsed["Attributes"])
    if operation == "BatchGetItem":
        return "[" + ", ".join(trace.attributes(item) for items in parsed.get("Responses", {}).values()
                               for item in items) + "]"
    if "Items" in parsed:
        return f"{len(parsed['Items'])} items"
    if operation == "TransactGetItems":
        return "[" + ", ".join(trace.attributes(r["Item"]) if "Item" in r else "None" for r in parsed["Responses"]) + "]"
    if operation == "GetRecords":
        return "[" + ", ".join(record_words(record) for record in parsed.get("Records", [])) + "]"
    return "OK"


def record_words(record):
    """"INSERT {PK: 'ORDER#1'}": a stream record's event and its item's key."""
    return f"{record.get('eventName')} {trace.attributes(record.get('dynamodb', {}).get('Keys', {}))}"


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


class Workers:
    """One thread per client, kept from schedule to schedule: a new thread per schedule costs more than a request."""

    def __init__(self, names):
        steps_take_no_time()
        self.jobs = {name: queue.SimpleQueue() for name in names}
        self.threads = [threading.Thread(target=self.work, args=(name,), name=f"explore-{name}", daemon=True)
                        for name in names]
        for thread in self.threads:
            thread.start()

    def work(self, name):
        """Serve `name` in each run handed over, until close()."""
        while (run := self.jobs[name].get()) is not None:
            run.serve(name)

    def begin(self, run):
        """Start every client of `run` on its thread."""
        for name in run.clients:
            self.start(run, name)

    def start(self, run, name):
        """Start `run`'s client `name` on its thread."""
        self.jobs[name].put(run)

    def close(self):
        """Let the threads end once their current client returns, and wait up to a second for them."""
        for jobs in self.jobs.values():
            jobs.put(None)
        deadline = time.monotonic() + STOP_WITHIN
        for thread in self.threads:
            thread.join(max(deadline - time.monotonic(), 0))


class Run:
    """One schedule in progress: each client running on its thread, held at a request, or done."""

    def __init__(self, clients, timeout=CLIENT_TIMEOUT, server=None, faults=(), metered=False, keys=None,
                 watch_streams=True):
        self.clients = clients
        self.watch_streams = watch_streams  # False: records on their way to a stream enter it at once, as no move
        self.keys = keys  # reduction.Keys: the items each move touches, for the explorer's reduction
        self.blocked = False  # every possible move slept: the run repeated a behaviour already run
        self.prints = []  # the footprint of each move taken
        self.order = uuid.uuid4().hex if metered else None
        self.cost = (0.0, 0.0) if metered else None  # (write units, of which on refused writes) of the steps so far
        self.timeout = timeout
        self.server = server
        self.modelled = server is not None
        self.faults = list(faults)
        self.changed = threading.Condition()
        self.running = set(clients)
        self.since = {name: time.monotonic() for name in clients}
        self.held = {}
        self.results = {}
        self.steps = []
        self.taken = []
        self.stopped = False
        self.exited = 0
        self.go = {name: threading.Event() for name in clients}
        self.strays = []  # operations sent meanwhile from a thread no client runs on (note_stray)
        self.problem = None  # an ExplorationError a client met (choice_point), raised by the explorer once it ran
        self.arrivals = []  # what may arrive now, as the lab server last said (Arrival)
        self.polls = {}  # (client, stream) -> its reads of the stream since a record last entered it
        self.walk = None  # the explorer's Walk when the clients' threads make its moves (play)
        self.workers, self.unstarted = None, []  # play's: the clients not started yet, started one after the other
        self.ended = threading.Event()  # set by the thread that played the last move, or met a failure
        self.failure = None  # what the explorer's moves raised on a client's thread, raised again by play()

    def start(self, workers):
        """Start every client on its worker thread and wait until each is held at its first request or done."""
        workers.begin(self)
        self.settle()

    def play(self, workers, walk):
        """Start the clients on their worker threads, one after the other, and let `walk` make the moves until the
        order ends: each thread, once its client holds a request or has finished, starts the next client, or, when
        all have started, makes the moves itself (the baton passes from client to client: a client released next goes
        on without a wake-up, another is woken by the one before it, and this thread only once the order ends)."""
        self.walk, self.workers = walk, workers
        first, *self.unstarted = self.clients
        workers.start(self, first)
        while not self.ended.wait(SLICE):
            with self.changed:
                self.check_late()
        if self.failure is not None:
            raise self.failure

    def take_turn(self, name):
        """On `name`'s thread, once it holds a request or has finished and no other client runs: start the next client,
        or make the explorer's moves (drive). True when `name` itself goes on."""
        if not self.unstarted:
            return self.drive(name)
        starting = self.unstarted.pop(0)
        with self.changed:
            self.since[starting] = time.monotonic()
        self.workers.start(self, starting)
        return False

    def drive(self, name):
        """On `name`'s thread, once no client runs: the explorer's next moves; wake the client they let run, or tell
        play() that the order has ended. True when `name` itself goes on."""
        saved, CURRENT.run, CURRENT.driving = getattr(CURRENT, "run", None), None, True  # its requests are no step
        try:
            going = self.walk.next()
        except BaseException as error:
            self.failure, going = error, None
        finally:
            CURRENT.run, CURRENT.driving = saved, False
        if going is None:
            self.ended.set()
        elif going != name:
            self.go[going].set()
        return going == name

    def serve(self, name):
        """On the client's thread: run the client function, keep what it returned or raised."""
        CURRENT.run, CURRENT.name = self, name
        try:
            result = self.clients[name]()
        except Stopped:
            result = None
        except Crashed as crash:
            result = crash
        except Exception as error:  # the client's exception is its result, for check() to judge
            result = error
        finally:
            CURRENT.run = None
        with self.changed:
            if not self.stopped:
                self.results[name] = result
            self.running.discard(name)
            self.exited += 1
            self.changed.notify_all()
            turn = self.walk is not None and self.running == set(self.unstarted) and not self.stopped
        if turn:
            self.take_turn(name)

    def hold(self, name, request):
        """Called on the client's thread before each HTTP attempt: wait until the explorer releases it (when no other
        client runs, make the explorer's moves first: play)."""
        go = self.go[name]
        with self.changed:
            if self.stopped:
                raise Stopped
            go.clear()
            self.held[name] = request
            self.running.discard(name)
            self.changed.notify_all()
            turn = self.walk is not None and self.running == set(self.unstarted)
        if turn and self.take_turn(name):
            return
        go.wait()
        if self.stopped:
            raise Stopped

    def hold_transaction(self, name, transaction):
        """On the client's thread, after its TransactWriteItems was applied: wait until every item is visible."""
        request = next(request for request in reversed(self.steps) if request.client == name)
        self.hold(name, Reveal(name, request, transaction))

    def answered(self, name, answer, parsed):
        """Note the answer to `name`'s latest released request (its error code or "OK"), and what it said."""
        request = next(request for request in reversed(self.steps)
                       if request.client == name and isinstance(request, Request))
        request.answer, request.reply = answer, reply_summary(request.operation, answer, parsed)
        return request

    def settle(self):
        """Wait until no client is running; name any that neither sends a request nor finishes in time."""
        with self.changed:
            while self.running:
                self.check_late()
                self.changed.wait(SLICE)

    def check_late(self):
        """Raise an ExplorationError naming a running client that has neither sent a request nor finished in time
        (self.changed held)."""
        late = [name for name in self.clients
                if name in self.running and time.monotonic() - self.since[name] > self.timeout]
        if late:
            raise ExplorationError(
                f"Client {late[0]!r} neither sent a DynamoDB request nor finished within {self.timeout:g} s. "
                "Between two requests a client must not wait for another client (they run one at a "
                "time here); make it send its requests through the lab's client or return.")

    def release(self, move, footprint=None):
        """Make one move (see the module docstring), then wait for every client to settle again; return the step."""
        step, going = self.make(move, footprint)
        if going is not None:
            self.go[going].set()
            self.settle()
        self.settled(step)
        return step

    def settled(self, step):
        """Once every client has settled after `step`: a write whose response was lost has put its records (stream
        records, replicated writes) on their way."""
        if getattr(step, "fault", None) == "lost" and self.modelled:
            self.arrivals = self.server.post({})["arrivals"]

    def make(self, move, footprint=None):
        """Make one move; return (the step, the client it lets run or None). The client is marked running, not woken."""
        name, kind, place = parse_move(move)
        item = batch_item(move)
        held = self.held.get(name)
        self.taken.append(move)
        if kind == "#":
            return self.arrive(move), None
        if kind == "?":
            return self.pick(name, place)
        if isinstance(held, Reveal) and kind == "+":
            return self.reveal(held, place)
        choices = held.choices if item is None else held.item_choices[item]
        choice = choices[place if kind == "~" else 0] if choices else None
        if item is not None and len(held.unread) > 1:
            return self.read_item(held, item, choice), None
        self.count_waits(name, footprint or self.footprint(move))
        with self.changed:
            request = self.held.pop(name)
            request.choice = choice
            if item is not None:
                request.read_last, request.unread = item, []
            if kind == "!":
                request.fault = place
                self.faults.remove(next(fault for fault, word in FAULT_MOVES.items() if word == place))
            self.running.add(name)
            self.since[name] = time.monotonic()
            self.steps.append(request)
        return request, name

    def count_waits(self, name, footprint):
        """Count a request of `name` towards the window of each ongoing transaction naming one of its items, and
        towards its reads of each stream it reads (reduction.py says why only those)."""
        for other in self.held.values():
            if isinstance(other, Reveal) and touches(footprint, self.keys.written(
                    other.request.operation, other.request.body, other.request.region)):
                other.others[name] = other.others.get(name, 0) + 1
        for kind, table in footprint.items:
            if kind == STREAM_RECORDS:
                self.polls[name, table] = self.polls.get((name, table), 0) + 1

    def read_item(self, held, place, choice):
        """Read one item of a held BatchGetItem now, with the answer chosen; the request stays held."""
        step = ItemRead(held, place, choice, self.server.read_item(held, place, choice["versions"]))
        held.unread.remove(place)
        self.steps.append(step)
        return step

    def reveal(self, held, place):
        """Make one item of an ongoing transaction visible; after the last, let its client go on (step, client)."""
        step = Reveal(held.client, held.request, {"id": held.number, "items": held.items,
                                                  "replicating": held.replicating})
        step.place = place
        held.hidden.remove(place)
        self.steps.append(step)
        self.arrivals = self.server.post({"reveal": [held.number, place]})["arrivals"]
        if held.hidden:
            return step, None
        with self.changed:
            del self.held[held.client]
            self.running.add(held.client)
            self.since[held.client] = time.monotonic()
        return step, held.client

    def pick(self, name, place):
        """Give `name`'s held choice its option `place`; let it go on (step, client)."""
        with self.changed:
            held = self.held.pop(name)
            held.chosen = place
            self.running.add(name)
            self.since[name] = time.monotonic()
            self.steps.append(held)
        return held, name

    def event(self, move):
        """The lab server's event a move such as "stream#1" makes arrive."""
        return next(event for event in self.arrivals if Arrival(event).move == move)

    def arrive(self, move):
        """Make the event `move` names arrive now (a stream record enters its stream, a replicated write its Region)."""
        step = Arrival(self.event(move))
        self.steps.append(step)
        for kind, table in step.event["touches"]:
            if kind == STREAM_RECORDS:
                self.polls = {key: count for key, count in self.polls.items() if key[1] != table}
        self.arrivals = self.server.post({"arrive": {"by": step.client, "id": step.event["id"]}})["arrivals"]
        return step

    @property
    def enabled(self):
        """The clients holding a request, in the order the scenario names them."""
        return [name for name in self.clients if name in self.held]

    def deliver_unwatched(self):
        """Unless streams are watched, every stream record on its way enters its stream now, in the order the lab server
        offers them, as no move (module docstring: nobody reads those streams, so their order is never seen)."""
        while not self.watch_streams and self.modelled:
            waiting = [event for event in self.arrivals if event["by"] == "stream"]
            if not waiting:
                return
            self.arrivals = self.server.post({"arrive": {"by": "stream", "id": waiting[0]["id"]}})["arrivals"]

    @property
    def pending(self):
        """True while a client holds a request or something is on its way: the order goes on."""
        return bool(self.held or self.arrivals)

    def moves(self, answers=True):
        """Every move possible now: what may arrive (Arrival), then the clients' moves in the scenario's order of
        clients; with answers=False a read's other answers are left out (ask `answers(name)` once that client is
        chosen). A client that has sent WINDOW requests naming an ongoing transaction's items waits until it has
        ended; one that has read a stream WINDOW times while records are on their way to it, until one enters."""
        ongoing = [held for held in self.held.values() if isinstance(held, Reveal)]
        moves = [Arrival(event).move for event in self.arrivals]
        for name in [name for name in self.enabled if not any(held.others.get(name, 0) >= WINDOW for held in ongoing)
                     and not self.polled_out(name) and not self.queued(name, ongoing)]:
            held = self.held[name]
            if isinstance(held, Reveal):
                moves += held.moves()
            elif isinstance(held, Choice):
                moves += held.moves() if answers else [name]
            elif held.unread:
                for move in (f"{name}@{place}" for place in held.unread):
                    moves += self.answers(move) if answers else [move]
            else:
                if answers and self.reads(held):
                    held.choices = self.server.choices(held)
                moves += held.moves(self.faults)
        return moves

    def queued(self, name, ongoing):
        """True when `name` holds a write to an item an MRSC write made in the same Region is still replicating: it
        waits until that one is acknowledged (only a write from another Region meets ReplicatedWriteConflict)."""
        held = self.held[name]
        if not isinstance(held, Request) or held.operation not in WRITES:
            return False
        items = self.keys.named(held.operation, held.body, held.region)
        return any(other.replicating == held.region and touches(Footprint(name, frozenset(items), True),
                                                                 self.keys.written(other.request.operation,
                                                                                   other.request.body,
                                                                                   other.request.region))
                   for other in ongoing if other.replicating)

    def polled_out(self, name):
        """True when `name` holds a read of a stream it has read WINDOW times since a record last entered it, while
        records are on their way to it: the read waits until one enters."""
        held = self.held[name]
        if not self.arrivals or not isinstance(held, Request) or held.operation not in STREAM_READS:
            return False
        waiting = {table for event in self.arrivals for kind, table in event["touches"] if kind == STREAM_RECORDS}
        return any(kind == STREAM_RECORDS and self.polls.get((name, table), 0) >= WINDOW and table in waiting
                   for kind, table in self.footprint(name).items)

    def reads(self, held):
        """True when a held request is a read whose answer the model may choose."""
        return self.modelled and isinstance(held, Request) and held.operation in READS

    def answers(self, move):
        """The moves making move `move` ("alice", or "alice@1" for an item of her BatchGetItem): one per answer the
        model allows the read now."""
        name, item = parse_move(move)[0], batch_item(move)
        held = self.held[name]
        if isinstance(held, Choice):
            return held.moves()
        if not self.reads(held):
            return [name]
        if item is not None:
            held.item_choices[item] = self.server.choices(held, item)
            return [move] + [f"{move}~{place}" for place in range(1, len(held.item_choices[item]))]
        held.choices = self.server.choices(held)
        return held.moves()

    def footprint(self, move, every_answer=False):
        """What move `move` touches (reduction.Footprint); every_answer: whichever answer its read gets."""
        name, kind, place = parse_move(move)
        if kind == "#":
            return Footprint(move, frozenset(tuple(touched) for touched in self.event(move)["touches"]), True)
        held, item = self.held[name], batch_item(move)
        if isinstance(held, Choice):
            return Footprint(name, frozenset(), False)
        if isinstance(held, Reveal):
            written = self.keys.written(held.request.operation, held.request.body, held.request.region)
            last = (held.request.operation == "TransactWriteItems" or held.replicating) and held.hidden == [place]
            return Footprint(name, frozenset([written[place]]), True, frees=frozenset(written) if last else frozenset())
        stale = kind == "~" or (every_answer and self.modelled)
        if item is not None:
            return Footprint(name, frozenset([self.keys.named(held.operation, held.body, held.region)[item]]), False,
                             stale)
        items = frozenset(self.keys.named(held.operation, held.body, held.region))
        if held.operation in STREAM_READS:  # off the model, a write's record enters at once: the read meets every write
            return Footprint(name, items if self.modelled else frozenset([EVERYTHING]), False)
        blind = held.operation not in READS and bool(items & self.locked())
        if held.operation == "TransactGetItems":
            return Footprint(name, items, False, meets_transactions=True, blind=blind)
        if held.operation in READS:
            return Footprint(name, items, False, stale or (self.modelled and "IndexName" in held.body))
        locks = self.modelled and (held.operation == "TransactWriteItems" or held.operation in SINGLE_ITEM_WRITES
                                   and place != "lost" and self.keys.synchronous(held.body.get("TableName")))
        items |= frozenset(self.keys.stamped(held.operation, held.body))
        return Footprint(name, items, not blind, fault=place if kind == "!" else "", meets_transactions=True,
                         blind=blind, locks=not blind and locks)

    def locked(self):
        """The items of every transaction still ongoing (a request naming one meets TransactionConflict), and of every
        MRSC write still replicating (a write from another Region meets ReplicatedWriteConflict)."""
        return {item for held in self.held.values() if isinstance(held, Reveal)
                and (held.request.operation == "TransactWriteItems" or held.replicating)
                for item in self.keys.written(held.request.operation, held.request.body, held.request.region)}

    def stop(self):
        """Release every thread (each held request raises Stopped) and wait up to a second for them."""
        with self.changed:
            self.stopped = True
        for go in self.go.values():
            go.set()
        deadline = time.monotonic() + STOP_WITHIN
        with self.changed:
            while self.exited < len(self.clients) and time.monotonic() < deadline:
                self.changed.wait(max(deadline - time.monotonic(), 0))


def touches(footprint, items):
    """True when a move with this footprint names one of `items` ((table, key) pairs)."""
    return any(overlap(one, other) for one in footprint.items for other in items)


def step_note(step):
    """What the transcript's line over a step adds to its client: the item a BatchGetItem read and what the model or a
    fault did to a request (" reads {PK: 'A'} (stale: ...)"); nothing for an item made visible, a record entering or
    a choice, which the step's own line says."""
    if isinstance(step, (Reveal, Arrival, Choice)):
        return ""
    return step.label[len(f"{step.client}: {step.operation}"):]


def parse_move(move):
    """(client, kind, place) of a move: ("alice", "", 0), ("alice", "~", 2), ("alice", "+", 1), ("alice", "!", "lost"),
    ("alice", "@", 1) for reading item 1 of her BatchGetItem (and "alice@1~2", its 2nd other answer: ("alice", "~", 2)),
    ("stream", "#", 1) for stream record 1 entering its stream, ("alice", "?", 1) for option 1 of her choice."""
    for kind in ("~", "+", "@", "#", "?"):
        name, sign, place = move.rpartition(kind)
        if sign and place.isdigit():
            return (name.rpartition("@")[0] if batch_item(name) is not None else name), kind, int(place)
    name, sign, fault = move.rpartition("!")
    if sign and fault in FAULT_MOVES.values():
        return name, "!", fault
    return move, "", 0


class ModelServer:
    """The lab server's consistency model, as the explorer drives it over HTTP (/lab/consistency)."""

    def __init__(self, lab):
        self.endpoint = lab.endpoint.rstrip("/")

    def post(self, request):
        """POST one request to /lab/consistency; its JSON answer."""
        return self.send(self.endpoint + CONSISTENCY_PATH, json.dumps(request).encode(),
                         {"Content-Type": "application/json"})

    def explore(self):
        """Copies move only when told; every copy agrees now."""
        self.post({"mode": "explore", "settle": True})

    def sampled(self):
        """Back to copies that follow the knobs (all caught up while the knobs are off)."""
        self.post({"mode": "sampled"})

    def pause(self):
        """Between two steps: the copies stay as they are, and the next request from anyone else settles them."""
        self.post({"mode": "paused"})

    def resume(self):
        """Explore again after pause(): True if nothing came in between, else False (the copies were settled)."""
        return self.post({"mode": "explore", "resume": True})["resumed"]

    def choices(self, held, item=None):
        """The answers the model allows the held read now (newest first), asked with the read itself (or, given the
        place of one of a BatchGetItem's items, the answers it allows reading that item now)."""
        headers = {**held.http.headers, "X-Lab-Choices": "1", **({} if item is None else {"X-Lab-Batch-Item": item})}
        return self.send(held.http.url, held.http.body, headers)["choices"]

    def read_item(self, held, item, versions):
        """Read one item of the held BatchGetItem now, with the versions chosen for it; the item read (or None)."""
        headers = {**held.http.headers, "X-Lab-Batch-Item": item, "X-Lab-Read-Choice": json.dumps(versions)}
        return self.send(held.http.url, held.http.body, headers)["item"]

    @staticmethod
    def send(url, body, headers):
        """One HTTP POST to the lab server; a refusal is an ExplorationError with the server's reason."""
        status, answer = labhttp.request(url, "POST", body if isinstance(body, bytes) else (body or "").encode(),
                                         {name: value.decode() if isinstance(value, bytes) else str(value)
                                          for name, value in headers.items()}, timeout=CLIENT_TIMEOUT)
        if status >= 400:
            raise ExplorationError(json.loads(answer or b"{}").get("message", f"HTTP {status}"))
        return json.loads(answer)


def model_server(lab, consistency):
    """The ModelServer to explore with, or None when only orders are explored (said once, off the lab server)."""
    if consistency not in CONSISTENCIES:
        raise ValueError(f"consistency must be one of {', '.join(CONSISTENCIES)}; got {consistency!r}")
    if consistency == "strong":
        return None
    if lab.kind != "embedded":
        print(ONLY_ORDERS.format(kind="DynamoDB Local" if lab.kind == "local" else "real DynamoDB"))
        return None
    return ModelServer(lab)


@contextmanager
def modelled(server):
    """The server in explore mode for the block (nothing to do without one), sampled again afterwards."""
    if server is None:
        yield
        return
    server.explore()
    try:
        yield
    finally:
        server.sampled()


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


@contextmanager
def exclusive():
    """One exploration at a time in a kernel: a second one started while one runs is refused."""
    if not EXPLORING.acquire(blocking=False):
        raise RuntimeError("Another exploration is running in this kernel; wait for it to finish (or interrupt "
                           "it) before starting the next one.")
    try:
        yield
    finally:
        EXPLORING.release()


@contextmanager
def working(clients):
    """Worker threads for the clients, closed when the block ends however it ends; while it runs, this thread and
    theirs share one CPU (one_cpu)."""
    with one_cpu():
        workers = Workers(clients)
        try:
            yield workers
        finally:
            workers.close()


@contextmanager
def one_cpu():
    """Keep this thread, and the threads it starts, on the CPU it runs on now, for the block (where the platform
    lets a thread be pinned: Linux). The explorer's threads take turns and never run at once, and a turn passed to a
    thread waiting on another CPU wakes that CPU (a slow wake-up in a virtual machine), while on one CPU it is a
    context switch (measured on a two-CPU machine: an exploration of 3 racy clients took about a tenth less time).
    The lab server's process is left where the system puts it: on the other CPUs while this one is busy."""
    allowed = os.sched_getaffinity(0) if hasattr(os, "sched_setaffinity") else None
    cpu = this_cpu() if allowed and len(allowed) > 1 else None
    if cpu is None:
        yield
        return
    os.sched_setaffinity(0, {cpu})
    try:
        yield
    finally:
        os.sched_setaffinity(0, allowed)


def this_cpu():
    """The CPU this thread runs on (glibc's sched_getcpu), or None where it cannot be asked."""
    try:
        cpu = ctypes.CDLL(None).sched_getcpu()
    except (OSError, AttributeError):
        return None
    return cpu if cpu >= 0 else None


def start_state(reset, server):
    """reset(), then every copy agrees on the state it made, and each SDK client has a fresh client's retry quota."""
    reset()
    for client in list(HELD):
        refill_retry_quota(client)
    if server is not None:
        server.post({"settle": True})


def refill_retry_quota(client):
    """Fill the client's retry quota: botocore's standard retry mode spends it on retries that end in an error and
    stops retrying once it runs out, so a lost response's retry would otherwise depend on the orders run before.
    botocore's legacy retry mode, a library's default, keeps no quota."""
    handler = client.meta.events._emitter._unique_id_handlers["retry-config-dynamodb"]["handler"]
    checker = getattr(getattr(handler, "__self__", None), "_retry_quota", None)
    if checker is not None:
        checker._quota.release(checker._quota.INITIAL_CAPACITY)


def run_schedule(clients, reset, prefix, timeout, workers, lab, server=None, faults=(), keys=None,
                 watch_streams=True, max_stale=None):
    """Run one schedule: follow `prefix`, then always the first move possible that does not sleep; return (run,
    choices). run.blocked is True when every possible move slept (the run repeats a behaviour already run).

    run.cost is (write units, of which on refused writes) the clients' requests cost, as the lab server billed them
    (None elsewhere).

    prefix and choices are lists of (move chosen, moves that were possible); along the prefix the same
    moves must be possible as when it was first run, or the scenario does not repeat itself. Choosing a read
    is two decisions: which client, then (asked of the server only then) which of the read's answers. The moves
    possible at a point, less those that sleep there (reduction.py), are tried in order; a sibling tried before the
    one chosen sleeps below it until a move that does not commute with it is made. max_stale: once the run has given
    that many reads an older answer than the newest, its reads get the newest only (explore says why).
    """
    start_state(reset, server)
    run = Run(clients, timeout, server, faults, metered=lab.kind == "embedded", keys=keys or Keys(lab.client),
              watch_streams=watch_streams)
    choices = []
    try:
        with watched(run):
            run.play(workers, Walk(run, prefix, choices, max_stale))
        if run.blocked:
            run.stop()
            if server is not None:
                server.post({"settle": True})  # no transaction of the abandoned run stays ongoing
    except BaseException:
        run.stop()
        raise
    if run.strays:
        raise strays_error(run)
    if run.problem:
        raise run.problem
    return run, choices


class Walk:
    """The explorer's moves in one run: the prefix's, then the first possible that does not sleep (Run.play makes
    them on the clients' threads)."""

    def __init__(self, run, prefix, choices, max_stale=None):
        self.run, self.prefix, self.choices, self.max_stale = run, prefix, choices, max_stale
        self.sleep, self.stale = [], 0  # stale: the reads given an older answer than the newest so far
        self.last = None  # (step, footprint, sleep entries as they stood before it) of the move made last

    def next(self):
        """Make moves until one lets a client run: its name; None once no client is held and nothing is on its way
        (the order has ended), or when every possible move sleeps (run.blocked: a behaviour already run)."""
        run = self.run
        while True:
            if self.last is not None:
                self.after(*self.last)
            run.deliver_unwatched()
            if not run.pending:
                return None
            chosen, tried = choose(run, self.prefix, self.choices, self.sleep,
                                   newest_only=self.max_stale is not None and self.stale >= self.max_stale)
            if chosen is None:
                run.blocked = True
                return None
            step, footprint = transition(chosen), run.footprint(chosen)
            sleeping = [(entry, every, run.footprint(entry, every)) for entry, every in self.sleep + tried
                        if transition(entry) != step]  # each as it stands now, before the move
            made, going = run.make(chosen, footprint)
            self.stale += parse_move(chosen)[1] == "~"
            self.last = (made, footprint, sleeping)
            if going is not None:
                return going

    def after(self, made, footprint, sleeping):
        """Once the clients have settled after a move: the sleep set and footprint it leaves."""
        self.last = None
        self.run.settled(made)
        if footprint.writes and not footprint.fault and getattr(made, "answer", "OK") != "OK":
            footprint = replace(footprint, writes=False)  # refused or cancelled: it only read its items
        self.sleep = wake(sleeping, footprint)
        self.run.prints.append(footprint)


def choose(run, prefix, choices, sleep, newest_only=False):
    """The next move (prefix's while it lasts) among those possible that do not sleep, and the sleep entries of the
    siblings tried before it; (None, []) when every possible move sleeps. newest_only: a read's older answers are
    not possible."""
    possible = [move for move in worth_trying(run.moves(answers=False)) if not asleep(sleep, move)]
    if not possible:
        return None, []
    chosen = decide(tuple(possible), prefix, choices)
    tried = [(move, True) for move in possible[:possible.index(chosen)]]
    if chosen in run.held or batch_item(chosen) is not None:
        answers = [move for move in run.answers(chosen)
                   if not asleep(sleep, move, chosen) and not (newest_only and parse_move(move)[1] == "~")]
        if not answers:
            return None, []
        chosen = decide(tuple(answers), prefix, choices)
        tried += [(move, False) for move in answers[:answers.index(chosen)]]
    return chosen, tried


def batch_item(move):
    """The place of the BatchGetItem item a move reads ("alice@1" and "alice@1~2": 1), or None."""
    name, sign, place = move.rpartition("~")
    base = name if sign and place.isdigit() else move
    _, sign, item = base.rpartition("@")
    return int(item) if sign and item.isdigit() else None


def worth_trying(moves):
    """The moves the explorer tries now, of those possible: when they are all items of one client's transaction (or
    batch) to make visible, or of its BatchGetItem to read, they commute and nothing else can happen until one is
    made, so only the lowest is tried (the sleep sets see to the rest: reduction.py)."""
    parsed = [item_move(move) for move in moves]
    if len({(name, kind) for name, kind, _ in parsed}) == 1 and parsed[0][1] in ("+", "@"):
        return [moves[min(range(len(moves)), key=lambda place: parsed[place][2])]]
    return list(moves)


def transition(move):
    """The request or item a move makes: ("alice", "", 0) for any answer or fault of her held request, ("alice", "+", 1)
    for item 1 of her transaction made visible, ("alice", "@", 1) for item 1 of her BatchGetItem read."""
    name, kind, place = item_move(move)
    return (name, kind, place) if kind in ("+", "@", "#") else (name, "", 0)


def item_move(move):
    """(client, kind, place) of a move as parse_move has it, but ("alice", "@", 1) for any answer to item 1 of her
    BatchGetItem: which item a move reads, not which answer it gets."""
    item = batch_item(move)
    return (parse_move(move)[0], "@", item) if item is not None else parse_move(move)


def decide(enabled, prefix, choices):
    """The move to make among `enabled`: the prefix's while it lasts (it must offer the same moves), else the first."""
    if len(choices) < len(prefix):
        chosen, expected = prefix[len(choices)]
        if enabled != expected:
            raise ExplorationError(not_repeatable(choices, expected, enabled))
    else:
        chosen = enabled[0]
    choices.append((chosen, enabled))
    return chosen


def not_repeatable(choices, expected, enabled):
    """Why a schedule could not be replayed: the scenario did not behave the same way twice."""
    done = " -> ".join(name for name, _ in choices) or "the start"
    return (f"The scenario did not repeat itself: after {done}, the clients with a request to send were "
            f"{', '.join(expected) or 'nobody'} the first time and {', '.join(enabled) or 'nobody'} this time. Make "
            "reset() restore every item the clients read, and make each client depend only on what DynamoDB answers "
            "(not on the clock, randomness or shared variables).")


def next_prefix(choices):
    """The next schedule of the depth-first search: change the deepest choice that has an untried sibling."""
    for depth in range(len(choices) - 1, -1, -1):
        chosen, enabled = choices[depth]
        later = enabled[enabled.index(chosen) + 1:]
        if later:
            return choices[:depth] + [(later[0], enabled)]
    return None


def too_many(max_schedules, first_run):
    """The ValueError for a scenario with more orders than max_schedules, with an estimate and the cure."""
    counts = {}
    for request in first_run.steps:
        name = "records entering streams" if isinstance(request, Arrival) else request.client
        counts[name] = counts.get(name, 0) + 1
    estimate = factorial(sum(counts.values())) // prod(factorial(n) for n in counts.values())
    per_client = ", ".join(f"{name} {n}" for name, n in counts.items())
    return TooManyOrders(
        f"This scenario has more than {max_schedules:,} possible orders (about {estimate:,} if every client always "
        f"made as many requests as in the first order: {per_client}). Use fewer clients or fewer requests per "
        "client (3 clients of 2 requests each have 90 orders; 3 of 3 have 1,680), or pass a larger max_schedules (or "
        "max_stale=1, for only the orders in which at most one read gets an older answer than the newest).")


def explore(clients, reset, check, *, max_schedules=MAX_SCHEDULES, lab=None, timeout=CLIENT_TIMEOUT,
            consistency=DEFAULT_CONSISTENCY, faults=(), max_stale=None):
    """Run every order in which the clients' requests can reach DynamoDB; one row per schedule.

    consistency="dynamodb" (on the lab server) also runs every answer DynamoDB's consistency allows each
    eventually consistent or index read, and every order in which a transaction's items become visible;
    consistency="strong" answers every read as if strongly consistent and applies each transaction at once.
    faults: ("lost_response", "crash") or either, to explore those faults too (see the module docstring).
    max_stale: explore only the orders in which at most this many reads get an older answer than the newest the
    model allows ("alice~1"), as CHESS bounds its preemptions: most mistakes show with one stale answer, and a
    scenario with too many orders may have few enough with one. Orders that differ only by commuting moves give
    their reads the same answers, so the bound holds for a behaviour, whichever of its orders is run.

    clients: {name: function of no arguments}; every request sent on its thread, through any DynamoDB client built in
    the kernel (the module docstring says which), is a step.
    reset(): restores the starting state before each schedule. check(results) -> True when the invariant
    holds, given {name: what the client returned, or the exception it raised}. reset and check make
    requests freely: they are not steps. Nothing is printed (see `replay` for one schedule's transcript).
    Columns: schedule, steps, requests, answers ("OK" or the error code DynamoDB answered each step with),
    replies (what each answer said, with a cancelled transaction's reasons), results, ok, write units and those
    on refused writes (what the order's requests cost, from the lab server's meter; None elsewhere), and
    doomed_at (see `doomed_steps`).
    """
    check_clients(clients)
    check_faults(faults)
    lab = lab or connect(quiet=True)
    server = model_server(lab, consistency)
    install_hold(lab.client)
    rows, prints, prefix, first, keys = [], [], [], None, Keys(lab.client)
    watch, seen = False, STREAM_REQUESTS["seen"]
    with exclusive(), trace.tracing(False), working(clients) as workers, modelled(server):
        new_session()
        while prefix is not None:
            if len(rows) == max_schedules:
                raise too_many(max_schedules, first)
            run, choices = run_schedule(clients, reset, prefix, timeout, workers, lab, server, faults, keys, watch,
                                        max_stale)
            if not watch and STREAM_REQUESTS["seen"] != seen:  # a client reads a stream: start over, watching them
                watch, rows, prints, prefix, first = True, [], [], [], None
                continue
            prefix = next_prefix(choices)
            if run.blocked:
                continue
            first = first or run
            prints.append(run.prints)
            results = {name: run.results[name] for name in clients}
            rows.append({"schedule": tuple(run.taken),
                         "steps": tuple(request.label for request in run.steps),
                         "requests": tuple(request.summary for request in run.steps),
                         "answers": tuple(request.answer for request in run.steps),
                         "replies": tuple(request.reply for request in run.steps),
                         "results": results, "ok": bool(check(results)),
                         "write units": run.cost and run.cost[0], "on refused writes": run.cost and run.cost[1]})
    frame = pd.DataFrame(rows, columns=["schedule", "steps", "requests", "answers", "replies", "results", "ok",
                                        "write units", "on refused writes"])
    return frame.assign(doomed_at=doomed_steps(frame, prints))


def new_session():
    """Note that an exploration or a step-through starts over: a panel started before it must replay to go on."""
    LATEST["session"] += 1
    return LATEST["session"]


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


def swaps(first, second):
    """True when two steps ((move, footprint) pairs) of an order may be swapped."""
    if first[1].client == second[1].client and not {transition(first[0])[1], transition(second[0])[1]} <= {"+", "@"}:
        return False
    return commute(first[1], second[1])


def replay(clients, reset, schedule, check=None, *, lab=None, timeout=CLIENT_TIMEOUT,
           consistency=DEFAULT_CONSISTENCY, faults=()):
    """Run one schedule with its transcript printed, each request under the client that sent it; return results.

    With `check`, returns (results, ok).
    """
    stepper = Stepper(clients, reset, check, lab=lab, timeout=timeout, consistency=consistency, faults=faults,
                      watch_streams=streams_in([schedule]))
    try:
        for name in schedule:
            request = stepper.step(name)
            with trace.TRACER.lock:
                trace.TRACER.flush()
                print(f"--- {request.client}{step_note(request)} ---\n{request.block}\n")
        if not stepper.done:
            raise ExplorationError(f"After {' -> '.join(schedule)}, clients {', '.join(stepper.enabled)} still "
                                   "hold requests: a schedule names every step until all clients are done.")
        return (stepper.results, stepper.ok) if check else stepper.results
    finally:
        stepper.close()


def streams_in(schedules):
    """True when a stream record's arrival is a move of some schedule: the exploration watched the streams."""
    return any(parse_move(move)[0] == "stream" for schedule in schedules for move in schedule)


class Stepper:
    """One schedule played by hand: step(name) releases that client's held request; reset() starts over."""

    def __init__(self, clients, reset, check=None, *, lab=None, timeout=CLIENT_TIMEOUT,
                 consistency=DEFAULT_CONSISTENCY, faults=(), watch_streams=True):
        check_clients(clients)
        check_faults(faults)
        self.faults, self.watch_streams = faults, watch_streams
        self.clients, self.reset_state, self.check, self.timeout = clients, reset, check, timeout
        self.lab = lab or connect(quiet=True)
        self.server = model_server(self.lab, consistency)
        install_hold(self.lab.client)
        self.run, self.workers, self.session = None, None, None
        self.reset()

    def reset(self):
        """Stop the current schedule, restore the starting state and hold every client at its first request."""
        self.close()
        self.workers = Workers(self.clients)
        self.session = new_session()
        with trace.tracing(False), self.turn():
            if self.server is not None:
                self.server.explore()
            start_state(self.reset_state, self.server)
            self.run = Run(self.clients, self.timeout, self.server, self.faults, keys=Keys(self.lab.client),
                           watch_streams=self.watch_streams)
            try:
                with watched(self.run):
                    self.run.start(self.workers)
                self.run.deliver_unwatched()
                if self.run.strays:
                    raise strays_error(self.run)
                if self.run.problem:
                    raise self.run.problem
            except BaseException:
                self.run.stop()
                raise

    @contextmanager
    def turn(self):
        """The lab server paused when the block ends, so that a request sent between steps with a consistency knob on
        (a race as weak as DynamoDB) meets the copies as the knobs make them, not this panel's exploration."""
        try:
            yield
        finally:
            if self.server is not None and self.session == LATEST["session"]:
                self.server.pause()

    def step(self, move):
        """Make one move ("alice", "alice~1", "alice+0": see the module docstring) and wait until every client is
        held again or done; return the step."""
        with trace.tracing(False), self.turn():
            self.resume()
            name, kind, _ = parse_move(move)
            if name not in self.clients and kind != "#":
                raise ValueError(f"No client named {name!r}; the clients are {', '.join(self.clients)}.")
            if name not in self.run.held and kind != "#":
                state = "has finished" if name in self.run.results else "holds no request"
                raise ValueError(f"{name} {state}; clients with a request to send: "
                                 f"{', '.join(self.enabled) or 'none'}.")
            possible = self.run.moves()
            if move not in possible:
                raise ValueError(f"{move!r} is not a move now; the moves are {', '.join(possible)}.")
            try:
                with watched(self.run):
                    made = self.run.release(move)
                self.run.deliver_unwatched()
                if self.run.strays:
                    raise strays_error(self.run)
                if self.run.problem:
                    raise self.run.problem
            except BaseException:
                self.run.stop()
                raise
            return made

    def observe(self, function):
        """function() (a panel's view of the tables) with the lab server where this panel's steps left it."""
        with trace.tracing(False), self.turn():
            self.resume()
            return function()

    def resume(self):
        """If another exploration or panel has used the tables and the lab server since this one started, or a request
        as weak as DynamoDB came while it was paused, start over and make the moves made so far again (the scenario
        repeats itself), so play goes on where it was."""
        if self.session == LATEST["session"] and (self.server is None or self.server.resume()):
            return
        taken = list(self.run.taken)
        self.reset()
        for move in taken:
            self.step(move)
        if self.server is not None:
            self.server.resume()  # each step paused it again

    def replay(self, schedule):
        """Start over and play `schedule` (a sequence of client names) step by step; streams are watched as they were
        where it was explored."""
        self.watch_streams = streams_in([schedule])
        self.reset()
        for name in schedule:
            self.step(name)

    @property
    def held(self):
        """{client: the request it is about to send}, for the clients holding one."""
        return {name: self.run.held[name] for name in self.run.enabled}

    def moves(self):
        """{move: what it does}, for every move possible now (the step-through panel's buttons)."""
        with trace.tracing(False), self.turn():
            self.resume()
            possible = self.run.moves()
        described = {}
        for move in possible:
            name, kind, place = parse_move(move)
            if kind == "#":
                described[move] = self.run.event(move)["label"]
                continue
            if kind == "?":
                described[move] = f"{self.run.held[name].what}: {self.run.held[name].options[place]}"
                continue
            held, item = self.run.held[name], batch_item(move)
            if item is not None:
                choices = held.item_choices[item]
                answered = f", answered {choices[place if kind == '~' else 0]['label']}" if len(choices) > 1 else ""
                described[move] = f"{held.operation}: read {held.items[item]}{answered}"
            elif kind == "+":
                described[move] = held.summary if held.replicating else (
                    f"{held.request.operation}: make {held.items[place]} visible")
            elif kind == "!":
                described[move] = f"{held.summary}, {FAULT_WORDS[place]}"
            elif held.choices and len(held.choices) > 1:
                described[move] = f"{held.summary}, answered {held.choices[place]['label']}"
            else:
                described[move] = held.summary
        return described

    @property
    def enabled(self):
        """Clients holding a request, in the scenario's order."""
        return self.run.enabled

    @property
    def steps(self):
        """The requests released so far, in order."""
        return list(self.run.steps)

    @property
    def done(self):
        """True when every client has finished."""
        return len(self.run.results) == len(self.clients)

    @property
    def results(self):
        """{client: what it returned or raised}, for the clients that have finished."""
        return {name: self.run.results[name] for name in self.clients if name in self.run.results}

    @property
    def ok(self):
        """check(results) once every client is done (None before, or without a check)."""
        if not self.done or self.check is None:
            return None
        with trace.tracing(False):
            return bool(self.check(self.results))

    def close(self):
        """Release the held client threads and let them end; the copies agree again."""
        if self.run is not None:
            self.run.stop()
            self.workers.close()
            if self.server is not None:
                self.server.sampled()


def describe(result):
    """A client's result in a few words: the value it returned, the error code it raised, or its crash."""
    if isinstance(result, Crashed):
        return str(result)
    if isinstance(result, ClientError):
        return result.response["Error"]["Code"]
    if isinstance(result, Exception):
        return f"{type(result).__name__}: {result}"
    return repr(trace.plain(result))


def numbered(table, noun):
    """`table` with its rows numbered from 1 under `noun` ("order"), as plots.orders names its rows."""
    return table.set_axis(pd.RangeIndex(1, len(table) + 1, name=noun))


def outcome_counts(frame, outcome):
    """How many schedules end in each outcome(results), as a DataFrame with the verdict beside it; its rows are
    numbered as plots.orders numbers outcomes when it draws one row per outcome."""
    outcomes = frame["results"].map(outcome)
    counts = frame.assign(outcome=outcomes).groupby(["outcome", "ok"], sort=False).size()
    return numbered(counts.rename("orders").reset_index(), "outcome")


def order_table(frame, **columns):
    """One row per order, numbered as plots.orders numbers them: its steps in full, then each of `columns`
    (name=function of the order's results), then the verdict."""
    table = pd.DataFrame({"steps": frame["steps"].map(" → ".join),
                          **{name: frame["results"].map(column) for name, column in columns.items()},
                          "ok": frame["ok"]})
    return numbered(table, "order")
