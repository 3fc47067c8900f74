"""Condition and filter functions on every attribute type: size() and begins_with() as DynamoDB evaluates them."""
import pytest

BLOB = b"\x00\xffabc"


@pytest.fixture
def items(call, table, key):
    """The partition key of three items: one with a binary `b`, one without it, one whose `b` is a number."""
    pk = {"S": key("sized")["PK"]}
    for sk, extra in (("1", {"b": {"B": BLOB}}), ("2", {}), ("3", {"b": {"N": "5"}})):
        assert call("PutItem", {"TableName": table.name, "Item": {"PK": pk, "SK": {"S": sk}, **extra}}) == {}
    return pk


def sort_keys(answer):
    """The sort keys of the items an answer holds."""
    return [item["SK"]["S"] for item in answer["Items"]]


@pytest.mark.parametrize("operation", ["Query", "Scan"])
def test_size_of_a_binary_attribute_filters_items_that_lack_it_or_have_a_number(call, table, items, operation):
    body = {"TableName": table.name, "FilterExpression": "size(b) = :n",
            "ExpressionAttributeValues": {":pk": items, ":n": {"N": str(len(BLOB))}}}
    body.update({"KeyConditionExpression": "PK = :pk"} if operation == "Query" else
                {"FilterExpression": "PK = :pk AND size(b) = :n"})
    assert sort_keys(call(operation, body)) == ["1"]


@pytest.mark.parametrize("sk", ["2", "3"])
def test_a_condition_on_the_size_of_a_missing_or_number_attribute_fails(call, table, items, sk):
    answer = call("PutItem", {"TableName": table.name, "Item": {"PK": items, "SK": {"S": sk}},
                              "ConditionExpression": "size(b) > :n", "ExpressionAttributeValues": {":n": {"N": "0"}}})
    assert answer == ("ConditionalCheckFailedException", "The conditional request failed")


def test_begins_with_matches_the_leading_bytes_of_a_binary_attribute(call, table, items):
    answer = call("Query", {"TableName": table.name, "KeyConditionExpression": "PK = :pk",
                            "FilterExpression": "begins_with(b, :start)",
                            "ExpressionAttributeValues": {":pk": items, ":start": {"B": BLOB[:2]}}})
    assert sort_keys(answer) == ["1"]
