"""Every checker's first stage runs the learner's function in every order and reports the first failing one exactly."""
import threading
import time

import pytest
from botocore.exceptions import ClientError

from helpers.checks import SHOWN, attack, run_at_once, told_moves
from helpers.knobs import knobs
from helpers.labserver import together
from helpers.tables import fresh_table
from support import hidden_missing_table

TABLE = "p24-atomic-counters"
KEY = {"PK": "POST#hello-world", "SK": "STATS"}


def fresh_counter():
    """The counter at 0 in a fresh table."""
    table = fresh_table(TABLE)
    table.put_item(Item={**KEY, "views": 0})
    return table


def lost_updates(table, log):
    """The invariant: every call's increment is in the counter, and no call raised."""
    if log["error"].notna().any():
        return f"a call raised {log['error'].dropna().iloc[0]}"
    views = table.get_item(Key=KEY, ConsistentRead=True)["Item"]["views"]
    return None if views == len(log) else f"{len(log)} increments left views at {views}"


def check_increment(increment, consistency="strong", **options):
    """A checker in the house style: increment(table) called at once by many clients; every read answered as if
    strongly consistent unless `consistency` says otherwise, so that the counts below are those of plain orders."""
    return attack("increment", increment, fresh_counter, lambda table, n: [(table,)] * n, lost_updates,
                  sizes=(2, 5), tries=1, consistency=consistency, **options)


def racy_increment(table):
    current = table.get_item(Key=KEY)["Item"]["views"]
    table.put_item(Item={**KEY, "views": current + 1})


def add_increment(table):
    table.update_item(Key=KEY, UpdateExpression="ADD #v :one", ExpressionAttributeNames={"#v": "views"},
                      ExpressionAttributeValues={":one": 1})


def test_the_first_failing_order_is_reported_as_the_exact_sequence_of_requests(lab):
    report = check_increment(racy_increment)
    assert not report.passed
    assert report.message == ("alice: GetItem -> bob: GetItem -> alice: PutItem -> bob: PutItem: 2 increments left "
                              "views at 1 (in 2 of the 4 distinct orders in which alice and bob's requests can reach "
                              "DynamoDB, every read strongly consistent)")
    assert report.schedule == ("alice", "bob", "alice", "bob")
    assert check_increment(racy_increment).message == report.message


def test_the_failing_order_replays_in_a_step_through_panel_and_is_drawn_with_every_other_order(lab):
    report = check_increment(racy_increment)
    panel = report.replay()
    try:
        assert panel.history == ["alice: GetItem", "bob: GetItem", "alice: PutItem", "bob: PutItem"]
        assert panel.verdict.endswith("the invariant is BROKEN")
    finally:
        panel.stepper.close()
    assert report.figure().layout.title.text == "2 of 4 distinct orders break increment"


def test_a_correct_function_passes_every_order_then_the_stress_stage(lab):
    report = check_increment(add_increment)
    assert report.passed
    assert report.message == ("held in 2 runs of up to 5 concurrent calls (7 calls in all), and in all 2 distinct orders of "
                              "the exhaustive stage, every read strongly consistent")
    with pytest.raises(ValueError, match="found no failing order to replay"):
        report.replay()


def test_three_clients_in_the_exhaustive_stage_when_asked(lab):
    report = check_increment(racy_increment, orders_of=3)
    assert report.message.endswith("(in 30 of the 36 distinct orders in which alice, bob and carol's requests can reach "
                                   "DynamoDB, every read strongly consistent)")


def test_a_wrong_answer_among_many_orders_ends_the_exploration_at_its_first_failing_orders_and_says_so(lab):
    report = check_increment(racy_increment, orders_of=4)
    assert not report.passed
    assert len(report.orders) == report.orders.attrs["runs"] == SHOWN and report.orders.attrs["stopped"]
    broken = int((~report.orders["ok"]).sum())
    assert report.message.endswith(f"(in {broken} of the first {SHOWN} distinct orders in which alice, bob, carol and "
                                   "dave's requests can reach DynamoDB, every read strongly consistent; the rest were "
                                   "left unexplored: one failing order is enough)"), report.message
    assert (report.orders["doomed_at"] == -1).all(), "no point of no return is claimed: not every continuation ran"
    assert report.figure().layout.title.text == f"{broken} of the first {SHOWN} distinct orders break increment"


def test_a_right_answer_among_many_orders_is_explored_whole(lab):
    report = check_increment(add_increment, orders_of=5)
    assert report.passed
    assert "and in all 120 distinct orders of the exhaustive stage" in report.message


def test_a_scenario_with_too_many_orders_says_so_and_the_stress_stage_still_runs(lab):
    report = check_increment(add_increment, orders_of=4, max_orders=10)
    assert report.passed
    assert "; the exhaustive stage did not run: This scenario has more than 10 possible orders (about 24" in report.message


def increment_in_a_transaction(table):
    """One TransactWriteItems that adds 1, never sent again: a conflict comes out of it as DynamoDB's error."""
    table.meta.client.transact_write_items(TransactItems=[{"Update": {
        "TableName": table.name, "Key": KEY, "UpdateExpression": "ADD #v :one",
        "ExpressionAttributeNames": {"#v": "views"}, "ExpressionAttributeValues": {":one": 1}}}])


def test_a_call_that_gives_up_on_a_conflict_in_the_stress_stage_is_judged_as_not_made(lab):
    if lab.kind != "embedded":
        pytest.skip("only the lab server keeps a transaction in flight on request")
    with knobs(lab, quiet=True, transaction_window=1.0):  # every call released beside the first meets it in flight
        report = check_increment(increment_in_a_transaction)
    assert report.passed, report.message
    assert report.message.startswith("held in 2 runs of up to 5 concurrent calls (7 calls in all; 5 calls gave up on a "
                                     "transaction conflict and raised, and it held without them)")
    assert list(report.log["gave_up"]).count(True) == 4


def test_a_function_that_never_retries_a_conflict_is_caught_in_the_exhaustive_stage(lab):
    if lab.kind != "embedded":
        pytest.skip("only the lab server's explorer makes a transaction meet another in flight")
    report = check_increment(increment_in_a_transaction, consistency="dynamodb")
    assert not report.passed and report.schedule == ("alice", "bob", "alice+0")
    assert report.message.endswith(
        "a call raised TransactionCanceledException: Transaction cancelled, please refer cancellation reasons for "
        "specific reasons [TransactionConflict] (in 2 of the 4 distinct orders in which alice and bob's requests can reach "
        "DynamoDB). Why: bob's TransactWriteItems was answered TransactionCanceledException [TransactionConflict], and "
        "it came out of bob's call: a TransactionConflict means another transaction was using the item at that moment, "
        "not that a condition failed: retry a conflict; report only a failed condition")


def increment_that_swallows_every_error(table):
    try:
        add_increment(table)
    except Exception:
        return False
    return True


def test_a_function_that_swallows_every_error_fails_with_the_error_it_hid(lab):
    report = check_increment(increment_that_swallows_every_error)
    assert not report.passed
    assert report.message.startswith(hidden_missing_table("increment"))


# The exhaustive stage explores DynamoDB's consistency: the mistakes only a weaker store shows, with their cause.

def numbered(table):
    """The counter's next number: an ADD, then a default (eventually consistent) read of the result."""
    table.update_item(Key=KEY, UpdateExpression="ADD #v :one", ExpressionAttributeNames={"#v": "views"},
                      ExpressionAttributeValues={":one": 1})
    return table.get_item(Key=KEY)["Item"]["views"]


def own_increment_seen(table, log):
    """The invariant of `numbered`: each call saw at least its own increment, and the numbers are distinct."""
    if log["error"].notna().any():
        return f"a call raised {log['error'].dropna().iloc[0]}"
    numbers = [int(number) for number in log["result"]]
    if min(numbers) < 1 or len(set(numbers)) != len(numbers):
        return f"the calls were told {sorted(numbers)}"
    return None


def test_a_decision_on_a_default_read_is_caught_with_its_stale_order_and_its_cause(lab):
    report = attack("numbered", numbered, fresh_counter, lambda table, n: [(table,)] * n, own_increment_seen,
                    sizes=(2,), tries=1, orders_of=lambda table: [(table,)], consistency="dynamodb")
    assert not report.passed
    assert report.message == (
        "alice: UpdateItem -> alice: GetItem (stale: {PK: 'POST#hello-world', SK: 'STATS'} without alice's "
        "UpdateItem): the calls were told [0] (in 1 of the 2 behaviours explored for alice, which differ in which "
        "reads are answered stale). Why: alice's GetItem was answered {PK: 'POST#hello-world', SK: 'STATS'} without "
        "alice's UpdateItem. A default GetItem, BatchGetItem, Query or Scan is eventually consistent: decide on "
        "ConsistentRead=True, or better, put the check in the write's ConditionExpression")
    assert report.schedule == ("alice", "alice~1")


def versioned_increment(table):
    """Read (eventually consistent), then write only if the value is still the one read; retry on refusal."""
    while True:
        current = table.get_item(Key=KEY)["Item"]["views"]
        try:
            table.put_item(Item={**KEY, "views": current + 1}, ConditionExpression="#v = :seen",
                           ExpressionAttributeNames={"#v": "views"}, ExpressionAttributeValues={":seen": current})
            return
        except table.meta.client.exceptions.ConditionalCheckFailedException:
            continue


def test_an_eventually_consistent_read_before_a_version_checked_write_passes_it_only_retries_more(lab):
    report = check_increment(versioned_increment, consistency="dynamodb")
    assert report.passed, report.message
    strong = check_increment(versioned_increment)
    explored = int(report.message.split("in all ")[1].split(" ")[0])
    assert explored > int(strong.message.split("in all ")[1].split(" ")[0])


def at_most_one_increment(table):
    """Increments that stop at 1: a conditional ADD, refused (and answered None) once the counter is 1, else 1."""
    try:
        add_increment_if_zero(table)
        return 1
    except ClientError as error:
        if error.response["Error"]["Code"] != "ConditionalCheckFailedException":
            raise
        return None


def add_increment_if_zero(table):
    table.update_item(Key=KEY, UpdateExpression="ADD #v :one", ConditionExpression="#v = :zero",
                      ExpressionAttributeNames={"#v": "views"}, ExpressionAttributeValues={":one": 1, ":zero": 0})


def test_a_run_logs_none_as_none_beside_numbers(lab):
    log = run_at_once(at_most_one_increment, [(fresh_counter(),)] * 3)
    assert sorted(log["result"], key=str) == [1, None, None]


def test_a_crash_between_two_writes_is_explored_when_asked_and_the_crashed_client_was_told_nothing(lab):
    seen = []

    def two_writes(table):
        add_increment(table)
        add_increment(table)

    def both_or_neither(table, log):
        seen.append(list(log["crashed"]))
        views = table.get_item(Key=KEY, ConsistentRead=True)["Item"]["views"]
        return None if views % 2 == 0 else f"views at {views}: a client stopped between its two increments"

    report = attack("two_writes", two_writes, fresh_counter, lambda table, n: [(table,)] * n, both_or_neither,
                    sizes=(2,), tries=1, orders_of=1, faults=("crash",))
    assert not report.passed
    assert report.message.startswith("alice: UpdateItem (then the client crashes): views at 1: a client stopped "
                                     "between its two increments")
    assert [True] in seen and [False] in seen


def test_calls_on_a_table_they_close_over_are_released_together_too(lab):
    table = fresh_counter()

    def read_then_write():
        """A notebook's racy spend: the table comes from the notebook, not from the arguments."""
        views = table.get_item(Key=KEY)["Item"]["views"]
        table.put_item(Item={**KEY, "views": views + 1})

    log = run_at_once(read_then_write, [()] * 10)
    assert log["sent_ms"].notna().all(), "every call's first request went through the gate"
    assert table.get_item(Key=KEY, ConsistentRead=True)["Item"]["views"] < 10, "ten reads before any write"


def test_the_lab_server_lets_the_first_requests_in_together(lab):
    """Threads cannot send at one instant; the server holds the run's first requests until all have arrived."""
    if lab.kind != "embedded":
        pytest.skip("only the lab server lets a group of requests in together")
    table = fresh_counter()
    log = run_at_once(add_increment, [(table,)] * 20)
    assert log["sent_ms"].max() > log["sent_ms"].min(), "the threads sent their first requests one after another"
    assert list(log["let_in_ms"]) == [0.0] * 20, "every first request was let in when the last one arrived"
    assert table.get_item(Key=KEY, ConsistentRead=True)["Item"]["views"] == 20


def test_a_group_whose_other_requests_never_come_is_let_in_after_a_wait(monkeypatch):
    monkeypatch.setattr(together, "WAIT_AT_MOST", 0.2)
    doors, moments = together.Doors(), []
    began = time.monotonic()
    threads = [threading.Thread(target=lambda: moments.append(doors.let_in("run-1 3"))) for _ in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(moments) == 2 and min(moments) - began >= 0.2, "both waited for the third, then went in"
    assert doors.arrived == {} and doors.complete == {}, "nothing is kept of a finished group"
    malformed = time.monotonic()
    assert doors.let_in("no count") - malformed < 0.2, "a malformed group holds nothing"


@pytest.mark.parametrize("schedule, told", [
    # A transaction whose items all became visible right after its step behaved as one step.
    (("alice", "alice+0", "alice+1", "bob"), ("alice", "bob")),
    # Another client's step between its items: each item made visible is told, those before bob's step too.
    (("alice", "alice+0", "bob", "alice+1"), ("alice", "alice+0", "bob", "alice+1")),
    (("alice", "bob", "alice+0", "alice+1"), ("alice", "bob", "alice+0", "alice+1")),
    # A BatchGetItem read back to back is told once, by its last read; a split one read by read.
    (("bob@0", "bob@1", "alice"), ("bob@1", "alice")),
    (("bob@0", "alice", "bob@1", "bob@2"), ("bob@0", "alice", "bob@1", "bob@2")),
    # Two batches of one client back to back are two batches, each told by its last read, unless one read an item
    # stale: that batch is told read by read, so that the report shows which item was stale.
    (("bob@0", "bob@1", "bob@0", "bob@1", "alice"), ("bob@1", "bob@1", "alice")),
    (("bob@0", "bob@1", "bob@0~1", "bob@1", "alice"), ("bob@1", "bob@0~1", "bob@1", "alice")),
])
def test_a_report_leaves_out_only_the_moves_that_nothing_came_between(schedule, told):
    assert tuple(move for move in told_moves(schedule) if move) == told
