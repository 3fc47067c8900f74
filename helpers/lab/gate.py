"""The gate that releases concurrent calls' first requests together (helpers.checks.run_at_once).

Its hooks sit on every boto3 client the lab builds (helpers.backend), and on any other client a run's calls are
given (helpers.checks.install_gate). They do nothing outside a run: only a thread that run_at_once started carries a
gate. On the lab server the gate also marks each first request as one of a group, which the server lets in only
once the whole group has arrived (helpers/labserver/protocol/together.py): threads cannot send at one instant, the
server can let their requests in at one. The gate also notes whether each call's last answer was a transaction
conflict, so that a checker can tell a call that gave up on a conflict from one that failed.
"""
import threading
import time
import uuid

GATE_ID = "lab-gate"
TOGETHER_HEADER = "X-Lab-Together"  # read by helpers/labserver/protocol/together.py (not imported: it loads moto)
LET_IN_HEADER = "X-Lab-Let-In"

GATED = threading.local()  # on a run_at_once thread: .gate (its Gate) and .call (its call's number)


class Gate:
    """Holds each call's first request until every call of the run has one ready (or has finished without one), so
    the first requests leave together: a Barrier before the call would release threads that then take turns on the
    GIL preparing their requests, spreading them over many requests' time."""

    def __init__(self, n, together_at=None):
        """n calls; together_at: the lab server's endpoint, to have it let the first requests in together."""
        self.lock = threading.Lock()
        self.waiting = n
        self.open = threading.Event()
        self.arrived, self.sent, self.answered, self.let_in = set(), {}, {}, {}
        self.last_was_conflict = {}
        self.together_at, self.group, self.holding = together_at, uuid.uuid4().hex, 0

    def arrive(self, call):
        """Count `call` as ready (once); the last to arrive opens the gate."""
        with self.lock:
            if call in self.arrived:
                return
            self.arrived.add(call)
            self.waiting -= 1
            if not self.waiting:
                self.open.set()

    def hold(self, call, request):
        """Before `call`'s first request: wait until every call is ready, mark the request as one of the group
        for the lab server, then note when it left."""
        if call in self.sent:
            return
        with self.lock:
            self.holding += 1
        self.arrive(call)
        self.open.wait(GATE_TIMEOUT)
        if self.together_at and request is not None and request.url.startswith(self.together_at):
            request.headers[TOGETHER_HEADER] = f"{self.group} {self.holding}"
        self.sent[call] = time.perf_counter()

    def answer(self, call, response):
        """After an answer: note whether it was a transaction conflict, when `call`'s first request was answered,
        and when the lab server let it in."""
        self.last_was_conflict[call] = response is not None and is_conflict(response[1])
        if call in self.answered:
            return
        self.answered[call] = time.perf_counter()
        let_in = response[0].headers.get(LET_IN_HEADER) if response is not None else None
        if let_in:
            self.let_in[call] = float(let_in)


GATE_TIMEOUT = 30


def is_conflict(parsed):
    """True for DynamoDB's answer that another transaction held an item: TransactionConflictException, or a
    cancellation with a TransactionConflict reason."""
    reasons = [reason.get("Code") for reason in parsed.get("CancellationReasons") or ()]
    return parsed.get("Error", {}).get("Code") == "TransactionConflictException" or "TransactionConflict" in reasons


def hold_first_request(request=None, **_):
    """botocore before-send hook: on a run_at_once thread, hold the call's first request at its gate."""
    gate = getattr(GATED, "gate", None)
    if gate is not None:
        gate.hold(GATED.call, request)


def note_answer(response=None, **_):
    """botocore needs-retry hook (after each attempt): note the answer at the call's gate."""
    gate = getattr(GATED, "gate", None)
    if gate is not None:
        gate.answer(GATED.call, response)


def attach(client):
    """Register the gate's hooks on a boto3 DynamoDB client (once; they act only on a run's threads)."""
    client.meta.events.register("before-send.dynamodb", hold_first_request, unique_id=f"{GATE_ID}-hold")
    client.meta.events.register("needs-retry.dynamodb", note_answer, unique_id=f"{GATE_ID}-answer")
