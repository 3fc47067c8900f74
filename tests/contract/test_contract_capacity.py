"""ReturnConsumedCapacity as DynamoDB bills it (Developer Guide: "DynamoDB item sizes and formats", "DynamoDB read
and write operations", "Capacity management for transactions", GSI writes), and the lab server's meter to the same
figures. Every item's size is built here byte by byte: names and strings as UTF-8, numbers by significant digits,
lists and maps with their overheads, so each case sits exactly on or just past a 1 KB or 4 KB boundary."""
from decimal import Decimal

import pytest
from botocore.exceptions import ClientError

from helpers.meter import metered

from .conftest import TABLE

KB = 1024


def key_bytes(key):
    """The bytes a key's names and string values take."""
    return sum(len(name.encode()) + len(value.encode()) for name, value in key.items())


def item_of(key, size, **extra):
    """An item of exactly `size` bytes: the key, the `extra` attributes (each with its value's bytes) and a padding
    string."""
    used = key_bytes(key) + sum(len(name.encode()) + bytes_ for name, (_, bytes_) in extra.items())
    padding = size - used - len("pad")
    assert padding >= 0
    return {**key, **{name: value for name, (value, _) in extra.items()}, "pad": "x" * padding}


def units(answer):
    """The CapacityUnits of an answer's ConsumedCapacity (the table's entry, for a list)."""
    consumed = answer["ConsumedCapacity"]
    return (consumed[0] if isinstance(consumed, list) else consumed)["CapacityUnits"]


def put(lab, item, **extra):
    """PutItem asking for TOTAL; the units."""
    return units(lab.client.put_item(TableName=TABLE, Item=item, ReturnConsumedCapacity="TOTAL", **extra))


@pytest.mark.parametrize("size, expected", [(1, 1.0), (KB, 1.0), (KB + 1, 2.0), (3 * KB, 3.0), (3 * KB + 1, 4.0)])
def test_a_write_is_billed_in_1_kb_units(lab, table, key, size, expected):
    item = item_of(key("w"), max(size, key_bytes(key("w")) + 3))
    assert put(lab, item) == expected


@pytest.mark.parametrize("digits, expected", [("123456789012", 1.0), ("1234567890123", 2.0),
                                              ("1230000000000", 1.0), ("0.000000001234567", 1.0)])
def test_a_number_is_sized_by_its_significant_digits(lab, table, key, digits, expected):
    # 12 significant digits take 6 + 1 bytes, making the item exactly 1 KB; 13 take 7 + 1, one byte past it;
    # trailing and leading zeroes are trimmed before counting
    item = item_of(key("n"), KB, n=(0, 7))
    item["n"] = int(digits) if "." not in digits else Decimal(digits)
    assert put(lab, item) == expected


def test_strings_are_utf8_and_lists_maps_sets_binary_carry_their_overheads(lab, table, key):
    extra = {"é": ("ü", 2),                               # name and value, two UTF-8 bytes each
             "m": ({"a": "xy"}, 3 + (1 + 1 + 2)),        # map: 3 bytes, and 1 per element (name + value)
             "l": (["xy", 1], 3 + (1 + 2) + (1 + 2)),    # list: 3 bytes, and 1 per element
             "s": ({"ab", "cd"}, 4),                     # string set: its members
             "b": (b"0123456789", 10),                   # binary: raw bytes, not base64
             "t": (True, 1), "z": (None, 1)}             # Boolean and null: 1 byte
    exact = item_of(key("shapes"), KB, **extra)
    assert put(lab, exact) == 1.0
    exact["pad"] += "x"
    assert put(lab, exact) == 2.0


@pytest.mark.parametrize("size, consistent, expected", [
    (4 * KB, True, 1.0), (4 * KB, False, 0.5), (4 * KB + 1, True, 2.0), (4 * KB + 1, False, 1.0),
    (10 * KB, True, 3.0)])
def test_a_read_is_billed_in_4_kb_units_and_half_when_eventually_consistent(lab, table, key, size, consistent,
                                                                             expected):
    lab.client.put_item(TableName=TABLE, Item=item_of(key("r"), size))
    answer = lab.client.get_item(TableName=TABLE, Key=key("r"), ConsistentRead=consistent,
                                 ReturnConsumedCapacity="TOTAL")
    assert answer["ConsumedCapacity"] == {"TableName": TABLE, "CapacityUnits": expected}


@pytest.mark.parametrize("consistent, expected", [(True, 1.0), (False, 0.5)])
def test_reading_an_item_that_does_not_exist_still_costs_a_read(lab, table, key, consistent, expected):
    answer = lab.client.get_item(TableName=TABLE, Key=key("none"), ConsistentRead=consistent,
                                 ReturnConsumedCapacity="TOTAL")
    assert "Item" not in answer and units(answer) == expected


def test_put_and_update_are_billed_by_the_larger_of_before_and_after(lab, table, key):
    lab.client.put_item(TableName=TABLE, Item=item_of(key("big"), 3 * KB))
    assert put(lab, item_of(key("big"), 100)) == 3.0
    lab.client.put_item(TableName=TABLE, Item=item_of(key("grow"), KB))
    grown = lab.client.update_item(TableName=TABLE, Key=key("grow"), UpdateExpression="SET more = :x",
                                   ExpressionAttributeValues={":x": "y"}, ReturnConsumedCapacity="TOTAL")
    assert units(grown) == 2.0


def test_delete_is_billed_by_the_item_deleted(lab, table, key):
    lab.client.put_item(TableName=TABLE, Item=item_of(key("d"), 2 * KB + 1))
    assert units(lab.client.delete_item(TableName=TABLE, Key=key("d"), ReturnConsumedCapacity="TOTAL")) == 3.0
    assert units(lab.client.delete_item(TableName=TABLE, Key=key("d"), ReturnConsumedCapacity="TOTAL")) == 1.0


def test_transactions_cost_twice(lab, table, key):
    small, large = item_of(key("t1"), 100), item_of(key("t2"), KB + 1)
    written = lab.client.transact_write_items(TransactItems=[{"Put": {"TableName": TABLE, "Item": small}},
                                                             {"Put": {"TableName": TABLE, "Item": large}}],
                                              ReturnConsumedCapacity="TOTAL")
    assert written["ConsumedCapacity"] == [{"TableName": TABLE, "CapacityUnits": 6.0, "ReadCapacityUnits": 0.0,
                                            "WriteCapacityUnits": 6.0}]
    read = lab.client.transact_get_items(TransactItems=[{"Get": {"TableName": TABLE, "Key": key("t1")}},
                                                        {"Get": {"TableName": TABLE, "Key": key("t2")}}],
                                         ReturnConsumedCapacity="TOTAL")
    assert read["ConsumedCapacity"] == [{"TableName": TABLE, "CapacityUnits": 4.0, "ReadCapacityUnits": 4.0,
                                         "WriteCapacityUnits": 0.0}]


def query(lab, key, **extra):
    """A Query of key("q")'s partition, asking for TOTAL; its units."""
    return units(lab.client.query(TableName=TABLE, KeyConditionExpression="PK = :pk",
                                  ExpressionAttributeValues={":pk": key("q")["PK"], **extra.pop("values", {})},
                                  ReturnConsumedCapacity="TOTAL", **extra))


def test_query_sums_the_items_it_reads_then_rounds_once_filter_or_not(lab, table, key):
    for sort in ("a", "b", "c"):  # three items of 1,500 bytes: 4,500 bytes read, two 4 KB blocks
        lab.client.put_item(TableName=TABLE, Item=item_of(key("q", sort), 1500))
    assert query(lab, key, ConsistentRead=True) == 2.0
    assert query(lab, key) == 1.0
    assert query(lab, key, ConsistentRead=True, FilterExpression="attribute_exists(absent)") == 2.0
    assert query(lab, key, ConsistentRead=True, ProjectionExpression="#k", ExpressionAttributeNames={"#k": "PK"}) == 2.0
    assert query(lab, key, ConsistentRead=True, FilterExpression="#p = :none", ExpressionAttributeNames={"#p": "pad"},
                 values={":none": "-"}, Select="COUNT") == 2.0


def test_batches_bill_each_item_rounded_on_its_own(lab, table, key):
    items = [item_of(key(name), 1500) for name in ("b1", "b2")]
    written = lab.client.batch_write_item(RequestItems={TABLE: [{"PutRequest": {"Item": item}} for item in items]},
                                          ReturnConsumedCapacity="TOTAL")
    assert written["ConsumedCapacity"] == [{"TableName": TABLE, "CapacityUnits": 4.0}]
    read = lab.client.batch_get_item(RequestItems={TABLE: {"Keys": [key("b1"), key("b2")]}},
                                     ReturnConsumedCapacity="TOTAL")
    assert read["ConsumedCapacity"] == [{"TableName": TABLE, "CapacityUnits": 1.0}]


def indexed(lab, key, expression, values):
    """UpdateItem on key("g") asking for INDEXES; its ConsumedCapacity."""
    answer = lab.client.update_item(TableName=TABLE, Key=key("g"), UpdateExpression=expression,
                                    ExpressionAttributeValues=values, ReturnConsumedCapacity="INDEXES")
    return answer["ConsumedCapacity"]


def test_each_index_an_item_change_touches_costs_a_write_and_a_changed_index_key_two(lab, table, key):
    added = lab.client.put_item(TableName=TABLE, Item={**key("g"), "GSI1PK": "A", "GSI1SK": "1"},
                                ReturnConsumedCapacity="INDEXES")["ConsumedCapacity"]
    assert added == {"TableName": TABLE, "CapacityUnits": 2.0, "Table": {"CapacityUnits": 1.0},
                     "GlobalSecondaryIndexes": {"GSI1": {"CapacityUnits": 1.0}}}
    moved = indexed(lab, key, "SET GSI1PK = :b", {":b": "B"})
    assert moved["GlobalSecondaryIndexes"] == {"GSI1": {"CapacityUnits": 2.0}} and moved["CapacityUnits"] == 3.0
    projected = indexed(lab, key, "SET note = :n", {":n": "n"})
    assert projected["GlobalSecondaryIndexes"] == {"GSI1": {"CapacityUnits": 1.0}}
    left = indexed(lab, key, "REMOVE GSI1PK SET note = :n", {":n": "m"})
    assert left["GlobalSecondaryIndexes"] == {"GSI1": {"CapacityUnits": 1.0}}
    untouched = indexed(lab, key, "SET note = :n", {":n": "o"})
    assert untouched == {"TableName": TABLE, "CapacityUnits": 1.0, "Table": {"CapacityUnits": 1.0}}


def embedded(lab):
    """Skip off the lab server: only it has a meter."""
    if lab.kind != "embedded":
        pytest.skip("only the lab server has a meter")


def test_the_meter_counts_what_consumed_capacity_says_and_bills_refused_writes(lab, table, key):
    embedded(lab)
    with metered(lab, TABLE) as cost:
        answered = put(lab, item_of(key("m"), 2 * KB + 1))
        answered += units(lab.client.get_item(TableName=TABLE, Key=key("m"), ConsistentRead=True,
                                              ReturnConsumedCapacity="TOTAL"))
        with pytest.raises(ClientError, match="ConditionalCheckFailedException"):
            lab.client.put_item(TableName=TABLE, Item=item_of(key("m"), 100),
                                ConditionExpression="attribute_not_exists(PK)")
        with pytest.raises(ClientError, match="ConditionalCheckFailedException"):
            lab.client.update_item(TableName=TABLE, Key=key("absent"), UpdateExpression="SET n = :n",
                                   ExpressionAttributeValues={":n": 1}, ConditionExpression="attribute_exists(PK)")
    assert answered == 3.0 + 1.0
    assert cost["ConsumedWriteCapacityUnits"] == 3.0 + 3.0 + 1.0   # the put, the refused put (existing 2 KB), the
    assert cost["WriteUnitsOnRefusedWrites"] == 3.0 + 1.0          # refused update of an absent item (one unit)
    assert cost["ConsumedReadCapacityUnits"] == 1.0
    assert cost["ConditionalCheckFailedRequests"] == 2


def test_the_meter_counts_index_writes_and_a_cancelled_transaction(lab, table, key):
    embedded(lab)
    with metered(lab, TABLE) as cost:
        lab.client.put_item(TableName=TABLE, Item={**key("mg"), "GSI1PK": "A", "GSI1SK": "1"})
        with pytest.raises(ClientError, match="TransactionCanceledException"):
            lab.client.transact_write_items(TransactItems=[{"Put": {
                "TableName": TABLE, "Item": key("mg"), "ConditionExpression": "attribute_not_exists(PK)"}}])
    assert cost["IndexWriteCapacityUnits"] == 1.0
    assert cost["ConsumedWriteCapacityUnits"] == 1.0 + 2.0
    assert cost["WriteUnitsOnRefusedWrites"] == 2.0


def test_a_query_on_an_index_reads_the_index_entries(lab, table, key):
    partition = key("i")["PK"]
    for sort in ("a", "b"):  # two entries of 3,000 bytes: 6,000 bytes read from the index, two 4 KB blocks
        item_key = key("i", sort)
        lab.client.put_item(TableName=TABLE, Item=item_of(item_key, 3000, GSI1PK=(partition, len(partition)),
                                                          GSI1SK=(sort, 1)))
    answer = lab.client.query(TableName=TABLE, IndexName="GSI1", KeyConditionExpression="GSI1PK = :p",
                              ExpressionAttributeValues={":p": partition}, ReturnConsumedCapacity="INDEXES")
    consumed = answer["ConsumedCapacity"]
    assert answer["Count"] == 2 and consumed["CapacityUnits"] == 1.0
    assert consumed["GlobalSecondaryIndexes"] == {"GSI1": {"CapacityUnits": 1.0}}
