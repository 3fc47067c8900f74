"""Teaching knobs: faults real DynamoDB has and a local server hides, each off until a notebook turns it on.

- latency: every request waits before it is applied (outside the engine lock, so requests still interleave).
- gsi_lag: Query/Scan on a global secondary index sees base-table writes only after a delay, as DynamoDB's
  asynchronous index updates can; base-table reads stay strongly consistent.
- lose_response: a matching request is applied, then its connection is dropped before the response, so the
  SDK retries it exactly as it would after a network failure in production.
- transaction_conflict: the next N TransactWriteItems (those whose body holds conflict_matching, if given) are
  cancelled, as DynamoDB cancels one whose items another transaction is writing: TransactionCanceledException,
  reason TransactionConflict for each contested action (those holding conflict_matching, else every action),
  and nothing applied. SDKs do not retry a cancelled transaction, so the caller's own retry branch runs.

State is changed only under the engine lock (Engine.handle, Engine.knob_request); the fast path of
Engine.handle reads `on` and `latency` without it, so switching a knob takes effect from the next request.
"""
import copy
import json
import random
import time
from collections import defaultdict

from moto.dynamodb.exceptions import TransactionCanceledException
from moto.dynamodb.models import dynamodb_backends
from moto.dynamodb.models.dynamo_type import DynamoType

MAX_SECONDS = 10
MAX_LOST = 100
CONFLICT = ("TransactionConflict", "Transaction is ongoing for the item", None)
OPERATIONS = ("PutItem", "UpdateItem", "DeleteItem", "GetItem", "Query", "Scan", "BatchWriteItem",
              "BatchGetItem", "TransactWriteItems", "TransactGetItems")
NAMES = ("latency", "gsi_lag", "lose_response", "lose_count", "lose_matching", "transaction_conflict",
         "conflict_matching")


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
    """The knobs of one Engine, and the index history that gsi_lag needs."""

    def __init__(self):
        self.on = False
        self.latency = None
        self.gsi_lag = None
        self.lose = None
        self.conflict = None
        self.responses_lost = 0
        self.conflicts_made = 0
        self.pending = {}

    def state(self):
        """The knobs as JSON, plus how many responses have been lost so far."""
        lose = self.lose or {}
        return {"latency": list(self.latency) if self.latency else None,
                "gsi_lag": list(self.gsi_lag) if self.gsi_lag else None,
                "lose_response": lose.get("operation"), "lose_count": lose.get("count", 0),
                "lose_matching": lose.get("matching"), "responses_lost": self.responses_lost,
                "transaction_conflict": (self.conflict or {}).get("count", 0),
                "conflict_matching": (self.conflict or {}).get("matching"), "conflicts_made": self.conflicts_made}

    def describe(self):
        """'latency 0.05 s, gsi_lag 0.5 s, lose_response next 1 PutItem', or '' when all are off."""
        parts = []
        if self.latency:
            parts.append(f"latency {seconds_text(self.latency)}")
        if self.gsi_lag:
            parts.append(f"gsi_lag {seconds_text(self.gsi_lag)}")
        if self.lose:
            matching = f" matching {self.lose['matching']!r}" if self.lose["matching"] else ""
            parts.append(f"lose_response next {self.lose['count']} {self.lose['operation']}{matching}")
        if self.conflict:
            matching = f" matching {self.conflict['matching']!r}" if self.conflict["matching"] else ""
            parts.append(f"transaction_conflict next {self.conflict['count']} TransactWriteItems{matching}")
        return ", ".join(parts)

    def update(self, values):
        """Set the named knobs (others keep their value); refuse the whole update if any value is bad."""
        unknown = sorted(set(values) - set(NAMES))
        if unknown:
            raise KnobError(f"Unknown knob {unknown[0]!r}; the knobs are latency, gsi_lag, lose_response "
                            "(with lose_count and lose_matching) and transaction_conflict (with conflict_matching).")
        latency = seconds_range("latency", values["latency"]) if "latency" in values else self.latency
        gsi_lag = seconds_range("gsi_lag", values["gsi_lag"]) if "gsi_lag" in values else self.gsi_lag
        lose = self.losing(values) if set(values) & {"lose_response", "lose_count", "lose_matching"} else self.lose
        conflict = (conflicting(values, self.conflict) if set(values) & {"transaction_conflict", "conflict_matching"}
                    else self.conflict)
        self.latency, self.gsi_lag, self.lose, self.conflict = latency, gsi_lag, lose, conflict
        if not gsi_lag:
            self.pending.clear()
        self.on = bool(latency or gsi_lag or lose or conflict)

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
            self.on = bool(self.latency or self.gsi_lag or self.lose)
        self.conflicts_made += 1
        matching = conflict["matching"]
        reasons = [CONFLICT if not matching or matching in json.dumps(action) else (None, None, None)
                   for action in params.get("TransactItems", [])]
        return 400, json.loads(TransactionCanceledException(reasons).description)

    def wait(self):
        """Sleep for the latency knob (called outside the engine lock)."""
        if self.latency:
            time.sleep(random.uniform(*self.latency))

    def around(self, target, params, body, apply):
        """Run apply() with the lagged index view and write history in place; None when the response is lost."""
        if target in ("DeleteTable", "CreateTable"):
            self.pending.pop(params.get("TableName"), None)
        before = self.old_images(target, params) if self.gsi_lag else ()
        table = self.lagged_table(target, params) if self.gsi_lag else None
        if table is None:
            answer = apply()
        else:
            current = table.items
            table.items = as_of(table, self.pending[table.name])
            try:
                answer = apply()
            finally:
                table.items = current
        if before and answer[0] == 200:
            self.remember(before)
        return None if self.loses(target, body) else answer

    def old_images(self, target, params):
        """[(table name, key, item before this write)] for every item a write may change in an indexed table."""
        images = []
        for name, attributes in written_keys(target, params):
            table = find_table(name)
            key = key_of(table, attributes) if table is not None and table.global_indexes else None
            if key is not None:
                images.append((name, key, copy.deepcopy(table.get_item(*key))))
        return images

    def remember(self, images):
        """Record applied writes: index reads keep seeing the old image until each write's lag has passed."""
        now = time.monotonic()
        for name, key, old in images:
            history = self.pending.setdefault(name, {}).setdefault(key, [])
            history[:] = [entry for entry in history if entry[0] > now]
            visible_at = now + random.uniform(*self.gsi_lag)
            history.append((max(visible_at, history[-1][0]) if history else visible_at, old))

    def lagged_table(self, target, params):
        """The moto table whose GSI this request reads while some of its writes are still in flight, or None."""
        if target not in ("Query", "Scan") or "IndexName" not in params:
            return None
        name = params.get("TableName")
        history = self.pending.get(name)
        if not history:
            return None
        now = time.monotonic()
        for key in list(history):
            history[key] = [entry for entry in history[key] if entry[0] > now]
            if not history[key]:
                del history[key]
        table = find_table(name)
        if not history or table is None or params["IndexName"] not in {i.name for i in table.global_indexes}:
            return None
        return table

    def loses(self, target, body):
        """True when this request's response is to be dropped (and count it)."""
        lose = self.lose
        if not lose or target != lose["operation"] or (lose["matching"] and lose["matching"].encode() not in body):
            return False
        lose["count"] -= 1
        if not lose["count"]:
            self.lose = None
            self.on = bool(self.latency or self.gsi_lag)
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


def as_of(table, history):
    """A copy of table.items in which each key still in flight holds the image before its oldest pending write."""
    view = defaultdict(dict, table.items)
    for (hash_key, range_key), entries in history.items():
        old = entries[0][1]
        if table.has_range_key:
            items = dict(view.get(hash_key, {}))
            if old is None:
                items.pop(range_key, None)
            else:
                items[range_key] = old
            view[hash_key] = items
        elif old is None:
            view.pop(hash_key, None)
        else:
            view[hash_key] = old
    return view


def written_keys(target, params):
    """(table name, attributes holding the key) of every item a write request names."""
    if target == "PutItem":
        return [(params.get("TableName"), params.get("Item", {}))]
    if target in ("UpdateItem", "DeleteItem"):
        return [(params.get("TableName"), params.get("Key", {}))]
    if target == "BatchWriteItem":
        return [(name, request.get("PutRequest", {}).get("Item") or request.get("DeleteRequest", {}).get("Key", {}))
                for name, requests in params.get("RequestItems", {}).items() for request in requests]
    if target == "TransactWriteItems":
        return [(detail.get("TableName"), detail.get("Item") or detail.get("Key", {}))
                for action in params.get("TransactItems", []) for kind, detail in action.items()
                if kind in ("Put", "Update", "Delete")]
    return []


def key_of(table, attributes):
    """(hash, range) as moto keys its items, or None when the attributes lack part of the key."""
    try:
        hash_key = DynamoType(attributes[table.hash_key_attr])
        range_key = DynamoType(attributes[table.range_key_attr]) if table.has_range_key else None
    except (KeyError, TypeError, AttributeError, IndexError):
        return None
    return hash_key, range_key


def find_table(name):
    """moto's table called `name`, in whichever account and region holds it."""
    for regions in list(dynamodb_backends.values()):
        for backend in list(regions.values()):
            if name in backend.tables:
                return backend.tables[name]
    return None
