"""DynamoDB Streams as DynamoDB serves them: each table's streams, the records of the writes that changed an item, and
the DynamoDB Streams operations that read them.

Where moto (5.2) differs from the Developer Guide ("Change data capture for DynamoDB Streams", and its older
"Capturing Table Activity with DynamoDB Streams") and the DynamoDB Streams API reference, the lab server keeps its own
streams instead of moto's StreamShard:

- "Each stream record appears exactly once in the stream. For each item that is modified in a DynamoDB table, the
  stream records appear in the same sequence as the actual modifications to the item." A request's changes are
  gathered while moto applies it (moto calls `add` once per change, and twice for an UpdateItem that creates its
  item, which made two INSERT records) and recorded once it has succeeded (`applied`): one record per item it
  changed, in the order it changed them. A request that fails records nothing: a refused write, a cancelled
  transaction (moto restored a copy of its tables, but an iterator taken before still read the cancelled changes),
  a failed PartiQL transaction.
- "If you perform a PutItem or UpdateItem operation that does not change any data in an item, then DynamoDB Streams
  will not write a stream record for that operation": a change that leaves the item as it was is no record.
- "If you disable and then re-enable a stream on the table, a new stream will be created with a different stream
  descriptor", and "If you disable a stream on a table, the data in the stream will continue to be readable for 24
  hours": a table keeps every stream it had, each with its own label, ARN and shard; disabling one closes its shard
  (EndingSequenceNumber; GetRecords at its end answers no NextShardIterator, "the shard has been closed") and marks it
  DISABLED (the lab applies UpdateTable at once, so DISABLING is never seen). moto failed on a disabled stream
  (KeyError: 'StreamViewType') and refused to enable one again.
- Records as DynamoDB writes them (the record captured from real DynamoDB Streams in 2019, eventVersion 1.1, a
  SizeBytes of 22 for two keys and one image of 11 bytes each): ApproximateCreationDateTime "rounded down to the
  closest second", awsRegion the table's Region (moto said us-east-1 everywhere), SizeBytes the size of the keys
  and images the record holds (moto's was the size of its JSON), SequenceNumber a string of 21 digits, increasing
  across the server.
- GetShardIterator's four iterator types (and AT_TIMESTAMP), with a SequenceNumber only for AT_SEQUENCE_NUMBER and
  AFTER_SEQUENCE_NUMBER; "A shard iterator expires 15 minutes after it is returned to the requester", then
  ExpiredIteratorException. An iterator carries its position and the time it was returned, signed by the server,
  so the server keeps nothing per iterator (moto kept every one it handed out).
- DescribeStream's Limit and ExclusiveStartShardId, ListStreams' Limit and ExclusiveStartStreamArn.
- Explored (helpers/explore/), every record is on its way (`pending`) until the explorer lets it enter its stream
  (`arrive`): a move of its own, "stream#3", which the explorer may make at any point, after the record's write and
  after the records of the same item made before it. So records of different items enter in any order, a transaction's
  one at a time and between other writes' records, as "Changes made with transactions are propagated ... eventually,
  after the transaction completes successfully" (below) allows, while each item's records keep their order. A record is
  on its way only once a read of the table could see its change: a write the explorer holds while its items become
  visible (model/consistency.py) keeps its records until then, a TransactWriteItems's all until its last item is visible
  and it ends, a BatchWriteItem's each until its item is. (How long a record may stay on its way is the explorer's
  bound, helpers/explore/.)
- The stream_lag knob (model/knobs.py), sampled: "Changes made with transactions are propagated to global secondary
  indexes (GSIs), DynamoDB streams, and backups eventually, after the transaction completes successfully" (Developer
  Guide, "Amazon DynamoDB Transactions: How it works"). With it on, each record waits a delay drawn from its range
  (`wait`) and enters its stream when a DynamoDB Streams request comes after that (`land`), never before an earlier
  record of the same item; it takes its sequence number as it enters, so a transaction's records enter one by one
  and other writes' records may come between them. Turned off, every waiting record enters at once; a stream being
  disabled first takes its own.

Not modelled: trimming (records older than 24 hours stay readable; a lab session is shorter, so
TrimmedDataAccessException never comes); TTL deletions (the lab server does not expire items); one shard per stream,
never split; a stream goes with its table when the table is deleted (DynamoDB keeps it readable, DISABLED, for 24
hours).
"""
import base64
import bisect
import hashlib
import hmac
import itertools
import json
import os
import random
import re
import time
import uuid
from datetime import datetime, timedelta

from moto.core.exceptions import JsonRESTError
from moto.core.responses import ActionResult
from moto.core.utils import utcnow
from moto.dynamodb.models import DynamoDBBackend, dynamodb_backends
from moto.dynamodb.models.table import Table
from moto.dynamodbstreams.responses import DynamoDBStreamsHandler

from ..accounting.capacity import item_size

ITERATOR_LIFETIME = 15 * 60  # seconds: "A shard iterator expires 15 minutes after it is returned to the requester"
MAX_RECORDS = 1000  # GetRecords: "The upper limit is 1000"
MAX_LISTED = 100  # DescribeStream's and ListStreams' Limit: "The upper limit is 100"
EVENT_VERSION = "1.1"
ITERATOR_TYPES = ("TRIM_HORIZON", "LATEST", "AT_SEQUENCE_NUMBER", "AFTER_SEQUENCE_NUMBER", "AT_TIMESTAMP")
AT_A_NUMBER = ("AT_SEQUENCE_NUMBER", "AFTER_SEQUENCE_NUMBER")
SET_TYPES = ("SS", "NS", "BS")
STREAM_ARN = re.compile(r"arn:aws[a-z-]*:dynamodb:[^:]*:[0-9]{12}:table/([a-zA-Z0-9_.-]+)/stream/(.+)")
SECRET = os.urandom(16)  # signs the iterators this server hands out
sequence_numbers = itertools.count(10 ** 20)  # 21 digits, the least DynamoDB's SequenceNumber has
changes = {}  # the request being applied: (stream, key values) -> [stream, item before, item after], in order
lag = None  # the stream_lag knob: None (a record enters its stream as its request is answered), or (low, high) s
waiting = []  # stream_lag: [((moment it enters, arrival), (stream, item), record)], in the order they will enter
last_entries = {}  # stream_lag: (stream, item) -> (moment, arrival) of the item's last waiting record
lag_order = itertools.count()  # stream_lag: breaks ties between records due at one moment
holding = None  # explored: a list the records of the request being applied go to, kept for its items to become visible
explored = False  # set by consistency.Model while the explorer moves the copies: records wait in `pending`
pending = []  # explored: [(number, stream, item, record)] of the records on their way, in the order they were made
event_numbers = itertools.count(1)  # explored: each record on its way is numbered, from 1 since the copies last agreed

INVALID_STREAM_ARN = "Invalid StreamArn"  # the AWS SDK for JavaScript's integration test of real DynamoDB Streams
NO_SUCH_STREAM = "Requested resource not found: Stream: {} not found"  # DynamoDB Local's words
NO_SUCH_SHARD = "Requested resource not found: Shard does not exist"  # what ex_kcl and the Kinesis adapter handle
INVALID_ITERATOR = "Invalid ShardIterator"
EXPIRED_ITERATOR = "The provided iterator exceeds the maximum age allowed."  # the API reference's, for its message
NUMBER_NEEDED = "A SequenceNumber is required for ShardIteratorType {}"
NUMBER_REFUSED = "A SequenceNumber is not allowed with ShardIteratorType {}"
NUMBER_OUTSIDE = "Invalid SequenceNumber {} for shard {}: it is not a sequence number of the shard"
TIMESTAMP_NEEDED = "A Timestamp is required for ShardIteratorType AT_TIMESTAMP"
CONSTRAINT = "1 validation error detected: Value '{}' at '{}' failed to satisfy constraint: {}"
ENUM = "Member must satisfy enum value set: [{}]"
AT_MOST = "Member must have value less than or equal to {}"


class StreamsError(JsonRESTError):
    """An error DynamoDB Streams answers (code, message), raised where moto's handler turns it into the response."""


class Stream:
    """One stream of a table: enabled by CreateTable or UpdateTable, until UpdateTable disables it; one shard."""

    def __init__(self, table, view_type, label):
        self.table_name, self.region = table.name, table.region_name
        self.key_schema = [dict(element) for element in table.schema]
        self.key_names = tuple(table.table_key_attrs)
        self.view_type, self.label = view_type, label
        self.arn = f"{table.table_arn}/stream/{label}"
        self.created = utcnow()
        self.status = "ENABLED"
        self.shard_id = f"shardId-{int(time.time() * 1000):020d}-{uuid.uuid4().hex[:8]}"
        self.starting = next(sequence_numbers)
        self.ending = None
        self.numbers, self.times, self.records = [], [], []

    def __deepcopy__(self, memo):
        """The stream itself: a copy of its table (moto restoring a cancelled transaction's tables) shares its log."""
        return self

    def add(self, old, new):
        """moto's StreamShard.add: the request being applied changed an item from `old` to `new` (moto's Items)."""
        item = new if new is not None else old
        key = (self, item.hash_key, item.range_key)
        if key in changes:
            changes[key][2] = new
        else:
            changes[key] = [self, old, new]

    def prepared(self, old, new):
        """The record of a change that succeeded (its SequenceNumber given when it enters the stream), or None when
        the change left the item as it was."""
        before = None if old is None else old.to_json()["Attributes"]
        after = None if new is None else new.to_json()["Attributes"]
        if canonical(before) == canonical(after):
            return None
        keys = {name: value for name, value in (after or before).items() if name in self.key_names}
        body = {"ApproximateCreationDateTime": utcnow().replace(microsecond=0), "Keys": keys}
        if after is not None and self.view_type in ("NEW_IMAGE", "NEW_AND_OLD_IMAGES"):
            body["NewImage"] = after
        if before is not None and self.view_type in ("OLD_IMAGE", "NEW_AND_OLD_IMAGES"):
            body["OldImage"] = before
        body["SizeBytes"] = max(1, sum(item_size(body.get(part)) for part in ("Keys", "NewImage", "OldImage")))
        body["StreamViewType"] = self.view_type
        return {"eventID": uuid.uuid4().hex,
                "eventName": "INSERT" if old is None else "REMOVE" if new is None else "MODIFY",
                "eventVersion": EVENT_VERSION, "eventSource": "aws:dynamodb", "awsRegion": self.region,
                "dynamodb": body}

    def enter(self, record):
        """The record enters the stream: the next sequence number is its."""
        number = next(sequence_numbers)
        record["dynamodb"]["SequenceNumber"] = str(number)
        self.numbers.append(number)
        self.times.append(time.time())
        self.records.append(record)

    def close(self):
        """Disable the stream: its shard takes no more records; what it holds stays readable."""
        self.status = "DISABLED"
        self.ending = self.last_number()

    def last_number(self):
        """The greatest sequence number of the shard so far (its starting number while it holds no record)."""
        return self.numbers[-1] if self.numbers else self.starting

    def shard(self):
        """The shard as DescribeStream lists it."""
        numbers = {"StartingSequenceNumber": str(self.starting)}
        if self.ending is not None:
            numbers["EndingSequenceNumber"] = str(self.ending)
        return {"ShardId": self.shard_id, "SequenceNumberRange": numbers}

    def description(self, limit, exclusive_start_shard_id):
        """DescribeStream's StreamDescription: the shards after `exclusive_start_shard_id`, at most `limit`."""
        shards = [self.shard()] if not exclusive_start_shard_id or self.shard_id > exclusive_start_shard_id else []
        return {"StreamArn": self.arn, "StreamLabel": self.label, "StreamStatus": self.status,
                "StreamViewType": self.view_type, "CreationRequestDateTime": self.created,
                "TableName": self.table_name, "KeySchema": self.key_schema, "Shards": shards[:limit]}

    def position(self, kind, number, timestamp):
        """The least sequence number an iterator of this type reads from."""
        if kind == "TRIM_HORIZON":
            return self.starting
        if kind == "LATEST":
            return self.last_number() + 1
        if kind == "AT_TIMESTAMP":
            place = bisect.bisect_left(self.times, timestamp)
            return self.numbers[place] if place < len(self.numbers) else self.last_number() + 1
        return number if kind == "AT_SEQUENCE_NUMBER" else number + 1

    def read(self, start, limit):
        """(records from sequence number `start`, at most `limit`; the position after them; whether the shard is
        closed and read to its end)."""
        place = bisect.bisect_left(self.numbers, start)
        taken = self.records[place:place + limit]
        after = self.numbers[place + len(taken) - 1] + 1 if taken else start
        return taken, after, self.ending is not None and place + len(taken) == len(self.records)


def canonical(image):
    """An item image (DynamoDB JSON) with its sets' members in order, to compare two images; None stays None."""
    if image is None:
        return None
    return {name: canonical_value(value) for name, value in image.items()}


def canonical_value(value):
    """One attribute value with its sets' members in order, at any depth."""
    (kind, inner), = value.items()
    if kind in SET_TYPES:
        return {kind: sorted(inner, key=str)}
    if kind == "M":
        return {kind: canonical(inner)}
    if kind == "L":
        return {kind: [canonical_value(member) for member in inner]}
    return value


def applied(succeeded):
    """A request has been applied: each item it changed gets one record if it succeeded; none if it failed."""
    if not changes:
        return
    done = list(changes.values())
    changes.clear()
    if not succeeded:
        return
    now = time.time()
    for stream, old, new in done:
        record = stream.prepared(old, new)
        if record is None:
            continue
        if holding is not None:
            holding.append((stream, record))
        elif lag is None or explored:
            deliver(stream, record)
        else:
            wait(stream, record, now)


def deliver(stream, record):
    """A record of a change a read can see now: explored, it is on its way until the explorer lets it enter (`arrive`);
    else it enters its stream now."""
    if explored:
        item = (stream.arn, json.dumps(record["dynamodb"]["Keys"], sort_keys=True))
        pending.append((next(event_numbers), stream, item, record))
    else:
        stream.enter(record)


def arrivals():
    """Explored: the records that may enter their streams now (of each item's records on their way, the first), as the
    explorer offers them: {"id", "by": "stream", "label", "touches": [what it changes, as helpers/explore/reduction.py
    names it]}."""
    seen, heads = set(), []
    for number, stream, item, record in pending:
        if item not in seen:
            seen.add(item)
            heads.append({"id": number, "by": "stream", "label": record_label(stream, record),
                          "touches": [["(stream records)", f"{stream.table_name} in {stream.region}"]]})
    return heads


def arrive(number):
    """Explored: record `number`, on its way, enters its stream now; a ValueError unless it may (arrivals)."""
    place = next((place for place, entry in enumerate(pending) if entry[0] == number), None)
    if place is None or any(entry[2] == pending[place][2] for entry in pending[:place]):
        raise ValueError(f"Record {number} cannot enter its stream now: it is not the first of its item's records on "
                         f"their way (those are {', '.join(str(event['id']) for event in arrivals()) or 'none'})")
    _, stream, _, record = pending.pop(place)
    stream.enter(record)


def flush(stream=None):
    """Every record on its way (of `stream`, if given) enters its stream, in the order they were made; with none left,
    the numbering starts again from 1."""
    global event_numbers
    kept = []
    for entry in pending:
        if stream is None or entry[1] is stream:
            entry[1].enter(entry[3])
        else:
            kept.append(entry)
    pending[:] = kept
    if not pending:
        event_numbers = itertools.count(1)


def record_label(stream, record):
    """'INSERT {PK: 'ORDER#1'} into p35-orders' stream', as the explorer names a record's arrival."""
    keys = ", ".join(f"{name}: {value_text(value)}" for name, value in record["dynamodb"]["Keys"].items())
    return f"{record['eventName']} {{{keys}}} into {stream.table_name}'s stream"


def value_text(value):
    """A key attribute value as the transcript writes it: 'seat#14C' quoted, 5 bare."""
    (kind, inner), = value.items()
    return repr(inner) if kind == "S" else str(inner)


def wait(stream, record, now):
    """stream_lag: the record enters its stream after a delay drawn from the knob's range, and never before the
    records of the same item that came before it."""
    item = (stream, json.dumps(record["dynamodb"]["Keys"], sort_keys=True))
    moment = (max(now + random.uniform(*lag), last_entries.get(item, (0.0,))[0]), next(lag_order))
    last_entries[item] = moment
    bisect.insort(waiting, (moment, item, record), key=lambda entry: entry[0])


def land(until, stream=None):
    """Each waiting record whose moment is `until` or earlier (and every one of `stream`, about to close) enters its
    stream, in the order of their moments."""
    kept = []
    for moment, item, record in waiting:
        if moment[0] <= until or item[0] is stream:
            item[0].enter(record)
            if last_entries.get(item) == moment:
                del last_entries[item]
        else:
            kept.append((moment, item, record))
    waiting[:] = kept


def set_lag(span):
    """The stream_lag knob: (low, high) seconds, or None, when every waiting record enters its stream now."""
    global lag
    lag = span
    if span is None:
        land(float("inf"))


def stream_specification(self, streams):
    """Table.set_stream_specification: enabling starts a new stream, with a label no earlier stream of the table had;
    disabling closes the current one. The table keeps every stream (lab_streams); LatestStreamArn names the newest."""
    kept = self.__dict__.setdefault("lab_streams", [])
    current = self.stream_shard if isinstance(self.stream_shard, Stream) else None
    if streams and streams.get("StreamEnabled"):
        label = new_label({stream.label for stream in kept})
        stream = Stream(self, streams["StreamViewType"], label)
        kept.append(stream)
        self.stream_shard, self.latest_stream_label = stream, label
        self.stream_specification = {"StreamEnabled": True, "StreamViewType": stream.view_type}
        return
    if current is not None:
        land(time.time(), current)
        flush(current)
        current.close()
    self.stream_shard = None
    self.stream_specification = {"StreamEnabled": False}


def new_label(taken):
    """A stream label as DynamoDB writes them (2015-05-11T21:21:33.291): now, or the first millisecond after it that
    no earlier stream of the table has."""
    moment = utcnow()
    moment = moment.replace(microsecond=moment.microsecond // 1000 * 1000)
    while moment.isoformat(timespec="milliseconds") in taken:
        moment += timedelta(milliseconds=1)
    return moment.isoformat(timespec="milliseconds")


def update_table_streams(self, table, stream_specification):
    """DynamoDBBackend.update_table_streams, once streams.py has refused what DynamoDB refuses."""
    table.set_stream_specification(stream_specification)


def tables_of(handler):
    """The tables of the request's account and Region."""
    return dynamodb_backends[handler.current_account][handler.region].tables


def streams_of(handler):
    """Every stream of the request's account and Region, in the order of their ARNs."""
    return sorted((stream for table in tables_of(handler).values() for stream in getattr(table, "lab_streams", ())),
                  key=lambda stream: stream.arn)


def named_stream(handler, arn):
    """The stream `arn` names; ValidationException for no stream ARN, ResourceNotFoundException for no such stream."""
    named = stream_arn(arn)
    for stream in getattr(tables_of(handler).get(named.group(1)), "lab_streams", ()):
        if stream.arn == arn:
            return stream
    raise StreamsError("ResourceNotFoundException", NO_SUCH_STREAM.format(arn))


def stream_arn(arn):
    """The match of a stream ARN (its table's name, its label); else ValidationException."""
    named = STREAM_ARN.fullmatch(arn) if isinstance(arn, str) else None
    if named is None:
        raise StreamsError("ValidationException", INVALID_STREAM_ARN)
    return named


def at_most(name, value, most):
    """A Limit above DynamoDB Streams' upper limit is a ValidationException; None gives the upper limit."""
    if value is None:
        return most
    if value > most:
        raise StreamsError("ValidationException", CONSTRAINT.format(value, name, AT_MOST.format(most)))
    return value


def describe_stream(self):
    """DescribeStream: the stream, enabled or disabled, and its shard; Limit and ExclusiveStartShardId honoured."""
    land(time.time())
    stream = named_stream(self, self._get_param("StreamArn"))
    limit = at_most("limit", self._get_param("Limit"), MAX_LISTED)
    return ActionResult({"StreamDescription": stream.description(limit, self._get_param("ExclusiveStartShardId"))})


def list_streams(self):
    """ListStreams: the streams of the account and Region (of one table, if TableName says), every one a table kept,
    in ARN order from after ExclusiveStartStreamArn; LastEvaluatedStreamArn when Limit left some out."""
    land(time.time())
    name, start = self._get_param("TableName"), self._get_param("ExclusiveStartStreamArn")
    limit = at_most("limit", self._get_param("Limit"), MAX_LISTED)
    if start is not None:
        stream_arn(start)
    listed = [stream for stream in streams_of(self)
              if (name is None or stream.table_name == name) and (start is None or stream.arn > start)]
    answer = {"Streams": [{"StreamArn": stream.arn, "TableName": stream.table_name, "StreamLabel": stream.label}
                          for stream in listed[:limit]]}
    if len(listed) > limit:
        answer["LastEvaluatedStreamArn"] = listed[limit - 1].arn
    return ActionResult(answer)


def get_shard_iterator(self):
    """GetShardIterator: an iterator of the stream's shard at the position its type says."""
    land(time.time())
    kind, number, timestamp = (self._get_param(name) for name in ("ShardIteratorType", "SequenceNumber", "Timestamp"))
    if kind not in ITERATOR_TYPES:
        raise StreamsError("ValidationException",
                           CONSTRAINT.format(kind, "shardIteratorType", ENUM.format(", ".join(ITERATOR_TYPES))))
    stream = named_stream(self, self._get_param("StreamArn"))
    if self._get_param("ShardId") != stream.shard_id:
        raise StreamsError("ResourceNotFoundException", NO_SUCH_SHARD)
    if kind in AT_A_NUMBER and number is None:
        raise StreamsError("ValidationException", NUMBER_NEEDED.format(kind))
    if kind not in AT_A_NUMBER and number is not None:
        raise StreamsError("ValidationException", NUMBER_REFUSED.format(kind))
    if kind == "AT_TIMESTAMP" and timestamp is None:
        raise StreamsError("ValidationException", TIMESTAMP_NEEDED)
    if kind in AT_A_NUMBER and not (number.isdecimal() and stream.starting <= int(number) <= stream.last_number()):
        raise StreamsError("ValidationException", NUMBER_OUTSIDE.format(number, stream.shard_id))
    moment = timestamp.timestamp() if isinstance(timestamp, datetime) else timestamp
    start = stream.position(kind, int(number) if kind in AT_A_NUMBER else None, moment)
    return ActionResult({"ShardIterator": iterator(stream, start)})


def iterator(stream, start):
    """An iterator of `stream` reading from sequence number `start`, returned now: the stream's ARN, then the position
    and the time, signed."""
    body = base64.urlsafe_b64encode(json.dumps([stream.arn, start, time.time()]).encode()).decode()
    return f"{stream.arn}|1|{body}.{signature(body)}"


def signature(body):
    """The server's signature of an iterator's body."""
    return hmac.new(SECRET, body.encode(), hashlib.sha256).hexdigest()[:32]


def get_records(self):
    """GetRecords: the records from the iterator's position; NextShardIterator, unless the shard is closed and read."""
    land(time.time())
    text = self._get_param("ShardIterator")
    limit = at_most("limit", self._get_param("Limit"), MAX_RECORDS)
    arn, start, returned = iterator_parts(text)
    if time.time() - returned > ITERATOR_LIFETIME:
        raise StreamsError("ExpiredIteratorException", EXPIRED_ITERATOR)
    stream = named_stream(self, arn)
    records, after, ended = stream.read(start, limit)
    answer = {"Records": records}
    if not ended:
        answer["NextShardIterator"] = iterator(stream, after)
    return ActionResult(answer)


def iterator_parts(text):
    """(stream ARN, position, time returned) of an iterator this server handed out; else ValidationException."""
    prefix, _, signed = text.rpartition("|1|") if isinstance(text, str) else ("", "", "")
    body, _, mark = signed.rpartition(".")
    if not body or not hmac.compare_digest(mark, signature(body)):
        raise StreamsError("ValidationException", INVALID_ITERATOR)
    arn, start, returned = json.loads(base64.urlsafe_b64decode(body))
    if arn != prefix:
        raise StreamsError("ValidationException", INVALID_ITERATOR)
    return arn, start, returned


Table.set_stream_specification = stream_specification
DynamoDBBackend.update_table_streams = update_table_streams
DynamoDBStreamsHandler.describe_stream = describe_stream
DynamoDBStreamsHandler.list_streams = list_streams
DynamoDBStreamsHandler.get_shard_iterator = get_shard_iterator
DynamoDBStreamsHandler.get_records = get_records
