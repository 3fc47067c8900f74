"""The stream consumer behaves like a Lambda event source mapping on the lab server's stream: batches, checkpoints,
retries, bisection, partial batch responses, and a batch handed over again after its invocation died (explored)."""
import time
import uuid

import pytest
from botocore.exceptions import ClientError

from helpers import tracing
from helpers.consumer import DRAIN_ATTEMPTS, EventSourceMapping, MappingError
from helpers.explore import ExplorationError, Stepper, choice_point, explore
from support import keyed_table

TABLE = "p35-consumer"
EMAILS = "p35-consumer-emails"

pytestmark = pytest.mark.usefixtures("knobs_off")


def make_table(client, name, stream=True):
    """A fresh table keyed by PK, with a NEW_IMAGE stream unless stream=False, made quietly."""
    with tracing(False):
        keyed_table(client, name, stream)


@pytest.fixture
def orders(lab):
    """put(n): orders ORDER#1..n written to a fresh table with a stream; yields put."""
    make_table(lab.client, TABLE)

    def put(*numbers):
        for number in numbers:
            lab.client.put_item(TableName=TABLE, Item={"PK": f"ORDER#{number}", "amount": number})

    yield put
    lab.client.delete_table(TableName=TABLE)


def order_of(record):
    """The order number a record is about."""
    return int(record["dynamodb"]["Keys"]["PK"]["S"].split("#")[1])


class Recorder:
    """A handler that keeps the order numbers of every batch it is given, and fails as told."""

    def __init__(self, fail=lambda numbers, attempt: False, answer=None):
        self.batches, self.fail, self.answer, self.seen = [], fail, answer, {}

    def __call__(self, event, context):
        numbers = [order_of(record) for record in event["Records"]]
        self.seen[tuple(numbers)] = self.seen.get(tuple(numbers), 0) + 1
        self.batches.append(numbers)
        if self.fail(numbers, self.seen[tuple(numbers)]):
            raise RuntimeError(f"order {numbers} failed")
        return self.answer(event) if self.answer else None


def test_every_record_is_delivered_once_in_order_in_batches_and_a_second_drain_starts_after_the_checkpoint(
        lab, orders):
    orders(1, 2, 3, 4, 5)
    handler = Recorder()
    mapping = EventSourceMapping(lab, TABLE, handler, batch_size=2)
    first = mapping.drain()
    assert handler.batches == [[1, 2], [3, 4], [5]]
    assert list(first["outcome"]) == ["ok"] * 3 and list(first["attempt"]) == [1, 1, 1]
    assert mapping.drain().empty
    orders(6)
    assert list(mapping.drain()["events"]) == [["INSERT ORDER#6"]]
    assert handler.batches[-1] == [6]


def test_a_record_reaches_the_handler_as_lambda_hands_it(lab, orders):
    orders(7)
    events = []
    EventSourceMapping(lab, TABLE, lambda event, context: events.append((event, context))).drain()
    [(event, context)] = events
    [record] = event["Records"]
    assert record["eventName"] == "INSERT" and record["eventSource"] == "aws:dynamodb"
    assert record["eventSourceARN"] == lab.client.describe_table(TableName=TABLE)["Table"]["LatestStreamArn"]
    assert record["dynamodb"]["NewImage"] == {"PK": {"S": "ORDER#7"}, "amount": {"N": "7"}}
    assert isinstance(record["dynamodb"]["ApproximateCreationDateTime"], int)
    assert uuid.UUID(context.aws_request_id)


def test_a_failed_batch_is_retried_whole_until_its_retries_are_spent_then_discarded_and_the_shard_goes_on(lab, orders):
    orders(1, 2, 3, 4)
    handler = Recorder(fail=lambda numbers, attempt: 2 in numbers)
    rows = EventSourceMapping(lab, TABLE, handler, batch_size=2, maximum_retry_attempts=2).drain()
    assert handler.batches == [[1, 2], [1, 2], [1, 2], [3, 4]]
    assert list(rows["attempt"]) == [1, 2, 3, 1]
    assert rows["outcome"][2] == "raised RuntimeError: order [1, 2] failed; retries spent: discarded"
    assert rows["outcome"][3] == "ok"


def test_a_batch_that_fails_once_is_handed_over_again_with_the_records_that_succeeded(lab, orders):
    orders(1, 2)
    handler = Recorder(fail=lambda numbers, attempt: attempt == 1)
    EventSourceMapping(lab, TABLE, handler, batch_size=2).drain()
    assert handler.batches == [[1, 2], [1, 2]]


def test_bisection_isolates_the_bad_record_and_its_splits_spend_no_retries(lab, orders):
    orders(1, 2, 3, 4)
    handler = Recorder(fail=lambda numbers, attempt: 3 in numbers)
    rows = EventSourceMapping(lab, TABLE, handler, batch_size=4, maximum_retry_attempts=1,
                              bisect_batch_on_function_error=True).drain()
    assert handler.batches == [[1, 2, 3, 4], [1, 2], [3, 4], [3], [3], [4]]
    assert list(rows["attempt"]) == [1, 1, 1, 1, 2, 1]
    assert rows["outcome"][0] == "raised RuntimeError: order [1, 2, 3, 4] failed; split into 2 and 2"
    assert rows["outcome"][4] == "raised RuntimeError: order [3] failed; retries spent: discarded"


def test_an_odd_batch_splits_with_the_extra_record_in_its_first_half(lab, orders):
    orders(1, 2, 3)
    handler = Recorder(fail=lambda numbers, attempt: len(numbers) == 3)
    EventSourceMapping(lab, TABLE, handler, batch_size=3, bisect_batch_on_function_error=True).drain()
    assert handler.batches == [[1, 2, 3], [1, 2], [3]]


def failing(*numbers, key="itemIdentifier"):
    """A partial batch response naming the records of these orders as failed."""
    def answer(event):
        return {"batchItemFailures": [{key: record["dynamodb"]["SequenceNumber"]} for record in event["Records"]
                                      if order_of(record) in numbers]}
    return answer


def test_a_partial_batch_response_checkpoints_before_its_lowest_failed_record_and_retries_from_there(lab, orders):
    orders(1, 2, 3, 4)
    reported = set()

    def answer(event):
        """Report 4 and 3 failed, once."""
        if reported:
            return {"batchItemFailures": []}
        reported.add(True)
        return failing(4, 3)(event)

    handler = Recorder(answer=answer)
    rows = EventSourceMapping(lab, TABLE, handler, batch_size=4, report_batch_item_failures=True).drain()
    assert handler.batches == [[1, 2, 3, 4], [3, 4]]
    assert rows["outcome"][0] == "reported record 3 failed: checkpointed before record 3 of 4"
    assert list(rows["attempt"]) == [1, 2]


def test_an_unreadable_partial_batch_response_fails_the_whole_batch(lab, orders):
    orders(1, 2)
    answers = iter([failing(2, key="sequenceNumber"), lambda event: None])
    handler = Recorder(answer=lambda event: next(answers)(event))
    rows = EventSourceMapping(lab, TABLE, handler, batch_size=2, report_batch_item_failures=True).drain()
    assert handler.batches == [[1, 2], [1, 2]]
    assert "batchItemFailures entry Lambda cannot read" in rows["outcome"][0]


def test_a_partial_batch_response_is_not_read_unless_report_batch_item_failures_is_on(lab, orders):
    orders(1, 2)
    handler = Recorder(answer=failing(2))
    rows = EventSourceMapping(lab, TABLE, handler, batch_size=2).drain()
    assert handler.batches == [[1, 2]] and list(rows["outcome"]) == ["ok"]


def test_a_batch_whose_retries_are_infinite_blocks_its_shard_until_it_succeeds(lab, orders):
    orders(1, 2)
    fixed = []
    handler = Recorder(fail=lambda numbers, attempt: 1 in numbers and not fixed)
    mapping = EventSourceMapping(lab, TABLE, handler, batch_size=1)
    rows = mapping.drain()
    assert handler.batches == [[1]] * DRAIN_ATTEMPTS, "nothing after the failing batch"
    assert "Lambda would retry it until the records expire (24 hours)" in rows["outcome"][DRAIN_ATTEMPTS - 1]
    fixed.append(True)
    assert list(mapping.drain()["events"]) == [["INSERT ORDER#1"], ["INSERT ORDER#2"]]


def test_latest_skips_what_the_stream_held_before_the_first_drain(lab, orders):
    orders(1, 2)
    handler = Recorder()
    mapping = EventSourceMapping(lab, TABLE, handler, starting_position="LATEST")
    assert mapping.drain().empty
    orders(3)
    mapping.drain()
    assert handler.batches == [[3]]


@pytest.mark.parametrize("settings, words", [
    ({"batch_size": 0}, "batch_size must be a whole number from 1 to 10,000"),
    ({"batch_size": 10_001}, "batch_size must be a whole number from 1 to 10,000"),
    ({"maximum_retry_attempts": -2}, "maximum_retry_attempts must be -1"),
    ({"maximum_retry_attempts": 10_001}, "or 0 to 10,000"),
    ({"starting_position": "AT_TIMESTAMP"}, "starting_position must be one of TRIM_HORIZON, LATEST"),
])
def test_settings_lambda_refuses_are_refused_saying_what_it_accepts(lab, orders, settings, words):
    with pytest.raises(MappingError, match=words):
        EventSourceMapping(lab, TABLE, Recorder(), **settings)


def test_a_table_without_a_stream_is_refused_saying_how_to_give_it_one(lab):
    make_table(lab.client, TABLE, stream=False)
    with pytest.raises(MappingError, match=r"no stream enabled \(or does not exist here\): give it one with Stream"):
        EventSourceMapping(lab, TABLE, Recorder())
    lab.client.delete_table(TableName=TABLE)


def email_scenario(lab, handler_of):
    """(clients, reset, emails sent per order): a consumer of two orders' records, each one email by handler_of."""
    def reset():
        make_table(lab.client, TABLE)
        make_table(lab.client, EMAILS, stream=False)
        for number in (1, 2):
            lab.client.put_item(TableName=TABLE, Item={"PK": f"ORDER#{number}"})

    def sent(_):
        items = lab.client.scan(TableName=EMAILS, ConsistentRead=True)["Items"]
        return sorted(item["order"] for item in items)

    def consume():
        EventSourceMapping(lab, TABLE, handler_of(lab), batch_size=2).drain()

    return {"consumer": consume}, reset, sent


def send_an_email_each(lab):
    """Each record's email: an item with an id of its own, as a mail service's message id would be."""
    def handler(event, context):
        for record in event["Records"]:
            lab.client.put_item(TableName=EMAILS, Item={"PK": str(uuid.uuid4()),
                                                        "order": record["dynamodb"]["Keys"]["PK"]["S"]})
    return handler


def send_once_per_event(lab):
    """Each record's email claimed by its eventID first: a record handed over again sends nothing."""
    def handler(event, context):
        for record in event["Records"]:
            try:
                lab.client.put_item(TableName=EMAILS, Item={"PK": record["eventID"],
                                                            "order": record["dynamodb"]["Keys"]["PK"]["S"]},
                                    ConditionExpression="attribute_not_exists(PK)")
            except ClientError as error:
                if error.response["Error"]["Code"] != "ConditionalCheckFailedException":
                    raise
    return handler


def test_an_invocation_that_dies_after_sending_is_invoked_again_with_its_batch_and_sends_twice(lab):
    clients, reset, sent = email_scenario(lab, send_an_email_each)
    emails = []
    orders = explore(clients, reset, lambda results: emails.append(sent(results)) or len(emails[-1]) == 2,
                     faults=("crash",))
    assert sorted(map(tuple, emails)) == sorted([
        ("ORDER#1", "ORDER#2"),  # no crash
        ("ORDER#1", "ORDER#1", "ORDER#2"),  # died after the first email: the batch again
        ("ORDER#1", "ORDER#1", "ORDER#2", "ORDER#2")])  # died after the second
    assert sorted(orders["ok"]) == [False, False, True]


def test_an_email_claimed_by_its_event_id_is_sent_once_whenever_the_invocation_dies(lab):
    clients, reset, sent = email_scenario(lab, send_once_per_event)
    orders = explore(clients, reset, lambda results: sent(results) == ["ORDER#1", "ORDER#2"],
                     faults=("crash", "lost_response"))
    assert orders["ok"].all() and len(orders) >= 5


def relayed(lab, write):
    """Every behaviour of a relay that drains the stream, then reads ORDER#1 and ORDER#2 strongly, beside `write` (a
    function of the lab's client): {(the orders whose records it handled, in the order handed over; the orders it
    could read)}."""
    def reset():
        make_table(lab.client, TABLE)

    def relay():
        handled = []
        EventSourceMapping(lab, TABLE, lambda event, context: handled.extend(event["Records"])).drain()
        visible = tuple(n for n in (1, 2) if "Item" in lab.client.get_item(TableName=TABLE, Key={"PK": f"ORDER#{n}"},
                                                                             ConsistentRead=True))
        return tuple(order_of(record) for record in handled), visible

    with tracing(False):
        orders = explore({"writer": lambda: write(lab.client), "relay": relay}, reset, lambda results: True)
    return set(orders["results"].map(lambda results: results["relay"]))


def place_two_orders(client):
    """ORDER#1 and ORDER#2 in one transaction."""
    client.transact_write_items(TransactItems=[
        {"Put": {"TableName": TABLE, "Item": {"PK": f"ORDER#{n}", "amount": n}}} for n in (1, 2)])


def batch_two_orders(client):
    """ORDER#1 and ORDER#2 in one BatchWriteItem."""
    client.batch_write_item(RequestItems={TABLE: [
        {"PutRequest": {"Item": {"PK": f"ORDER#{n}", "amount": n}}} for n in (1, 2)]})


def test_an_explored_transactions_records_reach_the_stream_one_at_a_time_after_it_ends(lab):
    outcomes = relayed(lab, place_two_orders)
    assert {handled for handled, _ in outcomes} == {(), (1,), (2,), (1, 2), (2, 1)}  # piece by piece, either first
    assert all(visible == (1, 2) for handled, visible in outcomes if handled)  # only once the transaction has ended
    assert ((), ()) in outcomes


def test_an_explored_batch_writes_records_reach_the_stream_each_after_its_item_is_visible(lab):
    outcomes = relayed(lab, batch_two_orders)
    assert {handled for handled, _ in outcomes} == {(), (1,), (2,), (1, 2), (2, 1)}
    assert all(set(handled) <= set(visible) for handled, visible in outcomes)
    assert ((1,), (1,)) in outcomes and ((2,), (2,)) in outcomes  # a record while the batch's other item is not visible


def kinesis_projection(lab, handler_of, versions=3, handled=None):
    """Every behaviour of a Kinesis-mode consumer of `versions` updates of one product (version 1, 2, ...), each
    record handled by handler_of(projection table): {the projection's final item as (version, changes counted)}; and
    with `handled`, a list handler_of fills, what it held at the end of each behaviour (emptied before each)."""
    def reset():
        make_table(lab.client, TABLE)
        make_table(lab.client, EMAILS, stream=False)
        for version in range(1, versions + 1):
            lab.client.put_item(TableName=TABLE, Item={"PK": "PRODUCT#1", "version": version})
        if handled is not None:
            handled.clear()

    def handler(event, context):
        for record in event["Records"]:
            handler_of(record)

    def projected():
        item = lab.client.get_item(TableName=EMAILS, Key={"PK": "PRODUCT#1"}, ConsistentRead=True).get("Item", {})
        return int(item.get("version", 0)), int(item.get("changes", 0))

    ended = []
    consume = lambda: EventSourceMapping(lab, TABLE, handler, batch_size=10, kinesis=True).drain()  # noqa: E731
    with tracing(False):
        orders = explore({"consumer": consume}, reset, lambda results: ended.append(
            tuple(handled) if handled is not None else projected()) or True)
    return orders, ended


def test_kinesis_mode_hands_a_read_over_in_every_order_and_any_one_record_twice(lab):
    handed = []

    def hand(record):
        handed.append(int(record["dynamodb"]["NewImage"]["version"]["N"]))

    orders, runs = kinesis_projection(lab, hand, versions=2, handled=handed)
    assert len(orders) == 6 and all(step.startswith("consumer: Kinesis hands over records 1, 2: ")
                                    for steps in orders["steps"] for step in steps if "Kinesis" in step)
    assert sorted(runs) == [(1, 2), (1, 2, 1), (1, 2, 2), (2, 1), (2, 1, 1), (2, 1, 2)]


def test_a_version_gate_survives_kinesis_delivery_and_a_counter_and_a_blind_copy_do_not(lab):
    table = lab.client

    def gated(record):
        image = record["dynamodb"]["NewImage"]
        try:
            table.put_item(TableName=EMAILS, Item={"PK": "PRODUCT#1", "version": int(image["version"]["N"])},
                           ConditionExpression="attribute_not_exists(PK) OR version < :v",
                           ExpressionAttributeValues={":v": int(image["version"]["N"])})
        except ClientError as error:
            if error.response["Error"]["Code"] != "ConditionalCheckFailedException":
                raise

    def blind(record):
        table.put_item(TableName=EMAILS, Item={"PK": "PRODUCT#1", "version": int(record["dynamodb"]["NewImage"][
            "version"]["N"])})

    def counted(record):
        table.update_item(TableName=EMAILS, Key={"PK": "PRODUCT#1"}, UpdateExpression="ADD changes :one",
                          ExpressionAttributeValues={":one": 1})

    orders, ended = kinesis_projection(lab, gated)
    assert len(orders) == 24 and {version for version, _ in ended} == {3}
    _, ended = kinesis_projection(lab, blind)
    assert sum(version != 3 for version, _ in ended) == 16  # the last handed over was not version 3: 16 of 24
    _, ended = kinesis_projection(lab, counted)
    assert sorted(set(changes for _, changes in ended)) == [3, 4] and sum(changes == 4 for _, changes in ended) == 18


def test_a_choice_outside_an_exploration_is_one_of_the_options(lab):
    assert {choice_point("pick", ["a", "b", "c"]) for _ in range(60)} == {0, 1, 2}


def test_a_step_through_lets_a_record_enter_its_stream_as_a_move_of_its_own(lab):
    def reset():
        make_table(lab.client, TABLE)

    def relay():
        handled = []
        EventSourceMapping(lab, TABLE, lambda event, context: handled.extend(event["Records"])).drain()
        return [order_of(record) for record in handled]

    with tracing(False):
        stepper = Stepper({"writer": lambda: place_two_orders(lab.client), "relay": relay}, reset)
        try:
            for move in ("writer", "writer+0", "writer+1"):
                stepper.step(move)
            offered = stepper.moves()
            assert {move: words for move, words in offered.items() if move.startswith("stream#")} == {
                "stream#1": f"INSERT {{PK: 'ORDER#1'}} into {TABLE}'s stream",
                "stream#2": f"INSERT {{PK: 'ORDER#2'}} into {TABLE}'s stream"}
            stepper.step("stream#2")
            while not stepper.done:
                stepper.step(next(move for move in stepper.moves() if move == "relay"))
            assert stepper.results["relay"] == [2]
        finally:
            stepper.close()


def test_a_choice_of_more_ways_than_the_explorer_tries_is_refused_saying_how_to_shrink_it(lab):
    def reset():
        make_table(lab.client, TABLE)
        for number in range(1, 6):  # 5 records in one read: 120 orders times 6 repeats
            lab.client.put_item(TableName=TABLE, Item={"PK": f"ORDER#{number}"})

    consume = lambda: EventSourceMapping(lab, TABLE, lambda event, context: None, kinesis=True).drain()  # noqa: E731
    refused = r"720 ways to choose from .*\(fewer records in a batch\)"
    with tracing(False), pytest.raises(ExplorationError, match=refused):
        explore({"consumer": consume}, reset, lambda results: True)


def fails_every_time(event, context):
    """A handler whose every invocation fails."""
    raise ValueError("cannot handle this batch")


QUEUE = "arn:aws:sqs:us-east-1:123456789012:discarded"


def test_a_discarded_batch_sends_its_on_failure_destination_the_document_lambda_sends(lab, orders):
    orders(1, 2, 3)
    mapping = EventSourceMapping(lab, TABLE, fails_every_time, batch_size=2, maximum_retry_attempts=1,
                                 destination_config={"OnFailure": {"Destination": QUEUE}})
    rows = mapping.drain()
    numbers = [row["records"] for row in rows.to_dict("records") if row["outcome"].endswith("discarded")]
    assert len(mapping.sent_on_failure) == len(numbers) == 2
    first = mapping.sent_on_failure[0]
    assert first["requestContext"]["condition"] == "RetryAttemptsExhausted"
    assert first["requestContext"]["approximateInvokeCount"] == 2
    assert first["responseContext"]["functionError"] == "Unhandled"
    info = first["DDBStreamBatchInfo"]
    assert (info["startSequenceNumber"], info["endSequenceNumber"], info["batchSize"]) == (*numbers[0], 2)
    assert info["streamArn"] == mapping.stream_arn and info["shardId"].startswith("shardId-")
    assert "Records" not in first and "payload" not in first, "the records themselves are not in the document"


def test_without_a_destination_nothing_is_sent_and_a_destination_that_is_not_a_queue_or_topic_is_refused(lab, orders):
    orders(1)
    mapping = EventSourceMapping(lab, TABLE, fails_every_time, maximum_retry_attempts=0)
    assert mapping.drain()["outcome"][0].endswith("retries spent: discarded") and mapping.sent_on_failure == []
    with pytest.raises(MappingError, match="SQS queue or SNS topic"):
        EventSourceMapping(lab, TABLE, fails_every_time, destination_config={"OnFailure": {"Destination": "my-queue"}})
    with pytest.raises(MappingError, match="604,800"):
        EventSourceMapping(lab, TABLE, fails_every_time, maximum_record_age_in_seconds=700_000)


def test_a_failed_record_older_than_its_maximum_age_is_discarded_instead_of_handed_over_again(lab, orders):
    orders(1)
    time.sleep(2.1)  # the record's ApproximateCreationDateTime is a whole second: it is now more than a second old
    mapping = EventSourceMapping(lab, TABLE, fails_every_time, maximum_record_age_in_seconds=1,
                                 destination_config={"OnFailure": {"Destination": QUEUE}})
    rows = mapping.drain()
    assert list(rows["attempt"]) == [1, 2] and "older than MaximumRecordAgeInSeconds" in rows["outcome"][1]
    assert [sent["requestContext"]["condition"] for sent in mapping.sent_on_failure] == ["RecordAgeExceeded"]


def test_kinesis_mode_hands_over_no_dynamodb_streams_sequence_number_so_a_gate_on_it_fails_as_on_aws(lab, orders):
    orders(1)
    handed = []
    EventSourceMapping(lab, TABLE, lambda event, context: handed.extend(event["Records"]), kinesis=True).drain()
    record = handed[0]  # handed once, or twice: Kinesis may repeat it
    assert "SequenceNumber" not in record["dynamodb"] and "StreamViewType" not in record["dynamodb"]
    assert record["tableName"] == TABLE and record["eventSource"] == "aws:dynamodb"
    assert record["dynamodb"]["ApproximateCreationDateTime"] > 10 ** 12, "milliseconds"
    with pytest.raises(MappingError, match="Kinesis sequence number"):
        EventSourceMapping(lab, TABLE, fails_every_time, kinesis=True, report_batch_item_failures=True)
