"""DynamoDB Streams through boto3's dynamodbstreams client: which writes make records, what a record holds, the iterator
types, and a stream disabled and enabled again, as DynamoDB documents them (helpers/labserver/replication/streamlog.py
and streams.py cite the pages)."""
import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

from helpers.backend import DUMMY_CREDENTIALS
from helpers.knobs import set_knobs

TABLE = "p35-streams"
SORTED = "p35-streams-sorted"  # keyed by PK and SK, so that a batch can write two items of one partition
OTHER = "p35-streams-other"
ALL_ITERATOR_TYPES = "[TRIM_HORIZON, LATEST, AT_SEQUENCE_NUMBER, AFTER_SEQUENCE_NUMBER, AT_TIMESTAMP]"


@pytest.fixture(scope="module")
def dynamodb(lab):
    """A plain DynamoDB client of the lab (DynamoDB JSON in and out) that never retries."""
    return boto3.client("dynamodb", endpoint_url=lab.endpoint, config=Config(retries={"total_max_attempts": 1}),
                        **DUMMY_CREDENTIALS)


@pytest.fixture(scope="module")
def streams(lab):
    """A DynamoDB Streams client of the lab."""
    return boto3.client("dynamodbstreams", endpoint_url=lab.endpoint, **DUMMY_CREDENTIALS)


@pytest.fixture(scope="module")
def unchecked(lab):
    """A DynamoDB Streams client of the lab that sends what botocore's parameter validation would refuse."""
    return boto3.client("dynamodbstreams", endpoint_url=lab.endpoint, config=Config(parameter_validation=False),
                        **DUMMY_CREDENTIALS)


@pytest.fixture
def make(dynamodb):
    """make(name, view_type, sort_key=False, stream=True): a fresh table, returned with its LatestStreamArn (None
    without a stream); every table made is deleted after the test."""
    made = []

    def create(name=TABLE, view_type="NEW_AND_OLD_IMAGES", sort_key=False, stream=True):
        drop(dynamodb, name)
        keys = [("PK", "HASH")] + ([("SK", "RANGE")] if sort_key else [])
        dynamodb.create_table(
            TableName=name, BillingMode="PAY_PER_REQUEST",
            KeySchema=[{"AttributeName": key, "KeyType": kind} for key, kind in keys],
            AttributeDefinitions=[{"AttributeName": key, "AttributeType": "S"} for key, _ in keys],
            **({"StreamSpecification": {"StreamEnabled": True, "StreamViewType": view_type}} if stream else {}))
        made.append(name)
        return dynamodb.describe_table(TableName=name)["Table"].get("LatestStreamArn")

    yield create
    for name in made:
        drop(dynamodb, name)


def drop(dynamodb, name):
    """Delete the table `name` if it exists."""
    try:
        dynamodb.delete_table(TableName=name)
    except dynamodb.exceptions.ResourceNotFoundException:
        pass


def shard_of(streams, arn):
    """The stream's one shard, as DescribeStream lists it."""
    shards = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"]
    assert len(shards) == 1
    return shards[0]


def iterator_at(streams, arn, kind="TRIM_HORIZON", **number):
    """An iterator of the stream's shard of type `kind` (SequenceNumber=... for the two that take one)."""
    return streams.get_shard_iterator(StreamArn=arn, ShardId=shard_of(streams, arn)["ShardId"],
                                      ShardIteratorType=kind, **number)["ShardIterator"]


def read_all(streams, iterator):
    """Every record from the iterator on, following NextShardIterator until a page is empty or the shard ends."""
    records = []
    while iterator:
        page = streams.get_records(ShardIterator=iterator)
        records.extend(page["Records"])
        iterator = page.get("NextShardIterator") if page["Records"] else None
    return records


def changes(records):
    """(eventName, PK) of each record, in order."""
    return [(record["eventName"], record["dynamodb"]["Keys"]["PK"]["S"]) for record in records]


def item(key, **numbers):
    """A DynamoDB JSON item keyed PK=`key` with number attributes."""
    return {"PK": {"S": key}, **{name: {"N": str(value)} for name, value in numbers.items()}}


def code_of(call):
    """The error code and message of a call that must fail."""
    with pytest.raises(ClientError) as failed:
        call()
    return failed.value.response["Error"]["Code"], failed.value.response["Error"]["Message"]


def test_a_write_that_changes_nothing_makes_no_record(dynamodb, streams, make):
    """Developer Guide: "If you perform a PutItem or UpdateItem operation that does not change any data in an item,
    then DynamoDB Streams will not write a stream record for that operation"."""
    arn = make()
    dynamodb.put_item(TableName=TABLE, Item={**item("a", n=1), "tags": {"SS": ["x", "y"]}})
    start = iterator_at(streams, arn, "LATEST")
    dynamodb.put_item(TableName=TABLE, Item={**item("a", n=1), "tags": {"SS": ["y", "x"]}})
    dynamodb.update_item(TableName=TABLE, Key=item("a"), UpdateExpression="SET n = :same",
                         ExpressionAttributeValues={":same": {"N": "1"}})
    dynamodb.update_item(TableName=TABLE, Key=item("a"), UpdateExpression="SET n = :more",
                         ExpressionAttributeValues={":more": {"N": "2"}})
    assert changes(read_all(streams, start)) == [("MODIFY", "a")]


def test_an_update_that_creates_its_item_makes_one_insert(dynamodb, streams, make):
    arn = make()
    dynamodb.update_item(TableName=TABLE, Key=item("a"), UpdateExpression="SET n = :one",
                         ExpressionAttributeValues={":one": {"N": "1"}})
    records = read_all(streams, iterator_at(streams, arn))
    assert changes(records) == [("INSERT", "a")]
    assert records[0]["dynamodb"]["NewImage"] == item("a", n=1)
    assert "OldImage" not in records[0]["dynamodb"]


def test_refused_and_cancelled_writes_make_no_record(dynamodb, streams, make):
    """An iterator taken before the cancelled transaction reads no change of it either."""
    arn = make()
    dynamodb.put_item(TableName=TABLE, Item=item("a", n=1))
    start = iterator_at(streams, arn, "LATEST")
    refused = code_of(lambda: dynamodb.put_item(TableName=TABLE, Item=item("a", n=2),
                                                ConditionExpression="attribute_not_exists(PK)"))
    cancelled = code_of(lambda: dynamodb.transact_write_items(TransactItems=[
        {"Put": {"TableName": TABLE, "Item": item("b", n=1)}},
        {"Update": {"TableName": TABLE, "Key": item("c"), "UpdateExpression": "SET n = :two",
                    "ExpressionAttributeValues": {":two": {"N": "2"}}}},
        {"ConditionCheck": {"TableName": TABLE, "Key": item("a"), "ConditionExpression": "n = :nine",
                            "ExpressionAttributeValues": {":nine": {"N": "9"}}}}]))
    dynamodb.delete_item(TableName=TABLE, Key=item("nothing here"))
    assert (refused[0], cancelled[0]) == ("ConditionalCheckFailedException", "TransactionCanceledException")
    assert read_all(streams, start) == []
    assert changes(read_all(streams, iterator_at(streams, arn))) == [("INSERT", "a")]


def test_a_transaction_makes_one_record_per_item_it_changed_and_none_for_a_condition_check(dynamodb, streams, make):
    arn = make()
    dynamodb.put_item(TableName=TABLE, Item=item("checked", n=1))
    dynamodb.put_item(TableName=TABLE, Item=item("gone", n=1))
    start = iterator_at(streams, arn, "LATEST")
    dynamodb.transact_write_items(TransactItems=[
        {"Put": {"TableName": TABLE, "Item": item("new", n=1)}},
        {"ConditionCheck": {"TableName": TABLE, "Key": item("checked"), "ConditionExpression": "attribute_exists(PK)"}},
        {"Update": {"TableName": TABLE, "Key": item("changed"), "UpdateExpression": "SET n = :one",
                    "ExpressionAttributeValues": {":one": {"N": "1"}}}},
        {"Delete": {"TableName": TABLE, "Key": item("gone")}}])
    assert changes(read_all(streams, start)) == [("INSERT", "new"), ("INSERT", "changed"), ("REMOVE", "gone")]


def test_a_batch_item_left_unprocessed_makes_no_record(lab, knobs_off, dynamodb, streams, make):
    """The partition_limits knob leaves the batch's second and third puts on one partition unprocessed."""
    arn = make(SORTED, sort_key=True)
    set_knobs(lab, quiet=True, partition_limits={"write": 1})
    puts = [{"PutRequest": {"Item": {"PK": {"S": "hot"}, "SK": {"S": str(n)}}}} for n in range(3)]
    answer = dynamodb.batch_write_item(RequestItems={SORTED: puts})
    assert answer["UnprocessedItems"] == {SORTED: puts[1:]}
    records = read_all(streams, iterator_at(streams, arn))
    assert [record["dynamodb"]["Keys"] for record in records] == [{"PK": {"S": "hot"}, "SK": {"S": "0"}}]


@pytest.mark.parametrize("view_type, images", [("KEYS_ONLY", ()), ("NEW_IMAGE", ("NewImage",)),
                                               ("OLD_IMAGE", ("OldImage",)),
                                               ("NEW_AND_OLD_IMAGES", ("NewImage", "OldImage"))])
def test_a_record_holds_what_its_view_type_says(dynamodb, streams, make, view_type, images):
    """SizeBytes: the keys' and images' bytes, as the record captured from real DynamoDB Streams adds them up (22 for
    two keys of 11 bytes and one image of them). Sequence numbers increase, as strings of at least 21 digits."""
    arn = make(view_type=view_type)
    dynamodb.put_item(TableName=TABLE, Item=item("a", n=1))
    dynamodb.put_item(TableName=TABLE, Item=item("a", n=22))
    dynamodb.delete_item(TableName=TABLE, Key=item("a"))
    records = read_all(streams, iterator_at(streams, arn))
    assert changes(records) == [("INSERT", "a"), ("MODIFY", "a"), ("REMOVE", "a")]
    keys_size, image_size = 3, 6  # 'PK' and 'a'; those and 'n' with a number of two bytes (1 or 22)
    wanted = [{"NewImage": item("a", n=1)}, {"OldImage": item("a", n=1), "NewImage": item("a", n=22)},
              {"OldImage": item("a", n=22)}]
    for record, image in zip(records, wanted):
        body = record["dynamodb"]
        assert {name: record[name] for name in ("eventVersion", "eventSource", "awsRegion")} == {
            "eventVersion": "1.1", "eventSource": "aws:dynamodb", "awsRegion": dynamodb.meta.region_name}
        assert len(record["eventID"]) == 32
        assert body["Keys"] == item("a") and body["StreamViewType"] == view_type
        assert {name: body[name] for name in ("NewImage", "OldImage") if name in body} == {
            name: value for name, value in image.items() if name in images}
        assert body["SizeBytes"] == keys_size + image_size * sum(name in images for name in image)
        assert body["ApproximateCreationDateTime"].microsecond == 0
    numbers = [record["dynamodb"]["SequenceNumber"] for record in records]
    assert all(number.isdecimal() and len(number) >= 21 for number in numbers)
    assert [int(number) for number in numbers] == sorted(int(number) for number in numbers)
    assert len(set(numbers)) == 3 and len(set(record["eventID"] for record in records)) == 3


def test_each_items_records_keep_the_order_of_its_changes(dynamodb, streams, make):
    arn = make()
    for step in range(4):
        for key in ("a", "b"):
            dynamodb.put_item(TableName=TABLE, Item=item(key, n=step))
    records = read_all(streams, iterator_at(streams, arn))
    for key in ("a", "b"):
        assert [record["dynamodb"]["NewImage"]["n"]["N"] for record in records
                if record["dynamodb"]["Keys"]["PK"]["S"] == key] == ["0", "1", "2", "3"]


def test_the_iterator_types_start_where_dynamodb_says(dynamodb, streams, make):
    arn = make()
    for key in ("a", "b", "c"):
        dynamodb.put_item(TableName=TABLE, Item=item(key))
    latest = iterator_at(streams, arn, "LATEST")
    dynamodb.put_item(TableName=TABLE, Item=item("d"))
    every = read_all(streams, iterator_at(streams, arn, "TRIM_HORIZON"))
    second = every[1]["dynamodb"]["SequenceNumber"]
    assert changes(every) == [("INSERT", key) for key in "abcd"]
    assert changes(read_all(streams, latest)) == [("INSERT", "d")]
    assert changes(read_all(streams, iterator_at(streams, arn, "AT_SEQUENCE_NUMBER", SequenceNumber=second))) == [
        ("INSERT", key) for key in "bcd"]
    assert changes(read_all(streams, iterator_at(streams, arn, "AFTER_SEQUENCE_NUMBER", SequenceNumber=second))) == [
        ("INSERT", key) for key in "cd"]
    start = shard_of(streams, arn)["SequenceNumberRange"]["StartingSequenceNumber"]
    assert changes(read_all(streams, iterator_at(streams, arn, "AT_SEQUENCE_NUMBER", SequenceNumber=start))) == [
        ("INSERT", key) for key in "abcd"]


def test_get_records_takes_a_limit_and_goes_on_from_its_next_iterator(dynamodb, streams, make):
    arn = make()
    for key in ("a", "b", "c"):
        dynamodb.put_item(TableName=TABLE, Item=item(key))
    first = streams.get_records(ShardIterator=iterator_at(streams, arn), Limit=2)
    rest = streams.get_records(ShardIterator=first["NextShardIterator"], Limit=2)
    empty = streams.get_records(ShardIterator=rest["NextShardIterator"])
    dynamodb.put_item(TableName=TABLE, Item=item("d"))
    later = streams.get_records(ShardIterator=empty["NextShardIterator"])
    assert [changes(page["Records"]) for page in (first, rest, empty, later)] == [
        [("INSERT", "a"), ("INSERT", "b")], [("INSERT", "c")], [], [("INSERT", "d")]]


def test_a_sequence_number_goes_with_the_two_types_that_take_one(streams, unchecked, make):
    """ValidationException for an AT_/AFTER_SEQUENCE_NUMBER iterator without a SequenceNumber or with one the shard
    never had, for TRIM_HORIZON or LATEST with one, and for a type DynamoDB does not have."""
    arn = make()
    shard = shard_of(streams, arn)
    start = shard["SequenceNumberRange"]["StartingSequenceNumber"]
    asked = {"StreamArn": arn, "ShardId": shard["ShardId"]}
    assert code_of(lambda: streams.get_shard_iterator(**asked, ShardIteratorType="AT_SEQUENCE_NUMBER")) == (
        "ValidationException", "A SequenceNumber is required for ShardIteratorType AT_SEQUENCE_NUMBER")
    assert code_of(lambda: streams.get_shard_iterator(**asked, ShardIteratorType="LATEST", SequenceNumber=start)) == (
        "ValidationException", "A SequenceNumber is not allowed with ShardIteratorType LATEST")
    beyond = str(int(start) + 10 ** 6)
    assert code_of(lambda: streams.get_shard_iterator(**asked, ShardIteratorType="AFTER_SEQUENCE_NUMBER",
                                                      SequenceNumber=beyond)) == (
        "ValidationException", f"Invalid SequenceNumber {beyond} for shard {shard['ShardId']}: it is not a sequence "
                               "number of the shard")
    assert code_of(lambda: unchecked.get_shard_iterator(**asked, ShardIteratorType="FROM_THE_TOP")) == (
        "ValidationException", "1 validation error detected: Value 'FROM_THE_TOP' at 'shardIteratorType' failed to "
                               f"satisfy constraint: Member must satisfy enum value set: {ALL_ITERATOR_TYPES}")


def test_an_iterator_the_server_did_not_hand_out_is_invalid(streams, make):
    """An iterator changed to read from elsewhere is as invalid as one made up. (An iterator 15 minutes old answers
    ExpiredIteratorException; no test waits that long.)"""
    arn = make()
    handed_out = iterator_at(streams, arn)
    prefix, _, signed = handed_out.rpartition("|1|")
    body, _, mark = signed.rpartition(".")
    tampered = f"{prefix}|1|{body[:-2]}{'A' if body[-2] != 'A' else 'B'}{body[-1]}.{mark}"
    for wrong in (tampered, f"{arn}|1|made-up", "made-up"):
        assert code_of(lambda: streams.get_records(ShardIterator=wrong)) == ("ValidationException",
                                                                            "Invalid ShardIterator")


def test_describe_stream_says_what_the_stream_is(dynamodb, streams, make):
    arn = make(view_type="NEW_IMAGE")
    description = streams.describe_stream(StreamArn=arn)["StreamDescription"]
    shard = description["Shards"][0]
    assert {name: description[name] for name in ("StreamArn", "StreamStatus", "StreamViewType", "TableName",
                                                 "KeySchema")} == {
        "StreamArn": arn, "StreamStatus": "ENABLED", "StreamViewType": "NEW_IMAGE", "TableName": TABLE,
        "KeySchema": [{"AttributeName": "PK", "KeyType": "HASH"}]}
    assert arn.endswith("/stream/" + description["StreamLabel"])
    assert description["CreationRequestDateTime"].year >= 2026
    assert 28 <= len(shard["ShardId"]) <= 65 and "EndingSequenceNumber" not in shard["SequenceNumberRange"]
    assert streams.describe_stream(StreamArn=arn, Limit=1)["StreamDescription"]["Shards"] == [shard]
    assert streams.describe_stream(StreamArn=arn, ExclusiveStartShardId=shard["ShardId"])[
        "StreamDescription"]["Shards"] == []


def test_a_disabled_stream_stays_readable_and_enabling_again_makes_a_new_one(dynamodb, streams, make):
    """Developer Guide: "If you disable a stream on a table, the data in the stream will continue to be readable for
    24 hours"; "If you disable and then re-enable a stream on the table, a new stream will be created with a
    different stream descriptor". DescribeTable keeps the LatestStreamArn and drops the StreamSpecification."""
    first = make()
    dynamodb.put_item(TableName=TABLE, Item=item("a"))
    reading = iterator_at(streams, first)
    dynamodb.update_table(TableName=TABLE, StreamSpecification={"StreamEnabled": False})
    dynamodb.put_item(TableName=TABLE, Item=item("b"))
    table = dynamodb.describe_table(TableName=TABLE)["Table"]
    assert (table["LatestStreamArn"], "StreamSpecification" in table) == (first, False)
    description = streams.describe_stream(StreamArn=first)["StreamDescription"]
    shard = description["Shards"][0]
    assert description["StreamStatus"] == "DISABLED"
    page = streams.get_records(ShardIterator=reading)
    assert changes(page["Records"]) == [("INSERT", "a")]
    assert "NextShardIterator" not in page  # the shard is closed and read to its end
    assert shard["SequenceNumberRange"]["EndingSequenceNumber"] == page["Records"][0]["dynamodb"]["SequenceNumber"]
    assert code_of(lambda: dynamodb.update_table(TableName=TABLE, StreamSpecification={"StreamEnabled": False})) == (
        "ValidationException", f"Table has no stream to disable: TableName: {TABLE}")
    dynamodb.update_table(TableName=TABLE, StreamSpecification={"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"})
    second = dynamodb.describe_table(TableName=TABLE)["Table"]["LatestStreamArn"]
    dynamodb.put_item(TableName=TABLE, Item=item("c"))
    assert second != first
    assert changes(read_all(streams, iterator_at(streams, second))) == [("INSERT", "c")]
    assert sorted(stream["StreamArn"] for stream in streams.list_streams(TableName=TABLE)["Streams"]) == sorted(
        [first, second])
    assert code_of(lambda: dynamodb.update_table(
        TableName=TABLE, StreamSpecification={"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"})) == (
        "ValidationException", f"Table already has an enabled stream: TableName: {TABLE}")


@pytest.mark.parametrize("specification, words", [
    ({"StreamEnabled": True}, "If stream is being enabled then UpdateViewType is required"),
    ({"StreamEnabled": False, "StreamViewType": "KEYS_ONLY"},
     "If stream is being disabled, then UpdateViewType must not be specified")])
def test_update_table_refuses_a_stream_specification_that_does_not_fit(dynamodb, make, specification, words):
    make()
    assert code_of(lambda: dynamodb.update_table(TableName=TABLE, StreamSpecification=specification)) == (
        "ValidationException", "One or more parameter values were invalid: " + words)


@pytest.mark.parametrize("specification, words", [
    ({"StreamEnabled": True}, "Table is being created with a stream enabled, UpdateViewType is required"),
    ({"StreamEnabled": False, "StreamViewType": "KEYS_ONLY"},
     "Table is being created with a stream disabled, UpdateViewType should not be specified")])
def test_create_table_refuses_a_stream_specification_that_does_not_fit(dynamodb, specification, words):
    drop(dynamodb, OTHER)
    assert code_of(lambda: dynamodb.create_table(
        TableName=OTHER, BillingMode="PAY_PER_REQUEST", KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "PK", "AttributeType": "S"}], StreamSpecification=specification)) == (
        "ValidationException", "One or more parameter values were invalid: " + words)


def test_list_streams_pages_with_limit_and_names_a_tables_streams(streams, make):
    mine, other = make(TABLE), make(OTHER)
    page = streams.list_streams(Limit=1)
    listed = [stream["StreamArn"] for stream in page["Streams"]]
    while "LastEvaluatedStreamArn" in page:
        page = streams.list_streams(Limit=1, ExclusiveStartStreamArn=page["LastEvaluatedStreamArn"])
        assert len(page["Streams"]) <= 1
        listed += [stream["StreamArn"] for stream in page["Streams"]]
    assert {mine, other} <= set(listed) and len(listed) == len(set(listed))
    assert streams.list_streams(TableName=OTHER)["Streams"] == [
        {"StreamArn": other, "TableName": OTHER, "StreamLabel": other.rsplit("/", 1)[1]}]


def test_stream_lag_holds_records_back_then_lets_them_in_in_each_items_order(lab, knobs_off, dynamodb, streams, make):
    """With stream_lag at 10 s (longer than this test), nothing has entered the stream after the writes; turned off,
    every waiting record enters at once, each item's in the order of its changes, each once."""
    arn = make()
    set_knobs(lab, quiet=True, stream_lag=10)
    dynamodb.transact_write_items(TransactItems=[{"Put": {"TableName": TABLE, "Item": item(key, n=1)}}
                                                 for key in ("a", "b")])
    dynamodb.put_item(TableName=TABLE, Item=item("a", n=2))
    start = iterator_at(streams, arn)
    assert streams.get_records(ShardIterator=start)["Records"] == []
    set_knobs(lab, quiet=True, stream_lag=0)
    records = read_all(streams, start)
    assert sorted(changes(records)) == [("INSERT", "a"), ("INSERT", "b"), ("MODIFY", "a")]
    assert [record["dynamodb"]["NewImage"]["n"]["N"] for record in records
            if record["dynamodb"]["Keys"]["PK"]["S"] == "a"] == ["1", "2"]


def test_stream_lag_lets_other_records_come_between_a_transactions(lab, knobs_off, dynamodb, streams, make):
    """DynamoDB Transactions: How it works: "Changes made with transactions are propagated to global secondary indexes
    (GSIs), DynamoDB streams, and backups eventually, after the transaction completes successfully." With stream_lag
    a range, each record draws its own delay and takes its sequence number as it enters: of twenty two-item
    transactions, read once the knob is off, some transaction's two records have another's between them (that none
    has is a chance of 20! 2^20 / 40!, below 1 in 10^23), while one item changed between them keeps its order."""
    arn = make()
    set_knobs(lab, quiet=True, stream_lag=[0, 10])
    for number in range(20):
        dynamodb.transact_write_items(TransactItems=[{"Put": {"TableName": TABLE, "Item": item(f"{side}{number}")}}
                                                     for side in ("x", "y")])
        dynamodb.put_item(TableName=TABLE, Item=item("counter", n=number))
    set_knobs(lab, quiet=True, stream_lag=None)
    records = read_all(streams, iterator_at(streams, arn))
    places = {key: place for place, (_, key) in enumerate(changes(records))}
    assert len(records) == 60
    assert any(abs(places[f"x{number}"] - places[f"y{number}"]) > 1 for number in range(20))
    assert [record["dynamodb"]["NewImage"]["n"]["N"] for record in records
            if record["dynamodb"]["Keys"]["PK"]["S"] == "counter"] == [str(number) for number in range(20)]
