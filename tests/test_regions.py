"""Regions in the lab server: a client's Region is the one it signs for, and each Region holds its own tables."""
import json

import boto3
import pytest

from helpers import labhttp, tracing

KEY = {"KeySchema": [{"AttributeName": "PK", "KeyType": "HASH"}],
       "AttributeDefinitions": [{"AttributeName": "PK", "AttributeType": "S"}], "BillingMode": "PAY_PER_REQUEST"}
OTHER_KEY = {"KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
             "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}], "BillingMode": "PAY_PER_REQUEST"}


@pytest.fixture
def embedded(lab):
    """The session's Lab, on the embedded lab server only (these tests make tables in several Regions)."""
    if lab.kind != "embedded":
        pytest.skip("these tests make tables in several Regions of the embedded lab server")
    with tracing(False):
        yield lab


def fresh(client, name, **definition):
    """Create `name` afresh in the client's Region."""
    try:
        client.delete_table(TableName=name)
    except client.exceptions.ResourceNotFoundException:
        pass
    client.create_table(TableName=name, **definition)


def test_client_in_signs_for_its_region_and_is_made_once(embedded):
    client = embedded.client_in("eu-west-1")
    assert client.meta.region_name == "eu-west-1"
    assert embedded.client_in("eu-west-1") is client
    assert client.meta.endpoint_url == embedded.client.meta.endpoint_url


def test_client_in_takes_python_values_as_lab_client_does(embedded):
    client = embedded.client_in("eu-west-1")
    fresh(client, "p34-regions-values", **KEY)
    client.put_item(TableName="p34-regions-values", Item={"PK": "a", "n": 1})
    assert client.get_item(TableName="p34-regions-values", Key={"PK": "a"})["Item"] == {"PK": "a", "n": 1}


def test_a_table_belongs_to_the_region_it_was_made_in(embedded):
    eu = embedded.client_in("eu-west-1")
    fresh(eu, "p34-regions-apart", **KEY)
    assert "p34-regions-apart" in eu.list_tables()["TableNames"]
    assert "p34-regions-apart" not in embedded.client.list_tables()["TableNames"]
    with pytest.raises(embedded.client.exceptions.ResourceNotFoundException):
        embedded.client.describe_table(TableName="p34-regions-apart")
    assert ":eu-west-1:" in eu.describe_table(TableName="p34-regions-apart")["Table"]["TableArn"]


def test_any_boto3_client_signed_for_a_region_reaches_that_regions_tables(embedded):
    eu = embedded.client_in("eu-west-1")
    fresh(eu, "p34-regions-plain", **KEY)
    eu.put_item(TableName="p34-regions-plain", Item={"PK": "a"})
    plain = boto3.client("dynamodb", region_name="eu-west-1", endpoint_url=embedded.endpoint,
                         aws_access_key_id="lab", aws_secret_access_key="lab")
    assert plain.get_item(TableName="p34-regions-plain", Key={"PK": {"S": "a"}})["Item"] == {"PK": {"S": "a"}}


def test_the_same_name_in_two_regions_is_two_tables_each_checked_against_its_own_key(embedded):
    us, eu = embedded.client, embedded.client_in("eu-west-1")
    fresh(us, "p34-regions-twin", **KEY)
    fresh(eu, "p34-regions-twin", **OTHER_KEY)
    eu.put_item(TableName="p34-regions-twin", Item={"id": "x", "where": "eu"})
    us.put_item(TableName="p34-regions-twin", Item={"PK": "x", "where": "us"})
    with pytest.raises(eu.exceptions.ClientError, match="Missing the key id"):
        eu.put_item(TableName="p34-regions-twin", Item={"PK": "y"})
    assert eu.get_item(TableName="p34-regions-twin", Key={"id": "x"})["Item"]["where"] == "eu"
    assert us.get_item(TableName="p34-regions-twin", Key={"PK": "x"})["Item"]["where"] == "us"
    assert eu.update_item(TableName="p34-regions-twin", Key={"id": "x"}, UpdateExpression="SET n = :n",
                          ExpressionAttributeValues={":n": 1}, ReturnValues="ALL_NEW")["Attributes"]["n"] == 1


def test_a_stream_is_found_in_the_region_of_its_table(embedded):
    us, eu = embedded.client, embedded.client_in("eu-west-1")
    streaming = {**KEY, "StreamSpecification": {"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"}}
    fresh(us, "p34-regions-stream", **streaming)
    fresh(eu, "p34-regions-stream", **streaming)
    eu_arn = eu.describe_table(TableName="p34-regions-stream")["Table"]["LatestStreamArn"]
    streams = boto3.client("dynamodbstreams", region_name="eu-west-1", endpoint_url=embedded.endpoint,
                           aws_access_key_id="lab", aws_secret_access_key="lab")
    description = streams.describe_stream(StreamArn=eu_arn)["StreamDescription"]
    assert description["StreamArn"] == eu_arn
    shard = description["Shards"][0]["ShardId"]
    assert streams.get_shard_iterator(StreamArn=eu_arn, ShardId=shard, ShardIteratorType="TRIM_HORIZON")


def test_a_table_in_one_region_is_described_without_global_table_members(embedded):
    fresh(embedded.client, "p34-regions-single", **KEY)
    table = embedded.client.describe_table(TableName="p34-regions-single")["Table"]
    assert not {"GlobalTableVersion", "Replicas", "MultiRegionConsistency", "GlobalTableWitnesses"} & set(table)


def list_tables_over_http(endpoint, region):
    """The TableNames of a raw ListTables whose credential scope names `region` (the lab server reads the scope, as
    DynamoDB's Regional endpoints are told apart)."""
    scope = f"AWS4-HMAC-SHA256 Credential=lab/20260101/{region}/dynamodb/aws4_request, SignedHeaders=host, Signature=0"
    status, body = labhttp.request(endpoint, "POST", b"{}", {"X-Amz-Target": "DynamoDB_20120810.ListTables",
                                                             "Content-Type": "application/x-amz-json-1.0",
                                                             "Authorization": scope})
    assert status == 200
    return json.loads(body)["TableNames"]


def test_a_raw_request_is_in_the_region_its_credential_scope_names(embedded):
    fresh(embedded.client_in("ap-northeast-1"), "p34-regions-raw", **KEY)
    assert "p34-regions-raw" in list_tables_over_http(embedded.endpoint, "ap-northeast-1")
    assert "p34-regions-raw" not in list_tables_over_http(embedded.endpoint, "us-east-1")
