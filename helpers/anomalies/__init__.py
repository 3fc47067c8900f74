"""Name what a history shows, after Jepsen's Elle (Kingsbury and Alvaro, VLDB 2020; github.com/jepsen-io/elle).

`analyse(history, version_order=..., ...)` reads a history of transactions over registers in Elle's rw-register
shape and returns a Report: `.anomalies`, a dict from Elle's anomaly names to the cases found, and `.valid`, no
anomaly at all. It follows elle.rw-register/check, module by module:

    history.py   operations, external reads and writes, invocations paired with completions
    versions.py  each key's version order, from Elle's sources in Elle's order (cyclic-versions)
    orders.py    process order and real-time order
    graph.py     the dependency graph (wr, ww, rw, process, realtime) and why each edge holds
    cycles.py    minimal cycles per strongly connected component, named (G0, G1c, G-single-item, G2-item, ...)
    direct.py    anomalies outside the graph: internal, G1a, G1b, lost-update
    cases.py     the cases, each told in words the way Elle tells a cycle

Options mean what Elle's do: `linearizable_keys` (:linearizable-keys?), `sequential_keys` (:sequential-keys?),
`wfr_keys` (:wfr-keys?) add version-order sources; `version_order` is the known order of each key's versions,
which the lab's server knows. `realtime` and `process` choose the extra orders in the dependency graph, standing
in for Elle's :consistency-models: Elle's default model, strict serializability, adds real-time order (so does
`realtime=True`, the default); a strong-session model adds process order instead (`realtime=False,
process=True`); plain serializability adds neither (`realtime=False`).

Where the lab differs from Elle, on purpose:
- Every anomaly found is reported, whatever the consistency model (Elle reports those its models prohibit).
- Elle's "unknown" anomalies, which leave its verdict unknown, are not anomalies here but the report's `unknown`
  (same names): "empty-transaction-graph" (no dependency at all; also `empty_transaction_graph`) and
  "cycle-search-timeout" (a search cut short by its budget, see cycles.py). `.valid` looks at anomalies only.
- The cycle search takes the shortest cycles first, within a budget (cycles.py), never "*-cycle-exists".
- The known order is given per key (`version_order`, source "version-order") where Elle takes a whitebox
  transaction order (:transaction-order, source "transaction-order-keys"); it stands at the same place.
- Operations of every process are kept except "nemesis" (history.py); self-edges are dropped (graph.py).
- Not computed: Elle's :not and :also-not (the consistency models the anomalies rule out). Elle's rw-register
  has no dirty-update, and neither has this.
"""
from dataclasses import dataclass

import networkx as nx

from .cases import Cycle, CycleCase, CyclicVersionsCase, InternalCase, LostUpdateCase, ReadCase
from .cycles import cycles_in
from .direct import g1a_cases, g1b_cases, internal_cases, lost_update_cases
from .graph import Explainer, Step, dependency_graph
from .history import pairs, read_history
from .versions import value_of, version_graphs

__all__ = ["Cycle", "CycleCase", "CyclicVersionsCase", "InternalCase", "LostUpdateCase", "ReadCase", "Report",
           "Step", "analyse"]


@dataclass(frozen=True)
class Report:
    """What a history shows: `anomalies` (Elle's name -> list of cases), `valid` (no anomaly), and the analysis.

    `unknown` holds what leaves a verdict unsure, by Elle's names ("empty-transaction-graph": True,
    "cycle-search-timeout": [{"anomaly-spec-type", "scc-size"}, ...]). `graph` is the dependency graph over
    operation indices (edge attribute "rels": the sorted kinds), `ops` maps each index to its operation dict,
    `version_graphs` maps each key to its version order (value -> the values directly after it, None standing for
    nil), `sources` names the version-order sources used."""

    anomalies: dict
    unknown: dict
    graph: nx.DiGraph
    ops: dict
    version_graphs: dict
    sources: tuple

    @property
    def empty_transaction_graph(self):
        """True when no dependency at all was found between the history's transactions (Elle's unknown verdict)."""
        return "empty-transaction-graph" in self.unknown

    @property
    def valid(self):
        """True when no anomaly was found."""
        return not self.anomalies

    @property
    def anomaly_types(self):
        """The names of the anomalies found, sorted as Elle sorts them."""
        return sorted(self.anomalies)

    def to_dict(self):
        """The report as Elle's result map: valid?, anomaly-types, anomalies (each case as Elle's data)."""
        return {"valid?": self.valid, "anomaly-types": self.anomaly_types,
                "anomalies": {name: [case.to_dict() for case in cases] for name, cases in self.anomalies.items()}}

    def explain(self, names=None):
        """Every case told in words, one after the other (a valid history: says so)."""
        told = [case.explain(names) for name in self.anomaly_types for case in self.anomalies[name]]
        return "\n\n".join(told) if told else "No anomaly: the history is valid."


def _keyed(version_order, keys):
    """The version order with each key as the history spells it (a JSON key "1" matches a history's key 1)."""
    by_text = {str(k): k for k in keys}
    return {(k if k in keys else by_text.get(str(k), k)): list(vs) for k, vs in (version_order or {}).items()}


def analyse(history, *, version_order=None, linearizable_keys=False, sequential_keys=False, wfr_keys=False,
            realtime=True, process=False):
    """Elle's rw-register analysis of `history` (a list of operation dicts), as a Report naming each anomaly."""
    ops = read_history(history)
    completion, invocation = pairs(ops)
    keys = {k for op in ops for _, k, _ in op.value}
    graphs, sources, cyclic = version_graphs(ops, completion, version_order=_keyed(version_order, keys),
                                             wfr_keys=wfr_keys, sequential_keys=sequential_keys,
                                             linearizable_keys=linearizable_keys)
    graph = dependency_graph(ops, completion, graphs, realtime=realtime, process=process)
    explainer = Explainer(graphs, invocation, realtime=realtime, process=process)
    anomalies = {}
    cycles, cut = cycles_in(graph, explainer.explain)
    for name, cycle_ops, steps in cycles:
        cycle = Cycle(tuple(op.raw for op in cycle_ops + [cycle_ops[0]]), tuple(steps))
        anomalies.setdefault(name, []).append(CycleCase(name, cycle))
    found = {
        "cyclic-versions": [CyclicVersionsCase(k, scc, srcs) for k, scc, srcs in cyclic],
        "internal": [InternalCase(op.raw, mop, expected) for op, mop, expected in internal_cases(ops)],
        "G1a": [ReadCase("G1a", op.raw, mop, writer.raw) for op, mop, writer in g1a_cases(ops)],
        "G1b": [ReadCase("G1b", op.raw, mop, writer.raw) for op, mop, writer in g1b_cases(ops)],
        "lost-update": [LostUpdateCase(k, v, tuple(op.raw for op in txns)) for k, v, txns in lost_update_cases(ops)],
    }
    anomalies.update({name: cases for name, cases in found.items() if cases})
    index_graph = nx.DiGraph()
    index_graph.add_edges_from((a.index, b.index, {"rels": tuple(sorted(rels))})
                               for a, b, rels in graph.edges(data="rels"))
    unknown = {"empty-transaction-graph": True} if graph.number_of_nodes() == 0 else {}
    if cut:
        unknown["cycle-search-timeout"] = [{"anomaly-spec-type": name, "scc-size": size} for name, size in cut]
    return Report(
        anomalies=dict(sorted(anomalies.items())),
        unknown=unknown,
        graph=index_graph,
        ops={op.index: op.raw for op in ops},
        version_graphs={k: {value_of(v): [value_of(w) for w in g.successors(v)] for v in g.nodes}
                        for k, g in graphs.items()},
        sources=tuple(sources),
    )
