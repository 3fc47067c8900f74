"""Every attribute type, binary ones included, comes back as it was written, on every read path and ReturnValues."""
import pytest
from botocore.exceptions import ClientError

BLOB = b"\x00\xff token \x80"
EVERY_TYPE = {
    "text": {"S": "hello"}, "count": {"N": "42.5"}, "hash": {"B": BLOB}, "tags": {"SS": ["a", "b"]},
    "scores": {"NS": ["1", "2"]}, "tokens": {"BS": [BLOB, b"\x01"]}, "active": {"BOOL": True}, "nothing": {"NULL": True},
    "profile": {"M": {"avatar": {"B": BLOB}, "name": {"S": "x"}, "deep": {"M": {"l": {"L": [{"B": BLOB}]}}}}},
    "history": {"L": [{"B": BLOB}, {"N": "1"}, {"M": {"b": {"BS": [BLOB]}}}, {"L": [{"NULL": True}]}]},
}


def as_sets(value):
    """An attribute value with its set members sorted (sets have no order)."""
    (kind, inner), = value.items()
    if kind in ("SS", "NS", "BS"):
        return {kind: sorted(inner)}
    if kind == "M":
        return {kind: {name: as_sets(member) for name, member in inner.items()}}
    if kind == "L":
        return {kind: [as_sets(member) for member in inner]}
    return value


def same_item(item):
    """The item with every set sorted, to compare with what was written."""
    return {name: as_sets(value) for name, value in item.items()}


@pytest.fixture
def client(unvalidated_client):
    """A low-level client: attribute values as DynamoDB types them (the Lab's client takes Python values)."""
    return unvalidated_client


@pytest.fixture
def stored(client, table, key):
    """The low-level key of an item holding every attribute type, written once."""
    item_key = {"PK": {"S": key("typed")["PK"]}, "SK": {"S": "META"}}
    client.put_item(TableName=table.name, Item={**item_key, **EVERY_TYPE})
    return item_key


def written(stored):
    """What was written, sets sorted."""
    return same_item({**stored, **EVERY_TYPE})


READS = {
    "GetItem": lambda client, table, key: client.get_item(TableName=table, Key=key, ConsistentRead=True)["Item"],
    "Query": lambda client, table, key: client.query(
        TableName=table, KeyConditionExpression="PK = :pk", ExpressionAttributeValues={":pk": key["PK"]})["Items"][0],
    "Scan": lambda client, table, key: client.scan(
        TableName=table, FilterExpression="PK = :pk", ExpressionAttributeValues={":pk": key["PK"]})["Items"][0],
    "BatchGetItem": lambda client, table, key: client.batch_get_item(
        RequestItems={table: {"Keys": [key]}})["Responses"][table][0],
    "TransactGetItems": lambda client, table, key: client.transact_get_items(
        TransactItems=[{"Get": {"TableName": table, "Key": key}}])["Responses"][0]["Item"],
}


@pytest.mark.parametrize("read", sorted(READS))
def test_every_attribute_type_reads_back_as_written(client, table, stored, read):
    assert same_item(READS[read](client, table.name, stored)) == written(stored)


@pytest.mark.parametrize("return_values", ["ALL_OLD", "ALL_NEW", "UPDATED_OLD", "UPDATED_NEW"])
def test_update_item_returns_every_attribute_type(client, table, stored, return_values):
    names, values = list(EVERY_TYPE), list(EVERY_TYPE.values())
    rotated = dict(zip(names, values[1:] + values[:1]))  # every attribute changes, to another type
    answer = client.update_item(
        TableName=table.name, Key=stored, ReturnValues=return_values,
        UpdateExpression="SET " + ", ".join(f"#{n} = :{n}" for n in range(len(names))),
        ExpressionAttributeNames={f"#{n}": name for n, name in enumerate(names)},
        ExpressionAttributeValues={f":{n}": rotated[name] for n, name in enumerate(names)})
    expected = {"ALL_OLD": written(stored), "ALL_NEW": same_item({**stored, **rotated}),
                "UPDATED_OLD": same_item(EVERY_TYPE), "UPDATED_NEW": same_item(rotated)}[return_values]
    assert same_item(answer["Attributes"]) == expected


def test_put_item_all_old_returns_every_attribute_type(client, table, stored):
    answer = client.put_item(TableName=table.name, Item=stored, ReturnValues="ALL_OLD")
    assert same_item(answer["Attributes"]) == written(stored)


def test_delete_item_all_old_returns_every_attribute_type(client, table, stored):
    answer = client.delete_item(TableName=table.name, Key=stored, ReturnValues="ALL_OLD")
    assert same_item(answer["Attributes"]) == written(stored)


def test_a_failed_condition_returns_every_attribute_type_of_the_item(client, table, stored):
    with pytest.raises(ClientError) as failed:
        client.put_item(TableName=table.name, Item=stored, ConditionExpression="attribute_not_exists(PK)",
                        ReturnValuesOnConditionCheckFailure="ALL_OLD")
    assert same_item(failed.value.response["Item"]) == written(stored)


def test_binary_values_travel_as_base64_text(raw, client, table, stored):
    status, answer = raw("GetItem", {"TableName": table.name, "Key": stored, "ConsistentRead": True})
    assert status == 200
    assert answer["Item"]["hash"] == {"B": "AP8gdG9rZW4ggA=="}
    assert answer["Item"]["profile"]["M"]["deep"]["M"]["l"] == {"L": [{"B": "AP8gdG9rZW4ggA=="}]}


def test_size_counts_the_bytes_of_a_binary_attribute(client, table, stored):
    answer = client.scan(TableName=table.name, FilterExpression="PK = :pk AND size(#h) = :n",
                         ExpressionAttributeNames={"#h": "hash"},
                         ExpressionAttributeValues={":pk": stored["PK"], ":n": {"N": str(len(BLOB))}})
    assert answer["Count"] == 1
