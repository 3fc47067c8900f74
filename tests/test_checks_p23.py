"""The notebook 23 checkers pass a correct optimistic-locking loop and catch the classic broken ones."""
import pytest
from botocore.exceptions import ClientError

from helpers.checks.p23 import ACCOUNT, check_deposit, check_withdraw

pytestmark = pytest.mark.stress


def change_with_version_check(table, change, attempts=25):
    """Read, apply change(balance) -> new balance or None (refuse), write only if the version is unchanged."""
    for _ in range(attempts):
        item = table.get_item(Key=ACCOUNT, ConsistentRead=True)["Item"]
        balance = change(item["balance"])
        if balance is None:
            return False
        try:
            table.put_item(Item={**item, "balance": balance, "version": item["version"] + 1},
                           ConditionExpression="version = :v", ExpressionAttributeValues={":v": item["version"]})
            return True
        except ClientError as error:
            if error.response["Error"]["Code"] != "ConditionalCheckFailedException":
                raise
    raise RuntimeError("gave up after retries")


def deposit(table, amount):
    """A correct deposit: the version-checked retry loop."""
    return change_with_version_check(table, lambda balance: balance + amount)


def withdraw(table, amount):
    """A correct withdrawal: refuses on the fresh balance, retries the intent."""
    return change_with_version_check(table, lambda balance: balance - amount if balance >= amount else None)


def deposit_without_version_check(table, amount):
    """Broken: read, add, put back, no condition."""
    item = table.get_item(Key=ACCOUNT)["Item"]
    table.put_item(Item={**item, "balance": item["balance"] + amount, "version": item["version"] + 1})
    return True


def deposit_with_add(table, amount):
    """Broken for this exercise: the balance is right but the version never moves."""
    table.update_item(Key=ACCOUNT, UpdateExpression="ADD balance :a", ExpressionAttributeValues={":a": amount})
    return True


def withdraw_retrying_the_stale_write(table, amount):
    """Broken: computes the new balance once and retries that stale write."""
    item = table.get_item(Key=ACCOUNT, ConsistentRead=True)["Item"]
    if item["balance"] < amount:
        return False
    balance = item["balance"] - amount
    return change_with_version_check(table, lambda _: balance)


def test_a_versioned_retry_loop_passes_both_checkers(lab):
    deposited, withdrawn = check_deposit(deposit), check_withdraw(withdraw)
    assert deposited.passed, deposited.message
    assert withdrawn.passed, withdrawn.message


def test_a_deposit_without_the_version_check_loses_updates(lab, run):
    report = check_deposit(deposit_without_version_check)
    assert not report.passed
    assert "reported success and should have left" in report.message


def test_a_deposit_that_skips_the_version_is_caught_even_when_the_balance_is_right(lab):
    report = check_deposit(deposit_with_add)
    assert not report.passed
    assert "the version is 1 after" in report.message


def test_retrying_the_stale_write_is_caught(lab, run):
    report = check_withdraw(withdraw_retrying_the_stale_write)
    assert not report.passed


def test_a_checker_refuses_something_that_is_not_a_function(lab):
    with pytest.raises(TypeError, match="Pass your function itself"):
        check_deposit("deposit")
