"""Single-item conditional writes (notebooks 22, 23, 24): what a failed condition does and says."""
import pytest
from botocore.exceptions import ClientError

CONDITION_FAILED = "ConditionalCheckFailedException"


def test_attribute_not_exists_creates_once_and_refuses_an_overwrite(table, key):
    alice = {**key("alice"), "name": "Alice", "credits": 10}
    table.put_item(Item=alice, ConditionExpression="attribute_not_exists(PK)")
    with pytest.raises(ClientError) as refused:
        table.put_item(Item={**alice, "credits": 0}, ConditionExpression="attribute_not_exists(PK)")
    assert refused.value.response["Error"]["Code"] == CONDITION_FAILED
    assert table.get_item(Key=key("alice"), ConsistentRead=True)["Item"] == alice


def test_attribute_exists_refuses_an_update_and_creates_no_ghost_item(table, key):
    with pytest.raises(ClientError) as refused:
        table.update_item(Key=key("bob"), UpdateExpression="SET #n = :n", ConditionExpression="attribute_exists(PK)",
                          ExpressionAttributeNames={"#n": "name"}, ExpressionAttributeValues={":n": "Bob"})
    assert refused.value.response["Error"]["Code"] == CONDITION_FAILED
    assert "Item" not in table.get_item(Key=key("bob"), ConsistentRead=True)


def test_failed_condition_says_the_conditional_request_failed(table, key):
    table.put_item(Item=key("alice"))
    with pytest.raises(ClientError) as refused:
        table.put_item(Item=key("alice"), ConditionExpression="attribute_not_exists(PK)")
    assert refused.value.response["Error"] == {"Code": CONDITION_FAILED, "Message": "The conditional request failed"}


def test_business_rule_with_a_name_placeholder_spends_only_what_is_there(table, key):
    table.put_item(Item={**key("alice"), "credits": 10, "status": "active"})

    def spend(amount):
        table.update_item(Key=key("alice"), UpdateExpression="SET credits = credits - :a",
                          ConditionExpression="credits >= :a AND #s = :active",
                          ExpressionAttributeNames={"#s": "status"},
                          ExpressionAttributeValues={":a": amount, ":active": "active"})

    spend(7)
    with pytest.raises(ClientError) as refused:
        spend(7)
    assert refused.value.response["Error"]["Code"] == CONDITION_FAILED
    assert table.get_item(Key=key("alice"), ConsistentRead=True)["Item"]["credits"] == 3


def test_state_machine_condition_allows_each_transition_once(table, key):
    table.put_item(Item={**key("order"), "status": "PENDING"})

    def move(source, target):
        table.update_item(Key=key("order"), UpdateExpression="SET #s = :to", ConditionExpression="#s = :from",
                          ExpressionAttributeNames={"#s": "status"},
                          ExpressionAttributeValues={":from": source, ":to": target})

    move("PENDING", "PAID")
    with pytest.raises(ClientError) as refused:
        move("PENDING", "PAID")
    assert refused.value.response["Error"]["Code"] == CONDITION_FAILED
    assert table.get_item(Key=key("order"), ConsistentRead=True)["Item"]["status"] == "PAID"


def test_floor_condition_keeps_a_decrement_from_going_below_zero(table, key):
    table.put_item(Item={**key("widget"), "stock": 5})

    def take(quantity):
        table.update_item(Key=key("widget"), UpdateExpression="SET stock = stock - :n",
                          ConditionExpression="stock >= :n", ExpressionAttributeValues={":n": quantity})

    take(2)
    take(2)
    with pytest.raises(ClientError) as refused:
        take(2)
    assert refused.value.response["Error"]["Code"] == CONDITION_FAILED
    assert table.get_item(Key=key("widget"), ConsistentRead=True)["Item"]["stock"] == 1


@pytest.mark.parametrize("operation", ["PutItem", "UpdateItem", "DeleteItem"])
def test_all_old_on_condition_failure_returns_the_stored_item_in_the_error(table, key, operation):
    table.put_item(Item={**key("alice"), "credits": 3, "status": "active"})
    condition = {"ConditionExpression": "credits >= :a", "ExpressionAttributeValues": {":a": 7},
                 "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}
    calls = {
        "PutItem": lambda: table.put_item(Item={**key("alice"), "credits": -4}, **condition),
        "UpdateItem": lambda: table.update_item(Key=key("alice"), UpdateExpression="SET credits = credits - :a",
                                                **condition),
        "DeleteItem": lambda: table.delete_item(Key=key("alice"), **condition),
    }
    with pytest.raises(ClientError) as refused:
        calls[operation]()
    assert refused.value.response["Error"]["Code"] == CONDITION_FAILED
    assert refused.value.response["Item"] == {"PK": {"S": key("alice")["PK"]}, "SK": {"S": "META"},
                                              "credits": {"N": "3"}, "status": {"S": "active"}}


@pytest.mark.parametrize("operation", ["put_item", "update_item", "delete_item", "transact", "query", "scan"])
def test_a_value_placeholder_left_undefined_is_named_in_dynamodbs_words(table, key, unvalidated_client, operation):
    item, client = key("alice"), unvalidated_client
    low_key = {name: {"S": value} for name, value in item.items()}
    requests = {
        "put_item": lambda: table.put_item(Item=item, ConditionExpression="credits < :ten"),
        "update_item": lambda: table.update_item(Key=item, UpdateExpression="SET credits = :one",
                                                 ConditionExpression="credits < :ten",
                                                 ExpressionAttributeValues={":one": 1}),
        "delete_item": lambda: table.delete_item(Key=item, ConditionExpression="credits < :ten"),
        "transact": lambda: client.transact_write_items(TransactItems=[{"ConditionCheck": {
            "TableName": table.name, "Key": low_key, "ConditionExpression": "credits < :ten"}}]),
        "query": lambda: table.query(KeyConditionExpression="PK = :pk", FilterExpression="credits < :ten",
                                     ExpressionAttributeValues={":pk": item["PK"]}),
        "scan": lambda: table.scan(FilterExpression="credits < :ten"),
    }
    kind = "FilterExpression" if operation in ("query", "scan") else "ConditionExpression"
    with pytest.raises(ClientError) as refused:
        requests[operation]()
    assert refused.value.response["Error"] == {
        "Code": "ValidationException",
        "Message": f"Invalid {kind}: An expression attribute value used in expression is not defined; "
                   f"attribute value: :ten"}


def test_the_same_condition_decides_by_each_requests_values_and_names(table, key):
    """One condition text sent again and again: each request is judged by its own :values, #names and item."""
    def put(version, seen, name="version"):
        table.put_item(Item={**key("doc"), "version": version, "other": 1}, ConditionExpression="#v = :seen",
                       ExpressionAttributeNames={"#v": name}, ExpressionAttributeValues={":seen": seen})

    table.put_item(Item={**key("doc"), "version": 1, "other": 1})
    put(2, 1)
    with pytest.raises(ClientError) as refused:
        put(3, 1)
    assert refused.value.response["Error"]["Code"] == CONDITION_FAILED
    put(3, 2)
    put(4, 1, name="other")
    with pytest.raises(ClientError) as refused:
        put(5, 3)
    assert refused.value.response["Error"]["Code"] == CONDITION_FAILED
    assert table.get_item(Key=key("doc"), ConsistentRead=True)["Item"]["version"] == 4
