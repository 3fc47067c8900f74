"""ClientRequestToken (notebooks 25, 27): within 10 minutes a token names one transaction, run once."""
import uuid

import pytest
from botocore.exceptions import ClientError


def add_views(client, table, key, token, amount):
    """An unconditional ADD in a transaction carrying the given token."""
    client.transact_write_items(ClientRequestToken=token, TransactItems=[
        {"Update": {"TableName": table.name, "Key": key("post"), "UpdateExpression": "ADD #v :n",
                    "ExpressionAttributeNames": {"#v": "views"}, "ExpressionAttributeValues": {":n": amount}}}])


def views(table, key):
    """The post's view count, read consistently."""
    return table.get_item(Key=key("post"), ConsistentRead=True)["Item"]["views"]


def test_an_unconditional_add_replayed_with_its_token_counts_once(client, table, key):
    token = str(uuid.uuid4())
    add_views(client, table, key, token, 1)
    add_views(client, table, key, token, 1)
    assert views(table, key) == 1


def test_a_replayed_create_only_transaction_succeeds_and_changes_nothing(client, table, key):
    token = str(uuid.uuid4())
    actions = [
        {"Put": {"TableName": table.name, "Item": {**key("o1"), "qty": 2},
                 "ConditionExpression": "attribute_not_exists(PK)"}},
        {"Update": {"TableName": table.name, "Key": key("alice"), "UpdateExpression": "ADD orderCount :one",
                    "ExpressionAttributeValues": {":one": 1}}},
    ]
    client.transact_write_items(ClientRequestToken=token, TransactItems=actions)
    client.transact_write_items(ClientRequestToken=token, TransactItems=actions)
    assert table.get_item(Key=key("alice"), ConsistentRead=True)["Item"]["orderCount"] == 1


def test_a_token_reused_with_other_parameters_is_refused_and_changes_nothing(client, table, key):
    token = str(uuid.uuid4())
    add_views(client, table, key, token, 1)
    with pytest.raises(ClientError) as refused:
        add_views(client, table, key, token, 5)
    assert refused.value.response["Error"]["Code"] == "IdempotentParameterMismatchException"
    assert views(table, key) == 1


def test_a_token_longer_than_36_characters_is_refused_before_anything_is_written(client, table, key):
    token = f"transfer-{uuid.uuid4()}"
    with pytest.raises(ClientError) as refused:
        add_views(client, table, key, token, 1)
    assert refused.value.response["Error"] == {
        "Code": "ValidationException",
        "Message": f"1 validation error detected: Value '{token}' at 'clientRequestToken' failed to satisfy "
                   "constraint: Member must have length less than or equal to 36"}
    assert "Item" not in table.get_item(Key=key("post"), ConsistentRead=True)
