"""An exploration's frame in a learner's words: a result described, outcomes counted, one row per order."""

import pandas as pd
from botocore.exceptions import ClientError

from ..lab import trace
from .errors import Crashed


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
