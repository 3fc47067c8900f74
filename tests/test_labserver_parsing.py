"""The lab server's compiled request parser makes exactly what moto's JSON parser makes of a body: the same
members in the same order, binary values decoded, timestamps read, nulls and unknown members left out, and
an error wherever moto's parser fails."""
import json

import pytest

from helpers.labserver.handler import compiled_parser, request_parser

from test_labserver_answers import WORKLOAD

JSON_TYPE = "application/x-amz-json-1.0"
ODD_REQUESTS = [
    ("PutItem", {"Item": {"PK": {"S": "a"}, "b": {"B": "AP8="}, "m": {"M": {"l": {"L": [{"BS": ["AQ=="]}, {"NULL": True}]}}}},
                 "TableName": "t", "Unknown": 1, "ReturnValues": None}),
    ("PutItem", {"TableName": "t", "Item": "not a map"}),
    ("PutItem", {"TableName": "t", "Item": ["a", "list"]}),
    ("PutItem", {"TableName": "t", "Item": {"PK": {"B": "not base64!"}}}),
    ("Query", {"TableName": "t", "Limit": "7", "KeyConditionExpression": "PK = :p"}),
    ("Query", {"TableName": "t", "Limit": "seven"}),
    ("Query", {"TableName": "t", "ExclusiveStartKey": {"PK": {"N": 1}}, "ScanIndexForward": "yes"}),
    ("ListBackups", {"TimeRangeLowerBound": 1700000000, "TimeRangeUpperBound": "2026-12-01T00:00:00Z"}),
    ("ListBackups", {"TimeRangeLowerBound": "yesterday"}),
    ("UpdateTable", {"TableName": "t", "ProvisionedThroughput": {"ReadCapacityUnits": 5.0, "WriteCapacityUnits": "5"}}),
    ("BatchWriteItem", {"RequestItems": {"t": {"PutRequest": {}}}}),
    ("BatchWriteItem", {"RequestItems": []}),
    ("TransactWriteItems", {"TransactItems": [{}, None, {"Put": None}]}),
    ("ListTables", {}),
]


def outcome(parse):
    """repr of what a parse returns (types and member order included), or the name of the error it raises."""
    try:
        return repr(parse())
    except Exception as error:  # the parsers' failures are compared, not their messages
        return f"fails: {type(error).__name__}"


@pytest.mark.parametrize("operation, request_body", WORKLOAD + ODD_REQUESTS,
                         ids=[f"{n}-{operation}" for n, (operation, _) in enumerate(WORKLOAD + ODD_REQUESTS)])
def test_compiled_parser_makes_what_motos_parser_makes(operation, request_body):
    body = json.dumps(request_body).encode()
    moto = outcome(lambda: request_parser(operation, JSON_TYPE).parse(
        {"method": "POST", "values": {}, "headers": {}, "body": body, "url_path": "/", "url_params": {}}))
    compiled = outcome(lambda: compiled_parser(operation, JSON_TYPE)(json.loads(body)))
    assert compiled == moto
