"""Each column of the atlas as a drawn cycle (notebook 33), and each column's Elle names and fix (notebook 40's
"Which anomaly is this?"): the cycle of the first failing order, in the atlas's row order, whose history shows the
column's anomaly by Elle's names (judge.py)."""
from ...explore import frames
from ...views import plots
from .catalogue import ANOMALIES
from .judge import ELLE, NOT_JUDGED, closed_by

DRAWN = {"P4 lost update": ("G-single-item",)}  # Elle's lost-update is no cycle: its cycle is the G-single-item one
NOT_A_CYCLE = {
    "G1a aborted read": "Elle finds G1a without a cycle: a read of a value only a failed write wrote.",
    "G1b intermediate read": "Elle finds G1b without a cycle: a read of a value its writer overwrote before it "
                             "finished.",
}
FIXES = {  # column: the change that breaks its cycle (or, for G1a and G1b, that keeps its read from happening)
    "G0 dirty write": "Write the items that must change together in one `TransactWriteItems`: two transactions never "
                      "interleave (the one that meets the other in flight is cancelled with `TransactionConflict`; "
                      "send it again), where two `BatchWriteItem`s do, item by item.",
    "G1a aborted read": "Nothing to add on DynamoDB's side: “The read will never present a view to the item from a "
                        "write which did not ultimately succeed.” (Developer Guide, *DynamoDB read consistency*). A "
                        "\"cancelled\" change that a read still shows was several requests, one of which was "
                        "applied (a debit without its credit): make them one `TransactWriteItems`.",
    "G1b intermediate read": "The same: one request has no middle to show. A reader who sees `PENDING` between "
                             "`PENDING` and `PAID` is reading a writer that made two requests; write the final state "
                             "in one.",
    "P4 lost update": "Do the arithmetic in the write (`ADD`, `SET n = n + :one`), or make the write conditional on "
                      "what was read (`version = :v`) and read again when it is refused.",
    "G-single read skew": "Read the items that must agree in one `TransactGetItems`, and send it again when it is "
                          "cancelled because a transaction was in flight; or keep those values in one item. "
                          "`ConsistentRead=True` does not help.",
    "G2-item write skew": "Put the other item's state into the same write: a `TransactWriteItems` with a "
                          "`ConditionCheck` on it, or one item that holds the rule (a count of doctors on call, with "
                          "a condition on it).",
    "stale read": "`ConsistentRead=True` (or `TransactGetItems`) for a read that must see every completed write; "
                  "better still, move the decision into the write's condition.",
    "no read-your-writes": "Read your own item back with `ConsistentRead=True`, or answer with what you wrote.",
    "non-monotonic reads": "`ConsistentRead=True` for reads that must never go back; or keep a version in the item "
                           "and ignore an answer older than one already shown.",
    "stale index read": "Never decide on an index: a sentinel item keyed by the value, created with "
                        "`attribute_not_exists(PK)` in the same transaction; confirm what the index proposes with a "
                        "strongly consistent read of the table.",
}


def elle_names(column):
    """Elle's names of a column's anomaly, as the atlas's second judge looks for them ("G-single-item-realtime")."""
    return ELLE[column][1]


def column_cycle(cells, column):
    """(cell, its order's number, case, report): the first explored cell of `column`, in row order, in which the
    anomaly occurs, with its first failing order whose history shows the column's anomaly as a cycle by Elle's names
    (the rows judge.py does not judge left out); None when there is none (G1a, G1b: no cycle; or it never occurs)."""
    unit, names, whose = ELLE[column]
    for cell in cells.values():
        if cell.column != column or cell.verdict != "occurs" or cell.row in NOT_JUDGED or cell.frame is None:
            continue
        for number, (ok, recorded) in enumerate(zip(cell.frame["ok"], cell.frame["history"]), start=1):
            if ok or recorded is None:
                continue
            report = frames.analysed(recorded, unit)
            if not any(name in report.anomalies for name in names):
                continue
            for case in [case for name in DRAWN.get(column, names) for case in report.anomalies.get(name, ())]:
                if case.cycle is not None and (whose is None or closed_by(case.cycle, whose)):
                    return cell, number, case, report
    return None


def column_figure(column, found):
    """The drawn cycle of a column, as column_cycle found it, headed by the cell and order it comes from."""
    cell, number, case, report = found
    return plots.cycle(case, report, heading=f"{column}: the row {cell.row}, order {number} of {cell.orders}")


def which_anomaly(column):
    """Notebook 40's question for an atlas column (its example, as a symptom) and its answer: the everyday name with
    Elle's beside it, what it means, and the fix."""
    meaning, example = ANOMALIES[column]
    question = (f"**\"{example[0].upper()}{example[1:]}\"** Which anomaly is this, and which column of the atlas "
                "counts it?")
    names = elle_names(column)
    drawn = f", whose cycle is a {' or '.join(DRAWN[column])}" if column in DRAWN else ""
    cycle = "" if column in NOT_A_CYCLE else "; 33 draws its cycle"
    answer = (f"**{column}**; Elle's name{'s' if len(names) > 1 else ''}: **{' or '.join(names)}**{drawn}. {meaning} "
              "Its column in the [isolation atlas](33-isolation-atlas.ipynb) shows, for each way of reading and "
              f"writing, in how many orders it happens, and what prevents it where it cannot{cycle}.\n\n"
              f"**The fix:** {FIXES[column]}")
    return question, answer
