"""Global secondary indexes (notebooks 26, 28): no consistent reads, no uniqueness."""
import time

import pytest
from boto3.dynamodb.conditions import Key
from botocore.exceptions import ClientError


def query_gsi(table, value, at_least):
    """Items under GSI1PK = value, retried briefly because real DynamoDB fills a GSI asynchronously."""
    for attempt in range(8):
        items = table.query(IndexName="GSI1", KeyConditionExpression=Key("GSI1PK").eq(value))["Items"]
        if len(items) >= at_least:
            break
        time.sleep(0.05 * 2 ** attempt)
    return items


def user(key, name, email):
    """A user item indexed by email in GSI1."""
    return {**key(name, "PROFILE"), "GSI1PK": f"EMAIL#{email}", "GSI1SK": key(name)["PK"]}


def test_consistent_read_on_a_gsi_is_refused(table):
    with pytest.raises(ClientError) as refused:
        table.query(IndexName="GSI1", KeyConditionExpression=Key("GSI1PK").eq("EMAIL#a@x.com"), ConsistentRead=True)
    assert refused.value.response["Error"] == {
        "Code": "ValidationException", "Message": "Consistent reads are not supported on global secondary indexes"}


def test_query_on_a_gsi_finds_an_item_by_a_non_key_attribute(table, key, request):
    email = f"{request.node.name}@x.com"
    table.put_item(Item=user(key, "user1", email))
    assert query_gsi(table, f"EMAIL#{email}", 1) == [user(key, "user1", email)]


def test_a_gsi_does_not_enforce_uniqueness(table, key, request):
    email = f"{request.node.name}@x.com"
    table.put_item(Item=user(key, "user1", email))
    table.put_item(Item=user(key, "user2", email))
    owners = sorted(item["GSI1SK"] for item in query_gsi(table, f"EMAIL#{email}", 2))
    assert owners == [key("user1")["PK"], key("user2")["PK"]]
