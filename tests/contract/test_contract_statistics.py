"""ConsumedCapacity and ItemCollectionMetrics come back only when the request asks for them, as DynamoDB's API
reference says of every write and batch operation."""
import pytest

from .conftest import TABLE


def requests(key):
    """operation -> a request that writes or reads one item, asking for no statistics (the lab's client takes plain values)."""
    item, plain_key = {**key("stats"), "n": 1}, key("stats")
    return {
        "put_item": {"TableName": TABLE, "Item": item},
        "update_item": {"TableName": TABLE, "Key": plain_key, "UpdateExpression": "ADD n :one",
                        "ExpressionAttributeValues": {":one": 1}, "ReturnValues": "UPDATED_NEW"},
        "batch_write_item": {"RequestItems": {TABLE: [{"PutRequest": {"Item": item}}]}},
        "batch_get_item": {"RequestItems": {TABLE: {"Keys": [plain_key]}}},
        "transact_write_items": {"TransactItems": [{"Put": {"TableName": TABLE, "Item": item}}]},
        "delete_item": {"TableName": TABLE, "Key": plain_key},
    }


@pytest.mark.parametrize("operation", ["put_item", "update_item", "batch_write_item", "batch_get_item",
                                       "transact_write_items", "delete_item"])
def test_statistics_come_back_only_when_asked_for(lab, table, key, operation):
    request = requests(key)[operation]
    answer = getattr(lab.client, operation)(**request)
    assert "ConsumedCapacity" not in answer and "ItemCollectionMetrics" not in answer
    asked = getattr(lab.client, operation)(**request, ReturnConsumedCapacity="TOTAL")
    assert "ConsumedCapacity" in asked
