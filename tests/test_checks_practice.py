"""The practice checkers (notebooks 30-32) pass the notebooks' solutions and catch their starting code and classic bugs."""
import re

import pytest
from botocore.exceptions import ClientError

from helpers.checks.practice import (SEAT, STOCK, WALLET, check_add_tag, check_book_seat, check_book_seat_retry,
                                     check_reserve, check_signup, check_withdraw, check_withdraw_once)
from support import notebook_functions, refused

EXERCISES = [  # (notebook, starting code, solution, checker, what the checker reports about the starting code)
    ("30-seat-booking.ipynb", "book_seat", "book_seat_solution", check_book_seat, "clients were told they hold seat 14C"),
    ("30-seat-booking.ipynb", "book_seat", "book_seat_solution", check_book_seat_retry, "hold seat 14C"),
    ("31-three-conditions.ipynb", "signup", "signup_solution", check_signup, "owns ana@example.com; the table says"),
    ("31-three-conditions.ipynb", "reserve", "reserve_solution", check_reserve, "reservations of 2 from 9, which leave"),
    ("31-three-conditions.ipynb", "add_tag", "add_tag_solution", check_add_tag, "were lost: the profile holds"),
    ("32-wallet-interview.ipynb", "withdraw", "withdraw_solution", check_withdraw, "withdrawals of 80 from 100"),
    ("32-wallet-interview.ipynb", "withdraw_once", "withdraw_once_solution", check_withdraw_once, "was paid 2 times"),
]
IDS = [checker.__name__ for _, _, _, checker, _ in EXERCISES]


@pytest.mark.parametrize("notebook, starting, solution, checker, finding", EXERCISES, ids=IDS)
def test_the_notebooks_solution_passes(lab, notebook, starting, solution, checker, finding):
    correct, = notebook_functions(notebook, solution)
    report = checker(correct)
    assert report.passed, report.message
    assert str(report).startswith("PASS ")


@pytest.mark.stress
@pytest.mark.parametrize("notebook, starting, solution, checker, finding", EXERCISES, ids=IDS)
def test_the_notebooks_starting_code_is_caught(lab, run, notebook, starting, solution, checker, finding):
    broken, = notebook_functions(notebook, starting)
    report = checker(broken)
    assert not report.passed
    assert finding in report.message
    assert report.message.endswith("concurrent calls)")


def book_seat_without_deciding_again(table, seat, who):
    current = table.get_item(Key=SEAT, ConsistentRead=True)["Item"]
    if current["holder"] is not None:
        return current["holder"] == who
    try:
        table.put_item(Item={**current, "holder": who, "version": current["version"] + 1},
                       ConditionExpression="version = :seen", ExpressionAttributeValues={":seen": current["version"]})
        return True
    except ClientError as error:
        if not refused(error):
            raise
        return False


def signup_ignoring_case(table, email, user_id):
    try:
        table.put_item(Item={"PK": f"email#{email}", "SK": "EMAIL", "userId": user_id},
                       ConditionExpression="attribute_not_exists(PK)")
        return user_id
    except ClientError as error:
        if not refused(error):
            raise
        return table.get_item(Key={"PK": f"email#{email}", "SK": "EMAIL"}, ConsistentRead=True)["Item"]["userId"]


def reserve_then_read_the_stock(table, sku, qty):
    try:
        table.update_item(Key=STOCK, UpdateExpression="SET stock = stock - :q", ConditionExpression="stock >= :q",
                          ExpressionAttributeValues={":q": qty})
    except ClientError as error:
        if not refused(error):
            raise
        return None
    return table.get_item(Key=STOCK, ConsistentRead=True)["Item"]["stock"]


def add_tag_giving_up_after_a_conflict(table, tag):
    key = {"PK": "user#ana", "SK": "PROFILE"}
    profile = table.get_item(Key=key, ConsistentRead=True)["Item"]
    try:
        table.put_item(Item={**profile, "tags": sorted(set(profile["tags"]) | {tag}), "version": profile["version"] + 1},
                       ConditionExpression="version = :seen", ExpressionAttributeValues={":seen": profile["version"]})
    except ClientError as error:
        if not refused(error):
            raise


def withdraw_writing_the_computed_balance(table, amount):
    balance = table.get_item(Key=WALLET, ConsistentRead=True)["Item"]["balance"]
    if balance < amount:
        return False
    table.put_item(Item={**WALLET, "balance": balance - amount})
    return True


def withdraw_with_the_condition_only(table, withdrawal_id, amount):
    try:
        table.update_item(Key=WALLET, UpdateExpression="SET balance = balance - :amt",
                          ConditionExpression="balance >= :amt", ExpressionAttributeValues={":amt": amount})
        return "paid"
    except ClientError as error:
        if not refused(error):
            raise
        return "insufficient funds"


def withdraw_in_two_writes(table, withdrawal_id, amount):
    if withdraw_with_the_condition_only(table, withdrawal_id, amount) != "paid":
        return "insufficient funds"
    try:
        table.put_item(Item={"PK": WALLET["PK"], "SK": f"WITHDRAWAL#{withdrawal_id}", "amount": amount},
                       ConditionExpression="attribute_not_exists(PK)")
        return "paid"
    except ClientError as error:
        if not refused(error):
            raise
        return "already paid"


def withdraw_blaming_the_balance_first(table, withdrawal_id, amount):
    try:
        table.meta.client.transact_write_items(TransactItems=[
            {"Update": {"TableName": table.name, "Key": WALLET, "UpdateExpression": "SET balance = balance - :amt",
                        "ConditionExpression": "balance >= :amt", "ExpressionAttributeValues": {":amt": amount}}},
            {"Put": {"TableName": table.name,
                     "Item": {"PK": WALLET["PK"], "SK": f"WITHDRAWAL#{withdrawal_id}", "amount": amount},
                     "ConditionExpression": "attribute_not_exists(PK)"}},
        ])
        return "paid"
    except ClientError as error:
        wallet, _ = (reason["Code"] for reason in error.response["CancellationReasons"])
        return "insufficient funds" if wallet == "ConditionalCheckFailed" else "already paid"


def test_a_booking_that_does_not_decide_again_is_race_safe_but_fails_its_retried_holder(lab):
    assert check_book_seat(book_seat_without_deciding_again).passed
    report = check_book_seat_retry(book_seat_without_deciding_again)
    assert not report.passed
    assert "holds seat 14C but was told it is taken on 1 of its 2 attempts" in report.message


@pytest.mark.stress
@pytest.mark.parametrize("checker, broken, finding", [
    (check_signup, signup_ignoring_case, "items claim ana@example.com"),
    (check_reserve, reserve_then_read_the_stock, "each must hear the stock its own reservation left"),
    (check_add_tag, add_tag_giving_up_after_a_conflict, "were lost: the profile holds"),
    (check_withdraw, withdraw_writing_the_computed_balance, "(a lost update)"),
    (check_withdraw_once, withdraw_with_the_condition_only, "was paid 2 times"),
    (check_withdraw_once, withdraw_in_two_writes, "recorded withdrawals of 30 from 100"),
    (check_withdraw_once, withdraw_blaming_the_balance_first, "its retry was told 'insufficient funds'"),
], ids=lambda value: getattr(value, "__name__", None))
def test_classic_bugs_are_caught_with_what_went_wrong(lab, run, checker, broken, finding):
    report = checker(broken)
    assert not report.passed
    assert finding in report.message


def test_the_example_from_the_issue_reads_as_promised(lab):
    broken, = notebook_functions("32-wallet-interview.ipynb", "withdraw")
    report = check_withdraw(broken)
    assert re.fullmatch(r"balance -\d+ after \d+ withdrawals of 80 from 100 \(with \d+ concurrent calls\)", report.message)
    assert len(report.figure().data) >= 1
