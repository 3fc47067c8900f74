"""The notebook 22 checkers catch the notebook's own read-then-write starting code and pass correct solutions."""

import pytest
from boto3.dynamodb.types import TypeDeserializer
from botocore.exceptions import ClientError

from helpers.checks.p22 import card_key, check_redeem, check_redeem_gift_card, check_register
from support import notebook_functions, refused, swallowing, hidden_missing_table

NOTEBOOK = "22-conditional-writes.ipynb"


def register(table, username, user_id):
    try:
        table.put_item(Item={"PK": f"USERNAME#{username}", "SK": "USERNAME", "user_id": user_id},
                       ConditionExpression="attribute_not_exists(PK)")
        return True
    except ClientError as error:
        if not refused(error):
            raise
        return False


def redeem(table, code, user, order):
    try:
        table.put_item(Item={"PK": f"COUPON#{code}", "SK": f"USER#{user}", "order_id": order},
                       ConditionExpression="attribute_not_exists(PK)")
        return True
    except ClientError as error:
        if not refused(error):
            raise
        return False


def redeem_keyed_by_the_coupon_alone(table, code, user, order):
    """Broken: one item per coupon, so the first user's use refuses every other user."""
    try:
        table.put_item(Item={"PK": f"COUPON#{code}", "SK": "COUPON", "order_id": order},
                       ConditionExpression="attribute_not_exists(PK)")
        return True
    except ClientError as error:
        if not refused(error):
            raise
        return False


CONDITION = "#s = :active AND expires_at > :now AND balance >= :a"


def reason(old, now):
    """Why a payment was refused, from the card DynamoDB returned (None: there was no card)."""
    if old is None:
        return "unknown"
    card = {name: TypeDeserializer().deserialize(value) for name, value in old.items()}
    if card["status"] != "active":
        return "inactive"
    return "expired" if now >= card["expires_at"] else "insufficient"


def told_by_the_old_card(response, now):
    """The refusal's reason from the card it carries, if any."""
    return reason(response.get("Item"), now)


def paying(condition, explain=told_by_the_old_card):
    """A redeem_gift_card whose write is guarded by `condition`, and whose refusals `explain(error response, now)`
    words."""
    status = {"ExpressionAttributeNames": {"#s": "status"}} if "#s" in condition else {}
    active = {":active": "active"} if ":active" in condition else {}

    def redeem_gift_card(table, card, amount, now):
        try:
            table.update_item(Key=card_key(card), UpdateExpression="SET balance = balance - :a",
                              ConditionExpression=condition, **status,
                              ExpressionAttributeValues={":a": amount, ":now": now, **active},
                              ReturnValuesOnConditionCheckFailure="ALL_OLD")
            return "ok"
        except ClientError as error:
            if not refused(error):
                raise
            return explain(error.response, now)
    return redeem_gift_card


redeem_gift_card = paying(CONDITION)


def register_that_lets_the_refusal_escape(table, username, user_id):
    table.put_item(Item={"PK": f"USERNAME#{username}", "SK": "USERNAME", "user_id": user_id},
                   ConditionExpression="attribute_not_exists(PK)")
    return True


def test_a_correct_register_passes(lab):
    registered = check_register(register)
    assert registered.passed, registered.message
    assert "held in 15 runs of up to 50 concurrent calls" in registered.message
    assert registered.message.endswith("and in all 2 distinct orders of the exhaustive stage")


def test_the_exhaustive_stage_catches_the_notebooks_starting_register_on_every_run(lab, run):
    starting_register, = notebook_functions(NOTEBOOK, "register")
    report = check_register(starting_register)
    assert not report.passed
    assert report.message == (
        "alice: GetItem -> bob: GetItem -> alice: PutItem -> bob: PutItem: 2 users were told they own 'neo' "
        "(alice, bob); the table says bob (in 4 of the 6 distinct orders in which alice and bob's requests can "
        "reach DynamoDB). Why: "
        "bob's GetItem read USERNAME#neo/USERNAME as absent; alice's PutItem wrote a newer version; bob's PutItem "
        "wrote USERNAME#neo/USERNAME over alice's: a lost update (Elle: lost-update, a G-single-item cycle). A "
        "read and then a write are two requests: put the check in the write itself, a ConditionExpression "
        "(attribute_not_exists, or version = :read), so that it is refused once another write came between")
    assert report.schedule == ("alice", "bob", "alice", "bob")
    assert str(report).startswith("FAIL register: alice: GetItem -> ")


def test_the_exhaustive_stage_catches_the_notebooks_starting_gift_card_on_every_run(lab, run):
    starting, = notebook_functions(NOTEBOOK, "redeem_gift_card")
    report = check_redeem_gift_card(starting)
    assert not report.passed
    assert report.message == (
        "alice: GetItem -> bob: GetItem -> alice: UpdateItem -> bob: UpdateItem: card GC-1 holds -2 after 2 accepted "
        "payments (6, 6) from 10 (in 4 of the 6 distinct orders in which alice and bob's requests can reach DynamoDB). "
        "Why: "
        "bob's GetItem read CARD#GC-1/CARD as the setup left it; alice's UpdateItem wrote a newer version; bob's "
        "UpdateItem wrote CARD#GC-1/CARD over alice's: a lost update (Elle: lost-update, a G-single-item cycle). "
        "A read and then a write are two requests: put the check in the write itself, a ConditionExpression "
        "(attribute_not_exists, or version = :read), so that it is refused once another write came between")
    assert report.schedule == ("alice", "bob", "alice", "bob")


def test_the_failing_order_replays_in_the_step_through_panel(lab):
    starting, = notebook_functions(NOTEBOOK, "redeem_gift_card")
    panel = check_redeem_gift_card(starting).replay()
    assert panel.history == ["alice: GetItem", "bob: GetItem", "alice: UpdateItem", "bob: UpdateItem"]
    assert panel.stepper.ok is False
    assert panel.verdict.endswith("the invariant is BROKEN")


def test_the_notebooks_solutions_pass(lab):
    register_solution, gift_card_solution = notebook_functions(NOTEBOOK, "register_solution",
                                                               "redeem_gift_card_solution")
    for report in check_register(register_solution), check_redeem_gift_card(gift_card_solution):
        assert report.passed, report.message
        assert report.message.endswith("and in all 2 distinct orders of the exhaustive stage")


def test_a_refusal_that_escapes_as_an_exception_is_reported(lab):
    report = check_register(register_that_lets_the_refusal_escape)
    assert not report.passed
    assert report.message.startswith("alice: PutItem -> bob: PutItem: register raised ConditionalCheckFailedException: "
                                     "The conditional request failed (instead of returning False) (in 2 of the 2 ")


def test_the_failing_order_is_drawn_among_every_order(lab):
    starting, = notebook_functions(NOTEBOOK, "redeem_gift_card")
    figure = check_redeem_gift_card(starting).figure()
    assert figure.layout.title.text == "4 of 6 distinct orders break redeem_gift_card"
    rows = {y for bar in figure.data if bar.type == "bar" for y in bar.y}
    assert rows == {f"order {n}" for n in range(1, 7)}


def test_a_failing_stress_run_can_be_plotted_one_bar_per_call(lab):
    report = check_redeem_gift_card(paying("#s = :active AND expires_at >= :now AND balance >= :a"))
    figure = report.figure()
    assert sum(len(bar.y) for bar in figure.data) == report.calls == len(report.log) == 5
    assert report.message in figure.layout.title.text


def test_a_checker_asks_for_the_function_itself(lab):
    with pytest.raises(TypeError, match="Pass your function itself"):
        check_register("register")


@pytest.mark.parametrize("checker, solution", [(check_register, register), (check_redeem_gift_card, redeem_gift_card),
                                               (check_redeem, redeem)], ids=["register", "redeem_gift_card", "redeem"])
def test_a_solution_that_swallows_every_error_fails_naming_the_error_it_hid(lab, checker, solution):
    report = checker(swallowing(solution))
    assert not report.passed
    assert report.message.startswith(hidden_missing_table(solution.__name__))


def test_a_correct_redeem_passes_both_stages(lab):
    report = check_redeem(redeem)
    assert report.passed, report.message
    assert report.message == ("held in 15 runs of up to 50 concurrent calls (261 calls in all), and in all 2 distinct "
                              "orders of the exhaustive stage")


def test_the_exhaustive_stage_catches_the_notebooks_starting_redeem_on_every_run(lab, run):
    starting_redeem, = notebook_functions(NOTEBOOK, "redeem")
    report = check_redeem(starting_redeem)
    assert not report.passed
    assert report.message == (
        "alice: GetItem -> bob: GetItem -> alice: PutItem -> bob: PutItem: ana got the SAVE10 discount twice "
        "(order-1, order-2); the table records it for order-2 (in 4 of the 6 distinct orders in which alice and bob's "
        "requests can reach DynamoDB). Why: "
        "bob's GetItem read COUPON#SAVE10/USER#ana as absent; alice's PutItem wrote a newer version; bob's "
        "PutItem wrote COUPON#SAVE10/USER#ana over alice's: a lost update (Elle: lost-update, a G-single-item "
        "cycle). A read and then a write are two requests: put the check in the write itself, a "
        "ConditionExpression (attribute_not_exists, or version = :read), so that it is refused once another write "
        "came between")
    assert report.schedule == ("alice", "bob", "alice", "bob")


def test_the_notebooks_redeem_solution_passes(lab):
    redeem_solution, = notebook_functions(NOTEBOOK, "redeem_solution")
    report = check_redeem(redeem_solution)
    assert report.passed, report.message
    assert report.message.endswith("and in all 2 distinct orders of the exhaustive stage")


def test_a_redemption_keyed_by_the_coupon_alone_is_caught(lab):
    report = check_redeem(redeem_keyed_by_the_coupon_alone)
    assert not report.passed
    assert report.message.startswith("alice: PutItem -> bob: PutItem: ana got the SAVE10 discount once (order-1); "
                                     "the table records it for no order")


def test_a_payment_that_refuses_to_leave_zero_is_caught_at_the_boundary(lab):
    report = check_redeem_gift_card(paying("#s = :active AND expires_at > :now AND balance > :a"))
    assert not report.passed
    assert report.message == ("GC-1 paying 5 at now=1000 was refused as 'insufficient', though the card still held 5 "
                              "at the end: a payment that leaves exactly 0 must be accepted (balance >= :amount, not >) "
                              "(with 2 concurrent calls)")


def test_a_payment_at_the_moment_of_expiry_is_caught(lab):
    report = check_redeem_gift_card(paying("#s = :active AND expires_at >= :now AND balance >= :a"))
    assert not report.passed
    assert report.message == ("GC-EXPIRED paying 1 at now=2000 was told 'ok', but the card expires at 2000: "
                              "expected 'expired': a card is expired from its expires_at on (expires_at > :now, not >=) "
                              "(with 5 concurrent calls)")


def test_a_condition_that_never_looks_at_the_status_pays_from_a_blocked_card(lab):
    report = check_redeem_gift_card(paying("attribute_exists(PK) AND expires_at > :now AND balance >= :a"))
    assert not report.passed
    assert report.message.startswith("GC-BLOCKED paying 1 at now=1000 was told 'ok', but the card's status is "
                                     "'blocked': expected 'inactive'")


def test_refusals_that_are_not_told_apart_are_caught(lab):
    report = check_redeem_gift_card(paying(CONDITION, explain=lambda response, now: "insufficient"))
    assert not report.passed
    assert report.message.startswith("GC-EXPIRED paying 1 at now=2000 was told 'insufficient', but the card expires "
                                     "at 2000: expected 'expired'")


def test_reading_the_refused_item_of_a_card_that_does_not_exist_is_named(lab):
    report = check_redeem_gift_card(paying(CONDITION, explain=lambda response, now: reason(response["Item"], now)))
    assert not report.passed
    assert report.message.startswith("redeem_gift_card raised KeyError: 'Item' (GC-NONE paying 1 at now=1000) (with "
                                     "10 concurrent calls). Why: a card that does not exist has no old item")


def test_a_function_that_refuses_everything_is_told_it_accepts_nothing(lab):
    report = check_redeem_gift_card(paying("#s = :active AND expires_at < :now AND balance >= :a"))
    assert not report.passed
    assert report.message.startswith("alice: UpdateItem -> bob: UpdateItem: GC-1 paying 6 at now=1000 was refused as "
                                     "'insufficient', though the card still held 10 at the end; no payment was accepted "
                                     "at all (in 1 of the 1 distinct orders")


def test_raised_carries_dynamodbs_message(lab):
    report = check_redeem_gift_card(paying("status = :active AND expires_at > :now AND balance >= :a"))
    assert not report.passed
    assert report.message.startswith("alice: UpdateItem -> bob: UpdateItem: redeem_gift_card raised "
                                     "ValidationException: Invalid ConditionExpression: Attribute name is a reserved "
                                     "keyword; reserved keyword: status (GC-1 paying 6 at now=1000)")
