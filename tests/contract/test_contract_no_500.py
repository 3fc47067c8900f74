"""No request a learner might send gets an InternalServerError: every operation of DynamoDB's model (and of
DynamoDB Streams), sent raw so that the server, not botocore, sees it, with a minimal valid request, an empty
body, a table that does not exist and members of the wrong JSON type, answers well-formed DynamoDB JSON."""
import http.client
import json
from urllib.parse import urlparse

import botocore.session
import pytest

from helpers import tracing

from .conftest import streamed_table

TABLE = "p99-no-500"
MISSING = "p99-no-500-missing"
SESSION = botocore.session.get_session()
DYNAMODB = SESSION.get_service_model("dynamodb")
STREAMS = SESSION.get_service_model("dynamodbstreams")
KEY = {"PK": {"S": "a"}}
ITEM = {"PK": {"S": "a"}, "n": {"N": "1"}}
STATEMENT = f'SELECT * FROM "{TABLE}" WHERE PK = ?'
MINIMAL = {  # a valid request of each operation that takes one easily; the others get their required members filled
    "BatchExecuteStatement": {"Statements": [{"Statement": STATEMENT, "Parameters": [KEY["PK"]]}]},
    "BatchGetItem": {"RequestItems": {TABLE: {"Keys": [KEY]}}},
    "BatchWriteItem": {"RequestItems": {TABLE: [{"PutRequest": {"Item": ITEM}}]}},
    "CreateBackup": {"TableName": TABLE, "BackupName": "p99-backup"},
    "DeleteItem": {"TableName": TABLE, "Key": KEY},
    "DescribeContinuousBackups": {"TableName": TABLE},
    "DescribeTable": {"TableName": TABLE},
    "DescribeTimeToLive": {"TableName": TABLE},
    "ExecuteStatement": {"Statement": STATEMENT, "Parameters": [KEY["PK"]]},
    "ExecuteTransaction": {"TransactStatements": [{"Statement": STATEMENT, "Parameters": [KEY["PK"]]}]},
    "GetItem": {"TableName": TABLE, "Key": KEY},
    "PutItem": {"TableName": TABLE, "Item": ITEM},
    "Query": {"TableName": TABLE, "KeyConditionExpression": "PK = :pk", "ExpressionAttributeValues": {":pk": KEY["PK"]}},
    "Scan": {"TableName": TABLE},
    "TransactGetItems": {"TransactItems": [{"Get": {"TableName": TABLE, "Key": KEY}}]},
    "TransactWriteItems": {"TransactItems": [{"Put": {"TableName": TABLE, "Item": ITEM}}]},
    "UpdateItem": {"TableName": TABLE, "Key": KEY, "UpdateExpression": "ADD n :one",
                   "ExpressionAttributeValues": {":one": {"N": "1"}}},
    "UpdateTimeToLive": {"TableName": TABLE, "TimeToLiveSpecification": {"Enabled": True, "AttributeName": "ttl"}},
    "ListStreams": {"TableName": TABLE},
}
NOT_SENT_VALID = {"DeleteTable", "CreateTable"}  # they would change the shared table; their other requests still go
WRONG = {  # JSON values of another type than each kind of shape takes
    "structure": ["x", 1, True, []], "map": ["x", 1, []], "list": ["x", 1, {}], "string": [1, 2.5, True, [], {}],
    "integer": ["x", True, [], {}], "long": ["x", True, {}], "boolean": ["x", 1, {}], "blob": [1, True, {}],
    "timestamp": ["x", True, {}], "double": ["x", {}],
}


@pytest.fixture(scope="module")
def send(lab):
    """send(service, operation, body) -> (status, raw body) of one unsigned request to the lab server."""
    if lab.kind == "aws":
        pytest.skip("raw unsigned requests reach only a local server")
    address = urlparse(lab.endpoint)

    def post(service, operation, body):
        connection = http.client.HTTPConnection(address.hostname, address.port, timeout=30)
        headers = {"X-Amz-Target": f"{service}.{operation}", "Content-Type": "application/x-amz-json-1.0",
                   "Authorization": "AWS4-HMAC-SHA256 Credential=lab/20260101/us-east-1/dynamodb/aws4_request, "
                                    "SignedHeaders=host;x-amz-target, Signature=0"}
        try:
            connection.request("POST", "/", body=json.dumps(body), headers=headers)
            response = connection.getresponse()
            return response.status, response.read()
        finally:
            connection.close()
    return post


@pytest.fixture(scope="module")
def table(lab):
    """The table the minimal requests use, with a stream, created fresh for this module."""
    client = lab.client
    with tracing(False):
        try:
            client.delete_table(TableName=MISSING)
            client.get_waiter("table_not_exists").wait(TableName=MISSING, WaiterConfig={"Delay": 1})
        except client.exceptions.ResourceNotFoundException:
            pass
    streamed_table(client, TABLE)
    yield TABLE
    with tracing(False):
        try:
            client.update_table(TableName=TABLE, DeletionProtectionEnabled=False)  # an UpdateTable sent may set it
            client.delete_table(TableName=TABLE)
        except client.exceptions.ResourceNotFoundException:
            pass


def filled(shape, name="", table=TABLE, depth=0):
    """A plausible value for a shape: its required members filled, table names naming `table`."""
    if shape.type_name == "structure":
        if shape.name == "AttributeValue":
            return {"S": "a"}
        return {member: filled(shape.members[member], member, table, depth + 1) for member in shape.required_members}
    if shape.type_name == "list":
        return [filled(shape.member, name, table, depth + 1)] if depth < 4 else []
    if shape.type_name == "map":
        return {"PK": filled(shape.value, name, table, depth + 1)} if depth < 4 else {}
    if shape.type_name == "string":
        if shape.enum:
            return shape.enum[0]
        if name in ("TableName", "TableArn", "ResourceArn", "GlobalTableName", "SourceTableArn", "StreamArn"):
            return table
        return "PK"
    return {"integer": 1, "long": 1, "boolean": True, "double": 1.0, "blob": "AAE=", "timestamp": 1}[shape.type_name]


def requests(model, operation):
    """(what, body) of each request sent for an operation."""
    shape = model.operation_model(operation).input_shape
    base = filled(shape) if shape is not None else {}
    if operation in MINIMAL:
        yield "minimal valid", MINIMAL[operation]
    elif operation not in NOT_SENT_VALID:
        yield "required members filled", base
    yield "empty body", {}
    if shape is None:
        return
    if "TableName" in shape.members or any(isinstance(value, str) and value == TABLE for value in base.values()):
        yield "a table that does not exist", {name: MISSING if value == TABLE else value for name, value in
                                              filled(shape, table=MISSING).items()} or {"TableName": MISSING}
    for member, member_shape in shape.members.items():
        for wrong in WRONG.get(member_shape.type_name, ()):
            yield f"{member}={json.dumps(wrong)}", {**base, member: wrong}


def wrong_answers(send, service, model, operation):
    """Every request of the operation whose answer is a 500 or not well-formed DynamoDB JSON, with its answer."""
    return [wrong for what, body in requests(model, operation)
            for wrong in wrong_answer(send, service, operation, what, body)]


def wrong_answer(send, service, operation, what, body):
    """[what the request got] when its answer is a 500, no answer or not well-formed DynamoDB JSON, else []."""
    try:
        status, raw = send(service, operation, body)
    except (http.client.HTTPException, OSError) as failed:  # the server dropped the connection: no answer
        status, raw = 0, repr(failed).encode()
    try:
        answer = json.loads(raw)
    except ValueError:
        answer = None
    well_formed = isinstance(answer, dict) and (status == 200 or (
        isinstance(answer.get("__type"), str) and isinstance(answer.get("message", answer.get("Message", "")), str)))
    if status >= 500 or status == 0 or not well_formed:
        return [f"{operation} {what}: {status} {raw[:300]!r}"]
    return []


def known(operations, reason):
    """The operations as parameters, those named in KNOWN_500 marked as failing for the reason written there."""
    return [pytest.param(name, marks=pytest.mark.xfail(reason=reason[name], strict=True)) if name in reason else name
            for name in operations]


KNOWN_500 = {}  # operations still answered with an InternalServerError, each with what fixing it needs


@pytest.mark.parametrize("operation", known(DYNAMODB.operation_names, KNOWN_500))
def test_no_request_of_an_operation_gets_an_internal_server_error(send, table, operation):
    assert wrong_answers(send, "DynamoDB_20120810", DYNAMODB, operation) == []


@pytest.mark.parametrize("operation", known(STREAMS.operation_names, KNOWN_500))
def test_no_streams_request_gets_an_internal_server_error(send, table, operation):
    assert wrong_answers(send, "DynamoDBStreams_20120810", STREAMS, operation) == []


PARTIQL_PROBES = [  # statements a learner may type: operators without spaces, strings, lists, missing attributes, paths
    f"SELECT * FROM \"{TABLE}\" WHERE PK='a'", f"SELECT * FROM \"{TABLE}\" WHERE PK = 'a' AND n > 'a'",
    f"SELECT * FROM \"{TABLE}\" WHERE PK='a' AND n<>'a'", f"SELECT * FROM \"{TABLE}\" WHERE PK='a' AND n>=1",
    f"SELECT * FROM \"{TABLE}\" WHERE PK='a' AND n<=1", f"SELECT * FROM \"{TABLE}\" WHERE PK='a' AND n!=1",
    f"SELECT * FROM \"{TABLE}\" WHERE PK = 'a' AND n BETWEEN 'a' AND 'b'",
    f"SELECT * FROM \"{TABLE}\" WHERE PK IN ['a', 'b']", f"SELECT * FROM \"{TABLE}\" WHERE PK = 'a' AND n IS MISSING",
    f"SELECT * FROM \"{TABLE}\" WHERE PK = 'a' AND n IS NOT MISSING", f"SELECT * FROM \"{TABLE}\" WHERE PK = ?",
    f"select * from \"{TABLE}\" where PK = 'a' and n > 'a'",
    f"SELECT m.b FROM \"{TABLE}\" WHERE PK = 'a' AND m.b < 'a'",
    f"SELECT * FROM \"{TABLE}\" WHERE PK = 'a' AND begins_with(PK, 'a')",
    f"SELECT * FROM \"{TABLE}\" WHERE PK = 'a' AND n IS NULL",
    f"UPDATE \"{TABLE}\" SET n=2 WHERE PK='a'", f"DELETE FROM \"{TABLE}\" WHERE PK='missing'",
    f"DELETE FROM \"{TABLE}\" WHERE PK = 'a' AND n > 5", f"SELECT * FROM \"{TABLE}\" WHERE PK =",
    f"DELETE FROM \"{TABLE}\"",
]


@pytest.mark.parametrize("statement", PARTIQL_PROBES)
def test_no_partiql_statement_a_learner_may_type_gets_an_internal_server_error(send, table, statement):
    send("DynamoDB_20120810", "PutItem", {"TableName": table, "Item": {**ITEM, "m": {"M": {"b": {"S": "q"}}}}})
    one = {"Statement": statement, "Parameters": [KEY["PK"]]} if "?" in statement else {"Statement": statement}
    bodies = {"ExecuteStatement": one, "BatchExecuteStatement": {"Statements": [one]},
              "ExecuteTransaction": {"TransactStatements": [one]}}
    assert [wrong for operation, body in bodies.items()
            for wrong in wrong_answer(send, "DynamoDB_20120810", operation, statement, body)] == []
