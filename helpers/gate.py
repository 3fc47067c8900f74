"""The gate that releases concurrent calls' first requests together (helpers.checks.run_at_once).

Its hooks sit on every boto3 client the lab builds (helpers.backend), and on any other client a run's calls are
given (helpers.checks.install_gate). They do nothing outside a run: only a thread that run_at_once started carries a
gate.
"""
import threading
import time

GATE_ID = "lab-gate"
GATED = threading.local()  # on a run_at_once thread: .gate (its Gate) and .call (its call's number)


class Gate:
    """Holds each call's first request until every call of the run has one ready (or has finished without one), so
    the first requests leave together: a Barrier before the call would release threads that then take turns on the
    GIL preparing their requests, spreading them over many requests' time."""

    def __init__(self, n):
        self.lock = threading.Lock()
        self.waiting = n
        self.open = threading.Event()
        self.arrived, self.sent, self.answered = set(), {}, {}

    def arrive(self, call):
        """Count `call` as ready (once); the last to arrive opens the gate."""
        with self.lock:
            if call in self.arrived:
                return
            self.arrived.add(call)
            self.waiting -= 1
            if not self.waiting:
                self.open.set()

    def hold(self, call):
        """Before `call`'s first request: wait until every call is ready, then note when the request left."""
        if call in self.sent:
            return
        self.arrive(call)
        self.open.wait(GATE_TIMEOUT)
        self.sent[call] = time.perf_counter()

    def answer(self, call):
        """After an answer: note when `call`'s first request was answered."""
        self.answered.setdefault(call, time.perf_counter())


GATE_TIMEOUT = 30


def hold_first_request(**_):
    """botocore before-send hook: on a run_at_once thread, hold the call's first request at its gate."""
    gate = getattr(GATED, "gate", None)
    if gate is not None:
        gate.hold(GATED.call)


def note_first_answer(**_):
    """botocore needs-retry hook (after each attempt): note when the call's first request was answered."""
    gate = getattr(GATED, "gate", None)
    if gate is not None:
        gate.answer(GATED.call)


def attach(client):
    """Register the gate's hooks on a boto3 DynamoDB client (once; they act only on a run's threads)."""
    client.meta.events.register("before-send.dynamodb", hold_first_request, unique_id=f"{GATE_ID}-hold")
    client.meta.events.register("needs-retry.dynamodb", note_first_answer, unique_id=f"{GATE_ID}-answer")
