"""Batch operations' limits, checked before the engine: BatchWriteItem's 1 to 25 requests per table and each key once
per batch, BatchGetItem's RequestItems not empty. The API reference's BatchWriteItem states them: "DynamoDB rejects the
entire batch write operation: ... You try to perform multiple operations on the same item in the same BatchWriteItem
request. For example, you cannot put and delete the same item in the same BatchWriteItem request. ... There are more
than 25 requests in the batch."."""
import json

from .answers import error, java_list
from ..model.knobs import find_table

MAX_WRITES = 25
WRITES_REQUIRED = "The requestItems parameter is required for BatchWriteItem"  # nubo-db/dynamodb-conformance's capture
GETS_REQUIRED = ("1 validation error detected: Value at 'RequestItems' failed to satisfy constraint: Member must have "
                 "length greater than or equal to 1")  # the same suite's capture (eu-west-2, from 2026-08-15)
WRITES_LENGTH = ("1 validation error detected: Value '{}' at 'requestItems' failed to satisfy constraint: Map value "
                 "must satisfy constraint: [Member must have length less than or equal to 25, Member must have length "
                 "greater than or equal to 1]")  # dynalite's tests and the same suite's capture
DUPLICATE_KEYS = "Provided list of item keys contains duplicates"


def writes_not_empty(params):
    """BatchWriteItem with no table in RequestItems is refused; moto wrote nothing and answered 200."""
    if params["RequestItems"] == {}:
        return error("ValidationException", WRITES_REQUIRED)
    return None


def gets_not_empty(params):
    """BatchGetItem with no table in RequestItems is refused; moto read nothing and answered 200."""
    if params["RequestItems"] == {}:
        return error("ValidationException", GETS_REQUIRED)
    return None


def at_most_25_writes(params):
    """A table's list of 0 or more than 25 write requests is refused, the map printed as Java prints it (the list's
    members as class@hash, as for TransactItems; DynamoDB prints each request's fields there, which no capture pins)."""
    requests = params["RequestItems"]
    if all(1 <= len(writes) <= MAX_WRITES for writes in requests.values()):
        return None
    printed = ", ".join(f"{name}={java_list('WriteRequest', writes)}" for name, writes in requests.items())
    return error("ValidationException", WRITES_LENGTH.format("{" + printed + "}"))


def each_key_once(params):
    """Two write requests on one item of a table (two Puts, or a Put and a Delete) are refused; moto refused only two
    Puts."""
    for name, writes in params["RequestItems"].items():
        table = find_table(name)
        if table is None:
            continue
        names = [key for key in (table.hash_key_attr, table.range_key_attr) if key]
        keys = [json.dumps([written_key(write).get(key) for key in names], sort_keys=True) for write in writes]
        if len(set(keys)) < len(keys):
            return error("ValidationException", DUPLICATE_KEYS)
    return None


def written_key(write):
    """The item or key one write request names."""
    if "PutRequest" in write:
        return write["PutRequest"]["Item"]
    return write["DeleteRequest"]["Key"]
