"""The lab server's direct JSON encoding answers exactly what moto's model-walking serializer would, less the
statistics DynamoDB returns only when asked for (ConsumedCapacity, ItemCollectionMetrics)."""
import json

import pytest
from moto.core.request import Request
from moto.core.utils import camelcase_to_underscores
from moto.dynamodb.responses import DynamoHandler

from helpers.labserver.handler import FastDynamoHandler

TABLE = "p91-encoding"
HEADERS = {"Host": "127.0.0.1", "Content-Type": "application/x-amz-json-1.0",
           "Authorization": "AWS4-HMAC-SHA256 Credential=lab/20260101/us-east-1/dynamodb/aws4_request, "
                            "SignedHeaders=host, Signature=0"}
KEY = {"PK": {"S": "USER#alice"}, "SK": {"S": "PROFILE"}}
REQUESTS = [
    ("PutItem", {"TableName": TABLE, "Item": {**KEY, "credits": {"N": "10"}, "tags": {"SS": ["a", "b"]}},
                 "ReturnValues": "ALL_OLD"}),
    ("PutItem", {"TableName": TABLE, "Item": {**KEY, "credits": {"N": "10"}, "hash": {"B": "AP8="},
                                              "tokens": {"BS": ["AP8=", "AQ=="]},
                                              "nested": {"M": {"l": {"L": [{"B": "AP8="}, {"M": {"b": {"B": "AQ=="}}}]}}}},
                 "ReturnValues": "ALL_OLD"}),
    ("GetItem", {"TableName": TABLE, "Key": KEY, "ConsistentRead": True}),
    ("UpdateItem", {"TableName": TABLE, "Key": KEY, "UpdateExpression": "ADD credits :n",
                    "ExpressionAttributeValues": {":n": {"N": "5"}}, "ReturnValues": "ALL_NEW"}),
    ("Query", {"TableName": TABLE, "KeyConditionExpression": "PK = :pk",
               "ExpressionAttributeValues": {":pk": {"S": "USER#alice"}}}),
    ("Scan", {"TableName": TABLE, "ReturnConsumedCapacity": "TOTAL"}),
    ("TransactGetItems", {"TransactItems": [{"Get": {"TableName": TABLE, "Key": KEY}}]}),
    ("BatchGetItem", {"RequestItems": {TABLE: {"Keys": [KEY]}}}),
    ("DeleteItem", {"TableName": TABLE, "Key": KEY, "ReturnValues": "ALL_OLD"}),
]


def handler_for(target, body):
    """A FastDynamoHandler set up for one request, as the lab server's engine sets it up."""
    handler = FastDynamoHandler()
    request = Request.from_primitives("POST", "http://127.0.0.1/",
                                      {**HEADERS, "X-Amz-Target": f"DynamoDB_20120810.{target}"},
                                      json.dumps(body).encode())
    handler.setup_class(request)
    handler.body = handler.params
    return handler


@pytest.fixture(scope="module", autouse=True)
def table():
    """A fresh table in the in-process moto backend."""
    handler_for("CreateTable", {"TableName": TABLE, "BillingMode": "PAY_PER_REQUEST",
                                "KeySchema": [{"AttributeName": "PK", "KeyType": "HASH"},
                                              {"AttributeName": "SK", "KeyType": "RANGE"}],
                                "AttributeDefinitions": [{"AttributeName": "PK", "AttributeType": "S"},
                                                         {"AttributeName": "SK", "AttributeType": "S"}]}).create_table()
    yield
    handler_for("DeleteTable", {"TableName": TABLE}).delete_table()


@pytest.mark.parametrize("target, body", REQUESTS, ids=[f"{n}-{target}" for n, (target, _) in enumerate(REQUESTS)])
def test_direct_encoding_matches_motos_serializer(target, body):
    handler = handler_for(target, body)
    result = getattr(handler, camelcase_to_underscores(target))()
    fast_status, _, fast_body = handler.serialized(result)
    moto_status, _, moto_body = DynamoHandler.serialized(handler, result)
    expected = json.loads(moto_body)
    if body.get("ReturnConsumedCapacity") not in ("TOTAL", "INDEXES"):
        expected.pop("ConsumedCapacity", None)
    expected.pop("ItemCollectionMetrics", None)  # no request here asks for it
    assert fast_status == moto_status == 200
    assert json.loads(fast_body) == expected
