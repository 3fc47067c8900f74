"""The cases a report names, each able to tell itself in words.

Every case has `type` (Elle's anomaly name), `cycle` (a Cycle for cycle anomalies, else None), `explain(names=None)`
and `to_dict()` (the case as Elle's data, operations as dicts). Operations appear as the dicts the history gave,
each with its "index".

A cycle is told the way Elle tells one (elle.core/render-cycle-explanation): the transactions named T1, T2, ... in
cycle order, then one line per step, "T1 < T2, because ...", the last "However, Tn < T1, because ...: a
contradiction!". Each step's words are Elle's: "T1 wrote x = 1, which was read by T2" (wr), "T1 set key x to 1,
and T2 set it to 2, which came later in the version order" (ww), "T1 read key x = 1, and T2 set it to 2, which came
later in the version order" (rw), "process 0 executed T1 before T2" (process), "T1 completed at index 3, 0.500
seconds before the invocation of T2, at index 5" (realtime; Elle's times are nanoseconds, and so are these). Keys
are shown bare (x, SEAT#12A), values as Python prints them ('alice', 1) and None as nil (Elle prints Clojure data,
:x and "alice"). Elle has no words for the other anomalies; those here are the lab's.
"""
from dataclasses import dataclass

from .graph import key, show


def _namer(names, ops):
    """A function naming an operation dict: from `names` (dict by index, or callable), else T1, T2... by position."""
    default = {op["index"]: f"T{i + 1}" for i, op in enumerate(ops)}
    if callable(names):
        return names
    names = names or {}
    return lambda op: names.get(op["index"], default.get(op["index"], f"T{op['index']}"))


def _binding(ops, name):
    """Elle's "Let:" block: each transaction's name and the operation it stands for."""
    return "Let:\n" + "\n".join(f"  {name(op)} = {op}" for op in ops)


@dataclass(frozen=True)
class Cycle:
    """A minimal cycle: `ops` closed as Elle closes it ([T1, T2, T1]), `steps` one per edge, `kinds` their types."""

    ops: tuple
    steps: tuple

    @property
    def kinds(self):
        """The kind of each edge, in cycle order (ww, wr, rw, process, realtime)."""
        return tuple(step.type for step in self.steps)

    @property
    def transactions(self):
        """The cycle's distinct operations, in order (ops without the repeated first)."""
        return self.ops[:-1]

    def explain(self, names=None, binding=True):
        """The cycle told step by step as Elle tells it; `names` (index -> name, or a function of an op) renames."""
        name = _namer(names, self.transactions)
        lines = [f"{name(s.a)} < {name(s.b)}, because {s.because(name)}" for s in self.steps]
        told = "".join(f"  - {line}.\n" for line in lines[:-1]) + f"  - However, {lines[-1]}: a contradiction!"
        return f"{_binding(self.transactions, name)}\n\nThen:\n{told}" if binding else told


@dataclass(frozen=True)
class CycleCase:
    """A cycle anomaly (G0, G1c, G-single-item, G-nonadjacent-item, G2-item, and their -process/-realtime)."""

    type: str
    cycle: Cycle

    def explain(self, names=None, binding=True):
        """The anomaly's name and its cycle, step by step."""
        return f"{self.type}\n{self.cycle.explain(names, binding)}"

    def to_dict(self):
        """The case as Elle's data: :type, :cycle (closed), :steps."""
        return {"type": self.type, "cycle": list(self.cycle.ops), "steps": [s.to_dict() for s in self.cycle.steps]}


@dataclass(frozen=True)
class ReadCase:
    """G1a (a read of a failed transaction's write) or G1b (a read of another transaction's overwritten write)."""

    type: str
    op: dict
    mop: tuple
    writer: dict
    cycle = None

    def explain(self, names=None, binding=True):
        """Who read what, and why that value should never have been seen."""
        name = _namer(names, [self.op, self.writer])
        _, k, v = self.mop
        writer = name(self.writer)
        why = (f"which {writer} wrote, and {writer} failed" if self.type == "G1a"
               else f"which {writer} wrote and then overwrote before it finished")
        told = f"{name(self.op)} read {key(k)} = {show(v)}, {why}: {self.type}."
        return f"{_binding([self.op, self.writer], name)}\n\n{told}" if binding else told

    def to_dict(self):
        """The case as Elle's data: :op, :mop, :writer."""
        return {"op": self.op, "mop": list(self.mop), "writer": self.writer}


@dataclass(frozen=True)
class InternalCase:
    """A transaction whose read disagrees with its own earlier write or read of the key."""

    op: dict
    mop: tuple
    expected: object
    type = "internal"
    cycle = None

    def explain(self, names=None, binding=True):
        """Which read disagreed, and what the transaction itself had left there."""
        name = _namer(names, [self.op])
        _, k, v = self.mop
        told = (f"{name(self.op)} read {key(k)} = {show(v)}, but earlier in the same transaction it had "
                f"{key(k)} = {show(self.expected)}: internal.")
        return f"{_binding([self.op], name)}\n\n{told}" if binding else told

    def to_dict(self):
        """The case as Elle's data: :op, :mop, :expected."""
        return {"op": self.op, "mop": list(self.mop), "expected": self.expected}


@dataclass(frozen=True)
class LostUpdateCase:
    """Two or more committed transactions read the same value of a key and each wrote that key."""

    key: object
    value: object
    txns: tuple
    type = "lost-update"
    cycle = None

    def explain(self, names=None, binding=True):
        """Who read the same value and each wrote over it."""
        name = _namer(names, list(self.txns))
        who = ", ".join(name(op) for op in self.txns[:-1]) + f" and {name(self.txns[-1])}"
        told = (f"{who} each read {key(self.key)} = {show(self.value)} and then each wrote {key(self.key)}: all "
                f"but one of their updates is lost: lost-update.")
        return f"{_binding(list(self.txns), name)}\n\n{told}" if binding else told

    def to_dict(self):
        """The case as Elle's data: :key, :value, :txns."""
        return {"key": self.key, "value": self.value, "txns": list(self.txns)}


@dataclass(frozen=True)
class CyclicVersionsCase:
    """A version-order source that would have made a key's versions cyclic (the source was dropped)."""

    key: object
    scc: frozenset
    sources: tuple
    type = "cyclic-versions"
    cycle = None

    def explain(self, names=None, binding=True):
        """Which key's versions went round in a circle, and the sources that said so."""
        values = ", ".join(sorted(show(v) for v in self.scc))
        return (f"The versions of {key(self.key)} ({values}) would each come after the other, by the sources "
                f"{', '.join(self.sources)}: cyclic-versions (the last source was not used).")

    def to_dict(self):
        """The case as Elle's data: :key, :scc, :sources."""
        return {"key": self.key, "scc": set(self.scc), "sources": list(self.sources)}
