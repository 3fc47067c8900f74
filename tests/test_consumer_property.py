"""An explored stream consumer shows exactly the outcomes at-least-once delivery allows, on random small streams.

Hypothesis draws a stream of 1-4 records, a BatchSize of 1-3 and a handler that makes 1-2 writes per record (each
an effect of its own, such as a sent message); the consumer is explored for real with faults=("crash",)
(helpers.consumer against the lab server) and its outcomes are enumerated by a model written here from the Lambda
Developer Guide alone:

- the records are handed over in batches of up to BatchSize, in stream order; a batch is checkpointed only when its
  invocation succeeds, and "Lambda treats all other results as a complete failure and retries processing the batch"
  (Configuring partial batch response with DynamoDB and Lambda);
- an invocation may die right after any one of its writes ("Lambda event source mappings process each event at
  least once, and duplicate processing of records can occur"): the writes it made stay, and the batch is handed over
  again; at most one death in a behaviour, as the explorer's faults.

An outcome is how many times each effect was written. The two sets of outcomes must be equal.
"""
import uuid
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import tracing
from helpers.consumer import EventSourceMapping
from helpers.explore import explore
from support import PROPERTY_SETTINGS, keyed_table

STREAM, EFFECTS = "p35-consumer-stream", "p35-consumer-effects"

pytestmark = pytest.mark.usefixtures("knobs_off")


def model_outcomes(records, batch_size, writes):
    """Every outcome the documents allow: the effects each (record, write) of a full delivery once, plus, for a death
    after any one write, the writes its invocation made before dying, written again when its batch comes back."""
    effects = [(record, write) for record in range(records) for write in range(writes)]
    once = Counter(effects)
    outcomes = {frozenset(once.items())}
    for start in range(0, records, batch_size):
        batch = [(record, write) for record in range(start, min(start + batch_size, records))
                 for write in range(writes)]
        for died_after in range(len(batch)):
            outcomes.add(frozenset((once + Counter(batch[:died_after + 1])).items()))
    return outcomes


def explored_outcomes(lab, records, batch_size, writes):
    """Every outcome the explorer finds for the consumer of `records` records, each handled with `writes` writes."""
    def reset():
        with tracing(False):
            keyed_table(lab.client, STREAM)
            keyed_table(lab.client, EFFECTS, stream=False)
            for record in range(records):
                lab.client.put_item(TableName=STREAM, Item={"PK": f"R#{record}"})

    def handler(event, context):
        for record in event["Records"]:
            number = record["dynamodb"]["Keys"]["PK"]["S"].split("#")[1]
            for write in range(writes):
                lab.client.put_item(TableName=EFFECTS, Item={"PK": f"E#{number}#{write}#{uuid.uuid4().hex}"})

    found = set()

    def check(_):
        items = lab.client.scan(TableName=EFFECTS, ConsistentRead=True)["Items"]
        written = Counter(tuple(int(part) for part in item["PK"].split("#")[1:3]) for item in items)
        found.add(frozenset(written.items()))
        return True

    consume = lambda: EventSourceMapping(lab, STREAM, handler, batch_size=batch_size).drain()  # noqa: E731
    explore({"consumer": consume}, reset, check, faults=("crash",))
    return found


@settings(max_examples=12, **PROPERTY_SETTINGS)
@given(records=st.integers(1, 4), batch_size=st.integers(1, 3), writes=st.integers(1, 2))
def test_an_explored_consumer_shows_exactly_what_at_least_once_delivery_allows(lab, records, batch_size, writes):
    assert explored_outcomes(lab, records, batch_size, writes) == model_outcomes(records, batch_size, writes)


def test_the_model_counts_a_death_after_the_second_of_two_records_as_both_written_twice():
    outcomes = model_outcomes(records=2, batch_size=2, writes=1)
    assert outcomes == {frozenset({(0, 0): 1, (1, 0): 1}.items()), frozenset({(0, 0): 2, (1, 0): 1}.items()),
                        frozenset({(0, 0): 2, (1, 0): 2}.items())}
