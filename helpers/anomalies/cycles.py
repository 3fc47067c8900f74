"""Finding and naming cycles in the dependency graph, as Elle's elle.txn does for rw-registers.

Naming a cycle (Elle's cycle-explainer): explain each step (graph.py: wr, then ww, then rw, then real time or
process), count the kinds, then

- exactly one rw step: G-single-item;
- two or more rw steps: G2-item if two of them are adjacent (the last step and the first count as adjacent),
  else G-nonadjacent-item;
- otherwise G1c if any step is wr, else G0;
- then "-realtime" is added if a step is real-time order, else "-process" if a step is process order.

Searching (Elle's cycle-anomaly-specs, searched per strongly connected component of the graph): each anomaly is a
spec of the relations a cycle may use, in Elle's order (by depth in its anomaly graphs: G0, G1c, G-single-item,
G-nonadjacent-item, G2-item, then the -process ones, then the -realtime ones, with Elle's exact interleaving
computed below). Once a spec finds a cycle, every anomaly it implies (Elle's implied-anomalies graph) is no longer
searched. A spec (for variant "-process" or "-realtime" the variant's edges are allowed and at least one required):

- G0: ww edges. G1c: ww and wr, at least one wr, starting with one.
- G-single-item: ww and wr plus exactly one rw, starting with it.
- G-nonadjacent-item: ww and wr plus two or more rw, no two adjacent, starting with one.
- G2-item: ww, wr and two or more rw, starting with one.
- A cycle found for a spec is named by its explanation; for the last three specs (and their variants) the name
  must be the spec's own, as Elle requires. G0 and G1c searches report whatever the cycle is named (a ww edge
  that is also wr is explained as wr, so a G0 search can report G1c, and a G0-realtime search G1c-realtime).

Where the lab differs from Elle, on purpose: Elle runs a breadth-first search from each vertex in turn, keeps the
first cycle it meets and gives up on the spec if that cycle is named otherwise (after a time-out it falls back to
"*-cycle-exists" anomalies). Here networkx finds the strongly connected parts of the graph on the spec's edges
and enumerates their simple cycles (simple_cycles, with a length bound doubled until cycles fit); the spec takes
the shortest cycles that fit, tries them in order (starting, at a step the spec may start with, from the
lowest-index transaction, then the lowest indices after it) and keeps the first that is named right; if none of
the shortest is, the spec finds nothing in that part, as Elle's gives up. Every strongly connected component
with a cycle still yields an anomaly (its shortest cycle fits the spec it is named after), and no "*-cycle-exists"
anomaly is reported. Like Elle's time-out, a budget (CYCLE_BUDGET cycles per spec and part) bounds each search;
a search cut short is reported as Elle's "cycle-search-timeout", among the report's unknowns, not its anomalies.
Elle's predicate anomalies (G-single, G-nonadjacent, G2 without
"-item") need predicate reads, which rw-registers lack.
"""
import itertools
from dataclasses import dataclass

import networkx as nx

from .graph import RW, WR, WW
from .orders import PROCESS, REALTIME

IMPLIED = {
    "G0": ["G1c", "G0-process"], "G0-process": ["G1c-process", "G0-realtime"], "G0-realtime": ["G1c-realtime"],
    "G1a": ["G1"], "G1b": ["G1"], "G1c": ["G1", "G1c-process"],
    "G1c-process": ["G1c-realtime", "G1-process"], "G1c-realtime": ["G1-realtime"],
    "G1": ["G1-process"], "G1-process": ["G1-realtime"],
    "G-single-item": ["G-single", "G-single-item-process", "G-nonadjacent-item"],
    "G-single-item-process": ["G-single-process", "G-single-item-realtime", "G-nonadjacent-item-process"],
    "G-single-item-realtime": ["G-single-realtime", "G-nonadjacent-item-realtime"],
    "G-single": ["G-nonadjacent", "GSIb", "G-single-process"],
    "G-single-process": ["G-nonadjacent-process", "G-single-realtime"],
    "G-single-realtime": ["G-nonadjacent-realtime"],
    "G-nonadjacent-item": ["G-nonadjacent", "G2-item", "G-nonadjacent-item-process"],
    "G-nonadjacent-item-process": ["G-nonadjacent-process", "G2-item-process", "G-nonadjacent-item-realtime"],
    "G-nonadjacent-item-realtime": ["G2-item-realtime", "G-nonadjacent-realtime"],
    "G-nonadjacent": ["G2", "G-nonadjacent-process"],
    "G-nonadjacent-process": ["G2-process", "G-nonadjacent-realtime"],
    "G-nonadjacent-realtime": ["G2-realtime"],
    "G2": ["G2-process"], "G2-item": ["G2", "G2-item-process"],
    "G2-item-process": ["G2-process", "G2-item-realtime"], "G2-item-realtime": ["G2-realtime"],
    "G2-process": ["G2-realtime"],
    "GSIa": ["GSI"], "GSIb": ["GSI"],
    "incompatible-order": ["G1a"], "future-read": ["G1c"], "dirty-update": ["G1a"],
    "lost-update": ["write-skew", "G2-item"], "write-skew": ["G2"],
}
SEVERITY = {
    "G0": ["G1c"], "G0-process": ["G1c-process"], "G0-realtime": ["G1c-realtime"],
    "G1c": ["G-single", "G2-item"], "G1c-process": ["G-single-process", "G2-item-process"],
    "G1c-realtime": ["G-single-realtime", "G2-item-realtime"],
    "G2": ["G0-process"], "G2-process": ["G0-realtime"],
}


@dataclass(frozen=True)
class Spec:
    """What a cycle searched for an anomaly may use: its legal relations, the relations it needs, its rw rule."""

    name: str
    rels: frozenset
    required: tuple = ()
    rw: str = None
    named: bool = False


CYCLE_BUDGET = 20_000
"""How many simple cycles one spec's search may enumerate in one strongly connected part (about Elle's 1 s)."""

BASE_SPECS = (
    Spec("G0", frozenset({WW})),
    Spec("G1c", frozenset({WW, WR}), required=(frozenset({WR}),)),
    Spec("G-single-item", frozenset({WW, WR}), rw="single", named=True),
    Spec("G-nonadjacent-item", frozenset({WW, WR}), rw="nonadjacent", named=True),
    Spec("G2-item", frozenset({WW, WR, RW}), rw="multiple", named=True),
)


def _depths():
    """Each anomaly's depth in Elle's merged implied-anomalies and severity graphs (its topological generation)."""
    dag = nx.DiGraph([(a, b) for graph in (IMPLIED, SEVERITY) for a, bs in graph.items() for b in bs])
    return {name: depth for depth, names in enumerate(nx.topological_generations(dag)) for name in names}


DEPTHS = _depths()


def _variant(spec, kind):
    """The -process or -realtime variant of a spec: that order's edges allowed, and at least one required."""
    return Spec(f"{spec.name}-{kind}", spec.rels | {kind}, spec.required + (frozenset({kind}),), spec.rw, spec.named)


SPECS = tuple(sorted((s for base in BASE_SPECS for s in (base, _variant(base, PROCESS), _variant(base, REALTIME))),
                     key=lambda s: (DEPTHS[s.name], s.name)))


def implied(name):
    """The anomaly and every anomaly it implies, by Elle's implied-anomalies graph."""
    found, todo = {name}, [name]
    while todo:
        for more in IMPLIED.get(todo.pop(), ()):
            if more not in found:
                found.add(more)
                todo.append(more)
    return found


def cycle_type(kinds):
    """Elle's name for a cycle whose steps are of these kinds, in order."""
    count = {kind: kinds.count(kind) for kind in (WW, WR, RW, PROCESS, REALTIME)}
    adjacent = any(a == RW and b == RW for a, b in zip((kinds[-1],) + tuple(kinds), kinds))
    if count[RW] == 1:
        data = "G-single-item"
    elif count[RW] > 1:
        data = "G2-item" if adjacent else "G-nonadjacent-item"
    elif count[WR]:
        data = "G1c"
    elif count[WW]:
        data = "G0"
    else:
        raise ValueError(f"cannot name a cycle of {kinds}: it has no data dependency")
    return data + ("-realtime" if count[REALTIME] else "-process" if count[PROCESS] else "")


def _fits(spec, choice):
    """Whether one relation per edge (`choice`, starting at the cycle's first step) is a path the spec accepts."""
    rws = choice.count(RW)
    wanted = frozenset().union(*spec.required)
    if spec.rw is not None and choice[0] != RW:
        return False
    if spec.rw is None and spec.required and choice[0] not in wanted:
        return False
    if not all(any(rel in need for rel in choice) for need in spec.required):
        return False
    if spec.rw == "single":
        return rws == 1
    if spec.rw in ("multiple", "nonadjacent") and rws < 2:
        return False
    if spec.rw == "nonadjacent":
        return not any(a == RW and b == RW for a, b in zip(choice, choice[1:] + choice[:1]))
    return spec.rw == "multiple" or RW not in choice or RW in spec.rels


def _accepts(spec, edge_rels):
    """Whether some choice of one relation per edge, from those the spec may take, fits the spec."""
    allowed = spec.rels | ({RW} if spec.rw else set()) | frozenset().union(*spec.required)
    options = [sorted(rels & allowed) for rels in edge_rels]
    return all(options) and any(_fits(spec, list(choice)) for choice in itertools.product(*options))


def _rotations(cycle):
    """Every rotation of a cycle given as a list of vertices."""
    return [cycle[i:] + cycle[:i] for i in range(len(cycle))]


def _candidates(graph, spec):
    """The strongly connected parts of the graph, on the spec's edges only, that hold every edge kind it needs."""
    allowed = spec.rels | ({RW} if spec.rw else set())
    sub = nx.DiGraph([(a, b) for a, b, rels in graph.edges(data="rels") if rels & allowed])
    needs = list(spec.required) + ([frozenset({RW})] if spec.rw else [])
    for scc in sorted(nx.strongly_connected_components(sub), key=lambda c: min(op.index for op in c)):
        part = sub.subgraph(scc)
        kinds = set().union(*(graph[a][b]["rels"] for a, b in part.edges))
        if len(scc) > 1 and all(need & kinds for need in needs):
            yield part


def _shortest_fits(graph, part, spec):
    """(rotations, complete): the shortest cycles of `part` the spec accepts, each rotated to start where it may."""
    bound, seen, found = 2, 0, []
    while True:
        found = []
        for cycle in nx.simple_cycles(part, length_bound=bound):
            seen += 1
            if seen > CYCLE_BUDGET:
                break
            for ops in _rotations(cycle):
                if _accepts(spec, [graph[a][b]["rels"] for a, b in zip(ops, ops[1:] + ops[:1])]):
                    found.append(ops)
        complete = seen <= CYCLE_BUDGET
        if found or bound >= part.number_of_nodes() or not complete:
            shortest = min((len(ops) for ops in found), default=0)
            return sorted((ops for ops in found if len(ops) == shortest), key=lambda ops: [op.index for op in ops]), \
                complete
        bound *= 2


def find_cycle(graph, spec, explain):
    """(cycle, complete): the spec's cycle as (ops, steps, name) or None, and whether the search ran to its end."""
    complete = True
    for part in _candidates(graph, spec):
        fits, whole = _shortest_fits(graph, part, spec)
        complete = complete and whole
        for ops in fits:
            steps = [explain(a, b) for a, b in zip(ops, ops[1:] + ops[:1])]
            if any(step is None for step in steps):
                raise RuntimeError(f"no explanation for an edge of the cycle {ops}: a bug in helpers.anomalies")
            name = cycle_type([step.type for step in steps])
            if not spec.named or name == spec.name:
                return (ops, steps, name), complete
    return None, complete


def cycles_in(graph, explain):
    """(cycles, cut): each anomalous cycle as (name, ops, steps), and (spec, component size) for searches cut short."""
    found, cut = [], []
    sccs = sorted((c for c in nx.strongly_connected_components(graph) if len(c) > 1),
                  key=lambda c: min(op.index for op in c))
    for scc in sccs:
        sub = graph.subgraph(scc)
        skip = set()
        for spec in SPECS:
            if spec.name in skip:
                continue
            cycle, complete = find_cycle(sub, spec, explain)
            if not complete:
                cut.append((spec.name, len(scc)))
            if cycle is not None:
                ops, steps, name = cycle
                found.append((name, ops, steps))
                skip |= implied(spec.name)
    return found, cut
