"""Malformed requests get DynamoDB's own error, in its words, never an InternalServerError from the lab."""
import pytest
from botocore.exceptions import ClientError

from helpers import tracing

NOT_NULL = "1 validation error detected: Value null at 'tableName' failed to satisfy constraint: Member must not be null"


def refusal(call, **params):
    """The error DynamoDB answers a call with (the call must fail), and the whole response."""
    with pytest.raises(ClientError) as refused, tracing(False):
        call(**params)
    return refused.value.response["Error"], refused.value.response


def typed_key(key, name):
    """A low-level key no other test uses."""
    return {"PK": {"S": key(name)["PK"]}, "SK": {"S": "META"}}


@pytest.mark.parametrize("operation", ["create_table", "put_item"])
def test_a_request_without_table_name_names_the_missing_member(unvalidated_client, operation):
    params = {"put_item": {"Item": {"PK": {"S": "a"}}}, "create_table": {
        "BillingMode": "PAY_PER_REQUEST", "KeySchema": [{"AttributeName": "PK", "KeyType": "HASH"}],
        "AttributeDefinitions": [{"AttributeName": "PK", "AttributeType": "S"}]}}[operation]
    error, _ = refusal(getattr(unvalidated_client, operation), **params)
    assert error == {"Code": "ValidationException", "Message": NOT_NULL}


def test_a_projection_that_does_not_parse_is_a_syntax_error_in_transact_get_items(unvalidated_client, table, key):
    error, _ = refusal(unvalidated_client.transact_get_items, TransactItems=[
        {"Get": {"TableName": table.name, "Key": typed_key(key, "a"), "ProjectionExpression": "!!!"}}])
    assert error == {"Code": "ValidationException",
                     "Message": 'Invalid ProjectionExpression: Syntax error; token: "!", near: "!!"'}


def test_a_get_with_an_empty_key_cancels_the_transaction(unvalidated_client, table):
    error, response = refusal(unvalidated_client.transact_get_items,
                              TransactItems=[{"Get": {"TableName": table.name, "Key": {}}}])
    assert error == {"Code": "TransactionCanceledException",
                     "Message": "Transaction cancelled, please refer cancellation reasons for specific reasons "
                                "[ValidationError]"}
    assert [reason["Code"] for reason in response["CancellationReasons"]] == ["ValidationError"]


def test_a_filter_naming_an_undefined_placeholder_is_refused(unvalidated_client, table):
    error, _ = refusal(unvalidated_client.scan, TableName=table.name, FilterExpression="#missing = :v",
                       ExpressionAttributeValues={":v": {"N": "1"}})
    assert error == {"Code": "ValidationException",
                     "Message": "Invalid FilterExpression: An expression attribute name used in the document path is "
                                "not defined; attribute name: #missing"}


def test_a_condition_naming_an_undefined_placeholder_is_refused(unvalidated_client, table, key):
    error, _ = refusal(unvalidated_client.put_item, TableName=table.name, Item=typed_key(key, "a"),
                       ConditionExpression="attribute_not_exists(#missing)")
    assert error == {"Code": "ValidationException",
                     "Message": "Invalid ConditionExpression: An expression attribute name used in the document path "
                                "is not defined; attribute name: #missing"}


def test_creating_an_index_that_exists_is_refused(unvalidated_client, table):
    error, _ = refusal(unvalidated_client.update_table, TableName=table.name,
                       AttributeDefinitions=[{"AttributeName": "GSI1PK", "AttributeType": "S"}],
                       GlobalSecondaryIndexUpdates=[{"Create": {
                           "IndexName": "GSI1", "KeySchema": [{"AttributeName": "GSI1PK", "KeyType": "HASH"}],
                           "Projection": {"ProjectionType": "ALL"}}}])
    assert error == {"Code": "ValidationException", "Message": "Attempting to create an index which already exists"}


def test_deleting_an_index_that_does_not_exist_is_refused(unvalidated_client, table):
    error, _ = refusal(unvalidated_client.update_table, TableName=table.name,
                       GlobalSecondaryIndexUpdates=[{"Delete": {"IndexName": "NoSuchIndex"}}])
    assert error == {"Code": "ResourceNotFoundException",
                     "Message": f"Requested resource not found: Index NoSuchIndex for table {table.name}"}


def test_a_partiql_statement_with_a_syntax_error_is_refused(unvalidated_client, table):
    error, _ = refusal(unvalidated_client.execute_statement, Statement=f'SELEC * FROM "{table.name}"')
    assert error == {"Code": "ValidationException",
                     "Message": "Statement wasn't well formed, can't be processed: Expected data manipulation"}


def test_partiql_parameters_fill_the_question_marks(unvalidated_client, table, key):
    item = typed_key(key, "partiql")
    with tracing(False):
        unvalidated_client.execute_statement(Statement=f"INSERT INTO \"{table.name}\" VALUE {{'PK': ?, 'SK': ?, 'n': ?}}",
                                             Parameters=[item["PK"], item["SK"], {"N": "1"}])
        unvalidated_client.execute_statement(Statement=f'UPDATE "{table.name}" SET n = ? WHERE PK = ? AND SK = ?',
                                             Parameters=[{"N": "2"}, item["PK"], item["SK"]])
        selected = unvalidated_client.execute_statement(
            Statement=f'SELECT * FROM "{table.name}" WHERE PK = ? AND SK = ?', Parameters=[item["PK"], item["SK"]])
        unvalidated_client.execute_statement(Statement=f'DELETE FROM "{table.name}" WHERE PK = ? AND SK = ?',
                                             Parameters=[item["PK"], item["SK"]])
        left = unvalidated_client.get_item(TableName=table.name, Key=item, ConsistentRead=True)
    assert selected["Items"] == [{**item, "n": {"N": "2"}}]
    assert "Item" not in left
