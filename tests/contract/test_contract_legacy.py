"""The legacy parameters (AttributesToGet, Expected, KeyConditions, ScanFilter, ConditionalOperator, AttributeUpdates)
as DynamoDB takes them: never with the expression parameters, each with its documented meaning. Words from
nubo-db/dynamodb-conformance's captures and dynalite's tests."""
import pytest

MIXED = ("Can not use both expression and non-expression parameters in the same request: Non-expression parameters: "
         "{{{}}} Expression parameters: {{{}}}")
FAILED = ("ConditionalCheckFailedException", "The conditional request failed")


def typed_key(key, name):
    """A low-level key no other test uses."""
    return {"PK": {"S": key(name)["PK"]}, "SK": {"S": "META"}}


@pytest.fixture
def item(call, table, key):
    """The key of an item holding a = "1" and b = "2"."""
    item_key = typed_key(key, "legacy")
    assert call("PutItem", {"TableName": table.name, "Item": {**item_key, "a": {"S": "1"}, "b": {"S": "2"}}}) == {}
    return item_key


def mixtures(table, item):
    """{case: (operation, request, legacy parameter, expression parameter)} for each legacy parameter mixed with the
    expression that replaces it."""
    values = {":v": item["PK"]}
    return {
        "Expected": ("PutItem", {"Item": item, "Expected": {"a": {"Exists": False}},
                                 "ConditionExpression": "attribute_not_exists(a)"}, "Expected", "ConditionExpression"),
        "KeyConditions": ("Query", {"KeyConditions": {"PK": {"ComparisonOperator": "EQ", "AttributeValueList": [
            item["PK"]]}}, "KeyConditionExpression": "PK = :v", "ExpressionAttributeValues": values},
            "KeyConditions", "KeyConditionExpression"),
        "ScanFilter": ("Scan", {"ScanFilter": {"a": {"ComparisonOperator": "NULL"}}, "FilterExpression": "PK = :v",
                                "ExpressionAttributeValues": values}, "ScanFilter", "FilterExpression"),
    }


@pytest.mark.parametrize("case", ["Expected", "KeyConditions", "ScanFilter"])
def test_a_legacy_parameter_with_its_expression_is_refused(call, table, item, case):
    operation, request, legacy, expression = mixtures(table, item)[case]
    assert call(operation, {"TableName": table.name, **request}) == (
        "ValidationException", MIXED.format(legacy, expression))


def test_expression_attribute_values_without_an_expression_are_refused(call, table, item):
    answer = call("PutItem", {"TableName": table.name, "Item": item, "ExpressionAttributeValues": {":v": {"S": "x"}}})
    assert answer == ("ValidationException", "ExpressionAttributeValues can only be specified when using expressions")


@pytest.mark.parametrize("operation", ["GetItem", "Query", "Scan"])
def test_attributes_to_get_returns_only_the_attributes_named(call, table, item, operation):
    request = {"GetItem": {"Key": item, "ConsistentRead": True},
               "Query": {"KeyConditions": {"PK": {"ComparisonOperator": "EQ", "AttributeValueList": [item["PK"]]}}},
               "Scan": {"ScanFilter": {"PK": {"ComparisonOperator": "EQ", "AttributeValueList": [item["PK"]]}}},
               }[operation]
    answer = call(operation, {"TableName": table.name, "AttributesToGet": ["a"], **request})
    assert answer.get("Items", [answer.get("Item")]) == [{"a": {"S": "1"}}]


def test_expected_with_or_holds_when_one_condition_does(call, table, item):
    expected = {"a": {"Value": {"S": "no"}}, "b": {"Value": {"S": "2"}}}
    assert call("PutItem", {"TableName": table.name, "Item": {**item, "c": {"S": "3"}}, "Expected": expected,
                            "ConditionalOperator": "OR"}) == {}
    assert call("PutItem", {"TableName": table.name, "Item": item, "Expected": expected}) == FAILED


def test_expected_exists_false_guards_a_delete(call, table, item):
    assert call("DeleteItem", {"TableName": table.name, "Key": item, "Expected": {"a": {"Exists": False}}}) == FAILED
    assert "Item" in call("GetItem", {"TableName": table.name, "Key": item, "ConsistentRead": True})


def test_attribute_updates_cannot_change_a_key_attribute(call, table, item):
    answer = call("UpdateItem", {"TableName": table.name, "Key": item,
                                 "AttributeUpdates": {"SK": {"Action": "PUT", "Value": {"S": "OTHER"}}}})
    assert answer == ("ValidationException", "One or more parameter values were invalid: Cannot update attribute SK. "
                                             "This attribute is part of the key")
