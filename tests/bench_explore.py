"""`make bench`: the explorer's cost beside the same requests sent plainly, measured side by side in one run.

Every order of 3 racy clients (GetItem then PutItem each: 90 orders) explored, against the same 90 orders
played on one thread with no explorer: each order's reset, its six requests in that order, and the check.
The ratio is what the explorer's threads and holds cost on top of the requests themselves (goal: at most 1.2).
"""
import statistics
import sys
import time

from helpers import connect, fresh_table, tracing
from helpers.explore import explore

KEY = {"PK": "POST#hello-world", "SK": "STATS"}
CLIENTS = ("alice", "bob", "carol")
REPEATS = 5


def scenario(table):
    """(clients, reset, check) of the 3 racy incrementers."""
    def increment():
        current = table.get_item(Key=KEY)["Item"]["views"]
        table.put_item(Item={**KEY, "views": current + 1})

    def reset():
        table.put_item(Item={**KEY, "views": 0})

    def check(_):
        return table.get_item(Key=KEY, ConsistentRead=True)["Item"]["views"] == len(CLIENTS)

    return {name: increment for name in CLIENTS}, reset, check


def plainly(table, schedules, reset, check):
    """The same orders on one thread: reset, each client's GetItem or PutItem in the order given, check."""
    for schedule in schedules:
        reset()
        seen = {}
        for name in schedule:
            if name in seen:
                table.put_item(Item={**KEY, "views": seen[name] + 1})
            else:
                seen[name] = table.get_item(Key=KEY)["Item"]["views"]
        check(None)


def main(repeats=REPEATS):
    """Time both ways, alternating, and print medians and their ratio."""
    table = fresh_table("p24-atomic-counters", connect(quiet=True))
    clients, reset, check = scenario(table)
    schedules = list(explore(clients, reset, check)["schedule"])
    explored, plain = [], []
    for _ in range(repeats):
        began = time.perf_counter()
        orders = explore(clients, reset, check)
        explored.append(time.perf_counter() - began)
        began = time.perf_counter()
        with tracing(False):
            plainly(table, schedules, reset, check)
        plain.append(time.perf_counter() - began)
    assert len(orders) == 90 and int((~orders["ok"]).sum()) == 84
    e, p = statistics.median(explored), statistics.median(plain)
    print(f"explorer, 3 racy clients, every order ({len(orders)}): {e:.2f} s (median of {repeats})")
    print(f"the same requests sent plainly on one thread:           {p:.2f} s")
    print(f"ratio explorer / plain: {e / p:.2f} (goal: at most 1.2)")


if __name__ == "__main__":
    main(*map(int, sys.argv[1:]))
