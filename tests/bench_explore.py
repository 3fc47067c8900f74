"""`make bench`: the explorer's cost beside the same requests sent plainly, measured side by side in one run.

Every order of 3 racy clients (GetItem then PutItem each: 90 orders, every read answered as if strongly consistent,
so that each order is one run of six requests) explored, against the same 90 orders
played on one thread with no explorer: each order's reset, its six requests in that order, and the check.
The ratio is what the explorer's threads and holds cost on top of the requests themselves (goal: at most 1.2).
Then the explorations of DynamoDB's consistency model (consistency="dynamodb"), timed alone (goal: 5 s each):
the same 3 racy clients with their default reads, and a two-item transfer against a BatchGetItem.
"""
import statistics
import sys
import time

from helpers import connect, fresh_table, tracing
from helpers.explore import explore

MODEL_GOAL = 5.0
A, B = {"PK": "ACCOUNT#a", "SK": "BALANCE"}, {"PK": "ACCOUNT#b", "SK": "BALANCE"}

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
    schedules = list(explore(clients, reset, check, consistency="strong")["schedule"])
    explored, plain = [], []
    for _ in range(repeats):
        began = time.perf_counter()
        orders = explore(clients, reset, check, consistency="strong")
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
    for name, (clients, reset, check) in (("3 racy clients, default reads", (clients, reset, check)),
                                          ("a transfer against a BatchGetItem", transfer_scenario())):
        began = time.perf_counter()
        orders = explore(clients, reset, check, consistency="dynamodb")
        took = time.perf_counter() - began
        print(f"explorer as weak as DynamoDB, {name}: {len(orders)} behaviours in {took:.2f} s "
              f"(goal: at most {MODEL_GOAL:g} s)")


def transfer_scenario():
    """(clients, reset, check): a transaction moving 10 from A to B, and a strongly consistent BatchGetItem of both."""
    lab = connect(quiet=True)
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


if __name__ == "__main__":
    main(*map(int, sys.argv[1:]))
