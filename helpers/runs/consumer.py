"""A consumer of a table's stream that behaves like an AWS Lambda event source mapping: `EventSourceMapping`.

`EventSourceMapping(lab, table_name, handler, batch_size=2).drain()` hands the handler every record the table's stream
holds, in batches, as Lambda's event source mapping for DynamoDB Streams does, and answers one row per invocation: the
records it was given, the attempt, what came of it. What it does, and the pages of the AWS Lambda Developer Guide that
say it:

- It reads the stream's shards (parents before children) from TRIM_HORIZON or LATEST ("StartingPosition": where
  the stream ends at the first drain) with GetShardIterator and GetRecords, keeping the iterator at which it caught up
  for the next drain ("A shard iterator expires 15 minutes after it is returned to the requester": then it takes a
  new one after its checkpoint, or at LATEST again if it has delivered nothing). It invokes `handler(event, context)`
  with up to `batch_size` records at a time (BatchSize: default 100, at most 10,000, "Lambda parameters for Amazon
  DynamoDB event source mappings"). The event is {"Records": [...]}: each record as GetRecords gives it, with its
  eventSourceARN and its ApproximateCreationDateTime in epoch seconds, as Lambda hands it to a function.
- "by default Lambda checkpoints to the highest sequence number of a batch only when the batch is a complete success.
  Lambda treats all other results as a complete failure and retries processing the batch up to the retry limit"
  ("Configuring partial batch response with DynamoDB and Lambda"). A handler that raises, or that dies, has failed.
- MaximumRetryAttempts: -1 (the default) "means infinite: failed records are retried until the record expires", after
  24 hours; 0 to 10,000 retries otherwise. When they are spent, "Lambda discards the records and continues processing
  batches from the stream" ("Retain discarded records for a DynamoDB event source in Lambda"): the discarded
  records are in the answer's row, and with an on-failure destination (below) a document says so. A batch whose
  retries are infinite and that fails DRAIN_ATTEMPTS times blocks its shard: `drain` delivers nothing after it and
  says so (Lambda would go on for up to a day first, "a bad record can block processing on the affected shard for
  up to one day"); the next `drain()` hands it over again.
- MaximumRecordAgeInSeconds: -1 (the default, "-1 means infinite: failed records are retried until the record
  expires") or up to 604,800. A record older than that (by its ApproximateCreationDateTime, on the lab's clock) when
  its batch is about to be handed over again is discarded instead, as when the retries are spent; the rest of the
  batch is handed over.
- DestinationConfig {"OnFailure": {"Destination": <an SQS queue's or SNS topic's ARN>}}: "Each record sent to the
  destination is a JSON document with metadata about the failed invocation" (the same page). The lab serves no SQS
  or SNS: each document is kept, parsed, in `mapping.sent_on_failure`, in the shape of the page's example
  (requestContext with condition "RetryAttemptsExhausted", or "RecordAgeExceeded" for records past their maximum
  age, a condition the page shows no example of; responseContext; version; timestamp; DDBStreamBatchInfo with the
  shard, the first and last sequence numbers, the batch size and the stream's ARN). As the page says, "The actual
  records aren't included": read them from the stream by their sequence numbers before they expire.
- BisectBatchOnFunctionError "splits a failed batch into two smaller batches, isolating bad records and avoiding
  timeouts. Splitting batches doesn't consume the retry quota" (the same page). The lab splits a failed batch of two or
  more records in two halves (the first half gets the extra record of an odd batch), processes the first half, then
  the second; a failed batch of one record is retried as without bisection.
- ReportBatchItemFailures: the handler answers {"batchItemFailures": [{"itemIdentifier": "<SequenceNumber>"}]}.
  The page says that with several entries the record with the lowest sequence number is the checkpoint and every
  record from it on is retried; that an empty or missing list, or no answer, is a complete success, and an empty or
  missing itemIdentifier, or a key of another name, a complete failure; and that with BisectBatchOnFunctionError on
  too, the batch is bisected at the returned sequence number and only the remaining records are retried. In the lab a
  partial failure checkpoints before the lowest failed record and retries the records from it on, counted as one
  retry of them, whether or not bisection is on. Without ReportBatchItemFailures an answer is not read ("these
  responses will not be processed by Lambda unless the ReportBatchItemFailures feature is explicitly turned on").
- "Lambda event source mappings process each event at least once, and duplicate processing of records can occur"
  ("How Lambda processes records from stream and queue-based event sources"): a function that dies after its side effect
  and before its batch is checkpointed is invoked again with the batch. Explored with faults=("crash",), the
  explorer's crash after one of the handler's writes (helpers/explore.py) is such a death: the invocation ends there,
  and the mapping invokes the handler again with the same batch, one more attempt.

Explored: `drain()` is a client function of its own (`explore({"consumer": mapping.drain, ...})`): each request the
handler sends is a step, and so is each of the mapping's DynamoDB Streams requests (ListStreams, DescribeStream,
GetShardIterator, GetRecords). Beside clients that write, each record entering the stream is a move of the explorer's
too (helpers/explore.py), so the mapping may poll before, between or after the records of a write arrive, a
transaction's one at a time. A drain delivers what the stream holds when it catches up; a record that enters after
that is not delivered in that behaviour (the next drain would hand it over).

Kinesis mode (`kinesis=True`): a table can send its changes to a Kinesis data stream instead, and "The Kinesis data
stream records might appear in a different sequence than the item changes occurred. The same item notifications
might also appear more than once in the stream." (Developer Guide, "Using Kinesis Data Streams to capture changes to
DynamoDB"). The lab serves no Kinesis: in this mode
the mapping reads the table's DynamoDB stream as before and hands each read's records over as a Kinesis data stream
may: in any order, and any one of them a second time, after the others. Explored, which (of every order, and every
record or none again) is the explorer's choice, a move of the consumer's own ("consumer?5",
explore.choice_point); in a plain run, chance's. Each record is handed over as a Kinesis record's data holds it,
decoded (Lambda hands the function a Kinesis record with this JSON base64-encoded in `kinesis.data`): eventID,
eventName, eventSource, awsRegion, tableName, recordFormat, and a `dynamodb` with Keys, the images, SizeBytes and
ApproximateCreationDateTime in milliseconds ("`ApproximateCreationDateTime` indicates the time of the modification
in milliseconds", Developer Guide; a table can choose microseconds instead; the lab's stream keeps whole seconds,
so here they end in 000 and two changes in one second tie), and no SequenceNumber or
StreamViewType: the change's place in the item's order is not in it, and a Kinesis record's own sequence number
orders its shard, not the item's changes. So a partial batch response, which names the Kinesis sequence number, is
refused in this mode. A copy is never handed over in a later batch than the record itself.

Not modelled: ParallelizationFactor (one batch per shard at a time, as its default 1), MaximumBatchingWindowInSeconds
(0: a batch is what one GetRecords gives), tumbling windows and filters.
"""
import itertools
import json
import time
import uuid
from dataclasses import dataclass
from datetime import datetime, timezone

import boto3
import pandas as pd
from botocore.exceptions import ClientError

from ..explore import Crashed, choice_point

MAX_BATCH_SIZE = 10_000
MAX_RETRIES = 10_000
MAX_RECORD_AGE = 604_800
DESTINATION_SERVICES = ("sqs", "sns")  # what an on-failure destination of a stream's mapping may be
DRAIN_ATTEMPTS = 5
STARTING_POSITIONS = ("TRIM_HORIZON", "LATEST")
FUNCTION_NAME = "lab-consumer"
STREAMS_CLIENTS = {}  # (backend kind, endpoint, Region) -> its DynamoDB Streams client


class MappingError(ValueError):
    """An event source mapping the lab cannot run as asked; the message says what to change."""


@dataclass
class Context:
    """What Lambda's context object tells a handler that the lab can tell it too."""

    aws_request_id: str
    function_name: str = FUNCTION_NAME


@dataclass
class Batch:
    """Records to hand the handler together, and how many times they have been handed already."""

    records: list
    attempt: int = 1


class EventSourceMapping:
    """A Lambda event source mapping on one table's stream (module docstring): `drain()` delivers what it holds."""

    def __init__(self, lab, table_name, handler, *, batch_size=100, maximum_retry_attempts=-1,
                 bisect_batch_on_function_error=False, report_batch_item_failures=False,
                 starting_position="TRIM_HORIZON", region=None, kinesis=False, maximum_record_age_in_seconds=-1,
                 destination_config=None):
        check_settings(batch_size, maximum_retry_attempts, starting_position, maximum_record_age_in_seconds)
        check_destination(destination_config)
        if kinesis and report_batch_item_failures:
            raise MappingError("report_batch_item_failures is not available with kinesis=True: a partial batch response "
                               "names a record by its Kinesis sequence number, which the lab's Kinesis mode does not "
                               "hand over (it hands over the decoded DynamoDB change only)")
        self.kinesis, self.max_age = kinesis, maximum_record_age_in_seconds
        self.destination = (destination_config or {}).get("OnFailure", {}).get("Destination")
        self.sent_on_failure = []  # the JSON documents sent to the on-failure destination, parsed
        self.handler, self.table_name = handler, table_name
        self.batch_size, self.retries = batch_size, maximum_retry_attempts
        self.bisect, self.partial = bisect_batch_on_function_error, report_batch_item_failures
        self.starting_position = starting_position
        region = region or lab.client.meta.region_name
        self.streams = streams_client(lab, region)
        self.stream_arn = stream_of(self.streams, table_name)
        self.checkpoints = {}  # shard id -> the sequence number of the last record checkpointed (or None)
        self.iterators = {}  # shard id -> the iterator at which the last drain caught up with it
        self.invocations = []

    def drain(self):
        """Deliver every record the stream holds now, batch by batch, as the mapping would; return this drain's
        invocations (deliveries)."""
        first = len(self.invocations)
        for shard in shards_in_order(self.streams, self.stream_arn):
            self.drain_shard(shard)
        return deliveries(self.invocations[first:])

    def drain_shard(self, shard):
        """Read one shard from where the mapping left it to its end, handing each batch to the handler until it is
        done with."""
        shard_id = shard["ShardId"]
        iterator = self.iterators.pop(shard_id, None) or self.iterator(shard_id)
        while iterator:
            answer = self.read(shard_id, iterator)
            records = [lambda_record(record, self.stream_arn) for record in answer["Records"]]
            if self.kinesis and records:
                records = as_kinesis_delivers(records)
            if not records:
                self.iterators[shard_id] = answer.get("NextShardIterator")
                return
            pending = [Batch(records)]
            while pending:
                after = self.invoke(pending.pop(0), shard_id)
                if after is None:
                    return  # blocked: the shard waits, its checkpoint before the batch that keeps failing
                pending[:0] = after
            self.checkpoints[shard_id] = answer["Records"][-1]["dynamodb"]["SequenceNumber"]
            iterator = answer.get("NextShardIterator")

    def read(self, shard_id, iterator):
        """GetRecords at `iterator`; one kept past its 15 minutes is replaced by a new one from the checkpoint."""
        try:
            return self.streams.get_records(ShardIterator=iterator, Limit=self.batch_size)
        except ClientError as error:
            if error.response["Error"]["Code"] != "ExpiredIteratorException":
                raise
            return self.streams.get_records(ShardIterator=self.iterator(shard_id), Limit=self.batch_size)

    def iterator(self, shard_id):
        """A new shard iterator just after the shard's checkpoint, or at the mapping's starting position."""
        checkpoint = self.checkpoints.get(shard_id)
        if checkpoint is None:
            return self.streams.get_shard_iterator(StreamArn=self.stream_arn, ShardId=shard_id,
                                                   ShardIteratorType=self.starting_position)["ShardIterator"]
        return self.streams.get_shard_iterator(StreamArn=self.stream_arn, ShardId=shard_id,
                                               ShardIteratorType="AFTER_SEQUENCE_NUMBER",
                                               SequenceNumber=checkpoint)["ShardIterator"]

    def invoke(self, batch, shard_id):
        """Hand one batch to the handler; the batches still to hand over because of what came of it (a retry, the two
        halves of a split, the records after a partial failure), first first; None when the shard is blocked. A batch
        handed over again first loses its records past MaximumRecordAgeInSeconds."""
        if batch.attempt > 1:
            batch = self.without_expired(batch, shard_id)
            if not batch.records:
                return []
        outcome, failed_from = self.call(batch.records)
        row = self.row(batch, outcome)
        if outcome == "ok":
            return []
        if failed_from:
            row["outcome"] = f"{outcome}: checkpointed before record {failed_from + 1} of {len(batch.records)}"
            return self.after_failure(Batch(batch.records[failed_from:], batch.attempt), row, shard_id, split_ok=False)
        return self.after_failure(batch, row, shard_id, split_ok=True)

    def row(self, batch, outcome):
        """Note one invocation (or one discard without an invocation) among the mapping's rows; the row."""
        row = {"invocation": len(self.invocations) + 1, "attempt": batch.attempt,
               "records": [record["dynamodb"]["SequenceNumber"] for record in batch.records],
               "events": [event_words(record) for record in batch.records], "outcome": outcome}
        self.invocations.append(row)
        return row

    def without_expired(self, batch, shard_id):
        """The batch without its records older than MaximumRecordAgeInSeconds, which are discarded (and sent to the
        on-failure destination)."""
        if self.max_age == -1:
            return batch
        now = time.time()
        expired = [record for record in batch.records if now - record["dynamodb"]["ApproximateCreationDateTime"]
                   > self.max_age]
        if not expired:
            return batch
        gone = Batch(expired, batch.attempt)
        self.row(gone, f"not handed over again: older than MaximumRecordAgeInSeconds ({self.max_age} s): discarded")
        self.send_on_failure(gone, shard_id, "RecordAgeExceeded")
        return Batch([record for record in batch.records if record not in expired], batch.attempt)

    def send_on_failure(self, batch, shard_id, condition):
        """Send the on-failure destination, if there is one, the JSON document Lambda sends for a discarded batch."""
        if not self.destination:
            return
        numbers = [record["dynamodb"]["SequenceNumber"] for record in batch.records]
        arrivals = [arrival(record) for record in batch.records]
        region, account = self.stream_arn.split(":")[3:5]
        document = {
            "requestContext": {"requestId": str(uuid.uuid4()),
                               "functionArn": f"arn:aws:lambda:{region}:{account}:function:{FUNCTION_NAME}",
                               "condition": condition, "approximateInvokeCount": batch.attempt},
            "responseContext": {"statusCode": 200, "executedVersion": "$LATEST", "functionError": "Unhandled"},
            "version": "1.0", "timestamp": datetime.now(timezone.utc).isoformat(timespec="milliseconds")[:-6] + "Z",
            "DDBStreamBatchInfo": {"shardId": shard_id, "startSequenceNumber": min(numbers, key=int),
                                   "endSequenceNumber": max(numbers, key=int),
                                   "approximateArrivalOfFirstRecord": min(arrivals),
                                   "approximateArrivalOfLastRecord": max(arrivals), "batchSize": len(batch.records),
                                   "streamArn": self.stream_arn}}
        self.sent_on_failure.append(json.loads(json.dumps(document)))

    def after_failure(self, batch, row, shard_id, split_ok):
        """The batches to hand over after `batch` failed: its halves, itself again, none (retries spent), or None (the
        shard blocked: retries unbounded, DRAIN_ATTEMPTS made)."""
        if split_ok and self.bisect and len(batch.records) > 1:
            middle = (len(batch.records) + 1) // 2
            row["outcome"] += f"; split into {middle} and {len(batch.records) - middle}"
            return [Batch(batch.records[:middle], batch.attempt), Batch(batch.records[middle:], batch.attempt)]
        if self.retries != -1 and batch.attempt > self.retries:
            row["outcome"] += "; retries spent: discarded"
            self.send_on_failure(batch, shard_id, "RetryAttemptsExhausted")
            return []
        if self.retries == -1 and batch.attempt >= DRAIN_ATTEMPTS:
            row["outcome"] += (f"; still failing after {DRAIN_ATTEMPTS} attempts: Lambda would retry it until the "
                               "records expire (24 hours), processing nothing after them on the shard meanwhile")
            return None
        return [Batch(batch.records, batch.attempt + 1)]

    def call(self, records):
        """(outcome, the place of the first record to retry after a partial failure, or None) of one invocation."""
        handed = [kinesis_record(record, self.table_name) for record in records] if self.kinesis else records
        try:
            answer = self.handler({"Records": handed}, Context(str(uuid.uuid4())))
        except Crashed as crash:
            return f"the invocation died ({crash}) before its batch was checkpointed", None
        except Exception as error:
            return f"raised {type(error).__name__}: {error}", None
        if not self.partial:
            return "ok", None
        return partial_outcome(answer, records)


def as_kinesis_delivers(records):
    """The records of one read as a Kinesis data stream may hand them over (module docstring): in any order, and any one
    of them (or none) a second time, after the others; which, explore.choice_point decides."""
    ways = [(order, again) for order in itertools.permutations(range(len(records)))
            for again in (None, *range(len(records)))]
    words = [", ".join(str(place + 1) for place in order) + ("" if again is None else f", then {again + 1} again")
             for order, again in ways]
    order, again = ways[choice_point(f"Kinesis hands over records {', '.join(map(str, range(1, len(records) + 1)))}",
                                     words)]
    return [records[place] for place in order] + ([records[again]] if again is not None else [])


def partial_outcome(answer, records):
    """(outcome, place of the first record to retry or None) of a handler's answer under ReportBatchItemFailures."""
    failures = answer.get("batchItemFailures") if isinstance(answer, dict) else None
    if not failures:
        return "ok", None
    places = {record["dynamodb"]["SequenceNumber"]: place for place, record in enumerate(records)}
    named = []
    for failure in failures:
        identifier = failure.get("itemIdentifier") if isinstance(failure, dict) else None
        if not identifier or identifier not in places:
            return f"answered a batchItemFailures entry Lambda cannot read ({failure!r}): the whole batch failed", None
        named.append(places[identifier])
    first = min(named)
    if first == 0:
        return "reported its first record failed: the whole batch failed", None
    return f"reported record {first + 1} failed", first


def check_settings(batch_size, retries, starting_position, max_age):
    """Refuse settings Lambda refuses, saying what it accepts."""
    if not isinstance(batch_size, int) or not 1 <= batch_size <= MAX_BATCH_SIZE:
        raise MappingError(f"batch_size must be a whole number from 1 to {MAX_BATCH_SIZE:,} (BatchSize for DynamoDB "
                           f"Streams), not {batch_size!r}")
    if not isinstance(retries, int) or not -1 <= retries <= MAX_RETRIES:
        raise MappingError(f"maximum_retry_attempts must be -1 (retry until the records expire) or 0 to "
                           f"{MAX_RETRIES:,}, not {retries!r}")
    if not isinstance(max_age, int) or not -1 <= max_age <= MAX_RECORD_AGE:
        raise MappingError(f"maximum_record_age_in_seconds must be -1 (no maximum: retried until the records expire) "
                           f"or up to {MAX_RECORD_AGE:,} (7 days), not {max_age!r}")
    if starting_position not in STARTING_POSITIONS:
        raise MappingError(f"starting_position must be one of {', '.join(STARTING_POSITIONS)} for DynamoDB Streams, "
                           f"not {starting_position!r}")


def check_destination(config):
    """Refuse a DestinationConfig Lambda would refuse for a stream's mapping, saying what it takes."""
    if config is None:
        return
    destination = config.get("OnFailure", {}).get("Destination") if isinstance(config, dict) else None
    service = destination.split(":")[2] if isinstance(destination, str) and destination.count(":") >= 5 else None
    if service not in DESTINATION_SERVICES:
        raise MappingError('destination_config must be {"OnFailure": {"Destination": <ARN>}} with the ARN of a standard '
                           f"SQS queue or SNS topic (arn:aws:sqs:... or arn:aws:sns:...), not {config!r}")


def streams_client(lab, region):
    """A DynamoDB Streams client of the lab's backend, signed for `region`: built once per backend and Region (a
    client takes about 75 ms to build, and an explored checker makes a mapping for every behaviour)."""
    key = (lab.kind, lab.endpoint, region)
    if key not in STREAMS_CLIENTS:
        endpoint = None if lab.kind == "aws" else lab.endpoint
        session = boto3.session.Session(**{**lab.credentials, "region_name": region})
        STREAMS_CLIENTS[key] = session.client("dynamodbstreams", endpoint_url=endpoint)
    return STREAMS_CLIENTS[key]


def stream_of(streams, table_name):
    """The ARN of the table's latest stream (the latest StreamLabel ListStreams gives), if it is enabled; else a
    MappingError saying how to give the table one. Asked of DynamoDB Streams, so that an explored consumer's first
    step is its function's first request."""
    listed, start = [], {}
    while True:
        answer = streams.list_streams(TableName=table_name, **start)
        listed += answer["Streams"]
        if not answer.get("LastEvaluatedStreamArn"):
            break
        start = {"ExclusiveStartStreamArn": answer["LastEvaluatedStreamArn"]}
    latest = max(listed, key=lambda stream: stream["StreamLabel"], default=None)
    described = latest and streams.describe_stream(StreamArn=latest["StreamArn"], Limit=1)["StreamDescription"]
    if not described or described["StreamStatus"] not in ("ENABLED", "ENABLING"):
        raise MappingError(f"Table {table_name!r} has no stream enabled (or does not exist here): give it one with "
                           "StreamSpecification (StreamEnabled true and a StreamViewType) in CreateTable or "
                           "UpdateTable first")
    return latest["StreamArn"]


def shards_in_order(streams, stream_arn):
    """The stream's shards, each after its parent (Lambda processes a parent shard before its children)."""
    shards, start = [], {}
    while True:
        description = streams.describe_stream(StreamArn=stream_arn, **start)["StreamDescription"]
        shards += description["Shards"]
        if not description.get("LastEvaluatedShardId"):
            break
        start = {"ExclusiveStartShardId": description["LastEvaluatedShardId"]}
    known, ordered = {shard["ShardId"] for shard in shards}, []
    placed = set()
    while len(ordered) < len(shards):
        for shard in shards:
            parent = shard.get("ParentShardId")
            if shard["ShardId"] not in placed and (parent not in known or parent in placed):
                ordered.append(shard)
                placed.add(shard["ShardId"])
    return ordered


def lambda_record(record, stream_arn):
    """A GetRecords record as Lambda hands it to a function: with eventSourceARN, its time in epoch seconds."""
    change = dict(record["dynamodb"])
    when = change.get("ApproximateCreationDateTime")
    if isinstance(when, datetime):
        change["ApproximateCreationDateTime"] = int(when.timestamp())
    return {**record, "dynamodb": change, "eventSourceARN": stream_arn}


def kinesis_record(record, table_name):
    """A record as Kinesis Data Streams for DynamoDB carries it (module docstring): no SequenceNumber, its time in
    milliseconds."""
    change = {key: value for key, value in record["dynamodb"].items()
              if key in ("Keys", "NewImage", "OldImage", "SizeBytes")}
    change["ApproximateCreationDateTime"] = record["dynamodb"]["ApproximateCreationDateTime"] * 1000
    handed = {"awsRegion": record["awsRegion"], "dynamodb": change, "eventID": record["eventID"],
              "eventName": record["eventName"], "eventSource": "aws:dynamodb", "recordFormat": "application/json",
              "tableName": table_name}
    return {**handed, **({"userIdentity": record["userIdentity"]} if "userIdentity" in record else {})}


def arrival(record):
    """'2019-11-14T00:13:19Z': a record's ApproximateCreationDateTime as an on-failure document writes it."""
    when = datetime.fromtimestamp(record["dynamodb"]["ApproximateCreationDateTime"], timezone.utc)
    return when.strftime("%Y-%m-%dT%H:%M:%SZ")


def event_words(record):
    """'INSERT ORDER#1': a record's event and the key of its item (its parts joined by ' / '), for a delivery's row."""
    keys = [str(next(iter(value.values()))) for value in record["dynamodb"].get("Keys", {}).values()]
    return f"{record['eventName']} {' / '.join(keys)}"


def deliveries(invocations):
    """One row per invocation: its number, the attempt, the records' sequence numbers and events, what came of it."""
    return pd.DataFrame(invocations, columns=["invocation", "attempt", "records", "events", "outcome"])
