"""An exploration's frame in a learner's words: a result described, outcomes counted, one row per order, and the
anomalies each order shows, named and told as Jepsen's Elle names and tells them."""

import pandas as pd
from botocore.exceptions import ClientError

from ..lab import trace
from .errors import Crashed
from .histories import RESET, attempts


def describe(result):
    """A client's result in a few words: the value it returned, the error code it raised, or its crash."""
    if isinstance(result, Crashed):
        return str(result)
    if isinstance(result, ClientError):
        return result.response["Error"]["Code"]
    if isinstance(result, Exception):
        return f"{type(result).__name__}: {result}"
    return repr(trace.plain(result))


def numbered(table, noun):
    """`table` with its rows numbered from 1 under `noun` ("order"), as plots.orders names its rows."""
    return table.set_axis(pd.RangeIndex(1, len(table) + 1, name=noun))


def outcome_counts(frame, outcome):
    """How many schedules end in each outcome(results), as a DataFrame with the verdict beside it; its rows are
    numbered as plots.orders numbers outcomes when it draws one row per outcome."""
    outcomes = frame["results"].map(outcome)
    counts = frame.assign(outcome=outcomes).groupby(["outcome", "ok"], sort=False).size()
    return numbered(counts.rename("orders").reset_index(), "outcome")


def order_table(frame, **columns):
    """One row per order, numbered as plots.orders numbers them: its steps in full, then each of `columns`
    (name=function of the order's results), then the verdict."""
    table = pd.DataFrame({"steps": frame["steps"].map(" → ".join),
                          **{name: frame["results"].map(column) for name, column in columns.items()},
                          "ok": frame["ok"]})
    return numbered(table, "order")


def anomalies(frame, unit="attempt"):
    """Per order, the names of the anomalies its history shows (helpers.anomalies: Elle's names, () for none): of its
    clients' attempts (a client's requests until one is refused: what a learner means as one unit) or, with
    unit="request", of its requests one by one; None for an order with no history (off the lab server's model)."""
    return frame["history"].map(lambda recorded: None if recorded is None else
                                tuple(sorted(analysed(recorded, unit).anomalies)))


def why(recorded, unit="attempt"):
    """The anomalies one order's history shows, each told step by step in its clients' names ("alice's GetItem then
    PutItem"), or '' when it shows none."""
    report = analysed(recorded, unit)
    return "\n\n".join(cases[0].explain(names=learner_name, binding=False) if cases[0].cycle is None
                        else f"{name}\n{cases[0].cycle.explain(names=learner_name, binding=False)}"
                        for name, cases in report.anomalies.items())


def analysed(recorded, unit):
    """helpers.anomalies' report of a history, of its attempts or its requests (`unit`), the server's version order
    given."""
    if unit not in ("attempt", "request"):
        raise ValueError(f'unit must be "attempt" or "request"; got {unit!r}')
    from ..anomalies import analyse  # here, not above: every kernel loads the explorer; few ask it for anomalies
    history = attempts(recorded) if unit == "attempt" else recorded
    return analyse(history["ops"], version_order=history["version_order"])


def learner_name(op):
    """An operation in a learner's words: "alice's GetItem then PutItem", or "reset()"."""
    if op["process"] == RESET:
        return "reset()"
    return f"{op['process']}'s {' then '.join(op['requests'])}"
