"""BatchWriteItem's and BatchGetItem's limits (the API reference's BatchWriteItem: more than 25 requests, or two on
one item, reject the whole batch), in DynamoDB's words as nubo-db/dynamodb-conformance and dynalite record them."""
import re

WRITES_REQUIRED = "The requestItems parameter is required for BatchWriteItem"
GETS_REQUIRED = ("1 validation error detected: Value at 'RequestItems' failed to satisfy constraint: Member must have "
                 "length greater than or equal to 1")
DUPLICATES = "Provided list of item keys contains duplicates"


def length_error(table_name, count):
    """DynamoDB's words for a table's list of write requests of the wrong length, the list printed as Java prints it."""
    members = ", ".join([r"com\.amazonaws\.dynamodb\.v20120810\.WriteRequest@[0-9a-f]+"] * count)
    return re.compile(rf"1 validation error detected: Value '\{{{re.escape(table_name)}=\[{members}\]\}}' at "
                      r"'requestItems' failed to satisfy constraint: Map value must satisfy constraint: \[Member must "
                      r"have length less than or equal to 25, Member must have length greater than or equal to 1\]")


def typed_key(key, name):
    """A low-level key no other test uses."""
    return {"PK": {"S": key(name)["PK"]}, "SK": {"S": "META"}}


def left(call, table, keys):
    """How many of these keys name an item."""
    return sum("Item" in call("GetItem", {"TableName": table.name, "Key": key, "ConsistentRead": True}) for key in keys)


def test_26_write_requests_are_refused_and_nothing_is_written(call, table, key):
    keys = [typed_key(key, f"item{n}") for n in range(26)]
    code, message = call("BatchWriteItem", {"RequestItems": {table.name: [{"PutRequest": {"Item": k}} for k in keys]}})
    assert code == "ValidationException"
    assert length_error(table.name, 26).fullmatch(message)
    assert left(call, table, keys) == 0


def test_an_empty_list_of_write_requests_is_refused(call, table):
    code, message = call("BatchWriteItem", {"RequestItems": {table.name: []}})
    assert code == "ValidationException"
    assert length_error(table.name, 0).fullmatch(message)


def test_batch_write_item_without_tables_is_refused(call):
    assert call("BatchWriteItem", {"RequestItems": {}}) == ("ValidationException", WRITES_REQUIRED)


def test_a_put_and_a_delete_of_one_item_in_one_batch_are_refused(call, table, key):
    item = typed_key(key, "twice")
    answer = call("BatchWriteItem", {"RequestItems": {table.name: [{"PutRequest": {"Item": item}},
                                                                   {"DeleteRequest": {"Key": item}}]}})
    assert answer == ("ValidationException", DUPLICATES)
    assert left(call, table, [item]) == 0


def test_batch_get_item_without_tables_is_refused(call):
    assert call("BatchGetItem", {"RequestItems": {}}) == ("ValidationException", GETS_REQUIRED)
