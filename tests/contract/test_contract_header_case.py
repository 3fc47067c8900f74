"""Header names in any case (other SDKs send x-amz-target): every DynamoDB rule and teaching knob still applies."""
import http.client
import uuid

import pytest

from helpers.knobs import knobs

TOO_MANY = ("1 validation error detected: Value '[{}]' at 'transactItems' failed to satisfy constraint: "
            "Member must have length less than or equal to 100")


def refusal(code, message):
    """The (status, answer) of a DynamoDB error as it arrives on the wire."""
    return 400, {"__type": f"com.amazonaws.dynamodb.v20120810#{code}", "message": message}


def rule_requests(table, key):
    """{rule: (target, body, expected (status, answer))} for every rule where the lab answers as DynamoDB does."""
    item = {"PK": {"S": key("item")["PK"]}, "SK": {"S": "META"}}
    return {
        "missing TableName": ("CreateTable", {"KeySchema": [{"AttributeName": "PK", "KeyType": "HASH"}],
                                              "AttributeDefinitions": [{"AttributeName": "PK", "AttributeType": "S"}]},
                              refusal("ValidationException", "1 validation error detected: Value null at 'tableName' "
                                                             "failed to satisfy constraint: Member must not be null")),
        "empty transaction": ("TransactWriteItems", {"TransactItems": []}, refusal(
            "ValidationException", "1 validation error detected: Value '[]' at 'transactItems' failed to satisfy "
                                   "constraint: Member must have length greater than or equal to 1")),
        "same item twice": ("TransactGetItems", {"TransactItems": [{"Get": {"TableName": table.name, "Key": item}}] * 2},
                            refusal("ValidationException",
                                    "Transaction request cannot include multiple operations on one item")),
        "over 4 MB": ("TransactWriteItems", {"TransactItems": [
            {"Put": {"TableName": table.name, "Item": {"PK": {"S": f"{item['PK']['S']}{n}"}, "SK": {"S": "META"},
                                                       "blob": {"S": "x" * 395_000}}}} for n in range(11)]},
                      refusal("ValidationException",
                              "The aggregate size of the items in the transaction cannot exceed 4 MB")),
        "undefined #name": ("Scan", {"TableName": table.name, "FilterExpression": "#missing = :v",
                                     "ExpressionAttributeValues": {":v": {"N": "1"}}}, refusal(
            "ValidationException", "Invalid FilterExpression: An expression attribute name used in the document path "
                                   "is not defined; attribute name: #missing")),
        "projection syntax": ("GetItem", {"TableName": table.name, "Key": item, "ProjectionExpression": "!!!"},
                              refusal("ValidationException",
                                      'Invalid ProjectionExpression: Syntax error; token: "!", near: "!!"')),
        "index exists": ("UpdateTable", {"TableName": table.name, "AttributeDefinitions": [
            {"AttributeName": "GSI1PK", "AttributeType": "S"}], "GlobalSecondaryIndexUpdates": [{"Create": {
                "IndexName": "GSI1", "KeySchema": [{"AttributeName": "GSI1PK", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "ALL"}}}]},
            refusal("ValidationException", "Attempting to create an index which already exists")),
        "PartiQL syntax": ("ExecuteStatement", {"Statement": f'SELEC * FROM "{table.name}"'}, refusal(
            "ValidationException", "Statement wasn't well formed, can't be processed: Expected data manipulation")),
        "updated attributes only": ("UpdateItem", {"TableName": table.name, "Key": item, "UpdateExpression": "SET n = :n",
                                                   "ExpressionAttributeValues": {":n": {"N": "7"}},
                                                   "ReturnValues": "UPDATED_NEW"},
                                    (200, {"n": {"N": "7"}})),
    }


@pytest.mark.parametrize("rule", ["missing TableName", "empty transaction", "same item twice", "over 4 MB",
                                  "undefined #name", "projection syntax", "index exists", "PartiQL syntax",
                                  "updated attributes only"])
def test_every_rule_answers_as_dynamodb_whatever_the_header_case(raw, table, key, rule):
    target, body, expected = rule_requests(table, key)[rule]
    status, answer = raw(target, body)
    assert (status, answer.get("Attributes", answer)) == expected


def test_101_actions_are_refused_whatever_the_header_case(raw, table, key):
    gets = [{"Get": {"TableName": table.name, "Key": {"PK": {"S": key(f"item{n}")["PK"]}, "SK": {"S": "META"}}}}
            for n in range(101)]
    status, answer = raw("TransactGetItems", {"TransactItems": gets})
    assert (status, answer["__type"]) == (400, "com.amazonaws.dynamodb.v20120810#ValidationException")
    assert answer["message"].startswith("1 validation error detected: Value '[com.amazonaws.dynamodb.v20120810.")


def test_a_reused_token_is_refused_whatever_the_header_case(raw, table, key):
    token = str(uuid.uuid4())
    put = {"Put": {"TableName": table.name, "Item": {"PK": {"S": key("order")["PK"]}, "SK": {"S": "META"}}}}
    assert raw("TransactWriteItems", {"TransactItems": [put], "ClientRequestToken": token})[0] == 200
    other = {"Put": {"TableName": table.name, "Item": {"PK": {"S": key("other")["PK"]}, "SK": {"S": "META"}}}}
    assert raw("TransactWriteItems", {"TransactItems": [other], "ClientRequestToken": token}) == refusal(
        "IdempotentParameterMismatchException", "DynamoDB rejected the request because you retried a request with a "
        "different payload but with an idempotent token that was already used.")


@pytest.fixture
def embedded(lab):
    """The teaching knobs exist only on the embedded lab server."""
    if lab.kind != "embedded":
        pytest.skip("the teaching knobs exist only on the embedded lab server")
    return lab


def test_lose_response_drops_the_answer_whatever_the_header_case(raw, embedded, table, key):
    item = {"PK": {"S": key("lost")["PK"]}, "SK": {"S": "META"}}
    with knobs(embedded, quiet=True, lose_response="PutItem"):
        with pytest.raises(http.client.RemoteDisconnected):
            raw("PutItem", {"TableName": table.name, "Item": item})
    assert raw("GetItem", {"TableName": table.name, "Key": item, "ConsistentRead": True}) == (200, {"Item": item})


def test_gsi_lag_hides_a_write_from_the_index_whatever_the_header_case(raw, embedded, table, key):
    email = f"EMAIL#{key('lag')['PK']}"
    item = {"PK": {"S": key("lag")["PK"]}, "SK": {"S": "META"}, "GSI1PK": {"S": email}, "GSI1SK": {"S": "x"}}
    with knobs(embedded, quiet=True, gsi_lag=5):
        assert raw("PutItem", {"TableName": table.name, "Item": item}) == (200, {})
        status, answer = raw("Query", {"TableName": table.name, "IndexName": "GSI1",
                                       "KeyConditionExpression": "GSI1PK = :e",
                                       "ExpressionAttributeValues": {":e": {"S": email}}})
    assert (status, answer["Count"]) == (200, 0)
