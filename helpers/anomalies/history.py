"""A history in Elle's rw-register shape, read and checked: operations, micro-operations, external reads and writes.

An operation is `{"index", "process", "type": "invoke"|"ok"|"fail"|"info", "f": "txn", "value": [[f, k, v], ...],
"time"?}`, each micro-operation `["r", k, v]` (a read of k that saw v, None when it saw nothing) or `["w", k, v]` (a
write of v to k). The rules, as Elle's (jepsen.txn and elle.rw-register) states them:

- External read: a read counts only if it is the transaction's first access of the key (a read after the
  transaction's own write or read of that key is internal). External write: only the final write of each key
  counts. Both keep the keys in the order the transaction first reached them.
- An invocation's completion is the next operation of the same process; operations keep the history's order, and
  a missing "index" is the operation's position in the list.
- Elle keeps only client operations (an integer process); the lab keeps every operation except those of a process
  named "nemesis", because the lab's processes are named after its clients ("alice", "bob").
"""
from dataclasses import dataclass, field

TYPES = ("invoke", "ok", "fail", "info")
NEMESIS = "nemesis"


@dataclass(eq=False)
class Op:
    """One operation of a history: hashed by identity, ordered by index, with its external reads and writes."""

    index: int
    process: object
    type: str
    f: object
    value: tuple
    time: object
    raw: dict
    ext_reads: dict = field(init=False)
    ext_writes: dict = field(init=False)

    def __post_init__(self):
        """Computes the operation's external reads and writes once."""
        self.ext_reads = ext_reads(self.value)
        self.ext_writes = ext_writes(self.value)

    def __repr__(self):
        """The operation as Elle prints one: its index, type, process and value."""
        return f"Op({self.index}, {self.type}, p={self.process!r}, {list(map(list, self.value))!r})"

    def mop_index(self, mop):
        """The position of the first micro-operation equal to `mop` in this operation's value (None if absent)."""
        return next((i for i, m in enumerate(self.value) if m == tuple(mop)), None)


def ext_reads(txn):
    """Keys -> values of the transaction's external reads: each key's read before any other access of it."""
    ext, seen = {}, set()
    for f, k, v in txn:
        if f == "r" and k not in seen:
            ext[k] = v
        seen.add(k)
    return ext


def ext_writes(txn):
    """A map of keys to the values of the transaction's external writes: each key's final write."""
    ext = {}
    for f, k, v in txn:
        if f == "w":
            ext[k] = v
    return ext


def _hashable(thing, what, position):
    """`thing` itself if it can key a dict, else a clear ValueError naming where it was."""
    try:
        hash(thing)
    except TypeError:
        raise ValueError(f"operation {position}: {what} {thing!r} must be a plain value (a string or a number), "
                         f"not a {type(thing).__name__}") from None
    return thing


def _mop(mop, position):
    """A micro-operation as a tuple (f, k, v), or a clear ValueError saying what shape it needs."""
    if not isinstance(mop, (list, tuple)) or len(mop) != 3 or mop[0] not in ("r", "w"):
        raise ValueError(f"operation {position}: micro-operation {mop!r} must be [\"r\", key, value] or "
                         f"[\"w\", key, value]")
    f, k, v = mop
    return f, _hashable(k, "key", position), _hashable(v, "value", position)


def read_history(history):
    """The history's operations as Op objects in the history's order, checked, each with its index."""
    if not isinstance(history, (list, tuple)):
        raise ValueError(f"a history is a list of operations (dicts), not a {type(history).__name__}")
    ops, seen = [], set()
    for position, raw in enumerate(history):
        if not isinstance(raw, dict):
            raise ValueError(f"operation {position} must be a dict like {{\"process\": 0, \"type\": \"ok\", "
                             f"\"f\": \"txn\", \"value\": [[\"r\", \"x\", 1]]}}, not {raw!r}")
        if raw.get("type") not in TYPES:
            raise ValueError(f"operation {position}: \"type\" must be one of {', '.join(TYPES)}, "
                             f"not {raw.get('type')!r}")
        if raw.get("process") == NEMESIS:
            continue
        index = raw.get("index", position)
        if not isinstance(index, int) or isinstance(index, bool) or index in seen:
            raise ValueError(f"operation {position}: \"index\" must be a distinct integer, not {index!r}")
        seen.add(index)
        value = raw.get("value") or ()
        if not isinstance(value, (list, tuple)):
            raise ValueError(f"operation {position}: \"value\" must be a list of micro-operations, not {value!r}")
        ops.append(Op(index, raw.get("process"), raw["type"], raw.get("f"), tuple(_mop(m, position) for m in value),
                      raw.get("time"), {**raw, "index": index}))
    return ops


def pairs(ops):
    """Two maps, invocation -> completion and completion -> invocation: a completion is the process's next operation."""
    completion, invocation, open_ = {}, {}, {}
    for op in ops:
        if op.type == "invoke":
            open_[op.process] = op
        elif op.process in open_:
            inv = open_.pop(op.process)
            completion[inv], invocation[op] = op, inv
    return completion, invocation
