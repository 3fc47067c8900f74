"""Teaching knobs: faults real DynamoDB has and a local server hides, each off until a notebook turns it on.

- latency: every request waits before it is applied (outside the engine lock, so requests still interleave).
- stale_reads: each item's two follower copies take each write that many seconds late, and an eventually
  consistent read (DynamoDB's default) is answered by a random copy: the leader or a follower (consistency.py).
- gsi_lag: each global secondary index's copy takes each write that many seconds late.
- transaction_window: a TransactWriteItems stays ongoing that long, its items becoming visible across the window,
  so concurrent requests on its items meet TransactionConflictException or a TransactionConflict cancellation; a
  BatchWriteItem's puts and deletes take effect one at a time across it (the batch is not a unit).
- lose_response: a matching request is applied, then its connection is dropped before the response, so the
  SDK retries it exactly as it would after a network failure in production.
- transaction_conflict: the next N TransactWriteItems (those whose body holds conflict_matching, if given) are
  cancelled, as DynamoDB cancels one whose items another transaction is writing: TransactionCanceledException,
  reason TransactionConflict for each contested action (those holding conflict_matching, else every action),
  and nothing applied. SDKs do not retry a cancelled transaction, so the caller's own retry branch runs.
- partition_limits: {"write": units, "read": units} per partition key value and second (DynamoDB's are 1000 and
  3000); a request on a key value that has used them is throttled as DynamoDB throttles it (accounting/metering.py).
- stream_lag: each stream record enters its stream that many seconds after its write, never before an earlier
  record of the same item, and takes its sequence number then: a transaction's records enter one by one, and
  another write's may come between them (replication/streamlog.py).
- replication_lag: each write to a replica of an MREC global table reaches each other replica that many seconds late,
  item by item, last writer winning (replication/globaltables.py); off, it reaches them before its answer. A write to a
  replica of an MRSC global table is in flight that long, its answer waiting, and another Region's write to its item
  meets ReplicatedWriteConflictException (consistency.py). Named in `describe` only while the server holds a global
  table: without one it changes nothing.

State is changed only under the engine lock (Engine.handle, Engine.knob_request); the fast path of
Engine.handle reads `on` and the model's `active` without it, so switching a knob takes effect from the next request.
"""
import json
import random
import time

from moto.dynamodb.exceptions import TransactionCanceledException

from ..replication import streamlog
from ..replication.regions import find_table  # noqa: F401  (the lab's modules find tables through the knobs' module)

MAX_SECONDS = 10
MAX_LOST = 100
CONFLICT = ("TransactionConflict", "Transaction is ongoing for the item", None)
OPERATIONS = ("PutItem", "UpdateItem", "DeleteItem", "GetItem", "Query", "Scan", "BatchWriteItem",
              "BatchGetItem", "TransactWriteItems", "TransactGetItems")
LAGS = ("stale_reads", "gsi_lag", "transaction_window")
NAMES = ("latency", *LAGS, "lose_response", "lose_count", "lose_matching", "transaction_conflict",
         "conflict_matching", "partition_limits", "stream_lag", "replication_lag")
KNOBS_OFF = {"latency": None, **{name: None for name in LAGS}, "lose_response": None, "transaction_conflict": None,
             "partition_limits": None, "stream_lag": None, "replication_lag": None}
LIMIT_KINDS = ("write", "read")
MAX_LIMIT = 100000


class KnobError(ValueError):
    """A knob setting the server refuses; the message says what is allowed."""


def knob_values(body):
    """The JSON object of a POST to /lab/knobs."""
    try:
        values = json.loads(body or b"{}")
    except ValueError:
        values = None
    if not isinstance(values, dict):
        raise KnobError('POST /lab/knobs takes a JSON object, e.g. {"gsi_lag": 0.5}')
    return values


def limits_setting(value):
    """partition_limits as {"write": units, "read": units} (either may be left out), or None (off)."""
    if value is None or value == {}:
        return None
    numbers = isinstance(value, dict) and all(
        isinstance(units, (int, float)) and not isinstance(units, bool) and 0 < units <= MAX_LIMIT
        for units in value.values())
    if not numbers or not set(value) <= set(LIMIT_KINDS):
        raise KnobError('partition_limits must be an object such as {"write": 1000, "read": 3000} (units per partition '
                        f'key value per second, each above 0 and at most {MAX_LIMIT}), or null for off; got {value!r}')
    return {kind: float(units) for kind, units in value.items()}


def seconds_range(name, value):
    """None (off) or (low, high) seconds, from 0/None, a number of seconds, or a [low, high] pair."""
    pair = value if isinstance(value, (list, tuple)) else (value, value)
    numbers = len(pair) == 2 and all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in pair)
    if value is None:
        return None
    if not numbers or not 0 <= pair[0] <= pair[1] <= MAX_SECONDS:
        raise KnobError(f"{name} must be a number of seconds from 0 to {MAX_SECONDS} (0 turns it off), or a "
                        f"[low, high] pair in that range for a random delay each time; got {value!r}")
    return None if pair[1] == 0 else (float(pair[0]), float(pair[1]))


def seconds_text(span):
    """'0.5 s' or '0.2-0.8 s'."""
    low, high = span
    return f"{low:g} s" if low == high else f"{low:g}-{high:g} s"


class Knobs:
    """The knobs of one Engine; the lags (stale_reads, gsi_lag, transaction_window) are the consistency model's,
    replication_lag the global tables' replication's."""

    def __init__(self, model, meter, replication):
        self.model = model
        self.meter = meter
        self.replication = replication
        self.on = False
        self.latency = None
        self.lose = None
        self.conflict = None
        self.responses_lost = 0
        self.conflicts_made = 0

    def state(self):
        """The knobs as JSON, plus how many responses have been lost so far."""
        lose = self.lose or {}
        return {"latency": list(self.latency) if self.latency else None,
                **{name: list(getattr(self.model, name)) if getattr(self.model, name) else None for name in LAGS},
                "lose_response": lose.get("operation"), "lose_count": lose.get("count", 0),
                "lose_matching": lose.get("matching"), "responses_lost": self.responses_lost,
                "transaction_conflict": (self.conflict or {}).get("count", 0),
                "conflict_matching": (self.conflict or {}).get("matching"), "conflicts_made": self.conflicts_made,
                "partition_limits": self.meter.limits,
                "stream_lag": list(streamlog.lag) if streamlog.lag else None,
                "replication_lag": list(self.replication.lag) if self.replication.lag else None,
                "global_tables": self.replication.global_tables()}

    def describe(self):
        """'latency 0.05 s, gsi_lag 0.5 s, lose_response next 1 PutItem', or '' when all are off."""
        parts = []
        if self.latency:
            parts.append(f"latency {seconds_text(self.latency)}")
        for name in LAGS:
            if getattr(self.model, name):
                parts.append(f"{name} {seconds_text(getattr(self.model, name))}")
        if self.lose:
            matching = f" matching {self.lose['matching']!r}" if self.lose["matching"] else ""
            parts.append(f"lose_response next {self.lose['count']} {self.lose['operation']}{matching}")
        if self.conflict:
            matching = f" matching {self.conflict['matching']!r}" if self.conflict["matching"] else ""
            parts.append(f"transaction_conflict next {self.conflict['count']} TransactWriteItems{matching}")
        if self.meter.limits:
            limits = ", ".join(f"{kind} {units:g}/s" for kind, units in self.meter.limits.items())
            parts.append(f"partition_limits {limits}")
        if streamlog.lag:
            parts.append(f"stream_lag {seconds_text(streamlog.lag)}")
        if self.replication.lag and self.replication.global_tables():
            parts.append(f"replication_lag {seconds_text(self.replication.lag)}")
        return ", ".join(parts)

    def update(self, values):
        """Set the named knobs (others keep their value); refuse the whole update if any value is bad."""
        unknown = sorted(set(values) - set(NAMES))
        if unknown:
            raise KnobError(f"Unknown knob {unknown[0]!r}; the knobs are latency, stale_reads, gsi_lag, "
                            "transaction_window, lose_response (with lose_count and lose_matching), "
                            "transaction_conflict (with conflict_matching), partition_limits, stream_lag and "
                            "replication_lag.")
        latency = seconds_range("latency", values["latency"]) if "latency" in values else self.latency
        lags = {name: seconds_range(name, values[name]) if name in values else getattr(self.model, name)
                for name in LAGS}
        lose = self.losing(values) if set(values) & {"lose_response", "lose_count", "lose_matching"} else self.lose
        conflict = (conflicting(values, self.conflict) if set(values) & {"transaction_conflict", "conflict_matching"}
                    else self.conflict)
        limits = limits_setting(values["partition_limits"]) if "partition_limits" in values else self.meter.limits
        stream_lag = seconds_range("stream_lag", values["stream_lag"]) if "stream_lag" in values else streamlog.lag
        replication_lag = (seconds_range("replication_lag", values["replication_lag"]) if "replication_lag" in values
                           else self.replication.lag)
        self.latency, self.lose, self.conflict = latency, lose, conflict
        for name, lag in lags.items():
            setattr(self.model, name, lag)
        self.model.catch_up()
        if limits != self.meter.limits:
            self.meter.limit(limits)
        streamlog.set_lag(stream_lag)
        self.replication.set_lag(replication_lag)
        self.on = self.any_on()

    def any_on(self):
        """Whether a knob Engine.handle reads on each request is on (the lags are the model's)."""
        return bool(self.latency or self.lose or self.conflict or self.meter.limits)

    def losing(self, values):
        """The lose_response setting from lose_response, lose_count (default 1) and lose_matching."""
        operation = values.get("lose_response", (self.lose or {}).get("operation"))
        count = values.get("lose_count", 1)
        matching = values.get("lose_matching")
        if operation is None:
            if "lose_count" in values or "lose_matching" in values:
                raise KnobError("lose_count and lose_matching need lose_response, e.g. lose_response='PutItem'.")
            return None
        if operation not in OPERATIONS:
            raise KnobError(f"lose_response must name a DynamoDB operation, one of {', '.join(OPERATIONS)}; "
                            f"got {operation!r}")
        if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_LOST:
            raise KnobError(f"lose_count must be a whole number from 1 to {MAX_LOST}; got {count!r}")
        if matching is not None and (not isinstance(matching, str) or not matching):
            raise KnobError(f"lose_matching must be a non-empty piece of the request's JSON body; got {matching!r}")
        return {"operation": operation, "count": count, "matching": matching}

    def cancelled(self, target, params, body):
        """(400, body) cancelling this TransactWriteItems with TransactionConflict when the knob says so, else None."""
        conflict = self.conflict
        if not conflict or target != "TransactWriteItems" or (
                conflict["matching"] and conflict["matching"].encode() not in body):
            return None
        conflict["count"] -= 1
        if not conflict["count"]:
            self.conflict = None
            self.on = self.any_on()
        self.conflicts_made += 1
        matching = conflict["matching"]
        reasons = [CONFLICT if not matching or matching in json.dumps(action) else (None, None, None)
                   for action in params.get("TransactItems", [])]
        return 400, json.loads(TransactionCanceledException(reasons).description)

    def wait(self):
        """Sleep for the latency knob (called outside the engine lock)."""
        if self.latency:
            time.sleep(random.uniform(*self.latency))

    def loses(self, target, body):
        """True when this request's response is to be dropped (and count it)."""
        lose = self.lose
        if not lose or target != lose["operation"] or (lose["matching"] and lose["matching"].encode() not in body):
            return False
        lose["count"] -= 1
        if not lose["count"]:
            self.lose = None
            self.on = self.any_on()
        self.responses_lost += 1
        return True


def conflicting(values, current):
    """The transaction_conflict setting from transaction_conflict (a count; 0 or None is off) and conflict_matching."""
    count = values.get("transaction_conflict", (current or {}).get("count"))
    matching = values.get("conflict_matching", (current or {}).get("matching"))
    if count is None or count == 0:
        if matching is not None:
            raise KnobError("conflict_matching needs transaction_conflict, e.g. transaction_conflict=1.")
        return None
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_LOST:
        raise KnobError(f"transaction_conflict must be a whole number from 0 (off) to {MAX_LOST}; got {count!r}")
    if matching is not None and (not isinstance(matching, str) or not matching):
        raise KnobError(f"conflict_matching must be a non-empty piece of the request's JSON body; got {matching!r}")
    return {"count": count, "matching": matching}
