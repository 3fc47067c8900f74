"""A Key that does not match the table's key schema is refused as DynamoDB refuses it, in every operation that takes
one: a key attribute of another type (a number, a map, a set where the table's PK is a string), one missing, or an
attribute that is not part of the key. DynamoDB's words, "The provided key element does not match the schema", are
from dynalite's validateKey (checked against DynamoDB), AWS's knowledge-center article on the error (a key of the
wrong data type), and paritysuite/dynamodb-conformance's captures of real DynamoDB (transactions cancel with a
ValidationError reason in the action's place)."""
import pytest
from botocore.exceptions import ClientError

from helpers import tracing

KEY_MISMATCH = "The provided key element does not match the schema"
WRONG_KEYS = {"a number PK": {"PK": {"N": "1"}}, "a map PK": {"PK": {"M": {"a": {"S": "b"}}}},
              "a string-set PK": {"PK": {"SS": ["a"]}}, "a list PK": {"PK": {"L": [{"S": "a"}]}},
              "no SK": {}, "an extra attribute": {"other": {"S": "x"}}}
SET_X = {"UpdateExpression": "SET x = :x", "ExpressionAttributeValues": {":x": {"S": "x"}}}


def wrong_key(key, name, how):
    """A low-level key no other test uses, made wrong as `how` says."""
    key = {"PK": {"S": key(name)["PK"]}, "SK": {"S": "META"}, **WRONG_KEYS[how]}
    return {name: value for name, value in key.items() if how != "no SK" or name != "SK"}


def refusal(call, **params):
    """The whole error response a call gets (it must fail)."""
    with pytest.raises(ClientError) as refused, tracing(False):
        call(**params)
    return refused.value.response


@pytest.mark.parametrize("how", sorted(WRONG_KEYS))
@pytest.mark.parametrize("operation", ["get_item", "delete_item", "update_item", "batch_get_item", "batch_write_item"])
def test_a_key_that_does_not_match_the_schema_is_refused(unvalidated_client, table, key, operation, how):
    bad = wrong_key(key, operation, how)
    params = {"get_item": {"TableName": table.name, "Key": bad},
              "delete_item": {"TableName": table.name, "Key": bad},
              "update_item": {"TableName": table.name, "Key": bad, **SET_X},
              "batch_get_item": {"RequestItems": {table.name: {"Keys": [bad]}}},
              "batch_write_item": {"RequestItems": {table.name: [{"DeleteRequest": {"Key": bad}}]}}}[operation]
    response = refusal(getattr(unvalidated_client, operation), **params)
    assert response["Error"] == {"Code": "ValidationException", "Message": KEY_MISMATCH}


@pytest.mark.parametrize("how", sorted(WRONG_KEYS))
@pytest.mark.parametrize("kind", ["Get", "Update", "Delete", "ConditionCheck"])
def test_a_transaction_action_whose_key_does_not_match_the_schema_cancels_it(unvalidated_client, table, key, kind, how):
    good = {"PK": {"S": key("good")["PK"]}, "SK": {"S": "META"}}
    detail = {"Update": SET_X, "ConditionCheck": {"ConditionExpression": "attribute_not_exists(PK)"}}.get(kind, {})
    actions = [{kind: {"TableName": table.name, "Key": good, **detail}},
               {kind: {"TableName": table.name, "Key": wrong_key(key, kind, how), **detail}}]
    call = unvalidated_client.transact_get_items if kind == "Get" else unvalidated_client.transact_write_items
    response = refusal(call, TransactItems=actions)
    assert response["Error"] == {"Code": "TransactionCanceledException",
                                 "Message": "Transaction cancelled, please refer cancellation reasons for specific "
                                            "reasons [None, ValidationError]"}
    assert response["CancellationReasons"] == [{"Code": "None"}, {"Code": "ValidationError", "Message": KEY_MISMATCH}]


def test_a_key_of_the_schema_s_types_still_reads_and_writes(unvalidated_client, table, key):
    good = {"PK": {"S": key("good")["PK"]}, "SK": {"S": "META"}}
    with tracing(False):
        unvalidated_client.update_item(TableName=table.name, Key=good, **SET_X)
        item = unvalidated_client.get_item(TableName=table.name, Key=good, ConsistentRead=True)["Item"]
        unvalidated_client.delete_item(TableName=table.name, Key=good)
    assert item == {**good, "x": {"S": "x"}}


PUT_KEY_WORDS = {"a number PK": "Type mismatch for key PK expected: S actual: N",
                 "a map PK": "Type mismatch for key PK expected: S actual: M",
                 "a string-set PK": "Type mismatch for key PK expected: S actual: SS",
                 "a list PK": "Type mismatch for key PK expected: S actual: L",
                 "no SK": "Missing the key SK in the item"}


@pytest.mark.parametrize("return_values", ["NONE", "ALL_OLD"])
@pytest.mark.parametrize("how", sorted(PUT_KEY_WORDS))
def test_a_put_item_whose_key_does_not_match_the_schema_is_refused_whatever_it_returns(unvalidated_client, table, key,
                                                                                      how, return_values):
    """A Map, List or set as a key value was an InternalServerError with ReturnValues=ALL_OLD (the old item looked up
    before the key was checked), and a missing key attribute "Validation Exception"."""
    bad = {**wrong_key(key, "put_item", how), "x": {"S": "x"}}
    response = refusal(unvalidated_client.put_item, TableName=table.name, Item=bad, ReturnValues=return_values)
    assert response["Error"] == {"Code": "ValidationException",
                                 "Message": f"One or more parameter values were invalid: {PUT_KEY_WORDS[how]}"}


EMPTY_KEY = ("One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an "
             "empty string value. Key: {}")  # paritysuite/dynamodb-conformance's captures of real DynamoDB


def empty_key_request(table, bad, operation):
    """(call name, params) of one request whose key (or item) is `bad`."""
    put, delete = {"TableName": table.name, "Item": bad}, {"TableName": table.name, "Key": bad}
    update = {**delete, **SET_X}
    check = {**delete, "ConditionExpression": "attribute_not_exists(PK)"}
    return {"get_item": ("get_item", delete), "put_item": ("put_item", put),
            "delete_item": ("delete_item", delete), "update_item": ("update_item", update),
            "batch_get_item": ("batch_get_item", {"RequestItems": {table.name: {"Keys": [bad]}}}),
            "batch_write_item delete": ("batch_write_item",
                                        {"RequestItems": {table.name: [{"DeleteRequest": {"Key": bad}}]}}),
            "batch_write_item put": ("batch_write_item",
                                     {"RequestItems": {table.name: [{"PutRequest": {"Item": bad}}]}}),
            "transact Put": ("transact_write_items", {"TransactItems": [{"Put": put}]}),
            "transact Update": ("transact_write_items", {"TransactItems": [{"Update": update}]}),
            "transact Delete": ("transact_write_items", {"TransactItems": [{"Delete": delete}]}),
            "transact ConditionCheck": ("transact_write_items", {"TransactItems": [{"ConditionCheck": check}]}),
            "transact Get": ("transact_get_items", {"TransactItems": [{"Get": delete}]})}[operation]


@pytest.mark.parametrize("name", ["PK", "SK"])
@pytest.mark.parametrize("operation", ["get_item", "put_item", "delete_item", "update_item", "batch_get_item",
                                       "batch_write_item delete", "batch_write_item put", "transact Put",
                                       "transact Update", "transact Delete", "transact ConditionCheck",
                                       "transact Get"])
def test_an_empty_string_key_value_is_refused_in_every_operation(unvalidated_client, table, key, operation, name):
    bad = {"PK": {"S": key(operation)["PK"]}, "SK": {"S": "META"}, name: {"S": ""}}
    call, params = empty_key_request(table, bad, operation)
    response = refusal(getattr(unvalidated_client, call), **params)
    assert response["Error"] == {"Code": "ValidationException", "Message": EMPTY_KEY.format(name)}
    with tracing(False):
        left = unvalidated_client.scan(TableName=table.name, ConsistentRead=True,
                                       FilterExpression="PK = :pk OR SK = :empty",
                                       ExpressionAttributeValues={":pk": bad["PK"], ":empty": {"S": ""}})["Items"]
    assert left == []
