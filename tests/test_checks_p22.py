"""The notebook 22 checkers catch the notebook's own read-then-write starting code and pass correct solutions."""

import pytest
from botocore.exceptions import ClientError

from helpers.checks.p22 import WALLET, check_redeem, check_register, check_spend
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


def spend(table, amount):
    try:
        table.update_item(Key=WALLET, UpdateExpression="SET credits = credits - :a", ConditionExpression="credits >= :a",
                          ExpressionAttributeValues={":a": amount})
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


def register_that_lets_the_refusal_escape(table, username, user_id):
    table.put_item(Item={"PK": f"USERNAME#{username}", "SK": "USERNAME", "user_id": user_id},
                   ConditionExpression="attribute_not_exists(PK)")
    return True


def spend_that_says_yes_when_refused(table, amount):
    spend(table, amount)
    return True


def spend_checked_in_code_for_small_amounts(table, amount):
    """Broken only below 6 credits a spend: the exhaustive stage (spends of 6) cannot see it, the stress stage must."""
    if amount >= 6:
        return spend(table, amount)
    if table.get_item(Key=WALLET)["Item"]["credits"] < amount:
        return False
    table.update_item(Key=WALLET, UpdateExpression="SET credits = credits - :a",
                      ExpressionAttributeValues={":a": amount})
    return True


def test_correct_solutions_pass(lab):
    registered, spent = check_register(register), check_spend(spend)
    assert registered.passed, registered.message
    assert spent.passed, spent.message
    assert "held in 15 runs of up to 50 concurrent calls" in registered.message
    assert registered.message.endswith("and in all 2 orders of the exhaustive stage")
    assert spent.message.endswith("and in all 2 orders of the exhaustive stage")


def test_the_exhaustive_stage_catches_the_notebooks_starting_register_on_every_run(lab, run):
    starting_register, = notebook_functions(NOTEBOOK, "register")
    report = check_register(starting_register)
    assert not report.passed
    assert report.message == (
        "alice: GetItem -> bob: GetItem -> alice: PutItem -> bob: PutItem: 2 users were told they own 'neo' "
        "(alice, bob); the table says bob (in 4 of the 6 orders in which alice and bob's requests can "
        "reach DynamoDB)")
    assert report.schedule == ("alice", "bob", "alice", "bob")
    assert str(report).startswith("FAIL register: alice: GetItem -> ")


def test_the_exhaustive_stage_catches_the_notebooks_starting_spend_on_every_run(lab, run):
    starting_spend, = notebook_functions(NOTEBOOK, "spend")
    report = check_spend(starting_spend)
    assert not report.passed
    assert report.message == (
        "alice: GetItem -> bob: GetItem -> alice: UpdateItem -> bob: UpdateItem: credits -2 after 2 accepted "
        "spends of 6 from 10 (in 4 of the 6 orders in which alice and bob's requests can reach DynamoDB)")
    assert report.schedule == ("alice", "bob", "alice", "bob")


def test_the_failing_order_replays_in_the_step_through_panel(lab):
    starting_spend, = notebook_functions(NOTEBOOK, "spend")
    report = check_spend(starting_spend)
    panel = report.replay()
    assert panel.history == ["alice: GetItem", "bob: GetItem", "alice: UpdateItem", "bob: UpdateItem"]
    assert panel.stepper.ok is False
    assert panel.verdict.endswith("the invariant is BROKEN")


@pytest.mark.stress
def test_the_stress_stage_catches_what_two_calls_cannot_show_with_the_overdrawn_balance(lab, run):
    report = check_spend(spend_checked_in_code_for_small_amounts)
    assert not report.passed
    assert report.message.startswith("credits -")
    assert "accepted spends of 5 from 10 (with " in report.message


def test_the_notebooks_solutions_pass(lab):
    register_solution, spend_solution = notebook_functions(NOTEBOOK, "register_solution", "spend_solution")
    for report in check_register(register_solution), check_spend(spend_solution):
        assert report.passed, report.message
        assert report.message.endswith("and in all 2 orders of the exhaustive stage")


def test_a_refusal_that_escapes_as_an_exception_is_reported(lab):
    report = check_register(register_that_lets_the_refusal_escape)
    assert not report.passed
    assert report.message.startswith("alice: PutItem -> bob: PutItem: register raised ConditionalCheckFailedException: "
                                     "The conditional request failed (instead of returning False) (in 2 of the 2 ")


def test_saying_yes_to_a_refused_spend_is_caught(lab):
    report = check_spend(spend_that_says_yes_when_refused)
    assert not report.passed
    assert report.message.startswith("alice: UpdateItem -> bob: UpdateItem: credits 4 after 2 accepted spends of 6 "
                                     "from 10 (in 2 of the 2 orders")


def test_the_failing_order_is_drawn_among_every_order(lab):
    starting_spend, = notebook_functions(NOTEBOOK, "spend")
    figure = check_spend(starting_spend).figure()
    assert figure.layout.title.text == "4 of 6 possible orders break spend"
    rows = {y for bar in figure.data if bar.type == "bar" for y in bar.y}
    assert rows == {f"order {n}" for n in range(1, 7)}


def test_a_failing_stress_run_can_be_plotted_one_bar_per_call(lab):
    report = check_spend(spend_checked_in_code_for_small_amounts)
    figure = report.figure()
    assert sum(len(bar.y) for bar in figure.data) == report.calls == len(report.log)
    assert report.message in figure.layout.title.text


def test_a_checker_asks_for_the_function_itself(lab):
    with pytest.raises(TypeError, match="Pass your function itself"):
        check_register("register")


@pytest.mark.parametrize("checker, solution", [(check_register, register), (check_spend, spend),
                                               (check_redeem, redeem)], ids=["register", "spend", "redeem"])
def test_a_solution_that_swallows_every_error_fails_naming_the_error_it_hid(lab, checker, solution):
    report = checker(swallowing(solution))
    assert not report.passed
    assert report.message.startswith(hidden_missing_table(solution.__name__))


def test_a_correct_redeem_passes_both_stages(lab):
    report = check_redeem(redeem)
    assert report.passed, report.message
    assert report.message == ("held in 15 runs of up to 50 concurrent calls (261 calls in all), and in all 2 orders "
                              "of the exhaustive stage")


def test_the_exhaustive_stage_catches_the_notebooks_starting_redeem_on_every_run(lab, run):
    starting_redeem, = notebook_functions(NOTEBOOK, "redeem")
    report = check_redeem(starting_redeem)
    assert not report.passed
    assert report.message == (
        "alice: GetItem -> bob: GetItem -> alice: PutItem -> bob: PutItem: ana got the SAVE10 discount twice "
        "(order-1, order-2); the table records it for order-2 (in 4 of the 6 orders in which alice and bob's "
        "requests can reach DynamoDB)")
    assert report.schedule == ("alice", "bob", "alice", "bob")


def test_the_notebooks_redeem_solution_passes(lab):
    redeem_solution, = notebook_functions(NOTEBOOK, "redeem_solution")
    report = check_redeem(redeem_solution)
    assert report.passed, report.message
    assert report.message.endswith("and in all 2 orders of the exhaustive stage")


def test_a_redemption_keyed_by_the_coupon_alone_is_caught(lab):
    report = check_redeem(redeem_keyed_by_the_coupon_alone)
    assert not report.passed
    assert report.message.startswith("alice: PutItem -> bob: PutItem: ana got the SAVE10 discount once (order-1); "
                                     "the table records it for no order")


def spend_refusing_what_leaves_zero(table, amount):
    """Broken: `credits > :a` refuses the spend that would leave exactly 0."""
    try:
        table.update_item(Key=WALLET, UpdateExpression="SET credits = credits - :a", ConditionExpression="credits > :a",
                          ExpressionAttributeValues={":a": amount})
        return True
    except ClientError as error:
        if not refused(error):
            raise
        return False


def spend_with_a_typo(table, amount):
    """Broken: `+` is not an UpdateExpression operator here, so DynamoDB refuses the request itself."""
    table.update_item(Key=WALLET, UpdateExpression="SET credits = :a + credits - :a - :a",
                      ConditionExpression="credits >= :a + :a", ExpressionAttributeValues={":a": amount})
    return True


def test_a_spend_that_refuses_to_leave_zero_is_caught_at_the_boundary(lab):
    report = check_spend(spend_refusing_what_leaves_zero)
    assert not report.passed
    assert report.message == ("only 1 of 2 spends of 5 were accepted from 10 credits, though 2 fit; 5 credits were "
                              "left: a spend that leaves exactly 0 must be accepted (credits >= :a, not credits > :a) "
                              "(with 2 concurrent calls)")


def test_raised_carries_dynamodbs_message(lab):
    report = check_spend(spend_with_a_typo)
    assert not report.passed
    assert "spend raised ValidationException: Invalid ConditionExpression: Syntax error; token: \"+\"" in report.message
