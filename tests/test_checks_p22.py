"""The notebook 22 checkers catch the notebook's own read-then-write starting code and pass correct solutions."""

import pytest
from botocore.exceptions import ClientError

from helpers.checks.p22 import WALLET, check_register, check_spend
from support import notebook_functions, refused

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


def register_that_lets_the_refusal_escape(table, username, user_id):
    table.put_item(Item={"PK": f"USERNAME#{username}", "SK": "USERNAME", "user_id": user_id},
                   ConditionExpression="attribute_not_exists(PK)")
    return True


def spend_that_says_yes_when_refused(table, amount):
    spend(table, amount)
    return True


def test_correct_solutions_pass(lab):
    registered, spent = check_register(register), check_spend(spend)
    assert registered.passed, registered.message
    assert spent.passed, spent.message
    assert "held in 15 runs of up to 50 concurrent calls" in registered.message


@pytest.mark.stress
def test_the_notebooks_starting_register_is_caught(lab, run):
    starting_register, = notebook_functions(NOTEBOOK, "register")
    report = check_register(starting_register)
    assert not report.passed
    assert "users were told they own 'neo'" in report.message
    assert str(report).startswith("FAIL register: ")


@pytest.mark.stress
def test_the_notebooks_starting_spend_is_caught_with_the_overdrawn_balance(lab, run):
    starting_spend, = notebook_functions(NOTEBOOK, "spend")
    report = check_spend(starting_spend)
    assert not report.passed
    assert report.message.startswith("credits -")
    assert "accepted spends of 3 from 10 (with " in report.message


def test_the_notebooks_solutions_pass(lab):
    register_solution, spend_solution = notebook_functions(NOTEBOOK, "register_solution", "spend_solution")
    assert check_register(register_solution).passed
    assert check_spend(spend_solution).passed


def test_a_refusal_that_escapes_as_an_exception_is_reported(lab):
    report = check_register(register_that_lets_the_refusal_escape)
    assert not report.passed
    assert "register raised 'ConditionalCheckFailedException' instead of returning False" in report.message


def test_saying_yes_to_a_refused_spend_is_caught(lab):
    report = check_spend(spend_that_says_yes_when_refused)
    assert not report.passed
    assert "accepted spends of 3 from 10" in report.message


def test_the_failing_run_can_be_plotted_one_bar_per_call(lab):
    starting_spend, = notebook_functions(NOTEBOOK, "spend")
    report = check_spend(starting_spend)
    figure = report.figure()
    assert sum(len(bar.y) for bar in figure.data) == report.calls == len(report.log)
    assert report.message in figure.layout.title.text


def test_a_checker_asks_for_the_function_itself(lab):
    with pytest.raises(TypeError, match="Pass your function itself"):
        check_register("register")
