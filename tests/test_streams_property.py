"""Explored, a stream shows exactly the orders of records DynamoDB Streams allows, on random small scenarios.

Hypothesis draws a writer of 1-2 writes to a table with a stream (a PutItem of item A or B, or a TransactWriteItems or
a BatchWriteItem of both) and a reader that reads the stream from its start 1-2 times. Both run for real against
the lab server under the explorer, and each behaviour's outcome is what each read returned and the stream as it ended.
A model written here from the documents alone enumerates the outcomes they allow:

- "Each stream record appears exactly once in the stream. For each item that is modified in a DynamoDB table, the
  stream records appear in the same sequence as the actual modifications to the item" (Developer Guide, "Change data
  capture for DynamoDB Streams"): a record enters once, after the earlier records of its item, in any order with
  other items' records;
- a write's record exists once the write has happened: a transaction's "after the transaction completes
  successfully" (its changes are "propagated to ... DynamoDB streams ... eventually", Developer Guide, "Amazon
  DynamoDB Transactions: How it works"), a batch's put whenever it takes effect ("BatchWriteItem as a whole is not"
  atomic, API reference);
- a read of the stream shows the records that have entered it, in their order.

The two sets of outcomes must be equal: the explorer shows no order of records DynamoDB forbids, and misses none it
allows.
"""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import tracing
from helpers.consumer import streams_client
from helpers.explore import explore
from support import PROPERTY_SETTINGS, keyed_table

TABLE = "p35-streams-property"
WRITES = st.sampled_from([("put", "A"), ("put", "B"), ("transaction", "AB"), ("batch", "AB")])

pytestmark = pytest.mark.usefixtures("knobs_off")


def model_outcomes(writes, reads):
    """Every (what each read showed, the stream at the end) the documents allow, by trying every order of the writer's
    writes, each record's entering and the reader's reads."""
    outcomes = set()

    def step(done, made, pending, stream, shown):
        if done == len(writes) and not made and not pending and len(shown) == reads:
            outcomes.add((tuple(shown), tuple(stream)))
        if made:  # the items of a batch take effect one at a time, in any order
            for record in made:
                step(done, made - {record}, pending + [record], stream, shown)
            return
        if done < len(writes):
            kind, items = writes[done]
            records = [(item, done) for item in items]
            if kind == "batch":
                step(done + 1, frozenset(records), pending, stream, shown)
            else:
                step(done + 1, made, pending + records, stream, shown)
        for place, record in enumerate(pending):
            if all(other[0] != record[0] for other in pending[:place]):
                step(done, made, pending[:place] + pending[place + 1:], stream + [record], shown)
        if len(shown) < reads:
            step(done, made, pending, stream, shown + [tuple(stream)])

    step(0, frozenset(), [], [], [])
    return outcomes


def explored_outcomes(lab, writes, reads, consistency="dynamodb"):
    """Every (what each read showed, the stream at the end) the explorer finds for the writer and the reader."""
    streams = streams_client(lab, lab.client.meta.region_name)

    def reset():
        with tracing(False):
            keyed_table(lab.client, TABLE)

    def writer():
        for number, (kind, items) in enumerate(writes):
            images = [{"PK": item, "write": number} for item in items]
            if kind == "put":
                lab.client.put_item(TableName=TABLE, Item=images[0])
            elif kind == "transaction":
                lab.client.transact_write_items(TransactItems=[{"Put": {"TableName": TABLE, "Item": image}}
                                                               for image in images])
            else:
                lab.client.batch_write_item(RequestItems={TABLE: [{"PutRequest": {"Item": image}} for image in images]})

    def read_stream():
        arn = streams.list_streams(TableName=TABLE)["Streams"][0]["StreamArn"]
        shard = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"][0]["ShardId"]
        iterator = streams.get_shard_iterator(StreamArn=arn, ShardId=shard,
                                              ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
        return tuple((record["dynamodb"]["NewImage"]["PK"]["S"], int(record["dynamodb"]["NewImage"]["write"]["N"]))
                     for record in streams.get_records(ShardIterator=iterator)["Records"])

    found = set()

    def check(results):
        with tracing(False):
            found.add((results["reader"], read_stream()))
        return True

    explore({"writer": writer, "reader": lambda: tuple(read_stream() for _ in range(reads))}, reset, check,
            consistency=consistency)
    return found


@settings(max_examples=14, **PROPERTY_SETTINGS)
@given(writes=st.lists(WRITES, min_size=1, max_size=2), reads=st.integers(1, 2))
def test_an_explored_stream_shows_exactly_the_orders_of_records_dynamodb_streams_allows(lab, writes, reads):
    assert explored_outcomes(lab, writes, reads) == model_outcomes(writes, reads)


def test_a_transactions_records_may_be_read_one_without_the_other_in_either_order(lab):
    outcomes = explored_outcomes(lab, [("transaction", "AB")], reads=1)
    shown = {read for reads, _ in outcomes for read in reads}
    assert shown == {(), (("A", 0),), (("B", 0),), (("A", 0), ("B", 0)), (("B", 0), ("A", 0))}


def test_an_items_records_are_never_read_out_of_order(lab):
    outcomes = explored_outcomes(lab, [("put", "A"), ("put", "A")], reads=2)
    assert {end for _, end in outcomes} == {(("A", 0), ("A", 1))}
    assert ((("A", 0),), (("A", 0), ("A", 1))) in {reads for reads, _ in outcomes}
    assert not any(read and read[0] == ("A", 1) for reads, _ in outcomes for read in reads)


def test_the_model_lets_a_batchs_records_enter_while_the_batch_is_under_way():
    outcomes = model_outcomes([("batch", "AB")], reads=1)
    assert (((("B", 0),),), (("B", 0), ("A", 0))) in outcomes


def test_off_the_model_a_read_of_the_stream_is_still_explored_before_and_after_a_write(lab):
    outcomes = explored_outcomes(lab, [("put", "A")], reads=1, consistency="strong")  # records enter at once
    assert {reads for reads, _ in outcomes} == {((),), ((("A", 0),),)}
