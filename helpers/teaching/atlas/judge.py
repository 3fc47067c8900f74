"""The atlas's second judge: each explored cell's verdict derived from its orders' histories by the anomaly analyser
(helpers.anomalies, after Jepsen's Elle), independently of the scenario's own check, and each column's anomaly by
the name Elle gives it.

A column is judged on the unit its anomaly is about: a learner's attempts (a client's requests until one is refused:
a read-modify-write, a check then a write) for the anomalies of units of work, the requests one by one for those of
reads that start after a write has completed (real-time order). The three anomalies of a single client's reads are
cycles closed by that client's own order: of its write and its read (no read-your-writes), or of its two reads
(non-monotonic reads).

The Region rows are judged on histories in which a global table's item is one register in every Region
(helpers/explore/histories.py): a read in a Region reads the version its replica holds, a replicated write's arrival
is the original write reaching one more copy, and the versions are in the order last writer wins decides.

Not judged: the stream row. A stream is a log, not a register. Taken record by record (each record a GetRecords hands
over a read of the version that record carries), a GetRecords from TRIM_HORIZON that hands over the
reset's record of x and alice's is one operation reading two versions of one register, which Elle's rw-register
model reports as an "internal" anomaly (a transaction's later read of a key disagreeing with its first) in the very
orders where the consumer saw everything; and a GetRecords that hands over no record of an item has read nothing of it, where a read of
a register always reads a version. Taking only each item's last record would call a read from LATEST, or one page of
a longer shard, a read of an older version. Elle's model of reads of a log is its list-append workload (a read
returns the whole list; the lists' order orders the writes), which the analyser does not implement. What the stream
row shows is the scenario's check alone.
"""
from ...explore import frames
from .catalogue import STREAM_ROW

NOT_JUDGED = {STREAM_ROW}  # a stream's reads are reads of a log, not of a register (the module docstring)

ELLE = {  # column: (unit, Elle's names of its anomaly, whose order closes the cycle: "own" client, "other", any)
    "G0 dirty write": ("attempt", ("G0",), None),
    "G1a aborted read": ("attempt", ("G1a",), None),
    "G1b intermediate read": ("attempt", ("G1b",), None),
    "P4 lost update": ("attempt", ("lost-update",), None),
    "G-single read skew": ("attempt", ("G-single-item",), None),
    "G2-item write skew": ("attempt", ("G2-item",), None),
    "stale read": ("request", ("G-single-item-realtime",), "other"),
    "no read-your-writes": ("request", ("G-single-item-realtime", "G-single-item-process"), "own"),
    "non-monotonic reads": ("request", ("G-single-item-realtime", "G-single-item-process"), "own"),
    "stale index read": ("request", ("G-single-item-realtime",), "other"),
}


def elle_verdict(cell):
    """"occurs" when some order of an explored cell shows its column's anomaly by Elle's names, else "prevented";
    None for a cell not explored, of a row not judged (NOT_JUDGED), or whose orders have no history (off the lab
    server's model)."""
    if (cell.frame is None or cell.row in NOT_JUDGED or cell.column not in ELLE
            or any(recorded is None for recorded in cell.frame["history"])):
        return None
    return "occurs" if any(shows(recorded, cell.column) for recorded in cell.frame["history"]) else "prevented"


def shows(recorded, column):
    """True when one order's history shows the column's anomaly."""
    unit, names, whose = ELLE[column]
    report = frames.analysed(recorded, unit)
    return any(whose is None or closed_by(case.cycle, whose)
               for name in names for case in report.anomalies.get(name, ()))


def closed_by(cycle, whose):
    """True when the cycle's real-time or process step joins two operations of one client ("own"), or of two
    ("other")."""
    orders = [step for step in cycle.steps if step.type in ("realtime", "process")]
    return any((step.a["process"] == step.b["process"]) == (whose == "own") for step in orders)
