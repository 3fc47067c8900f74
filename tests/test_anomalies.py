"""helpers.anomalies on DynamoDB-shaped histories: what a learner's races look like, named as Elle names them.

Each history is what the lab records: clients (alice, bob) as processes, each request an invocation and its
completion in the order they happened, an item's attribute as a key ("SEAT#12A"), a write's value unique, and the
version order the lab's server knows. Setup writes that created an item come first, as a transaction of their own.
"""
import pytest

from helpers.anomalies import analyse, cycles


class Recorder:
    """Builds a history in the order things happen: `start` invokes a request, `end` completes it."""

    def __init__(self):
        """An empty history."""
        self.ops, self.open = [], {}

    def start(self, process, *mops):
        """The process invokes a transaction of these micro-operations (reads not yet known)."""
        self.open[process] = [list(m) for m in mops]
        invoked = [[f, k, None if f == "r" else v] for f, k, v in mops]
        self.ops.append({"process": process, "type": "invoke", "f": "txn", "value": invoked})

    def end(self, process, type="ok"):
        """The process's transaction completes (ok, fail or info), its reads as given to `start`."""
        self.ops.append({"process": process, "type": type, "f": "txn", "value": self.open.pop(process)})

    def run(self, process, *mops, type="ok"):
        """A transaction invoked and completed before anything else happens."""
        self.start(process, *mops)
        self.end(process, type)

    def history(self):
        """The history, indexed and timed (a millisecond per event, in nanoseconds as Elle's times are)."""
        return [{**o, "index": i, "time": i * 1_000_000} for i, o in enumerate(self.ops)]


def test_stale_read_is_closed_by_real_time():
    """alice's write completed before bob's read began, yet bob read nothing: G-single-item-realtime."""
    h = Recorder()
    h.run("alice", ("w", "SEAT#12A", "alice"))
    h.run("bob", ("r", "SEAT#12A", None))
    report = analyse(h.history())
    assert report.anomaly_types == ["G-single-item-realtime"]
    [case] = report.anomalies["G-single-item-realtime"]
    assert case.cycle.kinds == ("rw", "realtime")
    assert [o["process"] for o in case.cycle.transactions] == ["bob", "alice"]
    assert case.cycle.explain(binding=False) == (
        "  - T1 < T2, because T1 read key SEAT#12A = nil, and T2 set it to 'alice', which came later in the "
        "version order.\n"
        "  - However, T2 < T1, because T2 completed at index 1, 0.001 seconds before the invocation of T1, at "
        "index 2: a contradiction!")
    assert analyse(h.history(), realtime=False).valid, "serializable: bob's read could come first"


def test_stale_read_told_in_the_learners_names():
    """A checker can name each operation in its own words."""
    h = Recorder()
    h.run("alice", ("w", "SEAT#12A", "alice"))
    h.run("bob", ("r", "SEAT#12A", None))
    [case] = analyse(h.history()).anomalies["G-single-item-realtime"]
    told = case.explain(names=lambda op: f"{op['process']}'s request")
    assert "bob's request read key SEAT#12A = nil, and alice's request set it to 'alice'" in told


def test_broken_read_your_writes():
    """alice wrote, then alice read nothing: by process order G-single-item-process, by real time -realtime."""
    h = Recorder()
    h.run("alice", ("w", "credits", 10))
    h.run("alice", ("r", "credits", None))
    assert analyse(h.history(), realtime=False, process=True).anomaly_types == ["G-single-item-process"]
    assert analyse(h.history()).anomaly_types == ["G-single-item-realtime"]
    assert analyse(h.history(), realtime=False).valid


def lost_update():
    """alice and bob both read credits=100 and both wrote their own new balance: the lab's racy read-modify-write."""
    h = Recorder()
    h.run("setup", ("w", "credits", 100))
    h.start("alice", ("r", "credits", 100), ("w", "credits", 93))
    h.start("bob", ("r", "credits", 100), ("w", "credits", 95))
    h.end("alice")
    h.end("bob")
    return h.history()


def test_lost_update():
    """Both read 100 and both wrote: lost-update; with the server's version order, also a G-single-item cycle."""
    report = analyse(lost_update(), version_order={"credits": [100, 93, 95]})
    assert report.anomaly_types == ["G-single-item", "lost-update"]
    [lost] = report.anomalies["lost-update"]
    assert (lost.key, lost.value, [o["process"] for o in lost.txns]) == ("credits", 100, ["alice", "bob"])
    [case] = report.anomalies["G-single-item"]
    assert case.cycle.kinds == ("rw", "ww")
    assert "bob read key credits = 100, and alice set it to 93" in case.explain(names=lambda op: op["process"])
    assert analyse(lost_update()).anomaly_types == ["lost-update"], "found without any version order"
    assert report.to_dict()["anomalies"]["lost-update"][0]["value"] == 100


def test_lost_update_from_nothing_is_also_g2_item():
    """Both read a missing item and both put it: nil precedes each write, so each read precedes the other's write."""
    h = Recorder()
    h.start("alice", ("r", "SEAT#12A", None), ("w", "SEAT#12A", "alice"))
    h.start("bob", ("r", "SEAT#12A", None), ("w", "SEAT#12A", "bob"))
    h.end("alice")
    h.end("bob")
    report = analyse(h.history())
    assert report.anomaly_types == ["G2-item", "lost-update"]
    assert report.anomalies["G2-item"][0].cycle.kinds == ("rw", "rw")


def test_write_skew():
    """Two doctors each see the other on call and each goes off call: G2-item, two adjacent rw edges."""
    h = Recorder()
    h.run("setup", ("w", "alice-on-call", "yes"), ("w", "bob-on-call", "yes"))
    h.start("alice", ("r", "alice-on-call", "yes"), ("r", "bob-on-call", "yes"), ("w", "alice-on-call", "no-a"))
    h.start("bob", ("r", "alice-on-call", "yes"), ("r", "bob-on-call", "yes"), ("w", "bob-on-call", "no-b"))
    h.end("alice")
    h.end("bob")
    report = analyse(h.history(), version_order={"alice-on-call": ["yes", "no-a"], "bob-on-call": ["yes", "no-b"]})
    assert report.anomaly_types == ["G2-item"]
    assert report.anomalies["G2-item"][0].cycle.kinds == ("rw", "rw")


def test_read_skew():
    """alice reads x before bob's transfer and y after it: G-single-item (one rw, one wr)."""
    h = Recorder()
    h.run("setup", ("w", "checking", 50), ("w", "savings", 50))
    h.start("alice", ("r", "checking", 50), ("r", "savings", 90))
    h.run("bob", ("r", "checking", 50), ("w", "checking", 10), ("r", "savings", 50), ("w", "savings", 90))
    h.end("alice")
    report = analyse(h.history(), version_order={"checking": [50, 10], "savings": [50, 90]})
    assert report.anomaly_types == ["G-single-item"]
    assert report.anomalies["G-single-item"][0].cycle.kinds == ("rw", "wr")


def test_read_of_a_cancelled_transaction():
    """bob read a value of alice's TransactWriteItems, which was cancelled: G1a, an aborted read."""
    h = Recorder()
    h.start("alice", ("w", "SEAT#12A", "alice"), ("w", "SEAT#12B", "alice"))
    h.run("bob", ("r", "SEAT#12A", "alice"))
    h.end("alice", "fail")
    report = analyse(h.history())
    assert report.anomaly_types == ["G1a"]
    [case] = report.anomalies["G1a"]
    assert (case.op["process"], case.writer["process"], list(case.mop)) == ("bob", "alice", ["r", "SEAT#12A", "alice"])
    assert case.explain(binding=False) == "T1 read SEAT#12A = 'alice', which T2 wrote, and T2 failed: G1a."


def test_read_of_a_lost_response_is_no_anomaly():
    """alice's write lost its response (info): it may have happened, so bob reading it is fine."""
    h = Recorder()
    h.start("alice", ("w", "SEAT#12A", "alice"))
    h.end("alice", "info")
    h.run("bob", ("r", "SEAT#12A", "alice"))
    assert analyse(h.history()).valid


def test_serializable_history_is_valid():
    """One after the other, each reading what the last wrote: no anomaly, under every option."""
    h = Recorder()
    h.run("alice", ("r", "credits", None), ("w", "credits", 100))
    h.run("bob", ("r", "credits", 100), ("w", "credits", 93))
    h.run("alice", ("r", "credits", 93), ("w", "credits", 88))
    report = analyse(h.history(), version_order={"credits": [100, 93, 88]}, linearizable_keys=True,
                     sequential_keys=True, wfr_keys=True, process=True)
    assert report.valid and report.anomalies == {}
    assert report.explain() == "No anomaly: the history is valid."
    assert report.to_dict() == {"valid?": True, "anomaly-types": [], "anomalies": {}}
    assert report.sources == ("initial-state", "version-order", "wfr-keys", "sequential-keys", "linearizable-keys")
    assert report.version_graphs["credits"][100] == [93]


def test_version_order_keys_spelled_as_json_spells_them():
    """A JSON version order keys "1" where the history's key is 1; it still applies."""
    h = Recorder()
    h.run("alice", ("r", 1, None), ("w", 1, 5))
    h.run("bob", ("r", 1, None), ("w", 1, 6))
    assert "G-single-item" in analyse(h.history(), version_order={"1": [5, 6]}, realtime=False).anomalies


@pytest.mark.parametrize("bad, message", [
    ("not a list", "a history is a list"),
    ([{"type": "ok", "value": [["r", "x"]]}], r"\[\"r\", key, value\]"),
    ([{"type": "done", "value": []}], "\"type\" must be one of"),
    ([{"type": "ok", "value": [["r", ["x"], 1]]}], "key \\['x'\\] must be a plain value"),
])
def test_bad_histories_say_what_to_do(bad, message):
    """A malformed history is refused with a message saying what shape it needs."""
    with pytest.raises(ValueError, match=message):
        analyse(bad)


def completions(*txns, process=None):
    """A history of completions only (no invocations, so no real-time order), each (process, mops)."""
    return [{"index": i, "process": p, "type": "ok", "f": "txn", "value": [list(m) for m in mops]}
            for i, (p, mops) in enumerate(txns)]


def test_long_fork_is_g_nonadjacent_item():
    """Two readers see two independent writes in opposite orders: two rw edges, never adjacent."""
    h = completions(("reader1", [("r", "a", None), ("r", "d", 1)]), ("writer1", [("w", "a", 1), ("w", "b", 1)]),
                    ("reader2", [("r", "b", 1), ("r", "c", None)]), ("writer2", [("w", "c", 1), ("w", "d", 1)]))
    report = analyse(h)
    assert report.anomaly_types == ["G-nonadjacent-item"]
    assert report.anomalies["G-nonadjacent-item"][0].cycle.kinds == ("rw", "wr", "rw", "wr")


def test_g0_process():
    """alice wrote 2, then 1, yet 2 is the later version: her own writes out of order, G0-process."""
    h = completions(("alice", [("w", "x", 2)]), ("alice", [("w", "x", 1)]))
    assert analyse(h, version_order={"x": [1, 2]}, realtime=False, process=True).anomaly_types == ["G0-process"]
    assert analyse(h, version_order={"x": [1, 2]}, realtime=False).valid


def test_g1c_process_and_realtime():
    """alice read what her own next request wrote: G1c-process by process order, G1c-realtime by real time."""
    assert analyse(completions(("alice", [("r", "y", 1)]), ("alice", [("w", "y", 1)])),
                   realtime=False, process=True).anomaly_types == ["G1c-process"]
    h = Recorder()
    h.run("alice", ("r", "y", 1))
    h.run("bob", ("w", "y", 1))
    report = analyse(h.history())
    assert report.anomaly_types == ["G1c-realtime"]
    assert report.anomalies["G1c-realtime"][0].cycle.kinds == ("realtime", "wr")


def test_steps_are_explained_by_data_before_real_time():
    """alice -> bob is real time and rw; Elle explains rw first, so the cycle is G2-item, not G-single-item-realtime."""
    # bob's read misses alice's completed write (rw bob -> alice); alice's read missed bob's write (rw alice -> bob).
    h = Recorder()
    h.run("alice", ("r", "x", None), ("w", "y", 1))
    h.run("bob", ("r", "y", None), ("w", "x", 1))
    report = analyse(h.history())
    assert report.anomaly_types == ["G2-item"]
    assert report.anomalies["G2-item"][0].cycle.kinds == ("rw", "rw")


def test_a_search_cut_short_is_reported_as_unknown(monkeypatch):
    """Four writers each miss all the others' writes: with a budget of 3 cycles the searches are cut short."""
    keys = ["a", "b", "c", "d"]
    h = completions(*((k, [("r", j, None) for j in keys] + [("w", k, 1)]) for k in keys))
    report = analyse(h)
    assert report.anomaly_types == ["G2-item"] and report.unknown == {}
    monkeypatch.setattr(cycles, "CYCLE_BUDGET", 3)
    cut = analyse(h)
    assert cut.anomaly_types == ["G2-item"]
    assert {"anomaly-spec-type": "G-single-item", "scc-size": 4} in cut.unknown["cycle-search-timeout"]


def test_every_kind_of_case_tells_itself():
    """G1b, internal, lost-update and cyclic-versions each say in a sentence what happened."""
    h = completions(("alice", [("w", "y", 1), ("w", "y", 3)]), ("bob", [("r", "y", 1), ("r", "y", 5)]),
                    ("carol", [("r", "z", 0), ("w", "z", 1)]), ("dave", [("r", "z", 0), ("w", "z", 2)]))
    report = analyse(h)
    told = {name: cases[0].explain(binding=False) for name, cases in report.anomalies.items()}
    assert told == {
        "G1b": "T1 read y = 1, which T2 wrote and then overwrote before it finished: G1b.",
        "internal": "T1 read y = 5, but earlier in the same transaction it had y = 1: internal.",
        "lost-update": "T1 and T2 each read z = 0 and then each wrote z: all but one of their updates is lost: "
                       "lost-update."}
    cyclic = analyse(completions(("alice", [("w", "x", 1)]), ("alice", [("w", "x", 2)]), ("alice", [("r", "x", 1)])),
                     sequential_keys=True)
    assert cyclic.anomalies["cyclic-versions"][0].explain() == (
        "The versions of x (1, 2) would each come after the other, by the sources initial-state, sequential-keys: "
        "cyclic-versions (the last source was not used).")
