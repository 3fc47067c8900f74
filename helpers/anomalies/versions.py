"""Each key's version order, pieced together from sources in Elle's order (elle.rw-register/version-graphs).

A version graph per key relates a value to the values known to come after it (v1 -> v2: v2 is a later version
of the key). The sources, tried in this order, each merged into what came before:

1. "initial-state": nil (None, nothing there) precedes every value an ok or info operation externally wrote and
   every value an ok operation externally read.
2. "version-order": the known order of each key's versions, consecutive values linked (`version_order`, the lab's
   server knows it). Elle's counterpart is its whitebox :transaction-order (named "transaction-order-keys"),
   which orders whole transactions; the lab gives each key's versions directly. A list may start with None.
3. "wfr-keys" (`wfr_keys`): within an ok transaction, writes follow reads: the value it externally read of a key
   precedes the value it externally wrote there.
4. "sequential-keys" (`sequential_keys`): each key is sequentially consistent: the process order, read as below.
5. "linearizable-keys" (`linearizable_keys`): each key is linearizable: the real-time order, read as below.

A transaction order becomes version orders as Elle's transaction-graph->version-graphs does: for each operation a
and key k, the nearest operations after a that touched k (looking through those that did not) have their first
value of k after a's last value of k. An ok operation's last value is its external write, else its external read;
its first value its external read, else its external write (a read of nothing counting as no read, as Clojure's
`or` does); a crashed (info) operation counts by its writes only; a failed one not at all.

If a source would make any key's version graph cyclic, each cycle (strongly connected component) is reported as a
"cyclic-versions" case naming the key, the values and the sources tried so far including this one, and the whole
source is dropped: the earlier sources are kept.
"""
import networkx as nx

from .orders import process_graph, realtime_graph

NONE = object()


class Nil:
    """The version before every write (Elle's nil), as a graph node: networkx refuses None."""

    def __repr__(self):
        """Prints as Elle prints it."""
        return "nil"


NIL = Nil()


def node(value):
    """The graph node standing for a value (NIL for None)."""
    return NIL if value is None else value


def value_of(vertex):
    """The value a graph node stands for (None for NIL)."""
    return None if vertex is NIL else vertex


def _link(graphs, key, v1, v2):
    """Adds v1 -> v2 to key's version graph."""
    graphs.setdefault(key, nx.DiGraph()).add_edge(node(v1), node(v2))


def initial_state_graphs(ops):
    """nil before every value externally written by an ok or info operation or externally read by an ok one."""
    graphs = {}
    for op in ops:
        if op.type in ("ok", "info"):
            reads = op.ext_reads if op.type == "ok" else {}
            for k, v in list(op.ext_writes.items()) + list(reads.items()):
                if v is not None:
                    _link(graphs, k, None, v)
    return graphs


def known_order_graphs(version_order):
    """Each key's known versions, each linked to the next."""
    graphs = {}
    for k, versions in version_order.items():
        for v1, v2 in zip(versions, versions[1:]):
            _link(graphs, k, v1, v2)
    return graphs


def wfr_graphs(ops):
    """Within each ok transaction, its external read of a key before its external write of that key."""
    graphs = {}
    for op in ops:
        if op.type == "ok":
            for k, v in op.ext_reads.items():
                if v is not None and k in op.ext_writes:
                    _link(graphs, k, v, op.ext_writes[k])
    return graphs


def ext_keys(op):
    """The keys an operation is known to have touched externally: an ok one's reads and writes, an info one's writes."""
    if op.type == "ok":
        return set(op.ext_reads) | set(op.ext_writes)
    if op.type == "info":
        return set(op.ext_writes)
    return set()


def ext_key_graph(txn_graph):
    """For each operation a, each key k -> the nearest operations after a that touched k (Elle's ext-key graph)."""
    downstream = {}
    for a in reversed(list(nx.topological_sort(txn_graph))):
        found = {}
        for b in txn_graph.successors(a):
            touched = ext_keys(b)
            for k, bs in downstream[b].items():
                if k not in touched:
                    found.setdefault(k, set()).update(bs)
            for k in touched:
                found.setdefault(k, set()).add(b)
        downstream[a] = found
    return downstream


def _last_value(op, k):
    """The last value of k the operation a left (NONE when it tells nothing)."""
    if op.type == "ok":
        written = op.ext_writes.get(k)
        return written if written is not None else op.ext_reads.get(k)
    if op.type == "info":
        return op.ext_writes.get(k, NONE)
    return NONE


def _first_value(op, k):
    """The first value of k the operation b met (NONE when it tells nothing)."""
    if op.type == "ok":
        read = op.ext_reads.get(k)
        return read if read is not None else op.ext_writes.get(k)
    if op.type == "info":
        return op.ext_writes.get(k, NONE)
    return NONE


def transaction_graph_to_version_graphs(txn_graph):
    """The version orders a transaction order implies, if T1 < T2 means T1's versions precede T2's, key by key."""
    graphs = {}
    downstream = ext_key_graph(txn_graph)
    for a in sorted(downstream, key=lambda op: op.index):
        for k, bs in downstream[a].items():
            v1 = _last_value(a, k)
            if v1 is NONE:
                continue
            for b in sorted(bs, key=lambda op: op.index):
                v2 = _first_value(b, k)
                if v2 is not NONE and v2 != v1:
                    _link(graphs, k, v1, v2)
    return graphs


def _merge(graphs, more):
    """The union, key by key, of two maps of version graphs."""
    merged = {k: g.copy() for k, g in graphs.items()}
    for k, g in more.items():
        merged[k] = nx.compose(merged[k], g) if k in merged else g.copy()
    return merged


def _numeric(vertex):
    """Whether Clojure's min could compare this version (a number, not nil)."""
    return isinstance(vertex, (int, float)) and not isinstance(vertex, bool)


def cyclic_version_cases(graphs, sources):
    """One (key, values, sources) triple per cycle among a key's versions, in Elle's order."""
    cases = []
    for k, g in graphs.items():
        order = {vertex: i for i, vertex in enumerate(g.nodes)}
        sccs = sorted((c for c in nx.strongly_connected_components(g) if len(c) > 1),
                      key=lambda c: min(order[v] for v in c))
        if all(_numeric(v) for c in sccs for v in c):
            sccs.sort(key=min)
        else:
            sccs.sort(key=len)
        cases.extend((k, frozenset(value_of(v) for v in c), tuple(sources)) for c in sccs)
    return cases


def version_graphs(ops, completion, *, version_order=None, wfr_keys=False, sequential_keys=False,
                   linearizable_keys=False):
    """(graphs, sources, cyclic): the merged version graphs, the sources kept, and the cyclic-versions triples."""
    sources = [("initial-state", lambda: initial_state_graphs(ops))]
    if version_order:
        sources.append(("version-order", lambda: known_order_graphs(version_order)))
    if wfr_keys:
        sources.append(("wfr-keys", lambda: wfr_graphs(ops)))
    if sequential_keys:
        sources.append(("sequential-keys", lambda: transaction_graph_to_version_graphs(process_graph(ops))))
    if linearizable_keys:
        sources.append(("linearizable-keys",
                        lambda: transaction_graph_to_version_graphs(realtime_graph(ops, completion))))
    graphs, kept, cyclic = {}, [], []
    for name, build in sources:
        merged = _merge(graphs, build())
        found = cyclic_version_cases(merged, kept + [name])
        if found:
            cyclic.extend(found)
        else:
            graphs, kept = merged, kept + [name]
    return graphs, kept, cyclic
