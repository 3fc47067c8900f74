"""The notebook 25 checkers pass all-or-nothing transactions and catch the half-done and double-counted ones."""

import pytest
from botocore.exceptions import ClientError

from helpers.checks.p25 import (PROFILE, STOCK, account_key, booking_key, check_change_seat, check_place_order_once,
                                check_total_balance, check_transfer, order_key, seat_key)
from support import all_or_nothing, broken_by_a_crash_alone, notebook_functions, swallowing, hidden_missing_table

pytestmark = pytest.mark.stress


def cancelled_reasons(error):
    """The per-action reason codes of a cancelled transaction; re-raise anything else."""
    if error.response["Error"]["Code"] != "TransactionCanceledException":
        raise error
    return [reason["Code"] for reason in error.response["CancellationReasons"]]


def transfer_actions(table, source, target, amount, source_condition="balance >= :a"):
    """A guarded debit and credit, as TransactItems."""
    return [{"Update": {"TableName": table.name, "Key": account_key(source),
                        "UpdateExpression": "SET balance = balance - :a", "ConditionExpression": source_condition,
                        "ExpressionAttributeValues": {":a": amount}}},
            {"Update": {"TableName": table.name, "Key": account_key(target),
                        "UpdateExpression": "SET balance = balance + :a", "ConditionExpression": "#s = :open",
                        "ExpressionAttributeNames": {"#s": "status"},
                        "ExpressionAttributeValues": {":a": amount, ":open": "open"}}}]


def transfer(table, source, target, amount):
    """A correct transfer: guarded debit and credit in one transaction, sent again while it meets another one."""
    return all_or_nothing(table, transfer_actions(table, source, target, amount))


def transfer_reporting_a_conflict_as_a_refusal(table, source, target, amount):
    """Broken: the same transaction, but any cancellation, a TransactionConflict too, is answered False."""
    try:
        table.meta.client.transact_write_items(TransactItems=transfer_actions(table, source, target, amount))
        return True
    except ClientError as error:
        cancelled_reasons(error)
        return False


def transfer_checked_in_code(table, source, target, amount):
    """Broken: checks the balance in code, then writes twice unguarded."""
    if table.get_item(Key=account_key(source))["Item"]["balance"] < amount:
        return False
    table.update_item(Key=account_key(source), UpdateExpression="SET balance = balance - :a",
                      ExpressionAttributeValues={":a": amount})
    table.update_item(Key=account_key(target), UpdateExpression="SET balance = balance + :a",
                      ExpressionAttributeValues={":a": amount})
    return True


def transfer_in_two_guarded_writes(table, source, target, amount):
    """Broken: two guarded writes; a refused credit leaves the debit in place."""
    try:
        table.update_item(Key=account_key(source), UpdateExpression="SET balance = balance - :a",
                          ConditionExpression="balance >= :a", ExpressionAttributeValues={":a": amount})
        table.update_item(Key=account_key(target), UpdateExpression="SET balance = balance + :a",
                          ConditionExpression="#s = :open", ExpressionAttributeNames={"#s": "status"},
                          ExpressionAttributeValues={":a": amount, ":open": "open"})
        return True
    except ClientError as error:
        if error.response["Error"]["Code"] != "ConditionalCheckFailedException":
            raise
        return False


def order_actions(table, order_id, qty, guard_order=True):
    """The three actions of placing an order (the order Put guarded unless told otherwise)."""
    put = {"TableName": table.name, "Item": {**order_key(order_id), "qty": qty}}
    if guard_order:
        put["ConditionExpression"] = "attribute_not_exists(PK)"
    return [
        {"Put": put},
        {"Update": {"TableName": table.name, "Key": STOCK, "UpdateExpression": "SET stock = stock - :q",
                    "ConditionExpression": "stock >= :q", "ExpressionAttributeValues": {":q": qty}}},
        {"Update": {"TableName": table.name, "Key": PROFILE, "UpdateExpression": "ADD orderCount :one",
                    "ExpressionAttributeValues": {":one": 1}}},
    ]


def place_order(table, order_id, qty):
    """A correct order: a guarded order Put, sent again after a TransactionConflict, and 'already placed' read
    from the reasons."""
    while True:
        try:
            table.meta.client.transact_write_items(TransactItems=order_actions(table, order_id, qty))
            return True
        except ClientError as error:
            reasons = cancelled_reasons(error)
            if "TransactionConflict" not in reasons:
                return reasons[0] == "ConditionalCheckFailed"


def place_order_blaming_conflicts(table, order_id, qty):
    """Broken: a TransactionConflict (its own first attempt still in flight) is answered as a failed order."""
    try:
        table.meta.client.transact_write_items(TransactItems=order_actions(table, order_id, qty))
        return True
    except ClientError as error:
        return cancelled_reasons(error)[0] == "ConditionalCheckFailed"


def place_order_without_guard(table, order_id, qty):
    """Broken: the order Put has no condition, so a duplicate takes stock again."""
    try:
        table.meta.client.transact_write_items(TransactItems=order_actions(table, order_id, qty, guard_order=False))
        return True
    except ClientError as error:
        cancelled_reasons(error)
        return False


def place_order_refusing_duplicates(table, order_id, qty):
    """Broken: reports a duplicate of a placed order as a failure."""
    try:
        table.meta.client.transact_write_items(TransactItems=order_actions(table, order_id, qty))
        return True
    except ClientError as error:
        cancelled_reasons(error)
        return False


def transfer_in_two_writes_undone_on_refusal(table, source, target, amount):
    """Broken: a guarded debit, then a guarded credit, and the debit given back when the credit is refused. Right
    whenever every request is answered once; a lost response resent by the SDK, or a crash between the writes,
    breaks it."""
    try:
        table.update_item(Key=account_key(source), UpdateExpression="SET balance = balance - :a",
                          ConditionExpression="balance >= :a", ExpressionAttributeValues={":a": amount})
    except ClientError as error:
        if error.response["Error"]["Code"] != "ConditionalCheckFailedException":
            raise
        return False
    try:
        table.update_item(Key=account_key(target), UpdateExpression="SET balance = balance + :a",
                          ConditionExpression="#s = :open", ExpressionAttributeNames={"#s": "status"},
                          ExpressionAttributeValues={":a": amount, ":open": "open"})
        return True
    except ClientError as error:
        if error.response["Error"]["Code"] != "ConditionalCheckFailedException":
            raise
        table.update_item(Key=account_key(source), UpdateExpression="SET balance = balance + :a",
                          ExpressionAttributeValues={":a": amount})
        return False


def place_order_in_three_writes(table, order_id, qty):
    """Broken: the order, then the stock, then the count, each guarded, the order taken back when the stock is short.
    Right whenever every request is answered once; a resent count or a crash between the writes breaks it."""
    try:
        table.put_item(Item={**order_key(order_id), "qty": qty}, ConditionExpression="attribute_not_exists(PK)")
    except ClientError as error:
        if error.response["Error"]["Code"] != "ConditionalCheckFailedException":
            raise
        return True
    try:
        table.update_item(Key=STOCK, UpdateExpression="SET stock = stock - :q", ConditionExpression="stock >= :q",
                          ExpressionAttributeValues={":q": qty})
    except ClientError as error:
        if error.response["Error"]["Code"] != "ConditionalCheckFailedException":
            raise
        table.delete_item(Key=order_key(order_id))
        return False
    table.update_item(Key=PROFILE, UpdateExpression="ADD orderCount :one", ExpressionAttributeValues={":one": 1})
    return True


def test_an_order_in_three_writes_is_caught_by_a_resent_write(lab):
    if lab.kind != "embedded":
        pytest.skip("the explorer loses responses on the lab server only")
    report = check_place_order_once(place_order_in_three_writes)
    assert not report.passed
    assert report.message.startswith(
        "alice: PutItem -> alice: UpdateItem -> alice: UpdateItem (response lost, the SDK retries) -> alice: UpdateItem "
        "-> bob: PutItem: orderCount is 2, but 1 order exists (in 32 of the 44 distinct orders in which alice and bob's "
        "requests can reach DynamoDB)")
    assert broken_by_a_crash_alone(report), "a crash between the writes breaks it too"


def test_a_transactional_transfer_passes_lost_responses_and_crashes_included(lab):
    report = check_transfer(transfer)
    assert report.passed, report.message
    if lab.kind == "embedded":
        assert report.message.endswith("and in all 8 distinct orders of the exhaustive stage, and in all 132 distinct "
                                       "orders with lost responses and crashes; and first, A->B 60 and B->A 70 both "
                                       "went through in all 8 of their orders")


def test_a_transfer_that_reports_a_conflict_as_a_refusal_is_caught_naming_the_cause(lab):
    if lab.kind != "embedded":
        pytest.skip("only the lab server's explorer makes a transaction meet another in flight")
    report = check_transfer(transfer_reporting_a_conflict_as_a_refusal)
    assert not report.passed
    assert report.schedule == ("alice", "alice+0", "bob", "alice+1")
    assert report.message == (
        "alice: TransactWriteItems -> alice: TransactWriteItems makes {PK: 'ACCOUNT#A', SK: 'BALANCE'} visible -> bob: "
        "TransactWriteItems -> alice: TransactWriteItems makes {PK: 'ACCOUNT#B', SK: 'BALANCE'} visible: the transfer "
        "of 70 from B to A returned False, though it fits in either order (in 2 of the 4 distinct orders in which "
        "alice and bob's requests can reach DynamoDB). Why: bob's TransactWriteItems "
        "was cancelled by a TransactionConflict, and bob's call answered it as a failed condition: a TransactionConflict "
        "means another transaction was using the item at that moment, not that a condition failed: retry a conflict; "
        "report only a failed condition")


def test_a_transfer_in_two_writes_is_caught_by_a_resent_credit(lab):
    if lab.kind != "embedded":
        pytest.skip("the explorer loses responses on the lab server only")
    report = check_transfer(transfer_in_two_writes_undone_on_refusal)
    assert not report.passed
    assert report.message == (
        "alice: UpdateItem -> alice: UpdateItem (response lost, the SDK retries) -> alice: UpdateItem -> bob: "
        "UpdateItem: the accounts hold 260 in all, not 200: money was lost or created (in 20 of the 32 distinct orders "
        "in which alice and bob's requests can reach DynamoDB). Why: "
        "alice's UpdateItem was applied and its response lost; the SDK sent it again and it was applied "
        "a second time. A write must refuse its own repeat: a condition on something unique to the "
        "request (an id it writes), or TransactWriteItems with a ClientRequestToken")
    assert broken_by_a_crash_alone(report), "a crash between the debit and the credit breaks it too"


def test_checking_the_balance_in_code_is_caught(lab, run):
    report = check_transfer(transfer_checked_in_code)
    assert not report.passed


def test_two_guarded_writes_lose_money_when_the_second_is_refused(lab):
    report = check_transfer(transfer_in_two_guarded_writes)
    assert not report.passed
    assert "money was lost or created" in report.message


def test_an_order_transaction_that_reads_the_reasons_passes(lab):
    report = check_place_order_once(place_order)
    assert report.passed, report.message


def test_a_conflict_answered_as_a_failed_order_is_caught_naming_the_cause(lab):
    report = check_place_order_once(place_order_blaming_conflicts)
    assert not report.passed
    assert "a call for order 'o0' returned False, but the order exists" in report.message
    assert report.message.endswith("retry a conflict; report only a failed condition")


def test_an_unguarded_order_put_takes_stock_twice(lab, run):
    report = check_place_order_once(place_order_without_guard)
    assert not report.passed
    assert "stock is" in report.message


def test_a_duplicate_reported_as_failed_is_caught(lab):
    report = check_place_order_once(place_order_refusing_duplicates)
    assert not report.passed
    assert "but the order exists" in report.message


NOTEBOOK = "25-transactions.ipynb"


def test_the_notebooks_starting_transfer_is_caught_overdrawing_in_the_same_order_every_run(lab, run):
    starting_transfer, = notebook_functions(NOTEBOOK, "transfer")
    report = check_transfer(starting_transfer)
    assert not report.passed and report.schedule == ("alice", "bob", "alice", "alice", "bob", "bob")
    assert report.message == (
        "alice: GetItem -> bob: GetItem -> alice: UpdateItem -> alice: UpdateItem -> bob: UpdateItem -> bob: UpdateItem: "
        "an account was overdrawn: {'A': -20, 'B': 220, 'C': 0} (in 8 of the 10 distinct orders in which alice and "
        "bob's requests can reach DynamoDB). Why: "
        "bob's GetItem read ACCOUNT#A/BALANCE as the setup left it; alice's UpdateItem wrote a newer "
        "version; bob's UpdateItem read ACCOUNT#B/BALANCE as alice's UpdateItem wrote it: a read skew "
        "(Elle: a G-single-item cycle). A read and then a write are two requests: put the check in the "
        "write itself, a ConditionExpression (attribute_not_exists, or version = :read), so that it is "
        "refused once another write came between")


def test_the_notebooks_starting_place_order_once_is_caught_taking_stock_twice_every_run(lab, run):
    starting_place_order_once, = notebook_functions(NOTEBOOK, "place_order_once")
    report = check_place_order_once(starting_place_order_once)
    assert not report.passed and report.schedule == ("alice", "alice+0", "alice+1", "alice+2", "bob", "bob+0", "bob+1",
                                                     "bob+2")
    assert report.message == ("alice: TransactWriteItems -> bob: TransactWriteItems: stock is 8, but the orders that "
                              "exist (o0) take 1 of 10 (in 4 of the 4 distinct orders in which alice and bob's "
                              "requests can reach DynamoDB)")


def test_the_notebooks_solutions_pass_both_stages(lab):
    transfer_solution, place_order_once_solution = notebook_functions(
        NOTEBOOK, "cancellation_codes", "write_all_or_nothing", "transfer_solution", "place_order_once_solution")[2:]
    transferred, ordered = check_transfer(transfer_solution), check_place_order_once(place_order_once_solution)
    assert transferred.passed, transferred.message
    assert ordered.passed, ordered.message
    assert transferred.message.endswith("and in all 8 distinct orders of the exhaustive stage, and in all 132 "
                                        "distinct orders with lost responses and crashes; and first, A->B 60 and B->A "
                                        "70 both went through in all 8 of their orders")
    assert ordered.message.endswith("and in all 8 distinct orders of the exhaustive stage, and in all 132 distinct "
                                    "orders with lost responses and crashes")


def change_seat_checked_in_code(table, booking, from_seat, to_seat):
    """Broken: checks the seat in code, then writes the three items one by one."""
    if "holder" in table.get_item(Key=seat_key(to_seat))["Item"]:
        return False
    table.update_item(Key=seat_key(to_seat), UpdateExpression="SET holder = :b",
                      ExpressionAttributeValues={":b": booking})
    table.update_item(Key=seat_key(from_seat), UpdateExpression="REMOVE holder")
    table.update_item(Key=booking_key(booking), UpdateExpression="SET seat = :s",
                      ExpressionAttributeValues={":s": to_seat})
    return True


def seat_actions(table, booking, from_seat, to_seat, guard_old_seat=True, guard_booking=True):
    """Take the new seat, release the old one, repoint the booking: each guarded (the old seat's and the booking's
    guards unless told otherwise)."""
    release = {"TableName": table.name, "Key": seat_key(from_seat), "UpdateExpression": "REMOVE holder"}
    if guard_old_seat:
        release.update(ConditionExpression="holder = :b", ExpressionAttributeValues={":b": booking})
    repoint = {"TableName": table.name, "Key": booking_key(booking), "UpdateExpression": "SET seat = :to",
               "ExpressionAttributeValues": {":to": to_seat}}
    if guard_booking:
        repoint.update(ConditionExpression="seat = :from", ExpressionAttributeValues={":to": to_seat,
                                                                                     ":from": from_seat})
    return [
        {"Update": {"TableName": table.name, "Key": seat_key(to_seat), "UpdateExpression": "SET holder = :b",
                    "ConditionExpression": "attribute_not_exists(holder)",
                    "ExpressionAttributeValues": {":b": booking}}},
        {"Update": release},
        {"Update": repoint},
    ]


def change_seat(table, booking, from_seat, to_seat):
    """A correct seat change: the three guarded updates in one transaction."""
    try:
        table.meta.client.transact_write_items(TransactItems=seat_actions(table, booking, from_seat, to_seat))
        return True
    except ClientError as error:
        cancelled_reasons(error)
        return False


def change_seat_in_guarded_steps(table, booking, from_seat, to_seat):
    """Broken: the same three guarded updates, one request each; a refused step leaves the earlier ones."""
    try:
        for action in seat_actions(table, booking, from_seat, to_seat):
            table.update_item(**{k: v for k, v in action["Update"].items() if k != "TableName"})
        return True
    except ClientError as error:
        if error.response["Error"]["Code"] != "ConditionalCheckFailedException":
            raise
        return False


DOUBLE_CLICK = ("; and first, b1 after 7A and 8A at once (a double click) in all 2 distinct orders of its requests, "
                "every read strongly consistent")


def passed_both_scenarios(report, orders):
    """True when a change_seat report passed two bookings after 7A (its exhaustive stage, in all `orders` distinct
    orders) and, first, b1 after 7A and 8A at once."""
    return report.passed and report.message.endswith(f"and in all {orders} distinct orders of the exhaustive "
                                                     f"stage{DOUBLE_CLICK}")


def change_seat_checking_the_booking_in_code(table, booking, from_seat, to_seat):
    """Broken: reads the booking and refuses if it left from_seat, then one transaction that guards only the new seat;
    right for two bookings after one seat, but one booking's two moves at once both pass the check."""
    if table.get_item(Key=booking_key(booking), ConsistentRead=True)["Item"]["seat"] != from_seat:
        return False
    return all_or_nothing(table, seat_actions(table, booking, from_seat, to_seat, guard_old_seat=False,
                                              guard_booking=False))


def test_a_booking_checked_in_code_before_a_transaction_is_caught_moving_to_two_seats_at_once(lab):
    report = check_change_seat(change_seat_checking_the_booking_in_code)
    assert not report.passed
    assert report.schedule == ("alice", "bob", "alice", "bob")
    assert report.message.startswith(
        "alice: GetItem -> bob: GetItem -> alice: TransactWriteItems -> bob: TransactWriteItems: seat 7A is held by "
        "b1, whose booking says seat 8A, after the calls on it: b1 1A->7A answered True (in 2 of the 4 distinct orders "
        "in which alice and bob's requests can reach DynamoDB, every read strongly consistent). Why: both of b1's "
        "moves (1A->7A and 1A->8A) were answered True: guard the old seat in the transaction (holder = :b on the old "
        "seat's Update, or seat = :from on the booking's), so that the move that comes second is refused; a check "
        "made in code before the transaction guards nothing")


@pytest.mark.parametrize("guards", [{"guard_old_seat": False}, {"guard_booking": False}], ids=["booking", "old seat"])
def test_a_transaction_guarding_either_the_old_seat_or_the_booking_passes(lab, guards):
    report = check_change_seat(lambda table, booking, from_seat, to_seat: all_or_nothing(
        table, seat_actions(table, booking, from_seat, to_seat, **guards)))
    assert passed_both_scenarios(report, 8), report.message


def test_change_seat_checked_in_code_double_books_a_seat_naming_the_order(lab):
    report = check_change_seat(change_seat_checked_in_code)
    assert not report.passed
    assert report.message == (
        "alice: GetItem -> bob: GetItem -> alice: UpdateItem -> alice: UpdateItem -> alice: UpdateItem -> "
        "bob: UpdateItem -> bob: UpdateItem -> bob: UpdateItem: booking b1 says seat 7A, but seat 7A is held by b2, "
        "after the calls on it: b1 1A->7A answered True; b2 2A->7A answered True (in 4 of the 6 distinct orders in "
        "which alice and bob's requests can reach DynamoDB). Why: "
        "bob's GetItem read SEAT#7A/SEAT as the setup left it; alice's UpdateItem wrote a newer version; "
        "bob's UpdateItem wrote SEAT#7A/SEAT over alice's: a lost update (Elle: lost-update, a "
        "G-single-item cycle). A read and then a write are two requests: put the check in the write "
        "itself, a ConditionExpression (attribute_not_exists, or version = :read), so that it is refused "
        "once another write came between")


def test_a_transactional_seat_change_passes(lab):
    report = check_change_seat(change_seat)
    assert passed_both_scenarios(report, 4), report.message


def test_a_seat_change_in_guarded_steps_is_caught_leaving_a_seat_held_by_a_double_click(lab):
    report = check_change_seat(change_seat_in_guarded_steps)
    assert not report.passed
    assert report.message.startswith(
        "alice: UpdateItem -> alice: UpdateItem -> alice: UpdateItem -> bob: UpdateItem -> bob: UpdateItem: seat 8A is "
        "held by b1, whose booking says seat 7A, after the calls on it: b1 1A->8A answered False (in 2 of the 2 "
        "distinct orders in which alice and bob's requests can reach DynamoDB, every read strongly consistent)")


def test_a_seat_change_that_swallows_every_error_is_told_which_error_it_hid(lab):
    report = check_change_seat(swallowing(change_seat))
    assert not report.passed
    assert report.message.startswith(hidden_missing_table("change_seat"))


def test_the_notebooks_starting_change_seat_double_books_7a_in_the_same_order_every_run(lab, run):
    starting_change_seat, = notebook_functions(NOTEBOOK, "change_seat")
    report = check_change_seat(starting_change_seat)
    assert not report.passed and report.schedule == ("alice", "bob", "alice", "alice", "alice", "bob", "bob", "bob")
    assert report.message.startswith("alice: GetItem -> bob: GetItem -> alice: UpdateItem -> alice: UpdateItem -> "
                                     "alice: UpdateItem -> bob: UpdateItem -> bob: UpdateItem -> bob: UpdateItem: "
                                     "booking b1 says seat 7A, but seat 7A is held by b2")


def test_the_notebooks_change_seat_solution_passes_both_stages(lab):
    change_seat_solution, = notebook_functions(NOTEBOOK, "cancellation_codes", "write_all_or_nothing",
                                               "change_seat_solution")[2:]
    report = check_change_seat(change_seat_solution)
    assert passed_both_scenarios(report, 8), report.message



def test_every_checker_names_the_error_a_function_that_swallows_everything_hid(lab):
    for check, exercise, solution in ((check_transfer, "transfer", transfer),
                                      (check_place_order_once, "place_order_once", place_order)):
        report = check(swallowing(solution))
        assert not report.passed
        assert report.message.startswith(hidden_missing_table(exercise))


def transfer_leaving_more_than_zero(table, source, target, amount):
    """Broken: `balance > :a` on the source refuses a transfer that empties it."""
    return all_or_nothing(table, transfer_actions(table, source, target, amount, source_condition="balance > :a"))


def test_a_transfer_that_cannot_empty_its_source_is_caught(lab):
    report = check_transfer(transfer_leaving_more_than_zero)
    assert not report.passed
    assert report.message.startswith("a transfer of 100 from A (holding 100) to B (holding 100) returned False; it must "
                                     "go through. Check the condition on A: a transfer may leave exactly 0")
    assert report.message.endswith("(one call at a time)")


def test_a_failing_order_with_transactions_in_flight_replays_in_the_panel_as_explored(lab):
    starting_place_order_once, = notebook_functions(NOTEBOOK, "place_order_once")
    report = check_place_order_once(starting_place_order_once)
    panel = report.replay()
    assert panel.stepper.done and panel.stepper.ok is False
    assert len(panel.history) == len(report.schedule) and panel.history[1].endswith(" visible")


ACCOUNTS = [account_key(name) for name in "ABC"]
READ_COMMITTED = ("a read skew (Elle: a G-single-item cycle). A BatchGetItem, Query or Scan reads its items one at a "
                  "time, and separate reads each at their own moment, so they can read around a transaction: read the "
                  "items together with TransactGetItems")


def total_in_one_scan(table):
    """Broken: one strongly consistent Scan, read-committed against the transfer."""
    return sum(item["balance"] for item in table.scan(ConsistentRead=True)["Items"])


def total_in_three_gets(table):
    """Broken: three strongly consistent GetItems, three moments."""
    return sum(table.get_item(Key=key, ConsistentRead=True)["Item"]["balance"] for key in ACCOUNTS)


def total_in_one_transact_get(table):
    """Broken: a snapshot, but a cancellation for a transfer in flight comes out as an error, never retried."""
    answer = table.meta.client.transact_get_items(TransactItems=[{"Get": {"TableName": table.name, "Key": key}}
                                                                 for key in ACCOUNTS])
    return sum(response["Item"]["balance"] for response in answer["Responses"])


def test_the_notebooks_starting_total_is_caught_reading_half_a_transfer_naming_the_cause(lab, run):
    if lab.kind != "embedded":
        pytest.skip("only the lab server's explorer makes a transaction's items visible one at a time")
    starting_total, = notebook_functions(NOTEBOOK, "total_balance")
    report = check_total_balance(starting_total)
    # The BatchGetItem reads its items one at a time, so its read of A can come before the transfer and its read of B
    # after it (230), an order as plain as the one that reads A after the debit and B before the credit (170), and
    # explored first.
    assert not report.passed and report.schedule == ("auditor@0", "mover", "mover+0", "mover+1", "auditor@1",
                                                     "auditor@2")
    # Every read of the split batch is told: the read of B after the whole transfer is what makes 230.
    assert report.message == (
        "auditor: BatchGetItem reads {PK: 'ACCOUNT#A', SK: 'BALANCE'} -> mover: TransactWriteItems -> auditor: "
        "BatchGetItem reads {PK: 'ACCOUNT#B', SK: 'BALANCE'} -> auditor: BatchGetItem reads {PK: 'ACCOUNT#C', "
        "SK: 'BALANCE'}: total_balance returned 230, but A, B and C "
        "hold 200 at every moment (a transfer only moves money between them): it added up balances from before and "
        f"after one (in 4 of the 9 distinct orders in which mover and auditor's requests can reach DynamoDB). Why: "
        "auditor's BatchGetItem read ACCOUNT#A/BALANCE as the setup left it; mover's TransactWriteItems wrote a newer "
        "version; auditor's BatchGetItem read ACCOUNT#B/BALANCE as mover's TransactWriteItems wrote it: "
        f"{READ_COMMITTED}")
    half_visible = [order for order in report.orders.itertuples()
                    if "mover+0" in order.schedule and order.schedule.index("mover+0") < order.schedule.index("auditor@0")
                    and order.schedule.index("auditor@1") < order.schedule.index("mover+1")]
    assert half_visible and {order.results["auditor"] for order in half_visible} == {170}, "it reads half a transfer"


def test_a_torn_total_of_170_is_reported_with_the_step_that_made_a_visible(lab):
    if lab.kind != "embedded":
        pytest.skip("only the lab server's explorer makes a transaction's items visible one at a time")
    report = check_total_balance(total_in_one_scan)
    assert not report.passed and report.schedule == ("mover", "mover+0", "auditor", "mover+1")
    assert report.message.startswith(
        "mover: TransactWriteItems -> mover: TransactWriteItems makes {PK: 'ACCOUNT#A', SK: 'BALANCE'} visible -> "
        "auditor: Scan -> mover: TransactWriteItems makes {PK: 'ACCOUNT#B', SK: 'BALANCE'} visible: total_balance "
        "returned 170")


@pytest.mark.parametrize("wrong, found", [
    (total_in_one_scan, "(in 2 of the 5 distinct orders in which mover and auditor's requests can reach "
                        "DynamoDB). Why: auditor's Scan read "),
    (total_in_one_scan, READ_COMMITTED),
    (total_in_three_gets, "it added up balances from before and after one (in 3 of the 7 distinct orders in which "
                          "mover and auditor's requests can reach DynamoDB). Why: auditor's GetItem read "),
    (total_in_three_gets, READ_COMMITTED),
    (total_in_one_transact_get, "a call raised TransactionCanceledException: Transaction cancelled, please refer "
                                "cancellation reasons for specific reasons [TransactionConflict, TransactionConflict, "
                                "None] (in 1 of the 3 distinct orders in which mover and auditor's requests can reach "
                                "DynamoDB). Why: auditor's TransactGetItems was answered TransactionCanceledException "
                                "[TransactionConflict, TransactionConflict, None], and it came out of auditor's call: a "
                                "TransactionConflict means another transaction was using the item at that moment, not "
                                "that a condition failed: retry a conflict"),
])
def test_a_total_that_is_not_one_retried_snapshot_is_caught(lab, wrong, found):
    if lab.kind != "embedded":
        pytest.skip("only the lab server's explorer makes a transaction's items visible one at a time")
    report = check_total_balance(wrong)
    assert not report.passed and found in report.message, report.message


def test_the_notebooks_total_solution_passes_and_a_swallowed_missing_table_is_named(lab):
    total_balance_solution, = notebook_functions(NOTEBOOK, "cancellation_codes", "total_balance_solution")[1:]
    report = check_total_balance(total_balance_solution)
    assert report.passed, report.message
    if lab.kind == "embedded":
        assert report.message.endswith("and in all 5 distinct orders of the exhaustive stage")
    hidden = check_total_balance(swallowing(total_balance_solution, answer=200))
    assert not hidden.passed and hidden.message.startswith(hidden_missing_table("total_balance", answer=200))
