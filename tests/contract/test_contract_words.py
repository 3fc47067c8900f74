"""Requests DynamoDB refuses in words of its own that moto words otherwise, or accepts: empty expressions, unused
:values and #names, a Query Limit below 1, empty PartiQL batches; and a #name with a list index in a projection.
Words from nubo-db/dynamodb-conformance's captures and dynalite's tests."""
import pytest

UNUSED = "Value provided in ExpressionAttribute{} unused in expressions: keys: {{{}}}"
NO_STATEMENTS = ("1 validation error detected: Value '[]' at '{}' failed to satisfy constraint: Member must have "
                 "length greater than or equal to 1")


def typed_key(key, name):
    """A low-level key no other test uses."""
    return {"PK": {"S": key(name)["PK"]}, "SK": {"S": "META"}}


def test_an_empty_key_condition_expression_is_refused(call, table):
    answer = call("Query", {"TableName": table.name, "KeyConditionExpression": ""})
    assert answer == ("ValidationException", "Invalid KeyConditionExpression: The expression can not be empty;")


def test_an_empty_update_expression_is_refused(call, table, key):
    answer = call("UpdateItem", {"TableName": table.name, "Key": typed_key(key, "a"), "UpdateExpression": ""})
    assert answer == ("ValidationException", "Invalid UpdateExpression: The expression can not be empty;")


@pytest.mark.parametrize("operation", ["PutItem", "DeleteItem"])
def test_an_unused_name_is_refused_in_dynamodb_words(call, table, key, operation):
    item = typed_key(key, "a")
    request = {"PutItem": {"Item": item}, "DeleteItem": {"Key": item}}[operation]
    answer = call(operation, {"TableName": table.name, **request, "ConditionExpression": "attribute_not_exists(PK)",
                              "ExpressionAttributeNames": {"#unused": "x"}})
    assert answer == ("ValidationException", UNUSED.format("Names", "#unused"))


@pytest.mark.parametrize("operation", ["Query", "UpdateItem"])
def test_an_unused_value_is_refused(call, table, key, operation):
    item = typed_key(key, "a")
    request = {"Query": {"KeyConditionExpression": "PK = :v"},
               "UpdateItem": {"Key": item, "UpdateExpression": "SET n = :v"}}[operation]
    answer = call(operation, {"TableName": table.name, **request,
                              "ExpressionAttributeValues": {":v": item["PK"], ":unused": {"S": "x"}}})
    assert answer == ("ValidationException", UNUSED.format("Values", ":unused"))


def test_a_query_limit_below_1_is_refused(call, table, key):
    answer = call("Query", {"TableName": table.name, "KeyConditionExpression": "PK = :v", "Limit": 0,
                            "ExpressionAttributeValues": {":v": typed_key(key, "a")["PK"]}})
    assert answer == ("ValidationException", "1 validation error detected: Value at 'Limit' failed to satisfy "
                                             "constraint: Member must have value greater than or equal to 1")


@pytest.mark.parametrize("operation, member", [("BatchExecuteStatement", "Statements"),
                                               ("ExecuteTransaction", "TransactStatements")])
def test_an_empty_partiql_batch_is_refused(call, operation, member):
    member_name = member[0].lower() + member[1:]
    assert call(operation, {member: []}) == ("ValidationException", NO_STATEMENTS.format(member_name))


def test_a_projection_indexes_a_list_through_a_name(call, table, key):
    item = typed_key(key, "list")
    call("PutItem", {"TableName": table.name, "Item": {**item, "l": {"L": [{"S": "a"}, {"S": "b"}]}}})
    answer = call("GetItem", {"TableName": table.name, "Key": item, "ProjectionExpression": "#l[1]",
                              "ExpressionAttributeNames": {"#l": "l"}, "ConsistentRead": True})
    assert answer == {"Item": {"l": {"L": [{"S": "b"}]}}}
