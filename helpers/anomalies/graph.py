"""The dependency graph between transactions, and why each edge holds, as Elle's rw-register builds and explains it.

Vertices are completions (Op objects); each edge carries the set of its relations under "rels". Edges:

- wr: T1 -> T2 when T2's external read of k saw the value T1 externally wrote there. Only ok operations count,
  and only a value with exactly one ok writer gives edges (none: an initial or unknown value, no edge; two or
  more: ValueError, because Elle needs every write of a key to be a unique value).
- ww and rw, along each direct edge v1 -> v2 of a key's version graph (see versions.py), between ok operations
  only: ww from each transaction that externally wrote v1 to each one that externally wrote v2; rw from each one
  that externally read v1 to each one that externally wrote v2. Never along the transitive order.
- process and realtime (see orders.py), when asked for: Elle adds the real-time graph when the consistency model
  it checks is strict serializability (its default), the process graph for strong-session models.
- No transaction is its own dependency: Elle drops ww/rw self-edges and never reports a one-transaction cycle;
  here every self-edge is dropped (a wr self-edge is a transaction reading its own later write, which Elle's
  rw-register does not name either).

Explaining why T1 precedes T2 tries, in Elle's order, wr, then ww, then rw (each from the data, whichever edge put
the pair in a cycle), then the extra orders: realtime before process when both are on (Elle never builds both
at once; with real time it adds no process order, saying real time covers it). Each explanation is a Step, which
can say itself in Elle's words (Step.because).
"""
from dataclasses import dataclass

import networkx as nx

from .orders import PROCESS, REALTIME, link, process_graph, realtime_graph
from .versions import node

WR, WW, RW = "wr", "ww", "rw"


def show(thing):
    """A value as the words show it: None as nil, anything else as Python prints it ('alice', 1)."""
    return "nil" if thing is None else repr(thing)


def key(thing):
    """A key as the words show it: a string bare (SEAT#12A), anything else as Python prints it."""
    return thing if isinstance(thing, str) else show(thing)


@dataclass(frozen=True)
class Step:
    """Why operation a precedes operation b: one edge, of kind `type` (ww, wr, rw, process, realtime).

    a and b are operation dicts (with "index"). Data steps name the key, the value a met (`value`) and, for ww and
    rw, the later value b wrote (`value_`, Elle's :value'), with the positions of the two micro-operations in a's
    and b's values (`a_mop_index`, `b_mop_index`). A process step names the process; a realtime step names b's
    invocation (`b_invoke`)."""

    type: str
    a: dict
    b: dict
    key: object = None
    value: object = None
    value_: object = None
    a_mop_index: int = None
    b_mop_index: int = None
    process: object = None
    b_invoke: dict = None

    def because(self, name):
        """Elle's words for why a precedes b, the operations named by `name`."""
        a, b = name(self.a), name(self.b)
        if self.type == WR:
            return f"{a} wrote {key(self.key)} = {show(self.value)}, which was read by {b}"
        if self.type == WW:
            return (f"{a} set key {key(self.key)} to {show(self.value)}, and {b} set it to {show(self.value_)}, "
                    f"which came later in the version order")
        if self.type == RW:
            return (f"{a} read key {key(self.key)} = {show(self.value)}, and {b} set it to {show(self.value_)}, "
                    f"which came later in the version order")
        if self.type == PROCESS:
            return f"process {key(self.process)} executed {a} before {b}"
        return f"{a} completed at index {self.a['index']},{self._gap()} before the invocation of {b}, at index " \
               f"{self.b_invoke['index']}"

    def _gap(self):
        """Elle's time between a's completion and b's invocation: " 0.500 seconds", " just", or nothing."""
        start, end = self.a.get("time"), self.b_invoke.get("time")
        if start is None or end is None:
            return ""
        return f" {(end - start) / 1e9:.3f} seconds" if end > start else " just"

    def to_dict(self):
        """The step as Elle's data (:type, :key, :value, :value', mop indices; :process; :a' and :b for real time)."""
        if self.type == PROCESS:
            return {"type": PROCESS, "process": self.process}
        if self.type == REALTIME:
            return {"type": REALTIME, "a'": self.a, "b": self.b_invoke}
        data = {"type": self.type, "key": self.key, "value": self.value}
        if self.type != WR:
            data["value'"] = self.value_
        return {**data, "a-mop-index": self.a_mop_index, "b-mop-index": self.b_mop_index}


def _index(ops, pick):
    """Key -> value -> list of the ok operations whose external reads or writes (`pick`) met that value."""
    index = {}
    for op in ops:
        if op.type == "ok":
            for k, v in pick(op).items():
                index.setdefault(k, {}).setdefault(v, []).append(op)
    return index


def wr_graph(ops):
    """wr edges: from a value's one committed writer to each committed transaction that externally read it."""
    graph = nx.DiGraph()
    writes = _index(ops, lambda op: op.ext_writes)
    for k, by_value in _index(ops, lambda op: op.ext_reads).items():
        for v, readers in by_value.items():
            writers = writes.get(k, {}).get(v, [])
            if len(writers) > 1:
                raise ValueError(f"key {k!r} had value {v!r} written by more than one operation (indices "
                                 f"{', '.join(str(w.index) for w in writers)}): every write of a key must be a "
                                 f"unique value, so give each write a value of its own")
            for reader in readers if writers else ():
                link(graph, writers[0], reader, WR)
    return graph


def ww_rw_graph(ops, graphs):
    """ww and rw edges along each direct edge of each key's version graph, between committed transactions."""
    graph = nx.DiGraph()
    reads = _index(ops, lambda op: op.ext_reads)
    writes = _index(ops, lambda op: op.ext_writes)
    for k, version_graph in graphs.items():
        node_reads = {node(v): readers for v, readers in reads.get(k, {}).items()}
        node_writes = {node(v): writers for v, writers in writes.get(k, {}).items()}
        for v1, v2 in version_graph.edges:
            for b in node_writes.get(v2, ()):
                for a in node_writes.get(v1, ()):
                    link(graph, a, b, WW)
                for a in node_reads.get(v1, ()):
                    link(graph, a, b, RW)
    return graph


def dependency_graph(ops, completion, graphs, *, realtime=True, process=False):
    """The union of the wr, ww, rw and (as asked) real-time and process graphs, without self-edges."""
    parts = [wr_graph(ops), ww_rw_graph(ops, graphs)]
    if realtime:
        parts.append(realtime_graph(ops, completion))
    if process:
        parts.append(process_graph(ops))
    graph = nx.DiGraph()
    for part in parts:
        for a, b, rels in part.edges(data="rels"):
            for rel in rels:
                link(graph, a, b, rel)
    graph.remove_edges_from([(a, a) for a in list(nx.nodes_with_selfloops(graph))])
    return graph


class Explainer:
    """Explains why one operation precedes another, trying wr, ww, rw, then real time and process, as Elle does."""

    def __init__(self, graphs, invocation, *, realtime=True, process=False):
        """Keeps the version graphs, the completion -> invocation map and which extra orders are on."""
        self.graphs, self.invocation = graphs, invocation
        self.orders = [name for name, on in ((REALTIME, realtime), (PROCESS, process)) if on]

    def explain(self, a, b):
        """A Step saying why a precedes b, or None when nothing does."""
        for kind in (WR, WW, RW, *self.orders):
            step = getattr(self, "_" + kind)(a, b)
            if step is not None:
                return step
        return None

    def _wr(self, a, b):
        """b externally read a value a externally wrote."""
        for k, v in a.ext_writes.items():
            if k in b.ext_reads and b.ext_reads[k] == v:
                return Step(WR, a.raw, b.raw, k, v, a_mop_index=a.mop_index(("w", k, v)),
                            b_mop_index=b.mop_index(("r", k, v)))
        return None

    def _later(self, a_values, b_values):
        """(key, a's value, b's value) for the first key where b's value directly follows a's in the version graph."""
        for k, av in a_values.items():
            graph, bv = self.graphs.get(k), b_values.get(k)
            if graph is not None and bv is not None and graph.has_edge(node(av), node(bv)):
                return k, av, bv
        return None

    def _ww(self, a, b):
        """a and b externally wrote a key, b's value directly after a's in the version order."""
        found = self._later(a.ext_writes, b.ext_writes)
        if found is None:
            return None
        k, av, bv = found
        return Step(WW, a.raw, b.raw, k, av, bv, a.mop_index(("w", k, av)), b.mop_index(("w", k, bv)))

    def _rw(self, a, b):
        """a externally read a key, b externally wrote the version directly after the one a read."""
        found = self._later(a.ext_reads, b.ext_writes)
        if found is None:
            return None
        k, av, bv = found
        return Step(RW, a.raw, b.raw, k, av, bv, a.mop_index(("r", k, av)), b.mop_index(("w", k, bv)))

    def _realtime(self, a, b):
        """a completed before b was invoked."""
        invoke = self.invocation.get(b)
        if invoke is not None and a.index < invoke.index:
            return Step(REALTIME, a.raw, b.raw, b_invoke=invoke.raw)
        return None

    def _process(self, a, b):
        """The same process ran a, then b."""
        if a.process == b.process and a.index < b.index:
            return Step(PROCESS, a.raw, b.raw, process=a.process)
        return None
