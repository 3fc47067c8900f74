"""Transactions (notebooks 25, 26): all or nothing, reasons in action order, reads that show what is missing."""
import pytest
from botocore.exceptions import ClientError


def place_order(client, table, key, order, quantity):
    """The reference's three-action order: create the order, take the stock, count the order."""
    client.transact_write_items(TransactItems=[
        {"Put": {"TableName": table.name, "Item": {**key(order), "qty": quantity},
                 "ConditionExpression": "attribute_not_exists(PK)"}},
        {"Update": {"TableName": table.name, "Key": key("widget"), "UpdateExpression": "SET stock = stock - :q",
                    "ConditionExpression": "stock >= :q", "ExpressionAttributeValues": {":q": quantity}}},
        {"Update": {"TableName": table.name, "Key": key("alice"), "UpdateExpression": "ADD orderCount :one",
                    "ExpressionAttributeValues": {":one": 1}}},
    ])


@pytest.fixture
def shop(table, key):
    """3 widgets in stock and a customer with no orders."""
    table.put_item(Item={**key("widget"), "stock": 3})
    table.put_item(Item={**key("alice"), "orderCount": 0})


@pytest.mark.usefixtures("shop")
def test_cancellation_reasons_name_the_failed_action_in_order(client, table, key):
    place_order(client, table, key, "o1", 2)
    with pytest.raises(ClientError) as cancelled:
        place_order(client, table, key, "o2", 5)
    response = cancelled.value.response
    assert response["Error"] == {
        "Code": "TransactionCanceledException",
        "Message": "Transaction cancelled, please refer cancellation reasons for specific reasons "
                   "[None, ConditionalCheckFailed, None]"}
    assert response["CancellationReasons"] == [
        {"Code": "None"},
        {"Code": "ConditionalCheckFailed", "Message": "The conditional request failed"},
        {"Code": "None"}]


@pytest.mark.usefixtures("shop")
def test_a_cancelled_transaction_writes_nothing(client, table, key):
    place_order(client, table, key, "o1", 2)
    with pytest.raises(ClientError):
        place_order(client, table, key, "o2", 5)
    snapshot = client.transact_get_items(TransactItems=[
        {"Get": {"TableName": table.name, "Key": key(name)}} for name in ("widget", "alice", "o2")])["Responses"]
    assert [entry.get("Item") for entry in snapshot] == [
        {**key("widget"), "stock": 1}, {**key("alice"), "orderCount": 1}, None]


def test_transact_get_items_answers_in_order_with_no_item_for_a_missing_key(client, table, key):
    table.put_item(Item={**key("first"), "n": 1})
    table.put_item(Item={**key("third"), "n": 3})
    responses = client.transact_get_items(TransactItems=[
        {"Get": {"TableName": table.name, "Key": key(name)}} for name in ("first", "missing", "third")])["Responses"]
    assert responses == [{"Item": {**key("first"), "n": 1}}, {}, {"Item": {**key("third"), "n": 3}}]


def order_if_active(client, table, key):
    """Write an order only if the customer, another item, is active: a ConditionCheck plus a Put."""
    client.transact_write_items(TransactItems=[
        {"ConditionCheck": {"TableName": table.name, "Key": key("customer"), "ConditionExpression": "#s = :active",
                            "ExpressionAttributeNames": {"#s": "status"},
                            "ExpressionAttributeValues": {":active": "active"}}},
        {"Put": {"TableName": table.name, "Item": {**key("order"), "qty": 1}}},
    ])


def test_condition_check_lets_the_write_through_when_the_other_item_passes(client, table, key):
    table.put_item(Item={**key("customer"), "status": "active"})
    order_if_active(client, table, key)
    assert table.get_item(Key=key("order"), ConsistentRead=True)["Item"] == {**key("order"), "qty": 1}


def test_condition_check_cancels_the_write_when_the_other_item_fails(client, table, key):
    table.put_item(Item={**key("customer"), "status": "suspended"})
    with pytest.raises(ClientError) as cancelled:
        order_if_active(client, table, key)
    assert [reason["Code"] for reason in cancelled.value.response["CancellationReasons"]] == [
        "ConditionalCheckFailed", "None"]
    assert "Item" not in table.get_item(Key=key("order"), ConsistentRead=True)


def test_a_write_action_naming_no_operation_is_refused(unvalidated_client, table, key):
    """us-east-1's words, as paritysuite/dynamodb-conformance captured them (eu-west-2 words it as a member
    constraint); nothing in the transaction is written."""
    put = {"Put": {"TableName": table.name, "Item": {"PK": {"S": key("first")["PK"]}, "SK": {"S": "META"}}}}
    with pytest.raises(ClientError) as refused:
        unvalidated_client.transact_write_items(TransactItems=[put, {}])
    assert refused.value.response["Error"] == {
        "Code": "ValidationException",
        "Message": "Invalid Request: TransactWriteRequest should contain Delete or Put or Update request"}
    assert "Item" not in table.get_item(Key=key("first"), ConsistentRead=True)


def test_a_get_action_without_its_get_is_refused_at_its_place(unvalidated_client, table, key):
    """Get is a required member of TransactGetItem: DynamoDB names it at its place, the list numbered from 1."""
    get = {"Get": {"TableName": table.name, "Key": {"PK": {"S": key("first")["PK"]}, "SK": {"S": "META"}}}}
    with pytest.raises(ClientError) as refused:
        unvalidated_client.transact_get_items(TransactItems=[get, {}])
    assert refused.value.response["Error"] == {
        "Code": "ValidationException",
        "Message": "1 validation error detected: Value null at 'transactItems.2.member.get' failed to satisfy "
                   "constraint: Member must not be null"}


def test_a_partiql_transaction_exists_check_lets_it_run_or_cancels_it_whole(unvalidated_client, table, key):
    item = {"PK": {"S": key("exists")["PK"]}, "SK": {"S": "META"}}
    where = f"WHERE PK = '{item['PK']['S']}' AND SK = 'META'"
    unvalidated_client.put_item(TableName=table.name, Item={**item, "n": {"N": "1"}})

    def run(condition, value):
        unvalidated_client.execute_transaction(TransactStatements=[
            {"Statement": f'EXISTS(SELECT * FROM "{table.name}" {where} AND n = {condition})'},
            {"Statement": f'UPDATE "{table.name}" SET n = {value} {where}'}])

    run(1, 2)
    with pytest.raises(ClientError) as refused:
        run(1, 3)
    stored = unvalidated_client.get_item(TableName=table.name, Key=item, ConsistentRead=True)["Item"]
    assert refused.value.response["Error"]["Code"] == "TransactionCanceledException"
    assert [reason["Code"] for reason in refused.value.response["CancellationReasons"]] == [
        "ConditionalCheckFailed", "None"]
    assert stored == {**item, "n": {"N": "2"}}


def test_a_transaction_update_using_a_value_without_expression_attribute_values_is_refused_whole(
        unvalidated_client, table, key):
    item = {"PK": {"S": key("no-values")["PK"]}, "SK": {"S": "META"}}
    with pytest.raises(ClientError) as refused:
        unvalidated_client.transact_write_items(TransactItems=[{"Update": {
            "TableName": table.name, "Key": item, "UpdateExpression": "SET n = :v"}}])
    assert refused.value.response["Error"] == {
        "Code": "ValidationException",
        "Message": "Invalid UpdateExpression: An expression attribute value used in expression is not defined; "
                   "attribute value: :v"}
