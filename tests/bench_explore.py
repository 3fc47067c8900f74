"""`make bench`: the explorer's cost beside the same requests sent plainly, measured side by side in one run.

Every distinct order of 3 racy clients (GetItem then PutItem each: 36 distinct orders of the 90, every read answered as
if strongly consistent, so that each order is one run of six requests) explored, against the same orders
played on one thread with no explorer: each order's reset, its six requests in that order, and the check.
The ratio is what the explorer's threads and holds cost on top of the requests themselves (goal: at most 1.2).

Then behaviours per second, each exploration beside two ceilings measured right before it in the same repetition, so
that the ratios hold whatever the machine's speed (or its load, which drifts): one plain request (the plain orders
above: their GetItems and PutItems, resets and checks included, on one thread), and one plain order of the same
scenario (its reset, its clients' calls one after the other on one thread, its check: the ratio is what exploring costs
on top of the work of an order):
- the same 3 racy clients explored as weak as DynamoDB (consistency="dynamodb": their default reads may be stale);
- 25's transfer as its checker explores it (helpers.checks.explored): two transfers of 60 from A, each one
  TransactWriteItems sent again on a conflict, on DynamoDB's model with lost responses and crashes; each behaviour
  starts from a fresh table holding three accounts and ends with the checker's three reads.
Then orders run per distinct behaviour (goal: at most 1.05; every run the explorer starts counts, a run abandoned as
a repeat too): three optimistic-locking clients with retry loops (read the version, put version+1 on condition, read
again on ConditionalCheckFailed: 60 behaviours), and every exploration each notebook's checker calls make (the
calls bench_verdicts.py times, each run once), beside behaviours per second (`python tests/bench_explore.py runs`
prints only these).
Last, four explorations timed alone (goal: at most 5 s each): the racy clients with their default reads on the model,
a two-item transfer against a BatchGetItem, a stream consumer (helpers.consumer) handed 3 records in one batch,
its invocation dying after any one of its 3 writes (the batch then handed over again), and two clients in two Regions
of an MREC global table, each reading a seat and writing it back with a version check (each write reaching the other
Region, and each replica's stream, as moves of their own).
"""
import random
import statistics
import sys
import time

from botocore.exceptions import ClientError

import helpers.explore as helpers_explore
from helpers import connect, fresh_table, tracing
from helpers.checks import explored
from helpers.checks.p25 import OPENING, account_key, fresh_accounts, two_transfers_from_a
from helpers.consumer import EventSourceMapping
from helpers.explore import explore
from helpers.explore import orders as explore_orders
from support import optimistic, two_region_booking

RUNS_GOAL = 1.05

MODEL_GOAL = 5.0
A, B = {"PK": "ACCOUNT#a", "SK": "BALANCE"}, {"PK": "ACCOUNT#b", "SK": "BALANCE"}
FAULTS = ("lost_response", "crash")

KEY = {"PK": "POST#hello-world", "SK": "STATS"}
CLIENTS = ("alice", "bob", "carol")
REPEATS = 5
MODEL_REPEATS = 3


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


def transfer(table, source, target, amount):
    """25's transfer as its notebook solves it: a guarded debit and credit in one TransactWriteItems, sent again after
    a jittered backoff while it meets another transaction; False when a condition refused it."""
    actions = [{"Update": {"TableName": table.name, "Key": account_key(source),
                           "UpdateExpression": "SET balance = balance - :a", "ConditionExpression": "balance >= :a",
                           "ExpressionAttributeValues": {":a": amount}}},
               {"Update": {"TableName": table.name, "Key": account_key(target),
                           "UpdateExpression": "SET balance = balance + :a", "ConditionExpression": "#s = :open",
                           "ExpressionAttributeNames": {"#s": "status"},
                           "ExpressionAttributeValues": {":a": amount, ":open": "open"}}}]
    for attempt in range(10):
        try:
            table.meta.client.transact_write_items(TransactItems=actions)
            return True
        except ClientError as error:
            reasons = [reason["Code"] for reason in error.response.get("CancellationReasons", ())]
            if "TransactionConflict" not in reasons:
                return False
            time.sleep(random.uniform(0, 0.01 * 2 ** attempt))
    raise RuntimeError("the transaction kept meeting other transactions")


def balanced(table, log):
    """The checker's invariant, as far as the bench needs it: its three strongly consistent reads, and no money lost."""
    balances = [table.get_item(Key=account_key(name), ConsistentRead=True)["Item"]["balance"] for name in OPENING]
    return None if sum(balances) == sum(OPENING.values()) else f"the accounts hold {sum(balances)}"


def transfer_explored():
    """(behaviours, seconds) of 25's transfer explored with faults on the model, as its checker explores it."""
    began = time.perf_counter()
    _, orders = explored("transfer", transfer, fresh_accounts, two_transfers_from_a, balanced,
                         consistency="dynamodb", faults=FAULTS)
    return len(orders), time.perf_counter() - began


def transfer_plainly(orders=20):
    """Seconds per plain order of the same scenario: fresh accounts, the two transfers one after the other, the
    invariant."""
    began = time.perf_counter()
    with tracing(False):
        for _ in range(orders):
            table = fresh_accounts()
            for arguments in two_transfers_from_a(table):
                transfer(*arguments)
            balanced(table, None)
    return (time.perf_counter() - began) / orders


def main(repeats=REPEATS):
    """Time both ways, alternating, and print medians and their ratio; then behaviours per second, each exploration
    beside the ceilings measured right before it (the machine's load drifts: a ratio is taken per repetition)."""
    table = fresh_table("p24-atomic-counters", connect(quiet=True))
    clients, reset, check = scenario(table)
    schedules = list(explore(clients, reset, check, consistency="strong")["schedule"])
    per_request = len(schedules) * (2 + 2 * len(CLIENTS))  # a plain order: its reset, a GetItem and a PutItem each, check
    explored_times, plain, ratios = [], [], {}
    for repeat in range(repeats):
        began = time.perf_counter()
        orders = explore(clients, reset, check, consistency="strong")
        explored_times.append(time.perf_counter() - began)
        began = time.perf_counter()
        with tracing(False):
            plainly(table, schedules, reset, check)
        plain.append(time.perf_counter() - began)
        request, order = plain[-1] / per_request, plain[-1] / len(schedules)
        timed = [("3 racy clients, every read strongly consistent", len(orders), explored_times[-1], order)]
        if repeat < MODEL_REPEATS:
            began = time.perf_counter()
            behaviours = len(explore(clients, reset, check, consistency="dynamodb"))
            timed.append(("3 racy clients, as weak as DynamoDB", behaviours, time.perf_counter() - began, order))
            transfer_order = transfer_plainly()
            timed.append(("25's transfer, lost responses and crashes, as weak as DynamoDB", *transfer_explored(),
                          transfer_order))
        for name, behaviours, took, ceiling in timed:
            ratios.setdefault(name, []).append((behaviours, took / behaviours, took / behaviours / request,
                                                took / behaviours / ceiling))
    assert list(orders["schedule"]) == schedules and not orders["ok"].all()
    e, p = statistics.median(explored_times), statistics.median(plain)
    print(f"explorer, 3 racy clients, every distinct order ({len(orders)}): {e:.2f} s (median of {repeats})")
    print(f"the same requests sent plainly on one thread:           {p:.2f} s")
    print(f"ratio explorer / plain: {e / p:.2f} (goal: at most 1.2)")
    print(f"behaviours per second, and what one costs in plain requests ({1000 * p / per_request:.2f} ms each, median) "
          "and in plain orders of its scenario, measured beside it (medians of each repetition's ratios):")
    for name, runs in ratios.items():
        count = runs[0][0]
        seconds, requests, in_orders = (statistics.median(run[place] for run in runs) for place in (1, 2, 3))
        print(f"  {name}: {count} behaviours, {1 / seconds:.1f} per second; each {requests:.1f} plain requests, "
              f"{in_orders:.2f} plain orders (median of {len(runs)})")

    print_runs_per_behaviour(table)

    for name, (clients, reset, check), faults in (
            ("as weak as DynamoDB, 3 racy clients, default reads", (clients, reset, check), ()),
            ("as weak as DynamoDB, a transfer against a BatchGetItem", transfer_scenario(), ()),
            ("a consumer of 3 records, its invocation dying after any write", consumer_scenario(), ("crash",)),
            ("a version-checked write in each of two Regions of an MREC global table", two_region_scenario(), ())):
        began = time.perf_counter()
        with Counted() as counted:
            orders = helpers_explore.explore(clients, reset, check, consistency="dynamodb", faults=faults)
        took = time.perf_counter() - began
        print(f"explorer, {name}: {len(orders)} behaviours in {took:.2f} s "
              f"(goal: at most {MODEL_GOAL:g} s), {counted.runs / len(orders):.2f} orders run per behaviour")


class Counted:
    """Counts the orders the explorer runs (each call of run_schedule) and the behaviours its explorations return."""

    def __init__(self):
        self.runs, self.behaviours, self.seconds = 0, 0, 0.0

    def __enter__(self):
        self.run_schedule, self.explore = explore_orders.run_schedule, helpers_explore.explore

        def run_schedule(*arguments, **keywords):
            self.runs += 1
            return self.run_schedule(*arguments, **keywords)

        def explored(*arguments, **keywords):
            began = time.perf_counter()
            try:
                frame = self.explore(*arguments, **keywords)
            finally:
                self.seconds += time.perf_counter() - began
            self.behaviours += len(frame)
            return frame

        explore_orders.run_schedule, helpers_explore.explore = run_schedule, explored
        return self

    def __exit__(self, *_):
        explore_orders.run_schedule, helpers_explore.explore = self.run_schedule, self.explore

    def line(self, name):
        """One line: orders run, behaviours, their ratio beside the goal, behaviours per second."""
        ratio = self.runs / self.behaviours if self.behaviours else float("nan")
        rate = self.behaviours / self.seconds if self.seconds else float("nan")
        return (f"  {name}: {self.runs} orders run for {self.behaviours} behaviours, {ratio:.2f} per behaviour "
                f"(goal: at most {RUNS_GOAL}), {rate:.1f} behaviours per second")


def optimistic_scenario(table, names=CLIENTS):
    """(clients, reset, check): clients that read the counter and its version strongly and put version+1 on condition,
    reading again after each ConditionalCheckFailed."""
    def reset():
        table.put_item(Item={**KEY, "views": 0, "version": 0})

    def check(_):
        return table.get_item(Key=KEY, ConsistentRead=True)["Item"]["views"] == len(names)

    return {name: optimistic(table, KEY) for name in names}, reset, check


def print_runs_per_behaviour(table):
    """Orders run per distinct behaviour: three optimistic clients, then every checker call of the notebooks."""
    import bench_verdicts  # noqa: PLC0415  (the notebooks' checker calls, read from the notebooks)
    print("orders run per distinct behaviour:")
    with Counted() as counted:
        helpers_explore.explore(*optimistic_scenario(table), consistency="strong")
    print(counted.line("3 optimistic clients with retry loops, every read strongly consistent"))
    total = Counted()
    for notebook, call, checker, arguments, stored, namespace in bench_verdicts.calls():
        with Counted() as counted:
            verdict, _ = bench_verdicts.verdict_and_time(namespace, checker, arguments)
        if counted.behaviours:
            print(counted.line(f"{notebook} {call[:40]} ({verdict})"))
            total.runs, total.behaviours = total.runs + counted.runs, total.behaviours + counted.behaviours
            total.seconds += counted.seconds
        sys.stdout.flush()
    print(total.line("every checker call of the notebooks"))


def transfer_scenario():
    """(clients, reset, check): a transaction moving 10 from A to B, and a strongly consistent BatchGetItem of both."""
    lab = connect(quiet=True)
    table = fresh_table("p25-transactions", lab)

    def transfer_once():
        lab.client.transact_write_items(TransactItems=[
            {"Update": {"TableName": table.name, "Key": key, "UpdateExpression": "SET balance = balance + :a",
                        "ExpressionAttributeValues": {":a": amount}}} for key, amount in ((A, -10), (B, 10))])

    def audit():
        found = lab.client.batch_get_item(RequestItems={table.name: {"Keys": [A, B], "ConsistentRead": True}})
        return sum(item["balance"] for item in found["Responses"][table.name])

    def reset():
        for key in (A, B):
            table.put_item(Item={**key, "balance": 100})

    return {"transfer": transfer_once, "audit": audit}, reset, lambda results: results["audit"] == 200


def consumer_scenario():
    """(clients, reset, check): a function on a stream that ADDs each of 3 payments to a total, in one batch."""
    lab = connect(quiet=True)

    def reset():
        payments = fresh_table("p35-payments", lab)
        fresh_table("p35-totals", lab)
        for n in range(3):
            payments.put_item(Item={"PK": f"PAYMENT#pay-{n}", "customer": "alice", "amount": 10})

    def add(event, context):
        for record in event["Records"]:
            lab.client.update_item(TableName="p35-totals", Key={"PK": "TOTAL#alice"}, UpdateExpression="ADD #t :a",
                                   ExpressionAttributeNames={"#t": "total"}, ExpressionAttributeValues={":a": 10})

    def check(_):
        return lab.client.get_item(TableName="p35-totals", Key={"PK": "TOTAL#alice"},
                                   ConsistentRead=True)["Item"]["total"] == 30

    return {"consumer": lambda: EventSourceMapping(lab, "p35-payments", add, batch_size=3).drain()}, reset, check


def two_region_scenario():
    """support.two_region_booking on the lab, its table made quietly."""
    with tracing(False):
        return two_region_booking(connect(quiet=True))


if __name__ == "__main__":
    if sys.argv[1:] == ["runs"]:  # only the orders run per distinct behaviour
        print_runs_per_behaviour(fresh_table("p24-atomic-counters", connect(quiet=True)))
    else:
        main(*map(int, sys.argv[1:]))
