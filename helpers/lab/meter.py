"""The lab server's meter, from a notebook: what each table consumed, as CloudWatch counts it.

`metrics(lab)` is a frame of every table's counters (capacity units consumed, those on writes refused by their
condition, ConditionalCheckFailedRequests, TransactionConflict, throttled requests, and the write units a global
table's writes used in the other Regions' replicas); `reset_metrics(lab)` sets them
to zero; `with metered(lab, table) as cost:` measures one block. Only the lab server has a meter: elsewhere
`metrics` raises KnobsUnavailable and `metered` gives a Cost whose `available` is False.
"""
from contextlib import contextmanager
from dataclasses import dataclass, field

import pandas as pd

from .knobs import KnobsUnavailable, call

PATH = "/lab/metrics"
COUNTERS = ("ConsumedReadCapacityUnits", "ConsumedWriteCapacityUnits", "WriteUnitsOnRefusedWrites",
            "IndexReadCapacityUnits", "IndexWriteCapacityUnits", "ConditionalCheckFailedRequests",
            "TransactionConflict", "ThrottledRequests", "ReadThrottleEvents", "WriteThrottleEvents", "Requests",
            "ReplicatedWriteUnits")


def metrics(lab):
    """Every table's counters since the last reset, one row per table."""
    tables = call(lab, "GET", path=PATH)["tables"]
    return pd.DataFrame.from_dict(tables, orient="index", columns=list(COUNTERS)).rename_axis("table")


def reset_metrics(lab):
    """Every table's counters back to zero."""
    call(lab, "DELETE", path=PATH)


def table_counters(lab, table):
    """One table's counters now (zeros for a table the meter has not seen)."""
    tables = call(lab, "GET", path=PATH)["tables"]
    return tables.get(table, dict.fromkeys(COUNTERS, 0))


@dataclass
class Cost:
    """What one block of work cost on one table (filled when the block ends)."""

    table: str
    available: bool = True
    counters: dict = field(default_factory=dict)

    def __getitem__(self, name):
        return self.counters[name]

    @property
    def read_units(self):
        """Read units on the table and its indexes."""
        return self["ConsumedReadCapacityUnits"] + self["IndexReadCapacityUnits"]

    @property
    def write_units(self):
        """Write units on the table and its indexes, refused writes included."""
        return self["ConsumedWriteCapacityUnits"] + self["IndexWriteCapacityUnits"]

    def per(self, successes):
        """Write units per success (None when nothing succeeded)."""
        return self.write_units / successes if successes else None


@contextmanager
def metered(lab, table):
    """Measure what the block costs on `table`: a Cost, filled with the counters' change when the block ends."""
    cost = Cost(table)
    try:
        before = table_counters(lab, table)
    except KnobsUnavailable:
        cost.available = False
        yield cost
        return
    yield cost
    after = table_counters(lab, table)
    cost.counters = {name: after[name] - before[name] for name in COUNTERS}
