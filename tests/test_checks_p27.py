"""The notebook 27 checkers pass correct solutions and catch the broken ones learners write."""
import uuid

import pytest
from botocore.exceptions import ClientError

from helpers.checks.p27 import check_charge_once, check_handle, check_on_order_paid
from helpers.knobs import get_knobs
from support import notebook_functions, refused, swallowing, hidden_missing_table

NOTEBOOK = "27-idempotency-keys.ipynb"
LEDGER = {"PK": "ACCOUNT#alice", "SK": "LEDGER"}


def charge_with_key(table, request_id, amount):
    try:
        table.update_item(Key=LEDGER, UpdateExpression="SET charges = list_append(charges, :c), #t = #t + :a "
                                                       "ADD requestIds :ids",
                          ConditionExpression="NOT contains(requestIds, :id)", ExpressionAttributeNames={"#t": "total"},
                          ExpressionAttributeValues={":c": [amount], ":a": amount, ":ids": {request_id}, ":id": request_id})
    except ClientError as error:
        if not refused(error):
            raise


def charge_without_key(table, request_id, amount):
    table.update_item(Key=LEDGER, UpdateExpression="SET charges = list_append(charges, :c), #t = #t + :a",
                      ExpressionAttributeNames={"#t": "total"}, ExpressionAttributeValues={":c": [amount], ":a": amount})


def charge_that_raises_on_duplicates(table, request_id, amount):
    table.update_item(Key=LEDGER, UpdateExpression="SET charges = list_append(charges, :c), #t = #t + :a "
                                                   "ADD requestIds :ids",
                      ConditionExpression="NOT contains(requestIds, :id)", ExpressionAttributeNames={"#t": "total"},
                      ExpressionAttributeValues={":c": [amount], ":a": amount, ":ids": {request_id}, ":id": request_id})


def test_a_charge_carrying_its_key_passes_and_leaves_the_knob_off(lab):
    report = check_charge_once(charge_with_key)
    assert report.passed, report.message
    if lab.kind == "embedded":
        assert get_knobs(lab)["lose_response"] is None


def in_every_order(problem, lab):
    """The exhaustive stage's report for two copies of one charge (on the lab server, the first response lost)."""
    steps, orders = ((["alice", "alice", "bob"], 4) if lab.kind == "embedded" else (["alice", "bob"], 2))
    return (f"{' -> '.join(f'{name}: UpdateItem' for name in steps)}: {problem} (in {orders} of the {orders} orders "
            "in which alice and bob's requests can reach DynamoDB)")


def charged_every_copy(lab):
    """What a charge without a key leaves after two copies (and, on the lab server, one SDK retry)."""
    return ("one request (req-0 of 50), sent twice, left charges [50, 50, 50] (total 150)" if lab.kind == "embedded"
            else "one request (req-0 of 50), sent twice, left charges [50, 50] (total 100)")


@pytest.mark.stress
def test_the_notebooks_starting_charge_is_caught_in_every_order(lab, run):
    starting_charge, = notebook_functions(NOTEBOOK, "charge_once")
    report = check_charge_once(starting_charge)
    assert report.message == in_every_order(charged_every_copy(lab), lab)


def test_an_unconditional_charge_is_caught_charging_twice(lab):
    report = check_charge_once(charge_without_key)
    assert not report.passed
    assert report.message == in_every_order(charged_every_copy(lab), lab)


def test_a_charge_that_raises_for_a_duplicate_is_caught(lab):
    report = check_charge_once(charge_that_raises_on_duplicates)
    assert not report.passed
    assert report.message == in_every_order(
        "charge_once raised ConditionalCheckFailedException: The conditional request failed; a duplicate must be answered, not raised", lab)


HANDLE_ORDERS = 38  # two copies of a claiming handler, with any one write's response lost, on the lab server


def claim_then_charge(table, request_id, amount, charge_card, in_progress=RuntimeError, mark=True, claim_by="PutItem"):
    """The claiming handler; `in_progress` is what it raises while another copy works. With `mark`, the claim
    carries this attempt's own token, so the SDK's resend of a claim whose response was lost is accepted. claim_by:
    the claim is a PutItem, or an UpdateItem that sets the same attributes."""
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
        record = table.get_item(Key=key, ConsistentRead=True)["Item"]
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
    orders = HANDLE_ORDERS if lab.kind == "embedded" else 6
    assert f"and in all {orders} orders of the exhaustive stage" in report.message


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
        "whose response was lost, and the handler took its own claim for another copy's (in 12 of the "
        f"{HANDLE_ORDERS} orders in which alice and bob's requests can reach DynamoDB)")


def charged_twice(lab):
    """In how many orders the check-then-write handler charges twice: '16 of the 22 orders' on the lab server (a
    response may be lost too), '4 of the 6 orders' elsewhere."""
    return "16 of the 22 orders" if lab.kind == "embedded" else "4 of the 6 orders"


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
                                     f"the card was charged 2 times for one request (in {charged_twice(lab)}")


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


def test_passing_something_else_than_a_function_says_what_to_pass():
    with pytest.raises(TypeError, match="Pass your function itself"):
        check_charge_once("charge_once")


@pytest.mark.stress
def test_the_notebooks_starting_handler_is_caught_charging_twice(lab, run):
    starting_handle, = notebook_functions(NOTEBOOK, "handle")
    report = check_handle(starting_handle)
    assert report.schedule == ("alice", "bob", "alice", "bob")
    assert report.message == ("alice: GetItem -> bob: GetItem -> alice: PutItem -> bob: PutItem: the card was charged "
                              f"2 times for one request (in {charged_twice(lab)} in which alice and bob's requests can "
                              "reach DynamoDB)")


def test_the_notebooks_solutions_pass_both_stages(lab):
    charge_solution, handle_solution = notebook_functions(NOTEBOOK, "charge_once_solution", "handle_solution")
    charged, handled = check_charge_once(charge_solution), check_handle(handle_solution)
    orders = 4 if lab.kind == "embedded" else 2
    assert charged.passed and charged.message.endswith(f"and in all {orders} orders of the exhaustive stage")
    assert handled.passed and f"and in all {HANDLE_ORDERS if lab.kind == 'embedded' else 6} orders" in handled.message


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


def test_a_webhook_that_writes_event_and_shipment_together_passes(lab):
    report = check_on_order_paid(on_order_paid)
    assert report.passed, report.message
    assert report.message == ("held in 15 runs of up to 50 concurrent calls (261 calls in all), and in all 2 orders "
                              "of the exhaustive stage")


@pytest.mark.stress
def test_the_notebooks_starting_webhook_is_caught_in_every_order(lab, run):
    starting_webhook, = notebook_functions(NOTEBOOK, "on_order_paid")
    report = check_on_order_paid(starting_webhook)
    assert not report.passed
    assert report.message == (
        "alice: GetItem -> alice: PutItem -> bob: GetItem -> alice: PutItem -> bob: PutItem -> bob: PutItem: order-1 "
        "has 2 shipments after its order.paid event (evt-1) was delivered twice, and 2 deliveries were answered "
        "'created' (in 18 of the 20 orders in which alice and bob's requests can reach DynamoDB)")


def test_a_webhook_that_never_ships_is_caught(lab):
    report = check_on_order_paid(on_order_paid_forgetting_the_shipment)
    assert not report.passed
    assert report.message.startswith("alice: PutItem -> bob: PutItem: order-1 has 0 shipments after its order.paid "
                                     "event (evt-1) was delivered twice, and 1 delivery was answered 'created'")


def test_the_notebooks_webhook_solution_passes(lab):
    webhook_solution, = notebook_functions(NOTEBOOK, "on_order_paid_solution")
    report = check_on_order_paid(webhook_solution)
    assert report.passed, report.message
    assert report.message.endswith("and in all 2 orders of the exhaustive stage")


@pytest.mark.parametrize("checker, solution, exercise, answer", [
    (check_charge_once, charge_with_key, "charge_once", False),
    (check_on_order_paid, on_order_paid, "on_order_paid", "duplicate")], ids=["charge_once", "on_order_paid"])
def test_a_solution_that_swallows_every_error_fails_naming_the_error_it_hid(lab, checker, solution, exercise, answer):
    report = checker(swallowing(solution, answer))
    assert not report.passed
    assert report.message.startswith(hidden_missing_table(exercise, answer))


def charge_once_for_the_first_request_only(table, request_id, amount):
    """Broken: attribute_not_exists(requestIds) refuses every request after the first, not just its copies."""
    try:
        table.update_item(Key={"PK": "ACCOUNT#alice", "SK": "LEDGER"},
                          UpdateExpression="SET charges = list_append(charges, :c), #t = #t + :a ADD requestIds :ids",
                          ConditionExpression="attribute_not_exists(requestIds)", ExpressionAttributeNames={"#t": "total"},
                          ExpressionAttributeValues={":c": [amount], ":a": amount, ":ids": {request_id}})
    except ClientError as error:
        if not refused(error):
            raise


def charge_once_per_amount(table, request_id, amount):
    """Broken: deduplicates on the amount, so a second request of the same amount is never charged."""
    try:
        table.update_item(Key={"PK": "ACCOUNT#alice", "SK": "LEDGER"},
                          UpdateExpression="SET charges = list_append(charges, :c), #t = #t + :a",
                          ConditionExpression="NOT contains(charges, :a)", ExpressionAttributeNames={"#t": "total"},
                          ExpressionAttributeValues={":c": [amount], ":a": amount})
    except ClientError as error:
        if not refused(error):
            raise


@pytest.mark.parametrize("charge_once", [charge_once_for_the_first_request_only, charge_once_per_amount])
def test_a_charge_deduplicated_on_the_wrong_thing_is_caught(lab, charge_once):
    report = check_charge_once(charge_once)
    assert not report.passed
    assert report.message.startswith("requests (req-0 of 50, req-1 of 50, req-2 of 20), 5 calls in all, left "
                                     "charges [")
    assert "a request was refused as a duplicate though it was not one" in report.message
