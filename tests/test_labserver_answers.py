"""Not a byte of any answer changes: a fixed mixed workload, replayed on a fresh lab server, answers exactly as recorded.

The recording (test_labserver_answers.json) was made with moto's plain request set-up, before the lab server's
per-request shortcuts; `LAB_RECORD_ANSWERS=1 pytest tests/test_labserver_answers.py` records it again. Only what
differs from run to run is masked: the Date and request-id headers, and table creation times with the length and
checksum that follow from them. The server runs with a fixed hash seed, because moto orders some set members by
hash (DynamoDB's sets have no order).
"""
import http.client
import json
import os
import re
import subprocess
import sys
import zlib
from pathlib import Path

import pytest

RECORDING = Path(__file__).with_suffix(".json")
VARYING_HEADERS = {"date", "x-amzn-requestid", "x-amz-crc32", "content-length"}
CREATION_TIME = re.compile(rb'"CreationDateTime": [0-9.]+')
AUTHORIZATION = ("AWS4-HMAC-SHA256 Credential=lab/20260101/us-east-1/dynamodb/aws4_request, "
                 "SignedHeaders=host;x-amz-target, Signature=0")
TABLE, INDEXED = "p92-answers", "p92-answers-indexed"
KEY = {"PK": {"S": "USER#1"}, "SK": {"S": "PROFILE"}}
EVERY_TYPE = {"text": {"S": "hé"}, "count": {"N": "10"}, "hash": {"B": "AP8="}, "tags": {"SS": ["b", "a"]},
              "scores": {"NS": ["2", "1.5"]}, "tokens": {"BS": ["AP8=", "AQ=="]}, "on": {"BOOL": False},
              "none": {"NULL": True}, "deep": {"M": {"l": {"L": [{"B": "AQ=="}, {"M": {"n": {"N": "-0.5"}}}]}}}}


def schema(name, indexed=False):
    """CreateTable for a PK/SK table, with a GSI on GSI1PK when indexed."""
    body = {"TableName": name, "BillingMode": "PAY_PER_REQUEST",
            "KeySchema": [{"AttributeName": "PK", "KeyType": "HASH"}, {"AttributeName": "SK", "KeyType": "RANGE"}],
            "AttributeDefinitions": [{"AttributeName": n, "AttributeType": "S"}
                                     for n in ("PK", "SK", "GSI1PK")[:3 if indexed else 2]]}
    if indexed:
        body["GlobalSecondaryIndexes"] = [{"IndexName": "GSI1", "Projection": {"ProjectionType": "ALL"},
                                           "KeySchema": [{"AttributeName": "GSI1PK", "KeyType": "HASH"}]}]
    return body


def item(n, **extra):
    """Item number n of the indexed table."""
    return {"PK": {"S": f"ORDER#{n % 3}"}, "SK": {"S": f"{n:03}"}, "GSI1PK": {"S": f"DAY#{n % 2}"},
            "qty": {"N": str(n)}, **extra}


COUNTER = {"PK": {"S": "COUNTER"}, "SK": {"S": "A"}}
ONE = {":one": {"N": "1"}}


def update(expression, names=None, values=ONE, table=TABLE, key=COUNTER, returns="ALL_NEW"):
    """An UpdateItem of one expression, with its #names and :values."""
    body = {"TableName": table, "Key": key, "UpdateExpression": expression, "ReturnValues": returns}
    if names:
        body["ExpressionAttributeNames"] = names
    if values:
        body["ExpressionAttributeValues"] = values
    return "UpdateItem", body


# Each check of an update expression, passed and then failed by the same text with other names or values.
UPDATE_EXPRESSIONS = [
    update("ADD #c :one", {"#c": "hits"}), update("ADD #c :one", {"#c": "hits"}, returns="UPDATED_OLD"),
    update("ADD #c :one", {"#c": "PK"}), update("ADD #c :one", {"#c": "SK"}), update("ADD #c :one", {"#c": "hits"}, {}),
    update("ADD #c :one", {"#c": "hits"}, {":one": {"S": "x"}}), update("ADD #c :one", {"#x": "hits"}),
    update("ADD a :one ADD b :one"), update("SET a = :one, a = :one"),
    update("SET #x = :one, #y = :one", {"#x": "a", "#y": "b"}), update("SET #x = :one, #y = :one", {"#x": "a", "#y": "a"}),
    update("SET #x = :one, #y.z = :one", {"#x": "m", "#y": "m"}),
    update("SET #h = if_not_exists(#h, :zero) + :one", {"#h": "hits"}, {":zero": {"N": "0"}, ":one": {"N": "1"}}),
    update("SET #h = if_not_exists(#h, :zero) + :one", {"#h": "fresh"}, {":zero": {"N": "0"}, ":one": {"N": "1"}}),
    update("SET l = list_append(if_not_exists(l, :none), :more)", None, {":none": {"L": []}, ":more": {"L": [{"N": "1"}]}}),
    update("SET l = list_append(l, :more)", None, {":more": {"L": [{"S": "x"}]}}),
    update("SET l = list_append(gone, :more)", None, {":more": {"L": [{"S": "x"}]}}),
    update("SET l = list_append(hits, :more)", None, {":more": {"L": [{"S": "x"}]}}),
    update("SET a = gone + :one"), update("SET a = hits - :one"), update("SET a = l + :one"),
    update("SET m.deep.er = :one"), update("REMOVE a, l[0] SET b = :one"),
    update("SET GSI1PK = :n", None, {":n": {"N": "1"}}, INDEXED, {"PK": {"S": "ORDER#1"}, "SK": {"S": "001"}}),
    update("SET GSI1PK = :e", None, {":e": {"S": ""}}, INDEXED, {"PK": {"S": "ORDER#1"}, "SK": {"S": "001"}}),
    update("SET GSI1PK = :s", None, {":s": {"S": "DAY#9"}}, INDEXED, {"PK": {"S": "ORDER#1"}, "SK": {"S": "001"}}),
    update("ADD #c :one", {"#c": "hits"}, key={"PK": {"S": "COUNTER"}, "SK": {"S": "NEW"}}),
    update("SET #c = :one", {"#c": "PK"}, key={"PK": {"S": "COUNTER"}, "SK": {"S": "NEWER"}}),
]

WORKLOAD = [
    ("CreateTable", schema(TABLE)), ("CreateTable", schema(INDEXED, indexed=True)),
    ("CreateTable", schema(TABLE)), ("DescribeTable", {"TableName": INDEXED}), ("ListTables", {}),
    ("PutItem", {"TableName": TABLE, "Item": {**KEY, **EVERY_TYPE}, "ReturnValues": "ALL_OLD"}),
    ("PutItem", {"TableName": TABLE, "Item": {**KEY, **EVERY_TYPE}, "ReturnValues": "ALL_OLD"}),
    ("PutItem", {"TableName": TABLE, "Item": KEY, "ConditionExpression": "attribute_not_exists(PK)",
                 "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}),
    ("GetItem", {"TableName": TABLE, "Key": KEY, "ConsistentRead": True}),
    ("GetItem", {"TableName": TABLE, "Key": KEY, "ProjectionExpression": "#t, deep.l[1], tags",
                 "ExpressionAttributeNames": {"#t": "text"}}),
    ("GetItem", {"TableName": TABLE, "Key": {"PK": {"S": "nobody"}, "SK": {"S": "x"}}}),
    *[("UpdateItem", {"TableName": TABLE, "Key": KEY, "UpdateExpression": "ADD #c :one",
                      "ExpressionAttributeNames": {"#c": "count"}, "ExpressionAttributeValues": {":one": {"N": "1"}},
                      "ReturnValues": returns}) for returns in ("NONE", "ALL_OLD", "ALL_NEW", "UPDATED_OLD", "UPDATED_NEW")],
    ("UpdateItem", {"TableName": TABLE, "Key": KEY, "UpdateExpression": "SET deep.l[0] = :b, #n = :n REMOVE #o",
                    "ExpressionAttributeNames": {"#n": "new", "#o": "on"},
                    "ExpressionAttributeValues": {":b": {"B": "Ag=="}, ":n": {"L": [{"S": "x"}]}},
                    "ReturnValues": "UPDATED_NEW"}),
    ("UpdateItem", {"TableName": TABLE, "Key": KEY, "UpdateExpression": "SET #c = #c - :q",
                    "ConditionExpression": "#c >= :q", "ExpressionAttributeNames": {"#c": "count"},
                    "ExpressionAttributeValues": {":q": {"N": "100"}}}),
    ("UpdateItem", {"TableName": TABLE, "Key": KEY, "UpdateExpression": "ADD tags :t DELETE tokens :b",
                    "ExpressionAttributeValues": {":t": {"SS": ["c"]}, ":b": {"BS": ["AQ=="]}},
                    "ReturnValues": "ALL_NEW"}),
    ("UpdateItem", {"TableName": TABLE, "Key": KEY, "UpdateExpression": "SET nope = :v"}),
    *[("PutItem", {"TableName": INDEXED, "Item": item(n)}) for n in range(12)],
    ("BatchWriteItem", {"RequestItems": {INDEXED: [{"PutRequest": {"Item": item(n, note={"S": "batch"})}}
                                                   for n in range(12, 20)] + [{"DeleteRequest": {"Key": {
                                                       "PK": {"S": "ORDER#0"}, "SK": {"S": "000"}}}}]}}),
    ("Query", {"TableName": INDEXED, "KeyConditionExpression": "PK = :pk AND SK BETWEEN :a AND :b",
               "ExpressionAttributeValues": {":pk": {"S": "ORDER#1"}, ":a": {"S": "001"}, ":b": {"S": "016"}},
               "ScanIndexForward": False, "Limit": 3}),
    ("Query", {"TableName": INDEXED, "KeyConditionExpression": "PK = :pk", "FilterExpression": "qty > :q",
               "ExpressionAttributeValues": {":pk": {"S": "ORDER#2"}, ":q": {"N": "5"}},
               "ReturnConsumedCapacity": "TOTAL", "Select": "COUNT"}),
    ("Query", {"TableName": INDEXED, "IndexName": "GSI1", "KeyConditionExpression": "GSI1PK = :d",
               "ExpressionAttributeValues": {":d": {"S": "DAY#1"}}}),
    ("Scan", {"TableName": INDEXED, "Limit": 5}),
    ("Scan", {"TableName": INDEXED, "Limit": 5, "ExclusiveStartKey": {"PK": {"S": "ORDER#1"}, "SK": {"S": "004"}}}),
    ("Scan", {"TableName": TABLE, "FilterExpression": "size(#h) = :two", "ExpressionAttributeNames": {"#h": "hash"},
              "ExpressionAttributeValues": {":two": {"N": "2"}}}),
    ("BatchGetItem", {"RequestItems": {INDEXED: {"Keys": [{"PK": {"S": "ORDER#1"}, "SK": {"S": "001"}},
                                                          {"PK": {"S": "ORDER#0"}, "SK": {"S": "000"}}]},
                                       TABLE: {"Keys": [KEY], "ProjectionExpression": "tokens, deep"}}}),
    ("TransactWriteItems", {"TransactItems": [
        {"Put": {"TableName": TABLE, "Item": {"PK": {"S": "ORDER#9"}, "SK": {"S": "A"}, "b": {"B": "AQ=="}}}},
        {"Update": {"TableName": TABLE, "Key": KEY, "UpdateExpression": "ADD #c :one",
                    "ExpressionAttributeNames": {"#c": "count"}, "ExpressionAttributeValues": {":one": {"N": "1"}}}},
        {"ConditionCheck": {"TableName": INDEXED, "Key": {"PK": {"S": "ORDER#1"}, "SK": {"S": "001"}},
                            "ConditionExpression": "attribute_exists(PK)"}}]}),
    ("TransactWriteItems", {"TransactItems": [
        {"Delete": {"TableName": TABLE, "Key": KEY, "ConditionExpression": "attribute_not_exists(PK)"}},
        {"Put": {"TableName": TABLE, "Item": {"PK": {"S": "ORDER#8"}, "SK": {"S": "A"}}}}]}),
    ("TransactGetItems", {"TransactItems": [{"Get": {"TableName": TABLE, "Key": KEY}},
                                            {"Get": {"TableName": TABLE, "Key": {"PK": {"S": "ORDER#9"}, "SK": {"S": "A"}}}},
                                            {"Get": {"TableName": TABLE, "Key": {"PK": {"S": "none"}, "SK": {"S": "A"}}}}]}),
    ("TransactGetItems", {"TransactItems": []}),
    ("ExecuteStatement", {"Statement": f'SELECT * FROM "{INDEXED}" WHERE PK = ?', "Parameters": [{"S": "ORDER#1"}]}),
    ("Query", {"TableName": "p92-missing", "KeyConditionExpression": "PK = :p",
               "ExpressionAttributeValues": {":p": {"S": "x"}}}),
    ("DeleteItem", {"TableName": TABLE, "Key": KEY, "ReturnValues": "ALL_OLD"}),
    ("DeleteItem", {"TableName": TABLE, "Key": KEY, "ReturnValues": "ALL_OLD"}),
    *UPDATE_EXPRESSIONS,
    ("DeleteTable", {"TableName": INDEXED}),
]


def replay():
    """The workload's answers from a fresh server process, over one keep-alive connection: [[status, headers, body]]."""
    server = subprocess.Popen([sys.executable, "-m", "helpers.labserver", "--port", "0"], stdout=subprocess.PIPE,
                              text=True, env={**os.environ, "PYTHONHASHSEED": "0"})
    try:
        port = int(server.stdout.readline().rsplit(":", 1)[1])
        connection = http.client.HTTPConnection("127.0.0.1", port, timeout=30)
        return [answer(connection, target, body) for target, body in WORKLOAD]
    finally:
        server.terminate()
        server.wait(timeout=5)


def answer(connection, target, body):
    """One request's [status, headers that do not vary, body with creation times masked]."""
    connection.request("POST", "/", body=json.dumps(body), headers={
        "X-Amz-Target": f"DynamoDB_20120810.{target}", "Content-Type": "application/x-amz-json-1.0",
        "Authorization": AUTHORIZATION})
    response = connection.getresponse()
    payload = response.read()
    assert response.getheader("x-amz-crc32") == str(zlib.crc32(payload))
    headers = [[name, value] for name, value in response.getheaders() if name.lower() not in VARYING_HEADERS]
    return [response.status, headers, CREATION_TIME.sub(b'"CreationDateTime": 0', payload).decode()]


def test_every_answer_is_byte_for_byte_as_recorded():
    answers = replay()
    if os.environ.get("LAB_RECORD_ANSWERS") == "1":
        RECORDING.write_text(json.dumps(answers, indent=1, ensure_ascii=False) + "\n")
        pytest.skip(f"recorded {RECORDING.name}")
    recorded = json.loads(RECORDING.read_text())
    for (target, _), got, expected in zip(WORKLOAD, answers, recorded, strict=True):
        assert got == expected, target
