"""Contract fixtures: one shared table with a GSI, per-test keys, a client that skips botocore's checks, raw HTTP
requests whose header names are spelt as other SDKs spell them, and one request sent both ways."""
import base64
import http.client
import json
from functools import partial
from urllib.parse import urlparse

import boto3
import pytest
from botocore import xform_name
from botocore.config import Config
from botocore.exceptions import ClientError

from helpers import BackendError, connect, fresh_table, tracing
from helpers.backend import CLIENT_CONFIG, DUMMY_CREDENTIALS, LAB_TAG

TABLE = "p90-contract"
HEADER_CASES = {"lower": str.lower, "upper": str.upper,
                "mixed": lambda name: "".join(c.upper() if i % 2 else c.lower() for i, c in enumerate(name))}


def pytest_report_header(config):
    """Name the backend the contract is checked on, at the top of the run (when tests/contract is run directly)."""
    try:
        return connect(quiet=True).banner
    except BackendError as error:
        return f"Backend: unavailable: {error}"


def streamed_table(client, name):
    """Drop the table `name` if it exists and create it again, keyed by PK, with a NEW_AND_OLD_IMAGES stream."""
    with tracing(False):
        try:
            client.delete_table(TableName=name)
            client.get_waiter("table_not_exists").wait(TableName=name, WaiterConfig={"Delay": 1})
        except client.exceptions.ResourceNotFoundException:
            pass
        client.create_table(TableName=name, BillingMode="PAY_PER_REQUEST", Tags=[LAB_TAG],
                            KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"}],
                            AttributeDefinitions=[{"AttributeName": "PK", "AttributeType": "S"}],
                            StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"})
        client.get_waiter("table_exists").wait(TableName=name, WaiterConfig={"Delay": 1})


@pytest.fixture(scope="session")
def table(lab):
    """The contract table, created fresh once per session; each test writes under its own keys."""
    return fresh_table(TABLE, lab)


@pytest.fixture
def key(request):
    """key("alice") -> a primary key no other test uses, so tests can share one table."""
    return lambda name, sk="META": {"PK": f"{request.node.name}#{name}", "SK": sk}


@pytest.fixture(scope="session")
def unvalidated_client(lab):
    """A low-level client of the same backend that sends requests botocore would refuse to send."""
    session = boto3.session.Session(**(DUMMY_CREDENTIALS if lab.kind != "aws" else {}))
    return session.client("dynamodb", endpoint_url=lab.endpoint, region_name=lab.client.meta.region_name,
                          config=CLIENT_CONFIG.merge(Config(parameter_validation=False)))


@pytest.fixture(params=sorted(HEADER_CASES))
def raw(request, lab):
    """raw("PutItem", body) -> (status, answer): one unsigned http.client request, header names in one case.

    The body is sent as JSON, or as it is when it is bytes.
    """
    if lab.kind == "aws":
        pytest.skip("raw unsigned requests reach only a local server")
    return partial(post, lab.endpoint, HEADER_CASES[request.param])


def post(endpoint, spell, target, body, service="DynamoDB_20120810"):
    """(status, answer) of one unsigned request to `endpoint`, its header names spelt by `spell`; bytes in a JSON body
    travel as base64 text, as DynamoDB's binary values do."""
    address = urlparse(endpoint)
    connection = http.client.HTTPConnection(address.hostname, address.port, timeout=30)
    headers = {"X-Amz-Target": f"{service}.{target}", "Content-Type": "application/x-amz-json-1.0",
               "Authorization": "AWS4-HMAC-SHA256 Credential=lab/20260101/us-east-1/dynamodb/aws4_request, "
                                "SignedHeaders=host;x-amz-target, Signature=0"}
    try:
        connection.request("POST", "/", body=body if isinstance(body, bytes) else json.dumps(body, default=base64_text),
                           headers={spell(name): value for name, value in headers.items()})
        response = connection.getresponse()
        return response.status, json.loads(response.read() or b"{}")
    finally:
        connection.close()


def base64_text(value):
    """json.dumps fallback: bytes as base64 text, anything else JSON has no type for (a datetime) as its text."""
    return base64.b64encode(value).decode() if isinstance(value, bytes) else str(value)


@pytest.fixture(params=["boto3", "raw HTTP"])
def call(request, lab, unvalidated_client):
    """call("PutItem", body) -> DynamoDB's answer, sent through boto3 (no parameter validation) or as one raw HTTP
    request: (code, message) for an error, else the answer's members. Binary values go as bytes and come back as
    base64 text either way."""
    if request.param == "boto3":
        return partial(through_boto3, unvalidated_client)
    if lab.kind == "aws":
        pytest.skip("raw unsigned requests reach only a local server")
    return partial(through_http, lab.endpoint)


def through_boto3(client, target, body):
    """A request sent with a boto3 client, answered as `call` answers it."""
    try:
        answer = getattr(client, xform_name(target))(**body)
    except ClientError as refused:
        return refused.response["Error"]["Code"], refused.response["Error"]["Message"]
    answer.pop("ResponseMetadata", None)
    return json.loads(json.dumps(answer, default=base64_text))


def through_http(endpoint, target, body):
    """A request sent as one raw HTTP request, answered as `call` answers it."""
    status, answer = post(endpoint, str, target, body)
    if status != 200:
        return answer.get("__type", "").rpartition("#")[2], answer.get("message", answer.get("Message"))
    return answer
