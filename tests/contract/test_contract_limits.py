"""Transaction limits (notebook 25): 1 to 100 actions, 4 MB in all, one action per item."""
import re

import pytest
from botocore.exceptions import ClientError

from helpers import tracing

MULTIPLE_OPERATIONS = "Transaction request cannot include multiple operations on one item"


def length_error(constraint, model_class="TransactWriteItem", count=0):
    """DynamoDB's wording for a TransactItems list of the wrong length: the list printed as Java prints it."""
    members = ", ".join([rf"com\.amazonaws\.dynamodb\.v20120810\.{model_class}@[0-9a-f]+"] * count)
    return re.compile(rf"1 validation error detected: Value '\[{members}\]' at 'transactItems' "
                      rf"failed to satisfy constraint: Member must have length {constraint}")


def puts(table, key, count, **attributes):
    """`count` Put actions on distinct items."""
    return [{"Put": {"TableName": table.name, "Item": {**key(f"item{n}"), **attributes}}} for n in range(count)]


def gets(table, key, count):
    """`count` Get actions on distinct items."""
    return [{"Get": {"TableName": table.name, "Key": key(f"item{n}")}} for n in range(count)]


def refusal(call, **params):
    """The error DynamoDB answers a call with (the call must fail)."""
    with pytest.raises(ClientError) as refused, tracing(False):
        call(**params)
    return refused.value.response["Error"]


def written(table, key, count):
    """How many of the first `count` items exist."""
    return sum("Item" in table.get_item(Key=key(f"item{n}"), ConsistentRead=True) for n in range(count))


@pytest.mark.parametrize("operation", ["transact_write_items", "transact_get_items"])
def test_an_empty_transaction_is_refused(unvalidated_client, operation):
    error = refusal(getattr(unvalidated_client, operation), TransactItems=[])
    assert error["Code"] == "ValidationException"
    assert length_error("greater than or equal to 1").fullmatch(error["Message"])


@pytest.mark.parametrize("operation", ["transact_write_items", "transact_get_items"])
def test_101_actions_are_refused_in_dynamodb_words(client, table, key, operation):
    actions = {"transact_write_items": puts, "transact_get_items": gets}[operation](table, key, 101)
    error = refusal(getattr(client, operation), TransactItems=actions)
    model_class = {"transact_write_items": "TransactWriteItem", "transact_get_items": "TransactGetItem"}[operation]
    assert error["Code"] == "ValidationException"
    assert length_error("less than or equal to 100", model_class, 101).fullmatch(error["Message"])
    assert written(table, key, 101) == 0


def test_exactly_100_writes_and_then_100_gets_are_accepted(client, table, key):
    with tracing(False):
        client.transact_write_items(TransactItems=puts(table, key, 100, n=1))
        responses = client.transact_get_items(TransactItems=gets(table, key, 100))["Responses"]
    assert [entry["Item"] for entry in responses] == [{**key(f"item{n}"), "n": 1} for n in range(100)]


def test_more_than_4_mb_in_one_transaction_is_refused_and_nothing_is_written(client, table, key):
    over_4_mb = puts(table, key, 11, blob="x" * 395_000)
    assert refusal(client.transact_write_items, TransactItems=over_4_mb)["Code"] == "ValidationException"
    assert written(table, key, 11) == 0


def test_just_under_4_mb_in_one_transaction_is_accepted(client, table, key):
    with tracing(False):
        client.transact_write_items(TransactItems=puts(table, key, 9, blob="x" * 395_000))
    stored = written(table, key, 9)
    with tracing(False):  # 3.5 MB left in the shared table would push other tests' items past a Scan's first 1 MB
        for n in range(9):
            table.delete_item(Key=key(f"item{n}"))
    assert stored == 9


@pytest.mark.parametrize("second", ["Put", "Update", "Delete", "ConditionCheck"])
def test_two_actions_on_one_item_are_refused_and_nothing_is_written(client, table, key, second):
    item = key("item0")
    other = {
        "Put": {"Item": {**item, "n": 2}},
        "Update": {"Key": item, "UpdateExpression": "SET n = :two", "ExpressionAttributeValues": {":two": 2}},
        "Delete": {"Key": item},
        "ConditionCheck": {"Key": item, "ConditionExpression": "attribute_not_exists(PK)"},
    }[second]
    actions = puts(table, key, 1, n=1) + [{second: {"TableName": table.name, **other}}]
    assert refusal(client.transact_write_items, TransactItems=actions) == {
        "Code": "ValidationException", "Message": MULTIPLE_OPERATIONS}
    assert written(table, key, 1) == 0


def test_the_same_key_twice_in_transact_get_items_is_refused(client, table, key):
    table.put_item(Item=key("item0"))
    actions = gets(table, key, 1) * 2
    assert refusal(client.transact_get_items, TransactItems=actions) == {
        "Code": "ValidationException", "Message": MULTIPLE_OPERATIONS}
