"""DynamoDB Streams requests naming no stream, shard or iterator of the lab's."""
import re

from moto.dynamodbstreams.models import dynamodbstreams_backends

from .answers import error
from .knobs import find_table

STREAM_ARN = re.compile(r"arn:aws[a-z-]*:dynamodb:[^:]*:[0-9]{12}:table/([a-zA-Z0-9_.-]+)/stream/(.+)")
INVALID_STREAM_ARN = "Invalid StreamArn"
NO_SUCH_STREAM = "Requested resource not found: Stream: {} not found"
INVALID_ITERATOR = "Invalid ShardIterator"
NO_SUCH_SHARD = "Requested resource not found: Shard does not exist"


def stream_exists(params):
    """A StreamArn that is no stream ARN is a ValidationException, as the AWS SDK for JavaScript's integration
    test records real DynamoDB Streams answering 'fake-stream'; a stream ARN naming no stream of the lab's
    tables (no such table, no stream on it, another label) is a ResourceNotFoundException in DynamoDB Local's
    words. moto fails on both (IndexError, KeyError)."""
    arn = params["StreamArn"]
    named = STREAM_ARN.fullmatch(arn) if isinstance(arn, str) else None
    if named is None:
        return error("ValidationException", INVALID_STREAM_ARN)
    table = find_table(named.group(1))
    if table is None or not getattr(table, "latest_stream_label", None) or \
            named.group(2) != table.latest_stream_label:
        return error("ResourceNotFoundException", NO_SUCH_STREAM.format(arn))
    return None


def shard_exists(params):
    """A ShardId that is not the stream's shard is a ResourceNotFoundException, in the words DynamoDB Streams
    clients (ex_kcl, the Kinesis adapter's tests) handle; moto fails with an AssertionError."""
    named = STREAM_ARN.fullmatch(params["StreamArn"])
    table = find_table(named.group(1))
    shard = getattr(table, "stream_shard", None)
    if shard is None or params["ShardId"] != shard.id:
        return error("ResourceNotFoundException", NO_SUCH_SHARD)
    return None


def iterator_made(params):
    """A ShardIterator the server did not hand out is a ValidationException (the words DynamoDB-compatible servers
    agree on; no capture of real DynamoDB Streams records them); moto fails with a KeyError."""
    iterator = params["ShardIterator"]
    for regions in dynamodbstreams_backends.values():
        for backend in regions.values():
            if isinstance(iterator, str) and iterator in backend.shard_iterators:
                return None
    return error("ValidationException", INVALID_ITERATOR)
