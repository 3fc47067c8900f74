"""PartiQL ? parameters of every attribute type are written and matched as DynamoDB does, never an
InternalServerError (moto's parser has no literal for binary values or sets, and ignores INSERT's parameters)."""
import pytest
from botocore.exceptions import ClientError

from helpers import tracing

VALUES = {"BOOL": {"BOOL": True}, "NULL": {"NULL": True}, "B": {"B": b"\x00\x01"}, "BS": {"BS": [b"\x00\x01", b"\x01\x02"]},
          "SS": {"SS": ["a", "b"]}, "NS": {"NS": ["1", "2.5"]}, "S": {"S": "it's"}, "N": {"N": "1.5"},
          "L": {"L": [{"S": "a"}, {"N": "1"}, {"BOOL": False}, {"NULL": True}, {"B": b"\x02"}]},
          "M": {"M": {"a": {"S": "b"}, "set": {"SS": ["q"]}, "bin": {"BS": [b"\x03"]}}}}


def typed_key(key, name):
    """A low-level key no other test uses."""
    return {"PK": {"S": key(name)["PK"]}, "SK": {"S": "META"}}


@pytest.mark.parametrize("kind", sorted(VALUES))
def test_a_parameter_of_each_type_is_inserted_matched_updated_and_deleted(unvalidated_client, table, key, kind):
    client, item, value = unvalidated_client, typed_key(key, kind), VALUES[kind]
    where = f'WHERE PK = ? AND SK = ? AND v = ?'
    with tracing(False):
        client.execute_statement(Statement=f"INSERT INTO \"{table.name}\" VALUE {{'PK': ?, 'SK': ?, 'v': ?}}",
                                 Parameters=[item["PK"], item["SK"], value])
        stored = client.get_item(TableName=table.name, Key=item, ConsistentRead=True)["Item"]
        selected = client.execute_statement(Statement=f'SELECT v FROM "{table.name}" {where}',
                                            Parameters=[item["PK"], item["SK"], value])["Items"]
        client.execute_statement(Statement=f'UPDATE "{table.name}" SET w = ? {where}',
                                 Parameters=[value, item["PK"], item["SK"], value])
        updated = client.get_item(TableName=table.name, Key=item, ConsistentRead=True)["Item"]
        client.execute_statement(Statement=f'DELETE FROM "{table.name}" {where}',
                                 Parameters=[item["PK"], item["SK"], value])
        left = client.get_item(TableName=table.name, Key=item, ConsistentRead=True)
    assert stored == {**item, "v": value}
    assert selected == [{"v": value}]
    assert updated == {**item, "v": value, "w": value}
    assert "Item" not in left


def test_a_set_parameter_matches_the_same_set_in_another_order(unvalidated_client, table, key):
    item = typed_key(key, "set")
    with tracing(False):
        unvalidated_client.put_item(TableName=table.name, Item={**item, "ns": {"NS": ["2", "1.50"]}})
        selected = unvalidated_client.execute_statement(
            Statement=f'SELECT PK FROM "{table.name}" WHERE PK = ? AND SK = ? AND ns = ?',
            Parameters=[item["PK"], item["SK"], {"NS": ["1.5", "2"]}])["Items"]
    assert selected == [{"PK": item["PK"]}]


def test_a_number_parameter_compares_by_value_and_an_attribute_named_m_is_no_map(unvalidated_client, table, key):
    item = typed_key(key, "m")
    with tracing(False):
        unvalidated_client.put_item(TableName=table.name, Item={**item, "m": {"N": "10"}})
        selected = unvalidated_client.execute_statement(
            Statement=f'SELECT m FROM "{table.name}" WHERE PK = ? AND SK = ? AND m > ?',
            Parameters=[item["PK"], item["SK"], {"N": "9.5"}])["Items"]
    assert selected == [{"m": {"N": "10"}}]


def test_the_transaction_and_batch_operations_take_typed_parameters(unvalidated_client, table, key):
    item = typed_key(key, "transaction")
    with tracing(False):
        unvalidated_client.execute_transaction(TransactStatements=[{
            "Statement": f"INSERT INTO \"{table.name}\" VALUE {{'PK': ?, 'SK': ?, 'tags': ?}}",
            "Parameters": [item["PK"], item["SK"], {"SS": ["x", "y"]}]}])
        stored = unvalidated_client.get_item(TableName=table.name, Key=item, ConsistentRead=True)["Item"]
    assert stored == {**item, "tags": {"SS": ["x", "y"]}}


def test_fewer_parameters_than_question_marks_is_refused(unvalidated_client, table):
    with pytest.raises(ClientError) as refused, tracing(False):
        unvalidated_client.execute_statement(Statement=f'SELECT * FROM "{table.name}" WHERE PK = ? AND SK = ?',
                                             Parameters=[{"S": "a"}])
    assert refused.value.response["Error"] == {"Code": "ValidationException",
                                               "Message": "Number of parameters in request and statement don't match."}
