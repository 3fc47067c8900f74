"""DynamoDB Streams: a table with a stream enabled records each write, and a streams client reads it."""
import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from helpers import tracing
from helpers.backend import CLIENT_CONFIG, DUMMY_CREDENTIALS

from .conftest import streamed_table

TABLE = "p90-contract-stream"


@pytest.fixture(scope="module")
def streamed(lab):
    """A fresh table with a NEW_AND_OLD_IMAGES stream, and a DynamoDB Streams client of the same backend."""
    client = lab.client
    streamed_table(client, TABLE)
    session = boto3.session.Session(**(DUMMY_CREDENTIALS if lab.kind != "aws" else {}))
    streams = session.client("dynamodbstreams", endpoint_url=lab.endpoint if lab.kind != "aws" else None,
                             region_name=client.meta.region_name, config=CLIENT_CONFIG)
    yield client, streams
    with tracing(False):
        client.delete_table(TableName=TABLE)


def test_a_put_item_is_read_back_from_the_stream(streamed):
    client, streams = streamed
    with tracing(False):
        client.put_item(TableName=TABLE, Item={"PK": "order#1", "qty": 2, "token": b"\x00\x01"})
        arn = streams.list_streams(TableName=TABLE)["Streams"][0]["StreamArn"]
        shard = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"][0]["ShardId"]
        iterator = streams.get_shard_iterator(StreamArn=arn, ShardId=shard,
                                              ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
        records = streams.get_records(ShardIterator=iterator)["Records"]
    assert [record["eventName"] for record in records] == ["INSERT"]
    assert records[0]["dynamodb"]["Keys"] == {"PK": {"S": "order#1"}}
    assert records[0]["dynamodb"]["NewImage"] == {"PK": {"S": "order#1"}, "qty": {"N": "2"}, "token": {"B": b"\x00\x01"}}


@pytest.fixture(scope="module")
def unvalidated_streams(lab, streamed):
    """A DynamoDB Streams client of the same backend that sends requests botocore would refuse to send."""
    session = boto3.session.Session(**(DUMMY_CREDENTIALS if lab.kind != "aws" else {}))
    return session.client("dynamodbstreams", endpoint_url=lab.endpoint if lab.kind != "aws" else None,
                          region_name=lab.client.meta.region_name,
                          config=CLIENT_CONFIG.merge(Config(parameter_validation=False)))


def streams_refusal(call, **params):
    """The Error of a DynamoDB Streams call that must fail."""
    with pytest.raises(ClientError) as refused, tracing(False):
        call(**params)
    return refused.value.response["Error"]


@pytest.mark.parametrize("operation", ["describe_stream", "get_shard_iterator"])
def test_a_stream_arn_that_names_no_stream_is_refused(streamed, unvalidated_streams, table, operation):
    """'Invalid StreamArn' for no stream ARN at all (the AWS SDK for JavaScript's integration test of real DynamoDB
    Streams); DynamoDB Local's words for a stream ARN of a table with no stream."""
    streams = unvalidated_streams
    arn = streams.list_streams(TableName=TABLE)["Streams"][0]["StreamArn"]
    other = arn.replace(f"table/{TABLE}/", "table/p90-contract/")  # the contract table has no stream
    shard = {"ShardId": "shardId-1", "ShardIteratorType": "TRIM_HORIZON"} if operation == "get_shard_iterator" else {}
    call = getattr(streams, operation)
    assert streams_refusal(call, StreamArn="fake-stream", **shard) == {"Code": "ValidationException",
                                                                       "Message": "Invalid StreamArn"}
    assert streams_refusal(call, StreamArn=other, **shard) == {
        "Code": "ResourceNotFoundException", "Message": f"Requested resource not found: Stream: {other} not found"}


def test_a_shard_the_stream_lacks_and_an_iterator_never_handed_out_are_refused(streamed, unvalidated_streams, table):
    streams = unvalidated_streams
    arn = streams.list_streams(TableName=TABLE)["Streams"][0]["StreamArn"]
    assert streams_refusal(streams.get_shard_iterator, StreamArn=arn, ShardId="shardId-1",
                           ShardIteratorType="TRIM_HORIZON") == {
        "Code": "ResourceNotFoundException", "Message": "Requested resource not found: Shard does not exist"}
    assert streams_refusal(streams.get_records, ShardIterator="made-up") == {
        "Code": "ValidationException", "Message": "Invalid ShardIterator"}
