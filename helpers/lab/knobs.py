"""Teaching knobs of the lab server, from a notebook: `set_knobs(lab, gsi_lag=0.5)` or `with knobs(lab, ...):`.

latency=0.05           every request waits 50 ms first (a number, or a [low, high] range for a random wait)
stale_reads=0.5        each item's two follower copies take each write 0.5 s late (or a [low, high] range per
                       write), and an eventually consistent read (the default) is answered by a random copy
gsi_lag=0.5            Query/Scan on a GSI sees base-table writes 0.5 s late (or a [low, high] range per write)
transaction_window=0.2 a TransactWriteItems stays ongoing 0.2 s, its items becoming visible across the window:
                       meanwhile a write to one of them gets TransactionConflictException; a BatchWriteItem's puts
                       and deletes take effect one at a time across it, and a write between lands first
lose_response="PutItem" the next PutItem is applied, then its response is lost, so the SDK retries it
                        (lose_count=N: the next N; lose_matching="text": only requests whose body contains it)
transaction_conflict=1  the next TransactWriteItems is cancelled with reason TransactionConflict and nothing is
                        applied, as when another transaction holds its items (conflict_matching="text": only
                        requests whose body contains it, and only the actions that contain it are contested)
partition_limits={"write": 20} a partition key value that has used 20 write units in the last second is throttled
                        (ThrottlingException), as DynamoDB throttles one past its 1,000 (reads: 3,000) a second
stream_lag=0.5         each stream record enters its stream 0.5 s after its write (or a [low, high] range per record),
                       never before an earlier record of the same item: a transaction's records enter one by one,
                       and another write's records may come between them
replication_lag=0.5     a write to a replica of an MREC global table reaches each other Region 0.5 s late (or a
                        [low, high] range per item and Region), item by item, the last writer winning by the write's
                        timestamp; off, it reaches every replica before it returns (stronger than DynamoDB). On an
                        MRSC global table a write is in flight that long before it returns, and another Region's
                        write to its item meanwhile meets ReplicatedWriteConflictException
0 or None turns a knob off. as_weak_as_dynamodb(lab) turns the five consistency knobs on at once. Only the lab
server has knobs: on DynamoDB Local or AWS they raise KnobsUnavailable, so notebooks check `lab.kind == "embedded"`
first.
"""
import json
import http.client
from contextlib import contextmanager, nullcontext

from . import labhttp
from .trace import TRACER

PATH = "/lab/knobs"
ANSWER_WITHIN = 30  # seconds, as the lab's DynamoDB client waits (helpers.backend.CLIENT_CONFIG)


class KnobsUnavailable(RuntimeError):
    """The backend has no teaching knobs (DynamoDB Local, real DynamoDB)."""


class ServerSilent(RuntimeError):
    """The kernel's own lab server gave no answer to a control request."""


def set_knobs(lab, quiet=False, **values):
    """Set the named knobs (the others stay as they are), print the banner, return all knobs' values."""
    knob_values = call(lab, "POST", values)["knobs"]
    if not quiet:
        announce(lab)
    return knob_values


AS_WEAK_AS_DYNAMODB = {"stale_reads": [0.01, 0.1], "gsi_lag": [0.1, 1.0], "transaction_window": [0.01, 0.05],
                       "stream_lag": [0.01, 0.1], "replication_lag": [0.1, 1.0]}
CONSISTENCY_KNOBS = tuple(AS_WEAK_AS_DYNAMODB)
STRONGER = {"stale_reads": "default reads are never stale",
            "transaction_window": "transactions never conflict, batch writes land whole", "gsi_lag": "indexes never lag",
            "replication_lag": "writes reach every Region's replica before they return"}
GLOBAL_ONLY = ("replication_lag",)  # named in the banner only while the server holds a global table


def as_weak_as_dynamodb(lab, on=True, quiet=False):
    """Turn on (or, with on=False, off) every weakness DynamoDB documents: default reads that may be stale,
    transactions that stay ongoing (and conflict), indexes that trail, stream records that enter their stream item by
    item, global tables' replicas that trail. AWS publishes no figures for most of these delays; the lab's choices are
    a follower 10-100 ms behind, an index 0.1-1 s behind (AWS re:Post: writes "propagate to a GSI within 1 second"), a
    transaction ongoing 10-50 ms, a stream record entering 10-100 ms after its write and a replica 0.1-1 s behind
    (Developer Guide, global tables: MREC changes are "typically replicated to all other replicas within one second
    or less")."""
    values = AS_WEAK_AS_DYNAMODB if on else dict.fromkeys(CONSISTENCY_KNOBS)
    return set_knobs(lab, quiet=quiet, **values)


def reset_knobs(lab, quiet=False):
    """Turn every knob off: the lab server is faithful to DynamoDB again."""
    knob_values = call(lab, "DELETE")["knobs"]
    if not quiet:
        announce(lab)
    return knob_values


def get_knobs(lab):
    """Every knob's value, and `responses_lost`: how many responses the server has dropped so far."""
    return call(lab, "GET")["knobs"]


@contextmanager
def knobs(lab, quiet=False, **values):
    """Knobs on for the `with` block only; afterwards they are as before, even if the block failed."""
    before = get_knobs(lab)
    knob_values = set_knobs(lab, quiet=quiet, **values)
    try:
        yield knob_values
    finally:
        restore = {name: before[name] for name in ("latency", "stale_reads", "gsi_lag", "transaction_window",
                                                   "lose_response", "transaction_conflict", "partition_limits",
                                                   "stream_lag", "replication_lag")}
        if before["lose_response"]:
            restore.update(lose_count=before["lose_count"], lose_matching=before["lose_matching"])
        if before["transaction_conflict"]:
            restore.update(conflict_matching=before["conflict_matching"])
        call(lab, "POST", restore)


def transaction_conflicts(lab, conflicts):
    """The block's first `conflicts` TransactWriteItems cancelled as by another transaction (lab server only)."""
    if conflicts and lab.kind == "embedded":
        return knobs(lab, quiet=True, transaction_conflict=conflicts)
    return nullcontext()


def conflicts_made(lab):
    """How many transactions the lab server has cancelled with its knob so far (0 on any other backend)."""
    return get_knobs(lab)["conflicts_made"] if lab.kind == "embedded" else 0


def knob_note(lab):
    """For the backend banner: which teaching knobs are on, and while the consistency knobs are off, that the
    server is stronger than DynamoDB and how to make it as weak (replication_lag only while the server holds a global
    table: without one it changes nothing)."""
    if lab.kind != "embedded":
        return ""
    try:
        reply = call(lab, "GET")
    except KnobsUnavailable:
        return ""
    note = f"; teaching knobs on: {reply['description']}" if reply["description"] else ""
    stronger = [words for name, words in STRONGER.items() if not reply["knobs"][name]
                and (name not in GLOBAL_ONLY or reply["knobs"]["global_tables"])]
    if stronger:
        note += (f".\nStronger than DynamoDB: {', '.join(stronger[:-1])}{' and ' if len(stronger) > 1 else ''}"
                 f"{stronger[-1]}; as_weak_as_dynamodb(lab) makes it as weak")
    return note


def announce(lab):
    """Print the banner after any open transcript block, so it lands where the knob was turned."""
    with TRACER.lock:
        TRACER.flush()
        print(lab.banner)


def call(lab, method, values=None, path=PATH):
    """One request to the lab server's /lab/knobs (or `path`); a refused setting raises ValueError with the
    server's reason."""
    if lab.kind == "aws":
        raise KnobsUnavailable(unavailable(lab))
    data = None if values is None else json.dumps(values).encode()
    try:
        status, body = labhttp.request(lab.endpoint.rstrip("/") + path, method, data,
                                       {"Content-Type": "application/json"}, timeout=ANSWER_WITHIN)
        reply = parsed(body) if status >= 400 else json.loads(body)
    except (OSError, http.client.HTTPException, ValueError) as error:
        if lab.kind == "embedded":
            raise ServerSilent(silent(lab, path, error)) from None
        raise KnobsUnavailable(unavailable(lab)) from None
    if status >= 400:
        if "knobs" in reply:
            raise ValueError(reply["message"])
        raise KnobsUnavailable(unavailable(lab))
    if not isinstance(reply, dict) or (path == PATH and "knobs" not in reply):
        raise KnobsUnavailable(unavailable(lab))
    return reply


def parsed(body):
    """A JSON object from a response body, or {} if it is not one."""
    try:
        reply = json.loads(body)
    except ValueError:
        return {}
    return reply if isinstance(reply, dict) else {}


def silent(lab, path, error):
    """What to do when the kernel's own lab server gave no answer to a control request."""
    return (f"The lab server at {lab.endpoint} gave no answer to {path} within {ANSWER_WITHIN} s ({error!r}). If it "
            "stopped, the next DynamoDB request starts a fresh one and says so; if the machine is busy, run the cell "
            "again.")


def unavailable(lab):
    """Why there are no knobs here, and what to do about it."""
    where = "real Amazon DynamoDB" if lab.kind == "aws" else f"DynamoDB Local at {lab.endpoint}"
    return (f"The teaching knobs exist only on the lab's own server, and this kernel uses {where}. To use them, "
            "unset AWS_ENDPOINT_URL_DYNAMODB (and DYNAMODB_LAB_USE_AWS) and restart the kernel; the notebooks' "
            "knob cells check lab.kind == 'embedded' and say how they adapt.")
