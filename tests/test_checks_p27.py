"""The notebook 27 checkers pass correct solutions and catch the broken ones learners write."""
import random
import time
import uuid

import pytest
from botocore.exceptions import ClientError

from helpers.explore.frames import STALE_FIX
from helpers.checks.p27 import check_handle, check_on_order_paid, check_transfer
from helpers.knobs import get_knobs
from support import notebook_functions, refused, swallowing, hidden_missing_table

NOTEBOOK = "27-idempotency-keys.ipynb"
ATTEMPTS = 10


def answered(send, conflict_is_refusal=False):
    """True once send() went through, False for a cancelled transaction; one cancelled for a TransactionConflict is
    sent again after a jittered backoff, unless `conflict_is_refusal` (the mistake: answered False as well)."""
    for attempt in range(ATTEMPTS):
        try:
            send()
            return True
        except ClientError as error:
            if error.response["Error"]["Code"] != "TransactionCanceledException":
                raise
            codes = [reason["Code"] for reason in error.response["CancellationReasons"]]
            if conflict_is_refusal or "TransactionConflict" not in codes:
                return False
            time.sleep(random.uniform(0, 0.01 * 2 ** attempt))
    raise RuntimeError(f"still conflicting after {ATTEMPTS} attempts")


def transfer_with(table, request_id, source, target, amount, token=None, condition="balance >= :a", on_target=None,
                  credit="SET balance = balance + :a", credit_values=None, conflict_is_refusal=False):
    """A transfer as one TransactWriteItems: `token` is its ClientRequestToken (None: botocore makes one per call),
    `condition` the source's, `on_target` a condition on the target; `credit` and `credit_values` its update;
    `conflict_is_refusal` answers a TransactionConflict False instead of sending the transfer again."""
    debit = {"TableName": table.name, "Key": {"PK": f"ACCOUNT#{source}", "SK": "BALANCE"},
             "UpdateExpression": "SET balance = balance - :a", "ConditionExpression": condition,
             "ExpressionAttributeValues": {":a": amount}}
    deposit = {"TableName": table.name, "Key": {"PK": f"ACCOUNT#{target}", "SK": "BALANCE"}, "UpdateExpression": credit,
               "ExpressionAttributeValues": {":a": amount, **(credit_values or {})},
               **({"ConditionExpression": on_target} if on_target else {})}
    return answered(lambda: table.meta.client.transact_write_items(
        TransactItems=[{"Update": debit}, {"Update": deposit}], **({"ClientRequestToken": token} if token else {})),
        conflict_is_refusal)


def transfer_once(table, request_id, source, target, amount):
    """A correct transfer: the client's request id is the transaction's token."""
    return transfer_with(table, request_id, source, target, amount, token=request_id)


def in_every_order(problem, orders=2):
    """The exhaustive stage's report for a transfer of 30 from acct-0 and the client's retry, broken in all its
    `orders` distinct orders (2 when both transactions are refused at once; more when they can be ongoing, as on DynamoDB)."""
    return (f"alice: TransactWriteItems -> bob: TransactWriteItems: {problem} (in {orders} of the {orders} distinct "
            "orders in which alice and bob's requests can reach DynamoDB)")


def explored(lab, orders):
    """How many distinct orders the exhaustive stage runs: `orders` on the lab server, which makes each transaction's items
    visible one at a time; 2 elsewhere, where each transaction is applied at once."""
    return orders if lab.kind == "embedded" else 2


MOVED_TWICE = ("one transfer of 30 from acct-0 to acct-1, sent twice, moved 60 (it should move 30): acct-0 100 -> 40, "
               "acct-1 10 -> 70. Why: the client's retry was applied as a new transfer (twice in all): pass "
               "ClientRequestToken=request_id to the one TransactWriteItems (without it, botocore makes a new token "
               "for each call, which covers only the SDK's own resends of that call)")


@pytest.mark.stress
def test_the_notebooks_starting_transfer_is_caught_moving_the_money_twice_in_every_order(lab, run):
    starting_transfer, = notebook_functions(NOTEBOOK, "transfer")
    report = check_transfer(starting_transfer)
    assert report.schedule == (("alice", "alice+0", "alice+1", "bob", "bob+0", "bob+1") if lab.kind == "embedded"
                               else ("alice", "bob"))
    assert report.message == in_every_order(MOVED_TWICE, explored(lab, 4))


def test_a_transfer_that_must_leave_more_than_0_is_caught_refusing_the_exact_amount():
    report = check_transfer(lambda *args: transfer_with(*args, token=args[1], condition="balance > :a"))
    assert not report.passed
    assert report.message.startswith(
        "one transfer of 45 from acct-2 to acct-3, sent twice, moved 0 (it should move 45): acct-2 45 -> 45, acct-3 "
        "11 -> 11. Why: acct-2 holds exactly 45: a transfer may leave 0 (balance >= :amount, not balance > :amount) "
        "(with ")


def test_a_condition_on_the_target_is_caught_refusing_every_transfer(lab):
    report = check_transfer(lambda *args: transfer_with(*args, token=args[1], condition="attribute_exists(PK)",
                                                         on_target="balance >= :a"))
    assert not report.passed
    assert report.message == in_every_order(
        "every call was answered False and nothing moved, though acct-0 holds 100, enough for a transfer of 30: "
        "refusing every transfer is safe but does nothing; a transfer its source can pay must go through", 1) + (
        ". Why: alice's TransactWriteItems [Update, Update] was refused before anyone had written anything: its "
        "condition is false for the item as the setup left it. Make the condition test what must be true for the "
        "write to go ahead")


def test_a_condition_that_the_account_exists_is_caught_overdrawing_it():
    report = check_transfer(lambda *args: transfer_with(*args, token=args[1], condition="attribute_exists(balance)"))
    assert not report.passed
    assert report.message.startswith(
        "one transfer of 25 from acct-6 to acct-7, sent twice, moved 25 (it should move 0): acct-6 24 -> -1, acct-7 "
        "13 -> 38. Why: acct-6 held only 24: the debit needs the condition balance >= :amount on the source's balance")


def test_a_transfer_that_stamps_the_time_is_caught_by_its_own_token(lab):
    report = check_transfer(lambda *args: transfer_with(*args, token=args[1],
                                                         credit="SET balance = balance + :a, lastTransferAt = :now",
                                                         credit_values={":now": str(time.time_ns())}))
    assert not report.passed
    assert report.message == in_every_order(
        "transfer raised IdempotentParameterMismatchException: DynamoDB rejected the request because you retried a "
        "request with a different payload but with an idempotent token that was already used. Why: a retry sent the "
        "same ClientRequestToken with other parameters: build the whole transaction from the call's arguments alone "
        "(no timestamp, no fresh uuid), so every copy sends the same request", explored(lab, 8)) + (
        ". Why: bob's TransactWriteItems was answered IdempotentParameterMismatchException, and it came out of bob's "
        "call: DynamoDB refused the request itself")


def test_a_token_made_from_the_accounts_and_amount_is_caught_replaying_another_transfer():
    report = check_transfer(lambda table, request_id, source, target, amount: transfer_with(
        table, request_id, source, target, amount, token=f"{source}-{target}-{amount}"))
    assert not report.passed
    assert ("one transfer of 30 from acct-0 to acct-1, sent twice, moved 0 (it should move 30): acct-0 100 -> 100, "
            "acct-1 10 -> 10. Why: every call was answered True, so DynamoDB took a request for one it had already "
            "done: the token must be the request id itself") in report.message


def test_a_ledger_item_read_as_insufficient_funds_is_caught_answering_the_retry_false(lab):
    def transfer_with_ledger(table, request_id, source, target, amount):
        """A ledger Put keyed by the request id refuses the retry, and the retry's refusal is answered False."""
        ledger = {"Put": {"TableName": table.name, "Item": {"PK": f"TRANSFER#{request_id}", "SK": "TRANSFER"},
                          "ConditionExpression": "attribute_not_exists(PK)"}}
        debit, deposit = ({"Update": {"TableName": table.name, "Key": {"PK": f"ACCOUNT#{name}", "SK": "BALANCE"},
                                      "UpdateExpression": f"SET balance = balance {sign} :a",
                                      "ExpressionAttributeValues": {":a": amount}, **condition}}
                          for name, sign, condition in ((source, "-", {"ConditionExpression": "balance >= :a"}),
                                                        (target, "+", {})))
        return answered(lambda: table.meta.client.transact_write_items(TransactItems=[debit, deposit, ledger]))

    report = check_transfer(transfer_with_ledger)
    assert not report.passed
    assert report.message == in_every_order(
        "one transfer of 30 from acct-0 to acct-1, sent twice, moved its 30 once, but the calls were answered True and "
        "False: every copy of a transfer that took effect must be answered True (a retry asks whether it happened), "
        "and only a refusal False", explored(lab, 8))


HANDLE_ORDERS = 38  # two copies of a claiming handler, with any one write's response lost, on the lab server; all
# distinct, as the copy whose claim is accepted (its own resend too) writes the one record at each of its steps


def claim_then_charge(table, request_id, amount, charge_card, in_progress=RuntimeError, mark=True, claim_by="PutItem",
                      consistent=True):
    """The claiming handler; `in_progress` is what it raises while another copy works. With `mark`, the claim
    carries this attempt's own token, so the SDK's resend of a claim whose response was lost is accepted. claim_by:
    the claim is a PutItem, or an UpdateItem that sets the same attributes. consistent: how a refused claim reads
    the record."""
    key = {"PK": f"IDEMPOTENCY#{request_id}", "SK": "RECORD"}
    claim = str(uuid.uuid4())
    condition = "attribute_not_exists(PK) OR claim = :mine" if mark else "attribute_not_exists(PK)"
    values = {":mine": claim} if mark else {}
    try:
        if claim_by == "PutItem":
            table.put_item(Item={**key, "status": "IN_PROGRESS", "claim": claim}, ConditionExpression=condition,
                           **({"ExpressionAttributeValues": values} if values else {}))
        else:
            table.update_item(Key=key, UpdateExpression="SET #s = :s, claim = :c", ConditionExpression=condition,
                              ExpressionAttributeNames={"#s": "status"},
                              ExpressionAttributeValues={**values, ":s": "IN_PROGRESS", ":c": claim})
    except ClientError as error:
        if not refused(error):
            raise
        record = table.get_item(Key=key, ConsistentRead=consistent)["Item"]
        if record["status"] == "COMPLETED":
            return record["response"]
        raise in_progress("request already in progress - retry later")
    response = charge_card(amount)
    table.update_item(Key=key, UpdateExpression="SET #s = :done, #r = :r",
                      ExpressionAttributeNames={"#s": "status", "#r": "response"},
                      ExpressionAttributeValues={":done": "COMPLETED", ":r": response})
    return response


def test_a_handler_whose_claim_carries_its_own_mark_passes(lab):
    report = check_handle(claim_then_charge)
    assert report.passed, report.message
    if lab.kind == "embedded":
        assert get_knobs(lab)["lose_response"] is None, "the checker leaves no claim's response to be lost"
    assert "and in all 6 distinct orders of the exhaustive stage" in report.message
    if lab.kind == "embedded":
        lost = f"and in all {HANDLE_ORDERS} distinct orders with lost responses"
        assert lost in report.message


@pytest.mark.parametrize("claim_by", ["PutItem", "UpdateItem"])
def test_a_handler_that_cannot_survive_a_lost_claim_response_is_caught(lab, claim_by):
    report = check_handle(lambda *args: claim_then_charge(*args, mark=False, claim_by=claim_by))
    if lab.kind != "embedded":
        assert report.passed and "no claim's response was lost" in report.message
        return
    assert not report.passed
    assert report.message == (
        f"alice: {claim_by} (response lost, the SDK retries) -> alice: {claim_by} -> alice: GetItem -> bob: {claim_by} "
        "-> bob: GetItem: the card was never charged and every copy was told to retry later: the SDK resent a claim "
        "whose response was lost, and the handler took its own claim for another copy's (in 2 of the 28 distinct "
        "orders in which alice and bob's requests can reach DynamoDB). Why: "
        f"alice's {claim_by} was applied and its response lost; the SDK sent it again and it was refused "
        f"(ConditionalCheckFailedException) by that first copy, which alice then took for another's. Tell "
        f"your own write from another's: a mark unique to this attempt, compared with the item the "
        f"refusal returns")
    # 32, not HANDLE_ORDERS: a refused claim only reads the record, and commutes with the other copy's reads


def test_check_then_write_is_caught_charging_twice(lab):
    def check_then_write(table, request_id, amount, charge_card):
        key = {"PK": f"IDEMPOTENCY#{request_id}", "SK": "RECORD"}
        record = table.get_item(Key=key, ConsistentRead=True).get("Item")
        if record:
            return record["response"]
        response = charge_card(amount)
        table.put_item(Item={**key, "response": response})
        return response

    report = check_handle(check_then_write)
    assert not report.passed
    assert report.message.startswith("alice: GetItem -> bob: GetItem -> alice: PutItem -> bob: PutItem: "
                                     "the card was charged 2 times for one request (in 2 of the 4 distinct orders")


def test_a_handler_that_reads_the_record_by_default_after_a_refusal_is_caught_by_a_stale_answer(lab):
    if lab.kind != "embedded":
        pytest.skip("only the lab server's explorer answers a default read from a copy that trails")
    report = check_handle(lambda *args: claim_then_charge(*args, consistent=False))
    assert not report.passed
    assert report.message.startswith(  # the default read may miss the very record that refused the claim
        "alice: PutItem -> alice: UpdateItem -> bob: PutItem -> bob: GetItem (stale: {PK: 'IDEMPOTENCY#req-1', SK: "
        "'RECORD'} without alice's PutItem): handle raised KeyError: 'Item'; only RuntimeError ('retry later') may be "
        "raised (in 6 of the 16 distinct orders in which alice and bob's requests can reach DynamoDB). Why: bob's "
        "GetItem "), report.message
    assert report.message.endswith(STALE_FIX), report.message


def test_a_handler_raising_something_else_than_retry_later_is_caught():
    report = check_handle(lambda *args: claim_then_charge(*args, in_progress=ValueError))
    assert not report.passed
    assert "only RuntimeError ('retry later') may be raised" in report.message


def test_a_handler_that_forgets_the_response_is_caught(lab):
    def never_completes(table, request_id, amount, charge_card):
        key = {"PK": f"IDEMPOTENCY#{request_id}", "SK": "RECORD"}
        claim = str(uuid.uuid4())
        try:
            table.put_item(Item={**key, "status": "IN_PROGRESS", "claim": claim},
                           ConditionExpression="attribute_not_exists(PK) OR claim = :mine",
                           ExpressionAttributeValues={":mine": claim})
        except ClientError:
            raise RuntimeError("request already in progress - retry later") from None
        return charge_card(amount)

    report = check_handle(never_completes)
    assert not report.passed
    assert report.message.startswith("alice: PutItem -> bob: PutItem: a retry after the first call finished got "
                                     "'RuntimeError: request already in progress - retry later', not the stored "
                                     "{'chargeId': 'ch_1', 'amount': 50} (in ")


def test_a_transfer_that_answers_a_conflict_false_is_caught_naming_the_conflict(lab):
    if lab.kind != "embedded":
        pytest.skip("only the lab server keeps a transaction ongoing for the exhaustive stage to meet")
    report = check_transfer(lambda *args: transfer_with(*args, token=args[1], conflict_is_refusal=True))
    assert not report.passed
    assert report.message == (
        "alice: TransactWriteItems -> alice: TransactWriteItems makes {PK: 'ACCOUNT#acct-0', SK: 'BALANCE'} visible -> "
        "bob: TransactWriteItems -> alice: TransactWriteItems makes {PK: 'ACCOUNT#acct-1', SK: 'BALANCE'} visible: one transfer of 30 from acct-0 to acct-1, sent twice, moved its 30 once, but the calls "
        "were answered True and False: every copy of a transfer that took effect must be answered True (a retry asks "
        "whether it happened), and only a refusal False (in 2 of the 4 distinct orders in which alice and bob's requests "
        "can reach DynamoDB). Why: bob's TransactWriteItems was cancelled by a TransactionConflict, and bob's call "
        "answered it as a failed condition: a TransactionConflict means another transaction was using the item at "
        "that moment, not that a condition failed: retry a conflict; report only a failed condition")


def test_passing_something_else_than_a_function_says_what_to_pass():
    with pytest.raises(TypeError, match="Pass your function itself"):
        check_transfer("transfer")


@pytest.mark.stress
def test_the_notebooks_starting_handler_is_caught_charging_twice(lab, run):
    starting_handle, = notebook_functions(NOTEBOOK, "handle")
    report = check_handle(starting_handle)
    assert report.schedule == ("alice", "bob", "alice", "bob")
    assert report.message == ("alice: GetItem -> bob: GetItem -> alice: PutItem -> bob: PutItem: the card was charged "
                              "2 times for one request (in 2 of the 4 distinct orders in which alice and bob's "
                              "requests can reach DynamoDB). Why: "
        "bob's GetItem read IDEMPOTENCY#req-1/RECORD as absent; alice's PutItem wrote a newer version; "
        "bob's PutItem wrote IDEMPOTENCY#req-1/RECORD over alice's: a lost update (Elle: lost-update, a "
        "G-single-item cycle). A read and then a write are two requests: put the check in the write "
        "itself, a ConditionExpression (attribute_not_exists, or version = :read), so that it is refused "
        "once another write came between")


def test_the_notebooks_solutions_pass_both_stages(lab):
    transfer_solution, handle_solution = notebook_functions(NOTEBOOK, "transfer_solution", "handle_solution")
    moved, handled = check_transfer(transfer_solution), check_handle(handle_solution)
    embedded = lab.kind == "embedded"
    lost = ", and in all 44 distinct orders with lost responses" if embedded else ""
    assert moved.passed and moved.message.endswith(f"and in all {explored(lab, 8)} distinct orders of the exhaustive "
                                                   f"stage{lost}"), moved.message
    handle_orders = (f"and in all 6 distinct orders of the exhaustive stage, and in all {HANDLE_ORDERS} distinct "
                     "orders with lost responses" if embedded
                     else "and in all 6 distinct orders")
    assert handled.passed and handle_orders in handled.message, handled.message


def on_order_paid(table, event_id, order_id):
    """A correct webhook: the event's record and the shipment in one transaction."""
    try:
        table.meta.client.transact_write_items(TransactItems=[
            {"Put": {"TableName": table.name, "Item": {"PK": f"EVENT#{event_id}", "SK": "EVENT"},
                     "ConditionExpression": "attribute_not_exists(PK)"}},
            {"Put": {"TableName": table.name, "Item": {"PK": f"ORDER#{order_id}", "SK": f"SHIPMENT#{uuid.uuid4()}"}}},
        ])
        return "created"
    except ClientError as error:
        if error.response["Error"]["Code"] != "TransactionCanceledException":
            raise
        return "duplicate"


def on_order_paid_forgetting_the_shipment(table, event_id, order_id):
    """Broken: records the event once, but never writes the shipment."""
    try:
        table.put_item(Item={"PK": f"EVENT#{event_id}", "SK": "EVENT"}, ConditionExpression="attribute_not_exists(PK)")
    except ClientError as error:
        if not refused(error):
            raise
        return "duplicate"
    return "created"


def on_order_paid_recording_then_shipping(table, event_id, order_id):
    """Broken: the event's record is a conditional PutItem and the shipment a second request; right whenever every
    delivery runs to its end, but a crash between the two leaves the event handled and nothing shipped."""
    try:
        table.put_item(Item={"PK": f"EVENT#{event_id}", "SK": "EVENT", "order_id": order_id},
                       ConditionExpression="attribute_not_exists(PK)")
    except ClientError as error:
        if not refused(error):
            raise
        return "duplicate"
    table.put_item(Item={"PK": f"ORDER#{order_id}", "SK": f"SHIPMENT#{uuid.uuid4().hex[:8]}", "status": "PENDING"})
    return "created"


def on_order_paid_shipping_by_event_id_then_recording(table, event_id, order_id):
    """Also correct: the shipment keyed by the event id (a redelivery writes the same item again), then the event's
    record, whose refusal tells a duplicate; a crash between the two leaves a shipment the redelivery rewrites."""
    table.put_item(Item={"PK": f"ORDER#{order_id}", "SK": f"SHIPMENT#{event_id}", "status": "PENDING"})
    try:
        table.put_item(Item={"PK": f"EVENT#{event_id}", "SK": "EVENT"}, ConditionExpression="attribute_not_exists(PK)")
    except ClientError as error:
        if not refused(error):
            raise
        return "duplicate"
    return "created"


def webhook_passed(orders, crashed):
    """An on_order_paid report's PASS message: `orders` distinct orders of the exhaustive stage, then `crashed` with a
    crash after any write."""
    return (f"held in 15 runs of up to 50 concurrent calls (261 calls in all), and in all {orders} distinct orders of "
            f"the exhaustive stage, and in all {crashed} distinct orders with crashes")


def test_a_webhook_that_writes_event_and_shipment_together_passes(lab):
    report = check_on_order_paid(on_order_paid)
    assert report.passed, report.message
    assert report.message == webhook_passed(4, 12)


def test_a_webhook_that_records_the_event_then_ships_is_caught_by_a_crash_between_the_two(lab):
    report = check_on_order_paid(on_order_paid_recording_then_shipping)
    assert not report.passed
    assert report.schedule == ("alice!crash", "bob")
    assert report.message.startswith(
        "alice: PutItem (then the client crashes) -> bob: PutItem: order-1 has 0 shipments after its order.paid event "
        "(evt-1) was delivered twice, one delivery crashing before it answered, and 0 deliveries were answered "
        "'created'. Why: the delivery crashed between its writes, leaving the event recorded and nothing shipped, so "
        "the provider's redelivery was taken for a duplicate: record the event and create the shipment in one "
        "TransactWriteItems, so that they happen together or not at all (in 2 of the 8 distinct orders in which alice "
        "and bob's requests can reach DynamoDB)")


def test_a_webhook_whose_shipment_is_keyed_by_the_event_passes_crashes_included(lab):
    report = check_on_order_paid(on_order_paid_shipping_by_event_id_then_recording)
    assert report.message == webhook_passed(4, 16)


@pytest.mark.stress
def test_the_notebooks_starting_webhook_is_caught_in_every_order(lab, run):
    starting_webhook, = notebook_functions(NOTEBOOK, "on_order_paid")
    report = check_on_order_paid(starting_webhook)
    assert not report.passed
    assert report.message == (
        "alice: GetItem -> alice: PutItem -> bob: GetItem -> alice: PutItem -> bob: PutItem -> bob: PutItem: order-1 "
        "has 2 shipments after its order.paid event (evt-1) was delivered twice, and 2 deliveries were answered "
        "'created' (in 2 of the 4 distinct orders in which alice and bob's requests can reach DynamoDB). Why: "
        "bob's GetItem read EVENT#evt-1/EVENT as absent; alice's PutItem wrote a newer version; bob's "
        "PutItem wrote EVENT#evt-1/EVENT over alice's: a lost update (Elle: lost-update, a G-single-item "
        "cycle). A read and then a write are two requests: put the check in the write itself, a "
        "ConditionExpression (attribute_not_exists, or version = :read), so that it is refused once "
        "another write came between")


def test_a_webhook_that_never_ships_is_caught(lab):
    report = check_on_order_paid(on_order_paid_forgetting_the_shipment)
    assert not report.passed
    assert report.message.startswith("alice: PutItem -> bob: PutItem: order-1 has 0 shipments after its order.paid "
                                     "event (evt-1) was delivered twice, and 1 delivery was answered 'created'")


def test_the_notebooks_webhook_solution_passes(lab):
    webhook_solution, = notebook_functions(NOTEBOOK, "on_order_paid_solution")
    report = check_on_order_paid(webhook_solution)
    assert report.passed, report.message
    assert report.message == webhook_passed(4, 12)


@pytest.mark.parametrize("checker, solution, exercise, answer", [
    (check_transfer, transfer_once, "transfer", False),
    (check_on_order_paid, on_order_paid, "on_order_paid", "duplicate")], ids=["transfer", "on_order_paid"])
def test_a_solution_that_swallows_every_error_fails_naming_the_error_it_hid(lab, checker, solution, exercise, answer):
    report = checker(swallowing(solution, answer))
    assert not report.passed
    assert report.message.startswith(hidden_missing_table(exercise, answer))


def reading_back_its_claim(consistent):
    """A handler with no mark in its claim's condition: a refused claim reads the record back (strongly consistent or
    by default) and goes on when the claim in it is this attempt's own, the SDK's resend of a claim whose response was
    lost."""
    def handle(table, request_id, amount, charge_card):
        key = {"PK": f"IDEMPOTENCY#{request_id}", "SK": "RECORD"}
        claim = str(uuid.uuid4())
        try:
            table.put_item(Item={**key, "status": "IN_PROGRESS", "claim": claim},
                           ConditionExpression="attribute_not_exists(PK)")
        except ClientError as error:
            if not refused(error):
                raise
            record = table.get_item(Key=key, ConsistentRead=consistent).get("Item")
            if record is None or record["claim"] != claim:
                if record is not None and record["status"] == "COMPLETED":
                    return record["response"]
                raise RuntimeError("request already in progress - retry later") from None
        response = charge_card(amount)
        table.update_item(Key=key, UpdateExpression="SET #s = :done, #r = :r",
                          ExpressionAttributeNames={"#s": "status", "#r": "response"},
                          ExpressionAttributeValues={":done": "COMPLETED", ":r": response})
        return response
    return handle


def test_a_claim_read_back_by_default_is_caught_only_by_a_lost_response_and_a_stale_read_together(lab):
    if lab.kind != "embedded":
        pytest.skip("only the lab server loses responses and answers a default read from a copy that trails")
    assert check_handle(reading_back_its_claim(consistent=True)).passed
    report = check_handle(reading_back_its_claim(consistent=False))
    assert not report.passed
    assert report.message.startswith(  # with every read strongly consistent (before), this passed
        "alice: PutItem (response lost, the SDK retries) -> alice: PutItem -> alice: GetItem (stale: {PK: "
        "'IDEMPOTENCY#req-1', SK: 'RECORD'} without alice's PutItem) -> bob: PutItem -> bob: GetItem: the card was "
        "never charged and every copy was told to retry later"), report.message
