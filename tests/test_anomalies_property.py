"""On random small histories, `analyse(...).valid` is exactly serializability, decided by brute force.

The brute force, sharing nothing with helpers.anomalies: a history is serializable when some order of its committed
(ok) transactions, run one at a time from empty registers, gives every read its value (the latest write before
it in that order, its own transaction's earlier writes included, or nothing: None) and writes each key's
versions in the given version order (each key's committed final writes, in `version_order`'s order).

The options that make the two the same model: the version order given in full (the lab's server knows it), no
real-time or process order (`realtime=False`, `process=False`; the histories have no invocations either),
neither sequential nor linearizable keys (assumptions beyond serializability), and writes-follow-reads either
way (`wfr_keys` is drawn: in a serial order consistent with the version order it only restates that order).

The same with real time (`realtime=True`): the histories interleave each transaction's invocation and completion,
and the brute force also keeps every committed transaction after those that completed before it was invoked:
strict serializability. And with process order (`realtime=False, process=True`) on histories whose transactions
are shared among two processes, the brute force keeps each process's ok transactions in its order: strong
session serializability.

What the histories hold, and why: 2-4 transactions over 2-3 keys, each ok or failed, of 1-3 reads and writes;
every write a unique value of its key (Elle's precondition); every read sees nothing or a value some transaction
wrote (a read of a value nobody wrote is a garbage read, which Elle's rw-register does not look for), never a
value its own transaction writes only later (a future read, which it does not name either). No crashed (info)
transactions: they may or may not have committed, which a single serial order of the ok ones cannot say.
"""
from itertools import permutations

from hypothesis import given, settings
from hypothesis import strategies as st

from helpers.anomalies import analyse


@st.composite
def scenarios(draw):
    """(transactions as (type, mops), version order, wfr_keys) for a small random history."""
    keys = ["x", "y", "z"][:draw(st.integers(2, 3))]
    last = {k: 0 for k in keys}
    txns = []
    for _ in range(draw(st.integers(2, 4))):
        mops = []
        for _ in range(draw(st.integers(1, 3))):
            f, k = draw(st.sampled_from("rw")), draw(st.sampled_from(keys))
            if f == "w":
                last[k] += 1
            mops.append([f, k, last[k] if f == "w" else None])
        txns.append((draw(st.sampled_from(["ok", "ok", "ok", "fail"])), mops))
    for t, (_, mops) in enumerate(txns):
        for i, (f, k, _) in enumerate(mops):
            if f == "r":
                others = [v for u, (_, ms) in enumerate(txns) if u != t for g, j, v in ms if g == "w" and j == k]
                earlier = [v for g, j, v in mops[:i] if g == "w" and j == k]
                mops[i][2] = draw(st.sampled_from([None] + others + earlier))
    order = {}
    for k in keys:
        finals = [final_writes(mops)[k] for typ, mops in txns if typ == "ok" and k in final_writes(mops)]
        if finals:
            order[k] = draw(st.permutations(finals))
    return txns, order, draw(st.booleans())


def final_writes(mops):
    """Each key's last write in a transaction."""
    return {k: v for f, k, v in mops if f == "w"}


def serializable(txns, version_order, before=()):
    """Whether a serial order of the ok transactions, a before b for each (a, b) in `before`, fits reads, versions."""
    committed = [t for t, (typ, _) in enumerate(txns) if typ == "ok"]
    for order in permutations(committed):
        if any(order.index(a) > order.index(b) for a, b in before):
            continue
        state, versions, reads_right = {}, {}, True
        for mops in (txns[t][1] for t in order):
            for f, k, v in mops:
                if f == "w":
                    state[k] = v
                elif state.get(k) != v:
                    reads_right = False
            for k, v in final_writes(mops).items():
                versions.setdefault(k, []).append(v)
        if reads_right and versions == {k: list(vs) for k, vs in version_order.items()}:
            return True
    return False


def history(txns):
    """The transactions as a history of completions, one process each."""
    return [{"index": i, "process": i, "type": typ, "f": "txn", "value": mops} for i, (typ, mops) in enumerate(txns)]


@settings(max_examples=400, deadline=None)
@given(scenarios())
def test_valid_is_serializability(scenario):
    """analyse(...).valid agrees with the brute-force search on every drawn history."""
    txns, order, wfr = scenario
    report = analyse(history(txns), version_order=order, wfr_keys=wfr, realtime=False, process=False)
    assert report.valid == serializable(txns, order), report.explain()


@st.composite
def timed(draw):
    """A scenario, and the order in which its transactions' invocations and completions happen."""
    txns, order, wfr = draw(scenarios())
    events = draw(st.permutations([t for t in range(len(txns)) for _ in "ic"]))
    return txns, order, wfr, events


def timed_history(txns, events):
    """(history, pairs): invocations (reads blanked), completions in `events` order; (a, b): ok a ended, b began."""
    ops, done, before = [], [], []
    for t in events:
        typ, mops = txns[t]
        if t in {o["process"] for o in ops}:
            ops.append({"process": t, "type": typ, "f": "txn", "value": mops})
            done.append(t)
        else:
            blank = [[f, k, None if f == "r" else v] for f, k, v in mops]
            ops.append({"process": t, "type": "invoke", "f": "txn", "value": blank})
            before.extend((a, t) for a in done if txns[a][0] == "ok" and typ == "ok")
    return [{**o, "index": i} for i, o in enumerate(ops)], before


@settings(max_examples=300, deadline=None)
@given(timed())
def test_valid_with_real_time_is_strict_serializability(scenario):
    """With real time, analyse(...).valid agrees with the brute force that also respects real time."""
    txns, order, wfr, events = scenario
    h, before = timed_history(txns, events)
    report = analyse(h, version_order=order, wfr_keys=wfr, realtime=True, process=False)
    assert report.valid == serializable(txns, order, before), report.explain()


@settings(max_examples=200, deadline=None)
@given(scenarios(), st.lists(st.integers(0, 1), min_size=4, max_size=4))
def test_valid_with_process_order_is_strong_session_serializability(scenario, processes):
    """With process order, analyse(...).valid agrees with the brute force that keeps each process's order."""
    txns, order, wfr = scenario
    h = [{**o, "process": processes[o["index"]]} for o in history(txns)]
    oks = [t for t, (typ, _) in enumerate(txns) if typ == "ok"]
    before = [(a, b) for a in oks for b in oks if a < b and processes[a] == processes[b]]
    report = analyse(h, version_order=order, wfr_keys=wfr, realtime=False, process=True)
    assert report.valid == serializable(txns, order, before), report.explain()


def test_the_brute_force_tells_a_lost_update_from_a_serial_history():
    """The brute force itself: a lost update is not serializable, the same two in sequence are."""
    lost = [("ok", [["r", "x", None], ["w", "x", 1]]), ("ok", [["r", "x", None], ["w", "x", 2]])]
    serial = [("ok", [["r", "x", None], ["w", "x", 1]]), ("ok", [["r", "x", 1], ["w", "x", 2]])]
    assert not serializable(lost, {"x": [1, 2]}) and not serializable(lost, {"x": [2, 1]})
    assert serializable(serial, {"x": [1, 2]}) and not serializable(serial, {"x": [2, 1]})
    assert not serializable(serial, {"x": [1, 2]}, before=[(1, 0)])
