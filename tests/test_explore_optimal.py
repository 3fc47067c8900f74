"""The explorer runs each behaviour once, with arrivals and transactions of several items too: as many runs as rows,
and as many rows as there are classes of every order under swapping neighbouring moves that commute.

Every order is run here by the same explorer with its reduction turned off (no search, nothing ever asleep), and
the orders are grouped by swapping neighbours that commute (reduction.swaps, with each order's own footprints); a
transaction's items made visible (a batch's read) back to back are one order, the last of them ending it. An arrival
is named by what arrives (the lab server numbers arrivals in the order they were made, which differs between orders).
"""
import re
from collections import Counter
from dataclasses import replace

import pytest

from helpers import fresh_table, tracing
from helpers.explore import explore, item_move
from helpers.explore import orders as explore_orders
from helpers.explore import search as explore_search
from helpers.explore.reduction import swaps

from support import two_region_booking

pytestmark = pytest.mark.usefixtures("knobs_off")

TABLE = "bench-global"
A, B = {"PK": "ACCOUNT#a", "SK": "BALANCE"}, {"PK": "ACCOUNT#b", "SK": "BALANCE"}


def every_order(monkeypatch, clients, reset, check):
    """(frame, footprints of each row's steps) of every order, the reduction turned off."""
    prints, doomed = [], explore_orders.doomed_steps
    with monkeypatch.context() as patched:
        patched.setattr(explore_orders, "Search", lambda rank: None)
        patched.setattr(explore_search, "asleep", lambda *_, **__: False)
        patched.setattr(explore_orders, "doomed_steps", lambda frame, found=None: prints.append(found) or doomed(frame))
        frame = explore(clients, reset, check, max_schedules=5000)
    return frame, prints[-1]


def named(schedule, labels):
    """The schedule with each arrival named by what arrives and how many such arrived before it in the order."""
    seen, moves = Counter(), []
    for move, label in zip(schedule, labels):
        if "#" in move:
            what = re.sub(r" as (written|deleted)", "", label.partition(": ")[2])
            seen[what] += 1
            move = f"{move.partition('#')[0]}#{what}|{seen[what]}"
        moves.append(move)
    return moves


def canonical(moves, prints):
    """(moves, footprints) with each run of one client's items made visible (or read) back to back in ascending order,
    the last of a transaction's ending it."""
    pairs, start = list(zip(moves, prints)), 0
    while start < len(pairs):
        end, (name, kind, _) = start, item_move(pairs[start][0])
        while end + 1 < len(pairs) and kind in ("+", "@") and item_move(pairs[end + 1][0])[:2] == (name, kind):
            end += 1
        run = sorted(pairs[start:end + 1], key=lambda pair: item_move(pair[0])[2])
        freed = frozenset().union(*(print_.frees for _, print_ in run))
        if freed:
            run = [(move, replace(print_, frees=frozenset())) for move, print_ in run[:-1]] + [
                (run[-1][0], replace(run[-1][1], frees=freed))]
        pairs[start:end + 1] = run
        start = end + 1
    return tuple(move for move, _ in pairs), tuple(print_ for _, print_ in pairs)


def behaviours(frame, prints):
    """How many classes the orders of `frame` fall into under swapping neighbours that commute."""
    orders = dict(canonical(named(schedule, labels), found)
                  for schedule, labels, found in zip(frame["schedule"], frame["steps"], prints))
    parent = {order: order for order in orders}

    def root(order):
        while parent[order] != order:
            order = parent[order]
        return order
    for order, found in orders.items():
        for place in range(len(order) - 1):
            if swaps((order[place], found[place]), (order[place + 1], found[place + 1])):
                swapped = canonical(order[:place] + (order[place + 1], order[place]) + order[place + 2:],
                                    found[:place] + (found[place + 1], found[place]) + found[place + 2:])[0]
                if swapped in orders:
                    parent[root(order)] = root(swapped)
    return len({root(order) for order in orders})


def outcomes(frame):
    """The set of (results, ok) the rows of a frame show."""
    return {(repr(sorted(results.items())), ok) for results, ok in zip(frame["results"], frame["ok"])}


@pytest.fixture
def two_regions(lab):
    """support.two_region_booking on the lab, its table made quietly."""
    with tracing(False):
        return two_region_booking(lab, TABLE)


@pytest.fixture
def transfer_and_audit(lab):
    """(clients, reset, check): a TransactWriteItems moving 10 from A to B, and a strongly consistent BatchGetItem of
    both accounts that must see 200 in all."""
    table = fresh_table("p25-transactions", lab)

    def transfer():
        lab.client.transact_write_items(TransactItems=[
            {"Update": {"TableName": table.name, "Key": key, "UpdateExpression": "SET balance = balance + :a",
                        "ExpressionAttributeValues": {":a": amount}}} for key, amount in ((A, -10), (B, 10))])

    def audit():
        found = lab.client.batch_get_item(RequestItems={table.name: {"Keys": [A, B], "ConsistentRead": True}})
        return sum(item["balance"] for item in found["Responses"][table.name])

    def reset():
        for key in (A, B):
            table.put_item(Item={**key, "balance": 100})

    return {"transfer": transfer, "audit": audit}, reset, lambda results: results["audit"] == 200


def test_writes_arriving_in_another_region_are_explored_one_run_per_behaviour(monkeypatch, two_regions):
    orders = explore(*two_regions)
    every, prints = every_order(monkeypatch, *two_regions)
    assert any("#" in move for schedule in orders["schedule"] for move in schedule), "each write arrives as a move"
    assert orders.attrs["runs"] == len(orders) == behaviours(every, prints) == 6
    assert len(every) > len(orders) and outcomes(orders) == outcomes(every)
    assert not orders["ok"].all(), "a write may arrive after the other Region's read: both bookings succeed"


def test_a_transfer_of_two_items_beside_a_batch_read_is_explored_one_run_per_behaviour(monkeypatch,
                                                                                          transfer_and_audit):
    orders = explore(*transfer_and_audit)
    every, prints = every_order(monkeypatch, *transfer_and_audit)
    assert orders.attrs["runs"] == len(orders) == behaviours(every, prints) == 9, \
        "each of the audit's two items read before the transfer, before its item is visible, or after: 3 x 3"
    assert len(every) > len(orders) and outcomes(orders) == outcomes(every)
    assert sorted(results["audit"] for results in orders["results"]) == [190] * 2 + [200] * 5 + [210] * 2
