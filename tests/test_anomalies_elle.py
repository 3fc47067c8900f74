"""Elle's own rw-register tests (jepsen-io/elle, test/elle/rw_register_test.clj), ported case by case.

Each test names the Elle test it ports. Histories are built as Elle's are: `op("wx1rx2")` is an ok transaction
of process 0 writing x=1 then reading x=2 ("_" reads nothing), `pair` gives its invocation (reads blanked) and
completion, and `history` indexes operations by position, as jepsen.history does. Elle filters its result by the
consistency model a test asks for; helpers.anomalies reports every anomaly, so where an Elle test expects
{:valid? true} only because its model does not prohibit what is there, the comment says so and the test asserts
what is there. Elle's :empty-transaction-graph is the report's `empty_transaction_graph`, not an anomaly.
"""
import networkx as nx
import pytest

from helpers.anomalies import analyse
from helpers.anomalies.graph import ww_rw_graph
from helpers.anomalies.history import Op
from helpers.anomalies.versions import NIL, ext_key_graph, transaction_graph_to_version_graphs


def op(string, process=0, type="ok"):
    """An operation from Elle's little language: "wx1" writes x=1, "ry_" reads y and sees nothing."""
    mops = [[c] for c in string if c in "rw"]
    i = -1
    for c in string:
        if c in "rw":
            i += 1
        elif c in "xyz":
            mops[i].append(c)
        else:
            mops[i].append(None if c == "_" else int(c))
    return {"process": process, "type": type, "f": "txn", "value": mops}


def fail(o):
    """The operation, failed."""
    return {**o, "type": "fail"}


def pair(completion):
    """[invocation, completion] for a completed operation, the invocation's reads blanked as Elle's tests do."""
    invoke = {**completion, "type": "invoke",
              "value": [[f, k, None if f == "r" else v] for f, k, v in completion["value"]]}
    return [invoke, completion]


def history(*ops):
    """The operations indexed by position, as jepsen.history indexes them."""
    return [{**o, "index": i} for i, o in enumerate(ops)]


def steps(case):
    """A cycle case's steps as Elle's data, without the operations (compared separately)."""
    return [s.to_dict() for s in case.cycle.steps]


def indices(case):
    """The indices of a cycle case's operations, closed as Elle closes a cycle."""
    return [o["index"] for o in case.cycle.ops]


def test_op_language_matches_elles():
    """op-test: Elle's op helper."""
    assert op("wx1rx2") == {"process": 0, "type": "ok", "f": "txn", "value": [["w", "x", 1], ["r", "x", 2]]}


# internal-cases-test

def test_internal_empty_and_good():
    """internal-cases-test "empty" and "good": reads that agree with the transaction's own writes."""
    assert analyse([]).valid
    assert "internal" not in analyse(history(op("ry2wx2rx2wx1rx1"))).anomalies


def test_internal_stale():
    """internal-cases-test "stale": rx1wx2rx1 expected 2 at its last read."""
    h = history(op("rx1wx2rx1"))
    [case] = analyse(h).anomalies["internal"]
    assert (case.op, list(case.mop), case.expected) == (h[0], ["r", "x", 1], 2)


def test_internal_nil_read():
    """internal-cases-test "nil read": a read of nothing, then a read of 2."""
    h = history(op("rx_rx2"))
    [case] = analyse(h).anomalies["internal"]
    assert (list(case.mop), case.expected) == (["r", "x", 2], None)


# g1a-cases-test

def test_g1a_good():
    """g1a-cases-test "good": a read of a committed write."""
    assert analyse(history(op("wx1"), op("rx1"))).valid


def test_g1a_bad():
    """g1a-cases-test "bad": a read of a failed write."""
    r, w = h = history(op("rx2"), fail(op("wx2")))
    report = analyse(h)
    [case] = report.anomalies["G1a"]
    assert (case.op, case.writer, list(case.mop)) == (r, w, ["r", "x", 2])
    assert report.anomaly_types == ["G1a"] and report.empty_transaction_graph


# g1b-cases-test

def test_g1b_good():
    """g1b-cases-test "good": a read of a final write."""
    assert "G1b" not in analyse(history(op("wx1wx2"), op("rx_rx2"))).anomalies


def test_g1b_bad():
    """g1b-cases-test "bad": a read of an overwritten write."""
    r, w = h = history(op("rx2"), op("wx2wx1"))
    [case] = analyse(h).anomalies["G1b"]
    assert (case.op, case.writer, list(case.mop)) == (r, w, ["r", "x", 2])


# wr-graph-test (Elle checks the wr graph alone; here the whole analysis, without real time, finds the same)

def wr_check(*txns):
    """The analysis of each transaction as an invocation and completion of process 0, without real-time order."""
    ops = [o for txn in txns for o in pair({"process": 0, "type": "ok", "f": "txn", "value": txn})]
    return analyse(history(*ops), realtime=False)


def test_wr_graph_empty_and_write_and_read():
    """wr-graph-test "empty history" and "write and read": nothing to find."""
    assert wr_check().valid
    assert wr_check([["w", "x", 0]], [["w", "x", 0]]).valid


def test_wr_graph_chains():
    """wr-graph-test "chain on one register" and "chain across two registers": each reads the other's write."""
    assert wr_check([["r", "x", 0], ["w", "x", 1]], [["r", "x", 1], ["w", "x", 0]]).anomaly_types == ["G1c"]
    assert wr_check([["r", "x", 0], ["w", "y", 1]], [["r", "y", 1], ["w", "x", 0]]).anomaly_types == ["G1c"]


def test_wr_graph_write_skew_unseen_without_versions():
    """wr-graph-test "write skew": no wr cycle, legal as far as what was read can tell."""
    assert wr_check([["r", "x", 0], ["r", "y", 0], ["w", "x", 1]], [["r", "x", 0], ["r", "y", 0], ["w", "y", 1]]).valid


# ext-key-graph-test and transaction-graph->version-graphs-test

def O(index, string, process=0, type="ok"):
    """An Op for a transaction graph, as the Clojure tests build one with an index."""
    o = op(string, process, type)
    return Op(index, process, type, "txn", tuple(tuple(m) for m in o["value"]), -1, {**o, "index": index})


def txn_graph(adjacency):
    """A graph of Ops from {op: [ops after it]}."""
    graph = nx.DiGraph()
    for a, bs in adjacency.items():
        graph.add_node(a)
        graph.add_edges_from((a, b) for b in bs)
    return graph


def ekg(adjacency):
    """The ext-key graph by indices: {a: {k: {b, ...}}}."""
    return {a.index: {k: {b.index for b in bs} for k, bs in d.items()}
            for a, d in ext_key_graph(txn_graph(adjacency)).items()}


def test_ext_key_graph():
    """ext-key-graph-test: empty, simple, transitive, transitive with different keys."""
    assert ekg({}) == {}
    assert ekg({O(0, "rx1"): [O(1, "rx2")]}) == {0: {"x": {1}}, 1: {}}
    o1, o2, o3, o4 = O(1, "wx1"), O(2, "wx2"), O(3, "wx3"), O(4, "wx4")
    assert ekg({o1: [o2], o2: [o3], o3: [o4]}) == {1: {"x": {2}}, 2: {"x": {3}}, 3: {"x": {4}}, 4: {}}
    o1, o2, o3, o4 = O(1, "wx1"), O(2, "wx2wy2"), O(3, "wy3wz3"), O(4, "wz4")
    assert ekg({o1: [o2], o2: [o3], o3: [o4]}) == {1: {"x": {2}, "y": {2}, "z": {3}}, 2: {"y": {3}, "z": {3}},
                                                  3: {"z": {4}}, 4: {}}


def vg(adjacency):
    """The version graphs a transaction graph implies, as {k: {v: {later v}}}, empty graphs dropped."""
    graphs = transaction_graph_to_version_graphs(txn_graph(adjacency))
    return {k: {v: set(g.successors(v)) for v in g.nodes} for k, g in graphs.items() if g.number_of_nodes()}


def test_version_graphs_from_transaction_graphs():
    """transaction-graph->version-graphs-test, every case."""
    assert vg({}) == {}
    assert vg({O(0, "rx1"): [O(1, "wx2")]}) == {"x": {1: {2}, 2: set()}}
    r1, w2, w3, r4 = O(1, "rx1"), O(2, "wx2"), O(3, "wx3"), O(4, "rx4")
    assert vg({r1: [w2, w3], w2: [r4], w3: [r4]}) == {"x": {1: {2, 3}, 2: {4}, 3: {4}, 4: set()}}
    assert vg({O(0, "wx1wx2"): [O(1, "wx3wx4rx5")]}) == {"x": {2: {4}, 4: set()}}, "external ww"
    assert vg({O(0, "wx1wx2"): [O(1, "rx3rx4wx5")]}) == {"x": {2: {3}, 3: set()}}, "external wr"
    assert vg({O(0, "rx1rx2"): [O(1, "wx3wx4rx5")]}) == {"x": {1: {4}, 4: set()}}, "external rw"
    assert vg({O(0, "rx1rx2"): [O(1, "rx3rx4wx5")]}) == {"x": {1: {3}, 3: set()}}, "external rr"
    assert vg({O(0, "wx1"): [O(1, "rx1")]}) == {}, "no v1 -> v1"


def test_version_graphs_skip_failed_and_crashed_reads():
    """transaction-graph->version-graphs-test "don't infer deps on failed or crashed reads"."""
    f4, i6 = O(4, "rx4", 0, "fail"), O(6, "rx6", 0, "info")
    assert vg({O(1, "wx1"): [O(2, "rx2", 0, "fail"), O(3, "rx3", 0, "info")],
               f4: [O(5, "rx5")], i6: [O(7, "rx7")]}) == {}


def test_version_graphs_use_crashed_writes_not_failed_ones():
    """transaction-graph->version-graphs-test "don't infer deps on failed writes, but do infer crashed"."""
    assert vg({O(1, "wx1"): [O(2, "wx2", 0, "fail"), O(3, "rx3wx4", 0, "info")],
               O(5, "wx5", 0, "fail"): [O(6, "rx6")],
               O(8, "wx8", 0, "info"): [O(9, "rx9")]}) == {"x": {1: {4}, 4: set(), 8: {9}, 9: set()}}


def test_version_graphs_see_through_failed_and_crashed():
    """transaction-graph->version-graphs-test "see through failed/crashed Ops" and its sequential variant."""
    assert vg({O(0, "wx1"): [O(1, "rx_", 0, "info"), O(2, "rx3")],
               O(3, "wy1"): [O(4, "wy2", 0, "fail"), O(5, "ry3")]}) == {"x": {1: {3}, 3: set()},
                                                                       "y": {1: {3}, 3: set()}}
    i1, f2 = O(1, "rx_", 0, "info"), O(2, "wx2", 0, "fail")
    assert vg({O(0, "wx1"): [i1], i1: [f2], f2: [O(3, "wx3")]}) == {"x": {1: {3}, 3: set()}}


# version-graphs->transaction-graphs-test

def tg(ops, edges):
    """The ww and rw edges, by index, that version graph `edges` of key x gives between `ops`."""
    version = nx.DiGraph(edges)
    graph = ww_rw_graph(ops, {"x": version})
    return {(a.index, b.index): rels for a, b, rels in graph.edges(data="rels")}


def test_transaction_graphs_from_version_graphs():
    """version-graphs->transaction-graphs-test: rr, wr (not here: wr-graph's), ww, rw, internal values ignored."""
    chain = [(1, 2), (2, 3)]
    assert tg([O(0, "rx1"), O(1, "rx2")], chain) == {}
    assert tg([O(0, "wx1"), O(1, "rx1")], chain) == {}
    assert tg([O(0, "wx1"), O(1, "wx2")], chain) == {(0, 1): {"ww"}}
    assert tg([O(0, "rx1"), O(1, "wx2")], chain) == {(0, 1): {"rw"}}
    assert tg([O(0, "wx1wx2"), O(1, "rx2rx3")], chain) == {}
    assert tg([O(0, "rx_"), O(1, "wx2")], [(NIL, 2)]) == {(0, 1): {"rw"}}


# checker-test

def test_read_not_returning_what_was_just_written():
    """checker-test "Read doesn't return what was just been written": Elle's known gap (it says valid), kept."""
    h = history(*pair(op("wx1")), *pair(op("rx2")))
    assert analyse(h, linearizable_keys=True).valid


def test_read_read_returns_what_was_just_written():
    """checker-test "Read read returns what was just been written": linearizable keys make x's versions cyclic."""
    h = history(*pair(op("wx1")), *pair(op("rx2")), *pair(op("rx1")))
    report = analyse(h, linearizable_keys=True)
    assert report.anomaly_types == ["cyclic-versions"]
    [case] = report.anomalies["cyclic-versions"]
    assert (case.key, case.scc, case.sources) == ("x", {1, 2}, ("initial-state", "linearizable-keys"))
    assert report.sources == ("initial-state",)


def test_g0_unseen_without_version_order():
    """checker-test "G0", first half: a pure write cycle nobody can see without knowing the version order."""
    t1, t1_ = pair(op("wx1wy2", 0))
    t2, t2_ = pair(op("wx2wy1", 1))
    report = analyse(history(t1, t2, t2_, t1_))
    assert report.valid and report.empty_transaction_graph


def test_g0_with_sequential_keys():
    """checker-test "G0": later reads of x=2 and y=2, with sequential keys, reveal the write cycle."""
    t1, t1_, t2, t2_, t3, t3_, t4, t4_ = h = history(*pair(op("wx1wy2", 0)), *pair(op("wx2wy1", 1)),
                                                    *pair(op("rx2", 0)), *pair(op("ry2", 1)))
    report = analyse(h, sequential_keys=True)
    assert report.anomaly_types == ["G0"]
    [case] = report.anomalies["G0"]
    assert list(case.cycle.ops) == [t1_, t2_, t1_]
    assert steps(case) == [
        {"type": "ww", "key": "x", "value": 1, "value'": 2, "a-mop-index": 0, "b-mop-index": 0},
        {"type": "ww", "key": "y", "value": 1, "value'": 2, "a-mop-index": 1, "b-mop-index": 1}]


def test_g1a():
    """checker-test "G1a": T2 sees T1's failed write."""
    t2, t1 = h = history(op("rx1"), fail(op("wx1")))
    report = analyse(h)
    assert report.anomaly_types == ["G1a"] and report.empty_transaction_graph
    [case] = report.anomalies["G1a"]
    assert case.to_dict() == {"op": t2, "writer": t1, "mop": ["r", "x", 1]}


def test_g1b():
    """checker-test "G1b": T2 sees T1's intermediate write; the transaction graph is empty."""
    t1, t2 = h = history(op("wx1wx2"), op("rx1"))
    report = analyse(h)
    assert report.anomaly_types == ["G1b"] and report.empty_transaction_graph
    assert report.anomalies["G1b"][0].to_dict() == {"op": t2, "writer": t1, "mop": ["r", "x", 1]}


def test_g_single_with_transaction_order():
    """checker-test "G-single transaction-order": T2 then T1 (Elle's :transaction-order {0 2, 1 1})."""
    t1, t2 = h = history(op("rx_wy2"), op("wx3wy4"))
    assert analyse(h).valid, "without the order, the rw edge is not inferred"
    report = analyse(h, version_order={"x": [3], "y": [4, 2]})
    assert report.anomaly_types == ["G-single-item"]
    [case] = report.anomalies["G-single-item"]
    assert list(case.cycle.ops) == [t1, t2, t1]
    assert steps(case) == [
        {"type": "rw", "key": "x", "value": None, "value'": 3, "a-mop-index": 0, "b-mop-index": 0},
        {"type": "ww", "key": "y", "value": 4, "value'": 2, "a-mop-index": 1, "b-mop-index": 1}]


def test_g2_item_with_transaction_order():
    """checker-test "G2-item transaction-order": T1, T3, T4, T2 (Elle's :transaction-order {0 1, 1 4, 2 2, 3 3})."""
    t1, t2, t3, t4 = h = history(op("wx1wy2wz3"), op("rx1wy5"), op("rz3wx4"), op("wz7wy8"))
    assert analyse(h).valid
    report = analyse(h, version_order={"x": [1, 4], "y": [2, 8, 5], "z": [3, 7]})
    assert report.anomaly_types == ["G2-item"]
    [case] = report.anomalies["G2-item"]
    assert list(case.cycle.ops) == [t2, t3, t4, t2]
    assert steps(case) == [
        {"type": "rw", "key": "x", "value": 1, "value'": 4, "a-mop-index": 0, "b-mop-index": 1},
        {"type": "rw", "key": "z", "value": 3, "value'": 7, "a-mop-index": 0, "b-mop-index": 0},
        {"type": "ww", "key": "y", "value": 8, "value'": 5, "a-mop-index": 1, "b-mop-index": 1}]


def test_g1c():
    """checker-test "G1c": T2 observes T1's write of x, and vice versa on y."""
    # Elle's read-uncommitted and G2-only checks say valid, as those models allow G1c; its others find it, as here.
    t1, t2 = h = history(op("wx1ry1"), op("wy1rx1"))
    report = analyse(h)
    assert report.anomaly_types == ["G1c"]
    [case] = report.anomalies["G1c"]
    assert case.to_dict() == {"type": "G1c", "cycle": [t1, t2, t1], "steps": [
        {"type": "wr", "key": "x", "value": 1, "a-mop-index": 0, "b-mop-index": 1},
        {"type": "wr", "key": "y", "value": 1, "a-mop-index": 0, "b-mop-index": 1}]}


def test_g1c_told_as_elle_writes_it():
    """checker-test "writing files": the G1c.txt Elle writes, in the lab's rendering of keys (x, not :x)."""
    h = history({**op("wx1ry1"), "time": -1}, {**op("wy1rx1"), "time": -1})
    [case] = analyse(h).anomalies["G1c"]
    told = case.explain()
    assert told.startswith("G1c\nLet:\n  T1 = {")
    assert told.endswith("Then:\n"
                         "  - T1 < T2, because T1 wrote x = 1, which was read by T2.\n"
                         "  - However, T2 < T1, because T2 wrote y = 1, which was read by T1: a contradiction!")


def test_g2_item_with_linearizable_keys():
    """checker-test "G2-item": linearizable keys put both writes of 2 after the reads of 1."""
    # Elle's read-committed check says valid, as read committed allows G2-item; its repeatable-read one finds it.
    t1, t1_ = pair(op("rx1ry1", 0))
    t2, t2_ = pair(op("rx1wy2", 1))
    t3, t3_ = pair(op("ry1wx2", 2))
    h = history(t1, t1_, t2, t3, t3_, t2_)
    report = analyse(h, linearizable_keys=True)
    assert report.anomaly_types == ["G2-item"]
    [case] = report.anomalies["G2-item"]
    assert sorted(indices(case)[:-1]) == [4, 5]
    assert [(s["type"], s["value"], s["value'"]) for s in steps(case)] == [("rw", 1, 2), ("rw", 1, 2)]


def test_internal():
    """checker-test "internal": rx1rx2."""
    h = history(op("rx1rx2"))
    report = analyse(h)
    assert report.anomaly_types == ["internal"]
    assert report.anomalies["internal"][0].to_dict() == {"op": h[0], "mop": ["r", "x", 2], "expected": 1}


def test_initial_state():
    """checker-test "initial state": nil precedes every value, so with the wr edge this is G-single-item."""
    t1, t1_ = pair(op("rx_ry1", 0))
    t2, t2_ = pair(op("wy1wx2", 0))
    t1, t2, t2_, t1_ = h = history(t1, t2, t2_, t1_)
    report = analyse(h)
    assert report.anomaly_types == ["G-single-item"]
    [case] = report.anomalies["G-single-item"]
    assert case.to_dict() == {"type": "G-single-item", "cycle": [t1_, t2_, t1_], "steps": [
        {"type": "rw", "key": "x", "value": None, "value'": 2, "a-mop-index": 0, "b-mop-index": 1},
        {"type": "wr", "key": "y", "value": 1, "a-mop-index": 0, "b-mop-index": 1}]}


def test_wfr():
    """checker-test "wfr": without writes-follow-reads the version order of y is unknown; with it, G-single-item."""
    t1, t2 = h = history(op("ry1wx1wy2"), op("rx1ry1"))
    assert analyse(h, wfr_keys=False).valid
    report = analyse(h, wfr_keys=True)
    assert report.anomaly_types == ["G-single-item"]
    [case] = report.anomalies["G-single-item"]
    assert list(case.cycle.ops) == [t2, t1, t2]
    assert steps(case) == [
        {"type": "rw", "key": "y", "value": 1, "value'": 2, "a-mop-index": 1, "b-mop-index": 2},
        {"type": "wr", "key": "x", "value": 1, "a-mop-index": 1, "b-mop-index": 0}]


def test_cyclic_version_order():
    """checker-test "cyclic version order": sequential keys say 1 < 2 < 1."""
    h = history(*pair(op("wx1")), *pair(op("wx2")), *pair(op("rx1")))
    report = analyse(h, sequential_keys=True)
    assert report.anomaly_types == ["cyclic-versions"]
    [case] = report.anomalies["cyclic-versions"]
    assert case.to_dict() == {"key": "x", "scc": {1, 2}, "sources": ["initial-state", "sequential-keys"]}


def test_lost_update():
    """lost-update-test: two transactions read x=0 and both write x."""
    t1, t1_, t2, t2_ = h = history(*pair(op("rx0wx1", 0)), *pair(op("rx0wx2", 1)))
    report = analyse(h)
    assert report.anomaly_types == ["lost-update"]
    assert report.anomalies["lost-update"][0].to_dict() == {"key": "x", "value": 0, "txns": [t1_, t2_]}


def test_scc_sort_bug():
    """scc-sort-bug-test: linearizable keys contradict nil-first and wfr; real time closes a G1c."""
    t1, t1_, t2, t2_, t3, t3_, t4, t4_ = h = history(*pair(op("rx1")), *pair(op("rx_")), *pair(op("rx4wx3")),
                                                    *pair(op("wx4")))
    report = analyse(h, wfr_keys=True, linearizable_keys=True)
    assert report.anomaly_types == ["G1c-realtime", "cyclic-versions"]
    [case] = report.anomalies["G1c-realtime"]
    assert case.to_dict() == {"type": "G1c-realtime", "cycle": [t3_, t4_, t3_], "steps": [
        {"type": "realtime", "a'": t3_, "b": t4},
        {"type": "wr", "key": "x", "value": 4, "a-mop-index": 0, "b-mop-index": 0}]}
    assert [c.to_dict() for c in report.anomalies["cyclic-versions"]] == [
        {"key": "x", "scc": {None, 1}, "sources": ["initial-state", "wfr-keys", "linearizable-keys"]},
        {"key": "x", "scc": {3, 4}, "sources": ["initial-state", "wfr-keys", "linearizable-keys"]}]


def test_cyclic_versions_bug():
    """cyclic-versions-bug-test: this exact history once made Elle infer a version cycle; it is valid."""
    ops = [(1, 33189116, "invoke", 0, []), (2, 34621247, "ok", 0, []), (3, 36022782, "invoke", 0, [["r", 1, None]]),
           (4, 36230324, "invoke", 1, [["w", 1, 4]]), (5, 36827540, "invoke", 2, []),
           (320, 37708797, "ok", 0, [["r", 1, None]]), (322, 37894295, "ok", 1, [["w", 1, 4]]),
           (323, 37992467, "ok", 2, []), (324, 38532405, "invoke", 0, []), (325, 39475568, "ok", 0, []),
           (326, 39956694, "invoke", 0, [["r", 1, None]]), (327, 40746079, "ok", 0, [["r", 1, 4]])]
    h = [{"index": i, "time": t, "type": ty, "process": p, "f": "txn", "value": v} for i, t, ty, p, v in ops]
    assert analyse(h, linearizable_keys=True).valid


def test_values_written_twice_are_refused():
    """wr-graph's assertion: a value read after two operations wrote it cannot be placed."""
    with pytest.raises(ValueError, match="more than one operation"):
        analyse(history(op("wx1"), op("wx1"), op("rx1")))
