"""The lab server's meter, as CloudWatch would show it, and the partition_limits knob's throttling.

Per table the meter counts the units consumed (capacity.py's rules; writes refused by their condition
included, and counted apart too), ConditionalCheckFailedRequests, TransactionConflict and throttled
requests. GET /lab/metrics answers them; DELETE /lab/metrics sets them to zero. Everything here runs under
the engine lock.

partition_limits ({"write": 1000, "read": 3000}, DynamoDB's own limits per partition and second, or lower
for a classroom) throttles a request whose partition key value has used its units of the last second
(a token bucket per key value, refilled at the limit, holding at most one second's units; a request let in
takes its units as the meter bills them, and may leave the bucket in debt). DynamoDB's answer: on an on-demand
table ThrottlingException, on a provisioned one ProvisionedThroughputExceededException, each with its
ThrottlingReasons ("KeyRangeThroughputExceeded": "The request rate directed at a specific partition key value has
exceeded the internal partition-level throughput limits, indicating uneven access patterns across the table's or
GSI's key space.", API Reference, ThrottlingReason; botocore's model names the member throttlingReasons in a
ThrottlingException). botocore retries both, with backoff. A refused request, or item, consumes nothing. What each
operation is throttled by:
- Item operations and transactions: the partitions of the keys they name, refused whole if any has no units left.
  A write also uses the partition of each global secondary index entry it writes or deletes (the index's partition
  key value of the entry), whose units are taken from it, and is refused, answered IndexWriteKeyRangeThroughputExceeded
  with the index's ARN, when that partition has none left (index_spots; the Developer Guide's GSI write throttling and
  back pressure: "partition-level constraints apply independently to both the base table and each GSI—each has its
  own partition structure and corresponding throughput limits.").
- Query: the partition (of the table, or of the index it reads, answered Index...KeyRangeThroughputExceeded) its
  key condition names with = (a PartiQL SELECT's IN: each partition it lists); its units are taken from it.
- Scan: the partitions of the items it reads, refused if any has no units left; its units are shared among them by
  the bytes read in each. The Developer Guide ("Best practices for querying and scanning data", Avoiding sudden
  spikes in read activity) puts a Scan's reads on the partitions that hold its items: "The scan is also likely to
  consume all of its capacity units from the same partition because the scan requests read items that are next to
  each other on the partition. This means that the request is hitting the same partition, causing all of its
  capacity units to be consumed, and throttling other requests to that partition."
- BatchWriteItem and BatchGetItem: each item by its partition (a write's index partitions too), in the batch's
  order, once the items before it took their units; the items throttled are answered in UnprocessedItems /
  UnprocessedKeys (as sent, with the table's ConsistentRead and projection) and the rest applied. Only when none
  can be processed is the batch refused, with a ThrottlingException (API Reference, BatchWriteItem: "For tables and
  indexes with provisioned capacity, if none of the items can be processed due to insufficient provisioned
  throughput on all of the tables in the request, then BatchWriteItem returns a
  ProvisionedThroughputExceededException. For all tables and indexes, if none of the
  items can be processed due to other throttling scenarios (such as exceeding partition level limits), then
  BatchWriteItem returns a ThrottlingException."; BatchGetItem: "If at least one of the items is successfully
  processed, then BatchGetItem completes successfully, while returning the keys of the unread items in
  UnprocessedKeys."). SDKs do not resend unprocessed items: the caller must.
- PartiQL: each statement as the operation DynamoDB runs for it (below); a BatchExecuteStatement as a batch whose
  throttled statements are answered in their places with the error code ThrottlingError (API Reference,
  BatchStatementError, Code: "Valid Values: ConditionalCheckFailed | ... | ProvisionedThroughputExceeded |
  TransactionConflict | ThrottlingError | ..."; BatchExecuteStatement: "Error details for individual statements can
  be found under the Error field of the BatchStatementResponse for each statement."), all of them too.
The meter counts them as CloudWatch does ("DynamoDB Metrics and dimensions", ThrottledRequests: "In a batch request
(BatchGetItem or BatchWriteItem), ThrottledRequests is only incremented if every request in the batch is throttled.
If any individual request within the batch is throttled, one of the following metrics is incremented:
ReadThrottleEvents – For a throttled GetItem event within BatchGetItem. WriteThrottleEvents – For a throttled
PutItem or DeleteItem event within BatchWriteItem."): ThrottledRequests once per refused request, and
ReadThrottleEvents or WriteThrottleEvents once per exhausted partition a refused request needed (a write's table
partition and index partitions are events of their own: "when you update an item in a table with GSIs, there are
multiple events: a write operation to the table and a write operation to each index. Even if one or more of these
events are throttled, there will only be one ThrottledRequest.", "Using CloudWatch metrics to investigate throttling
issues") and once per throttled batch item. An index's events are counted on its table.

PartiQL is billed as the operations DynamoDB runs for it, each statement as one:
- ExecuteStatement answers one ConsumedCapacity, BatchExecuteStatement and ExecuteTransaction a list, one entry per
  table (botocore's model; its ReturnConsumedCapacity: "INDEXES - The response includes the aggregate
  ConsumedCapacity for the operation, together with ConsumedCapacity for each table and secondary index that was
  accessed.").
- A SELECT naming the table's whole primary key with = is a GetItem; one naming the partition key of the table or of
  the index it reads with = a Query of that partition, which reads the items its sort key condition holds for, and
  one naming it with IN (or = ORed) a Query of each partition it lists, each rounded on its own; any other a Scan
  ("PartiQL select statements for DynamoDB": "Using the SELECT statement can result in a full table scan if an
  equality or IN condition with a partition key is not provided in the WHERE clause."; "To ensure that a SELECT
  statement does not result in a full table scan, the WHERE clause condition must specify a partition key. Use the
  equality or IN operator.").
- INSERT, UPDATE and DELETE are PutItem, UpdateItem and DeleteItem of the key they name; an INSERT of a key the table
  holds ("PartiQL insert statements for DynamoDB": "If the DynamoDB table already has an item with the same primary
  key as the primary key of the item being inserted, DuplicateItemException is returned.") and an UPDATE or DELETE
  whose WHERE clause does not hold are refused writes, billed and counted as a PutItem's, UpdateItem's or
  DeleteItem's refused by its condition.
- BatchExecuteStatement bills each statement as BatchGetItem and BatchWriteItem bill each item (API Reference,
  BatchExecuteStatement: "Each read statement in a BatchExecuteStatement must specify an equality condition on all key
  attributes."), each SELECT by its own ConsistentRead; a statement answered with an error is not billed, unless
  the error refused its write (ConditionalCheckFailed, DuplicateItem).
- ExecuteTransaction is billed as TransactGetItems and TransactWriteItems (API Reference, ExecuteTransaction,
  ReturnConsumedCapacity: "For more information, see TransactGetItems and TransactWriteItems."), EXISTS(SELECT ...)
  as a ConditionCheck ("Using the EXISTS function with PartiQL for DynamoDB": "You can use EXISTS to perform the same
  function as ConditionCheck does in the TransactWriteItems API."). Its entry leaves out the ReadCapacityUnits or
  WriteCapacityUnits it did not use, as nubo-db/dynamodb-conformance records real DynamoDB answering.
"""
import copy
import json
import re
import time
from dataclasses import dataclass, field

from moto.dynamodb.exceptions import DynamodbException
from moto.dynamodb.models.dynamo_type import DynamoType, Item
from moto.dynamodb.parsing.executors import UpdateExpressionExecutor
from moto.dynamodb.parsing.expressions import UpdateExpressionParser
from moto.dynamodb.parsing.validators import UpdateExpressionValidator

from .capacity import (CANCELLED, CONDITION_FAILED, QUERY_SHAPING, TRANSACTIONAL, Usage, capacity_answer,
                       index_writes, item_key, item_size, local_index_names, partition, read_sizes, read_units,
                       stored, table_key_names, write_units)
from ..model.knobs import find_table
from ..rules.partiql import DUPLICATE_ITEM, holds, statement_access, values_equal

METRICS_PATH = "/lab/metrics"
COUNTERS = ("ConsumedReadCapacityUnits", "ConsumedWriteCapacityUnits", "WriteUnitsOnRefusedWrites",
            "IndexReadCapacityUnits", "IndexWriteCapacityUnits", "ConditionalCheckFailedRequests",
            "TransactionConflict", "ThrottledRequests", "ReadThrottleEvents", "WriteThrottleEvents", "Requests",
            "ReplicatedWriteUnits")
SINGLE = ("GetItem", "PutItem", "UpdateItem", "DeleteItem", "Query", "Scan", "ExecuteStatement")
TRANSACTIONS = ("TransactGetItems", "TransactWriteItems", "ExecuteTransaction")
SINGLE_WRITES = ("PutItem", "UpdateItem", "DeleteItem", "ExecuteStatement")  # a refusal of theirs is billed
DUPLICATE = b"DuplicateItemException"
REFUSED_STATEMENTS = ("ConditionalCheckFailed", "DuplicateItem")  # BatchExecuteStatement's codes of refused writes
PARTIQL = {"ExecuteStatement": None, "BatchExecuteStatement": "Statements", "ExecuteTransaction": "TransactStatements"}
THROTTLED_STATEMENT = "ThrottlingError"  # API Reference, BatchStatementError, Code's valid values
ON_DEMAND_THROTTLED = ("ThrottlingException",
                       "Throughput exceeds the current capacity of your table or index. DynamoDB is automatically "
                       "scaling your table or index so please try again shortly. If exceptions persist, check if you "
                       "have a hot key: https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/"
                       "bp-partition-key-design.html")
PROVISIONED_THROTTLED = ("ProvisionedThroughputExceededException",
                         "The level of configured provisioned throughput for the table was exceeded. Consider "
                         "increasing your provisioning level with the UpdateTable API.")


@dataclass
class Touch:
    """One item (or, for Query and Scan, one read) a request touches, with the item as it was before."""

    table: object
    name: str
    kind: str  # get, put, update, delete, check, query
    key: dict = None  # the item's key (None for a query)
    before: dict = None
    new: dict = None
    consistent: bool = False
    transactional: bool = False
    statement: int = None  # its place among a BatchExecuteStatement's statements
    read: list = None  # a PartiQL SELECT's Query or Scan: the items it reads
    index: str = None  # the index a Query or Scan reads
    partitions: list = None  # a Query's partitions, {partition key name: value} each (a SELECT's IN names several)
    update: dict = None  # an UpdateItem's request (or a transaction's Update), which throttling reads the write from


@dataclass
class Bill:
    """What a request touches, taken before moto applies it, to be settled from its answer."""

    target: str
    params: dict
    touches: list
    rerun: object = None
    usage: dict = field(default_factory=dict)  # table name -> Usage
    partitions: list = field(default_factory=list)  # (table name, spot, "read"|"write", units)

    def used(self, touch):
        """The Usage of the touch's table in this request."""
        if touch.name not in self.usage:
            self.usage[touch.name] = Usage(local=local_index_names(touch.table))
        return self.usage[touch.name]


def touches(target, params):
    """The Touches of one request, each with its item before (under the engine lock, before moto applies it)."""
    if target in ("GetItem", "PutItem", "UpdateItem", "DeleteItem"):
        kind = target[:-4].lower()
        return [touch(kind, params["TableName"], params, consistent=params.get("ConsistentRead", False))]
    if target in ("Query", "Scan"):
        table, index = find_table(params["TableName"]), index_named(params)
        key = query_key(table, index, params) if table is not None and target == "Query" else None
        return [] if table is None else [Touch(table, params["TableName"], "query", index=index,
                                               consistent=params.get("ConsistentRead", False),
                                               partitions=None if key is None else [key])]
    if target == "BatchGetItem":
        return [touch("get", name, {"Key": key}, consistent=spec.get("ConsistentRead", False))
                for name, spec in params["RequestItems"].items() for key in spec["Keys"]]
    if target == "BatchWriteItem":
        return [touch("put", name, request["PutRequest"]) if "PutRequest" in request
                else touch("delete", name, request["DeleteRequest"])
                for name, requests in params["RequestItems"].items() for request in requests]
    if target == "TransactGetItems":
        return [touch("get", action["Get"]["TableName"], action["Get"], transactional=True)
                for action in params["TransactItems"]]
    if target == "TransactWriteItems":
        kinds = {"Put": "put", "Update": "update", "Delete": "delete", "ConditionCheck": "check"}
        return [touch(kinds[name], body["TableName"], body, transactional=True)
                for action in params["TransactItems"] for name, body in action.items() if name in kinds]
    if target in PARTIQL:
        return partiql_touches(target, params)
    return None


def partiql_touches(target, params):
    """The Touches of a PartiQL request, each statement as the operation DynamoDB runs it (statement_touches); None
    when an ExecuteStatement's statement names no table the lab holds or cannot be read (moto refuses it)."""
    member, transactional = PARTIQL[target], target == "ExecuteTransaction"
    statements = [params] if member is None else params[member]
    found = [each for place, statement in enumerate(statements)
             for each in statement_touches(statement, place if target == "BatchExecuteStatement" else None,
                                           transactional)]
    return found if found or member is not None else None


def statement_touches(statement, place, transactional):
    """The Touches of one PartiQL statement: none for one that names no table the lab holds, or cannot be read."""
    access = statement_access(statement["Statement"])
    table = access and find_table(access.table)
    if table is None:
        return []
    return [access_touch(table, access, statement.get("ConsistentRead", False), transactional, place)]


def access_touch(table, access, consistent, transactional, place):
    """The Touch of one statement's Access: INSERT, UPDATE and DELETE a PutItem, UpdateItem and DeleteItem of the key
    they name, EXISTS(SELECT ...) a ConditionCheck, a SELECT naming the table's whole primary key with = a GetItem,
    any other SELECT a Query of each partition key value it pins with = or IN, or a Scan (items_read)."""
    if access.verb == "INSERT":
        key = item_key(table, access.item)
        return Touch(table, access.table, "put", key, stored(table, key), access.item, False, transactional, place)
    names = table_key_names(table)
    key = {name: access.equal[name] for name in names if name in access.equal}
    if access.verb == "SELECT" and (access.index is not None or len(key) < len(names)):
        hash_name = key_schema(table, access.index)[0]
        values = access.pinned(hash_name)
        partitions = None if values is None else [{hash_name: value} for value in values]
        return Touch(table, access.table, "query", consistent=consistent, statement=place, index=access.index,
                     read=items_read(table, access, partitions), partitions=partitions)
    kind = {"UPDATE": "update", "DELETE": "delete", "EXISTS": "check", "SELECT": "get"}[access.verb]
    return Touch(table, access.table, kind, key, stored(table, key), None, consistent, transactional, place)


def items_read(table, access, partitions):
    """The items a SELECT's Queries or Scan read: in the partitions it names, those its sort key condition holds
    for; else (a Scan) every item, which the index's entries are taken from when it reads an index."""
    hash_name, range_name = key_schema(table, access.index)
    items = [item.to_json()["Attributes"] for item in table.all_items()]
    if partitions is None:
        return items
    narrowing = access.narrows(range_name)
    return [item for item in items if any(in_partition(item, key) for key in partitions)
            and all(holds(clause, item) for clause in narrowing)]


def in_partition(item, key):
    """Whether an item is in the partition `key` ({partition key name: value}) names."""
    ((name, value),) = key.items()
    return values_equal(item.get(name), value)


def key_schema(table, index_name):
    """(partition key name, sort key name or None) of the table, or of its index `index_name`."""
    if index_name is None:
        return table.hash_key_attr, table.range_key_attr
    indexes = {index.name: index for index in (*table.global_indexes, *table.indexes)}
    schema = {part["KeyType"]: part["AttributeName"] for part in indexes[index_name].schema}
    return schema["HASH"], schema.get("RANGE")


def index_named(params):
    """The index a Query or Scan reads, or None for the table (as moto reads it: an IndexName not a name is none)."""
    index = params.get("IndexName")
    return index if isinstance(index, str) and index else None


def query_key(table, index, params):
    """{partition key name: value} of the table's or index's partition a Query names with = (KeyConditions or
    KeyConditionExpression), or None when it cannot be read (its partition is then that of the items it reads)."""
    hash_name = key_schema(table, index)[0]
    condition = (params.get("KeyConditions") or {}).get(hash_name)
    if isinstance(condition, dict) and condition.get("AttributeValueList"):
        return {hash_name: condition["AttributeValueList"][0]}
    names, values = params.get("ExpressionAttributeNames") or {}, params.get("ExpressionAttributeValues") or {}
    pairs = re.findall(r"([#:]?[\w.]+)\s*=\s*([#:]?[\w.]+)", params.get("KeyConditionExpression") or "")
    for left, right in pairs:
        for name, value in ((left, right), (right, left)):
            if names.get(name, name) == hash_name and value in values:
                return {hash_name: values[value]}
    return None


def unshaped(params):
    """A Query or Scan without what shapes its answer (filter, projection, Select) and the #names and :values only
    those used, so that it answers every item it reads."""
    kept = {name: value for name, value in params.items() if name not in QUERY_SHAPING}
    used = set(re.findall(r"[#:][A-Za-z0-9_]+", kept.get("KeyConditionExpression", "")))
    for member in ("ExpressionAttributeNames", "ExpressionAttributeValues"):
        placeholders = {name: value for name, value in kept.pop(member, {}).items() if name in used}
        if placeholders:
            kept[member] = placeholders
    return kept


def touch(kind, name, body, consistent=False, transactional=False):
    """The Touch of one item named by a request's Key (or, for a put, its Item)."""
    table = find_table(name)
    if table is None:
        raise LookupError(name)
    key = item_key(table, body["Item"]) if kind == "put" else body["Key"]
    return Touch(table, name, kind, key, stored(table, key), body.get("Item"), consistent, transactional,
                 update=body if kind == "update" else None)


class Meter:
    """The counters of one Engine, per table, and the token buckets of partition_limits."""

    def __init__(self):
        self.tables = {}
        self.limits = None
        self.buckets = {}

    def counters(self, table):
        """The counters of `table`, made at zero on first use."""
        if table not in self.tables:
            self.tables[table] = dict.fromkeys(COUNTERS, 0)
        return self.tables[table]

    def state(self):
        """GET /lab/metrics: every table's counters."""
        return {"tables": {name: dict(counters) for name, counters in sorted(self.tables.items())}}

    def replicated(self, table, units):
        """A write replicated to another Region's replica of `table` used `units` there (globaltables.arrive)."""
        self.counters(table)["ReplicatedWriteUnits"] += units

    def reset(self):
        """DELETE /lab/metrics: every counter back to zero."""
        self.tables = {}

    def limit(self, limits):
        """Set partition_limits (None is off); the buckets start full."""
        self.limits, self.buckets = limits, {}

    def bill(self, target, params, rerun):
        """The Bill of a request about to be applied, or None for an operation that uses no capacity."""
        try:
            found = touches(target, params)
        except (LookupError, TypeError, AttributeError, ValueError, ArithmeticError):
            return None  # a malformed request, or a missing table: moto refuses it, and a refusal costs nothing
        return None if found is None else Bill(target, params, found, rerun)

    def settle(self, bill, status, payload):
        """Count what the request consumed; answer its ConsumedCapacity when asked. Returns the payload to send."""
        if status == 200:
            errors = statement_errors(bill.target, payload)
            for each in bill.touches:
                self.touched(bill, each, errors.get(each.statement), payload)
        elif bill.target in SINGLE_WRITES and (CONDITION_FAILED in payload or DUPLICATE in payload):
            self.refused(bill, bill.touches[0])
            self.counters(bill.touches[0].name)["ConditionalCheckFailedRequests"] += 1
        elif CANCELLED in payload and bill.target in ("TransactWriteItems", "ExecuteTransaction") and (
                b"ConditionalCheckFailed" in payload or DUPLICATE_ITEM.encode() in payload):
            for each in bill.touches:
                self.refused(bill, each)
        else:
            return payload
        self.count(bill)
        if status == 200 and bill.params.get("ReturnConsumedCapacity") in ("TOTAL", "INDEXES"):
            return answered(bill, payload)
        return payload

    def touched(self, bill, each, error, payload):
        """Bill one touch of a request DynamoDB answered: consumed, or refused when its statement's `error` is a
        refused write (BatchExecuteStatement answers each statement's error in its place)."""
        if error is None:
            return self.consumed(bill, each, payload)
        if error in REFUSED_STATEMENTS:
            self.refused(bill, each)
            self.counters(each.name)["ConditionalCheckFailedRequests"] += 1

    def consumed(self, bill, each, payload):
        """Add one successful touch's units to the bill."""
        usage, rate = bill.used(each), TRANSACTIONAL if each.transactional else 1
        if each.kind == "query":
            return self.queried(bill, each, usage, payload)
        after = stored(each.table, each.key) if each.kind in ("put", "update") else None
        if each.kind in ("get", "check"):
            units = rate * read_units(item_size(each.before), each.consistent or each.transactional)
            usage.read += units
            return bill.partitions.append((each.name, (None, partition(each.table, each.key)), "read", units))
        units = rate * write_units(max(item_size(each.before), item_size(after)))
        usage.write += units
        bill.partitions.append((each.name, (None, partition(each.table, each.key)), "write", units))
        for index, entry, index_units in index_writes(each.table, each.before, after):
            usage.index(index.name, write=index_units)
            if index.name not in usage.local:
                bill.partitions.append((each.name, entry_spot(each.table, index.name, entry), "write", index_units))

    def queried(self, bill, each, usage, payload):
        """Add a Query's or Scan's units (read_shares), on the table or on the index it reads.

        The items read are those answered, unless a filter, projection or Select shaped the answer: then the
        request is asked again without them. A PartiQL SELECT's touch carries the items it reads.
        """
        items = each.read if each.read is not None else answered_items(bill, payload)
        units, shares = read_shares(each, items)
        if each.index:
            usage.index(each.index, read=units)
        else:
            usage.read += units
        bill.partitions.extend((each.name, spot, "read", share) for spot, share in shares)

    def refused(self, bill, each):
        """Add a refused write's units (or, in a cancelled transaction, a ConditionCheck's read) to the bill."""
        usage, rate = bill.used(each), TRANSACTIONAL if each.transactional else 1
        if each.kind == "check":
            usage.read += rate * read_units(item_size(each.before), True)
            return
        units = rate * write_units(max(item_size(each.before), item_size(each.new)))
        usage.write += units
        usage.refused += units
        bill.partitions.append((each.name, (None, partition(each.table, each.key)), "write", units))

    def count(self, bill):
        """Add a settled bill to the tables' counters and take its units from the partitions' buckets."""
        for table, usage in bill.usage.items():
            counters = self.counters(table)
            counters["ConsumedReadCapacityUnits"] += usage.read
            counters["ConsumedWriteCapacityUnits"] += usage.write
            counters["WriteUnitsOnRefusedWrites"] += usage.refused
            counters["IndexReadCapacityUnits"] += usage.index_read
            counters["IndexWriteCapacityUnits"] += usage.index_write
            counters["Requests"] += 1
        if self.limits:
            now = time.monotonic()
            for table, spot, kind, units in bill.partitions:
                if kind in self.limits:
                    self.bucket(table, spot, kind, now)[0] -= units

    def bucket(self, table, spot, kind, now):
        """[units left, when] of one partition key value's bucket (spot: (index name or None, the value as
        capacity.partition writes it)), refilled up to now."""
        limit = self.limits[kind]
        bucket = self.buckets.setdefault((table, spot, kind), [limit, now])
        bucket[0] = min(limit, bucket[0] + (now - bucket[1]) * limit)
        bucket[1] = now
        return bucket

    def conflict(self, target, params):
        """Count a request refused or cancelled for a TransactionConflict."""
        name = params.get("TableName") or next(
            (body.get("TableName") for action in params.get("TransactItems", []) if isinstance(action, dict)
             for body in action.values() if isinstance(body, dict)), None)
        if isinstance(name, str):
            self.counters(name)["TransactionConflict"] += 1

    def throttle(self, target, params, reader):
        """The Throttle of a request about to be applied: what partition_limits refuses of it (module docstring).
        `reader` answers a read sent as the request's operation (a Scan asked which items it reads)."""
        if not self.limits:
            return Throttle(params)
        now = time.monotonic()
        try:
            found, parts = touches(target, params), batch_parts(target, params)
            if found and parts is not None:
                return self.batch_throttle(target, params, found, parts, now)
            hot = [(each, spot, kind) for each in found or [] for spot, kind in touch_spots(each, params, reader)
                   if kind in self.limits and self.bucket(each.name, spot, kind, now)[0] <= 0]
        except (LookupError, TypeError, AttributeError, ValueError, ArithmeticError):
            return Throttle(params)  # a malformed request: moto refuses it
        if not hot:
            return Throttle(params)
        self.counters(hot[0][0].name)["ThrottledRequests"] += 1
        self.events(hot)
        each, spot, kind = hot[0]
        return Throttle(params, answer=throttle_answer(each.table, kind, spot[0]))

    def batch_throttle(self, target, params, found, parts, now):
        """A batch's Throttle: each item one of whose partitions (touch_takes) has no units left once the items before
        it in the batch took theirs is set aside; every item set aside refuses the whole batch."""
        taken, kept, aside, hot = {}, [], [], []
        for each, part in zip(found, parts):
            takes = [((each.name, spot, kind), units) for spot, kind, units in touch_takes(each)]
            out = next((place for place, _ in takes if place[2] in self.limits
                        and self.bucket(*place, now)[0] - taken.get(place, 0) <= 0), None)
            if out is not None:
                aside.append(part)
                hot.append((each, out[1], out[2]))
            else:
                kept.append(part)
                for place, units in takes:
                    taken[place] = taken.get(place, 0) + units
        if not aside:
            return Throttle(params)
        self.events(hot)
        if len(aside) == len(params.get("Statements", parts)):
            for name in {each.name for each in found}:
                self.counters(name)["ThrottledRequests"] += 1
            return Throttle(params, answer=batch_refusal(target, hot))
        return Throttle(batch_request(target, params, kept, aside), target=target, aside=aside)

    def events(self, hot):
        """Count ReadThrottleEvents and WriteThrottleEvents, one for each throttled item."""
        for each, _, kind in hot:
            self.counters(each.name)[f"{kind.capitalize()}ThrottleEvents"] += 1


@dataclass
class Throttle:
    """What partition_limits does to one request: refuse it whole (`answer`), or apply `params`, the request less
    the items set `aside`, which `merged` adds to its answer as unprocessed."""

    params: dict
    answer: tuple = None
    target: str = None
    aside: list = None

    @property
    def body(self):
        """The body of the request to apply, when items were set aside (else None: the request as sent)."""
        return json.dumps(self.params).encode() if self.aside else None

    def merged(self, status, payload):
        """The answer to the request as sent: the applied request's, with the items set aside unprocessed."""
        if status != 200:
            return payload
        answer = json.loads(payload)
        if self.target == "BatchExecuteStatement":
            responses = answer.get("Responses", [])
            for place, statement in self.aside:
                responses.insert(place, statement_throttled(statement))
            answer["Responses"] = responses
            return json.dumps(answer).encode()
        member = "UnprocessedItems" if self.target == "BatchWriteItem" else "UnprocessedKeys"
        unprocessed = answer.setdefault(member, {})
        for name, part, spec in self.aside:
            if self.target == "BatchWriteItem":
                unprocessed.setdefault(name, []).append(part)
            else:
                unprocessed.setdefault(name, {**spec, "Keys": []})["Keys"].append(part)
        return json.dumps(answer).encode()


def batch_parts(target, params):
    """A batch's parts, in the order of its touches: BatchWriteItem's (table, write request, None), BatchGetItem's
    (table, key, the table's KeysAndAttributes), BatchExecuteStatement's (place, statement); None for any other
    operation."""
    if target == "BatchWriteItem":
        return [(name, request, None) for name, requests in params["RequestItems"].items() for request in requests]
    if target == "BatchGetItem":
        return [(name, key, {member: value for member, value in spec.items() if member != "Keys"})
                for name, spec in params["RequestItems"].items() for key in spec["Keys"]]
    if target == "BatchExecuteStatement":
        return [(place, statement) for place, statement in enumerate(params["Statements"])
                if statement_touches(statement, place, False)]
    return None


def batch_request(target, params, kept, aside):
    """The batch less the parts set `aside` (`kept`: its other parts)."""
    if target == "BatchExecuteStatement":
        places = {place for place, _ in aside}
        return {**params, "Statements": [statement for place, statement in enumerate(params["Statements"])
                                         if place not in places]}
    requests = {}
    for name, part, spec in kept:
        if target == "BatchWriteItem":
            requests.setdefault(name, []).append(part)
        else:
            requests.setdefault(name, {**spec, "Keys": []})["Keys"].append(part)
    return {**params, "RequestItems": requests}


def batch_refusal(target, hot):
    """The answer to a batch none of whose items could be processed: BatchExecuteStatement answers each statement's
    error in its place; BatchWriteItem and BatchGetItem a ThrottlingException (module docstring)."""
    if target == "BatchExecuteStatement":
        return 200, {"Responses": [statement_throttled({}, each.name) for each, _, _ in hot]}
    reasons = {throttle_reason(each.table, kind, spot[0]): None for each, spot, kind in hot}
    return throttling_error(ON_DEMAND_THROTTLED, list(reasons))


def statement_throttled(statement, name=None):
    """A BatchExecuteStatement statement's answer when its partition has no units left."""
    if name is None:
        access = statement_access(statement["Statement"])
        name = access.table
    return {"TableName": name, "Error": {"Code": THROTTLED_STATEMENT, "Message": ON_DEMAND_THROTTLED[1]}}


def touch_spots(each, params, reader):
    """[(spot, "read"|"write")] of the partitions one touch uses: an item's (a write's index partitions too,
    index_spots), a Query's, or a Scan's (those of the items it reads: a PartiQL SELECT's own, else those its request
    answers when asked without filter)."""
    if each.kind in ("get", "check"):
        return [((None, partition(each.table, each.key)), "read")]
    if each.kind != "query":
        return [((None, partition(each.table, each.key)), "write"), *((spot, "write") for spot, _ in index_spots(each))]
    if each.partitions is not None:
        return [((each.index, partition_value(key)), "read") for key in each.partitions]
    items = each.read if each.read is not None else json.loads(reader(unshaped(params))).get("Items", [])
    return [(spot, "read") for spot in item_spots(each, items)]


def item_spots(each, items):
    """{spot: bytes read there} of the items a Query or Scan touch reads (read_sizes), by the table's or index's
    partition key."""
    hash_name = key_schema(each.table, each.index)[0]
    spots = {}
    for item, size in zip(items, read_sizes(each.table, each.index, items)):
        if hash_name in item:
            spot = (each.index, partition_value({hash_name: item[hash_name]}))
            spots[spot] = spots.get(spot, 0) + size
    return spots


def read_shares(each, items):
    """(units, [(spot, units)]) of the items a Query or Scan touch read (whole items; read_sizes sizes an index's
    entries): each partition a Query names billed as a Query of its own, the bytes it read there summed, then
    rounded; a Scan's bytes summed and rounded once, its units shared among the partitions it read by the bytes it
    read in each."""
    if each.partitions is not None:
        sizes = read_sizes(each.table, each.index, items)
        shares = [((each.index, partition_value(key)), read_units(
            sum(size for item, size in zip(items, sizes) if in_partition(item, key)), each.consistent))
            for key in each.partitions]
        return sum(units for _, units in shares), shares
    spots = item_spots(each, items)
    total = sum(spots.values())
    units = read_units(total, each.consistent)
    return units, [(spot, units * size / total) for spot, size in spots.items()] if total else []


def partition_value(key):
    """The one value of a {partition key name: value} map, as capacity.partition writes it."""
    (value,) = key.values()
    return repr(sorted(value.items()))


def touch_units(each):
    """The units one batch item takes: a get its item's read, a put or delete the larger of its before and new."""
    if each.kind == "get":
        return read_units(item_size(each.before), each.consistent)
    return write_units(max(item_size(each.before), item_size(each.new)))


def touch_takes(each):
    """[(spot, "read"|"write", units)] one batch item takes: its item's partition's, and a write's in each global
    secondary index partition it writes to (index_spots)."""
    if each.kind == "get":
        return [((None, partition(each.table, each.key)), "read", touch_units(each))]
    return [((None, partition(each.table, each.key)), "write", touch_units(each)),
            *((spot, "write", units) for spot, units in index_spots(each))]


def index_spots(each):
    """[(spot, write units)] of the global secondary index partitions a write touch writes its item's entries to,
    from the item before and as the write leaves it (written_item). A GSI has partitions and limits of its own, and
    one that cannot take the write throttles the write to the table (the Developer Guide's GSI write throttling and
    back pressure: "If a GSI doesn't have sufficient capacity to handle these updates, DynamoDB throttles writes to
    the base table to maintain data consistency.")."""
    local = local_index_names(each.table)
    return [(entry_spot(each.table, index.name, entry), units)
            for index, entry, units in index_writes(each.table, each.before, written_item(each))
            if index.name not in local]


def written_item(each):
    """The item as a write touch leaves it: a put's new item, an update's worked out from its request (updated_item;
    a PartiQL UPDATE, whose SET clause is not read here, as if it rewrote the item's entries), none for a delete."""
    if each.kind == "put":
        return each.new
    if each.kind == "update" and each.update is not None:
        return updated_item(each.table, each.key, each.before, each.update)
    return None


def updated_item(table, key, before, body):
    """The item an UpdateItem request (or a transaction's Update) would leave, worked out before it is applied with
    moto's own parser, validator and executor on a copy; the item as it was when moto cannot apply it (moto then
    refuses the request)."""
    hash_value = DynamoType(key[table.hash_key_attr])
    range_value = DynamoType(key[table.range_key_attr]) if table.range_key_attr else None
    item = Item(hash_value, range_value, copy.deepcopy(before or key))
    names = body.get("ExpressionAttributeNames")
    try:
        if body.get("UpdateExpression"):
            tree = UpdateExpressionValidator(
                UpdateExpressionParser.make(body["UpdateExpression"]), expression_attribute_names=names,
                expression_attribute_values=body.get("ExpressionAttributeValues"), item=item, table=table).validate()
            tree.normalize()
            UpdateExpressionExecutor(tree, item, names).execute()
        else:
            item.update_with_attribute_updates(body.get("AttributeUpdates") or {})
    except (DynamodbException, LookupError, TypeError, AttributeError, ValueError, ArithmeticError):
        return before
    return item.to_json()["Attributes"]


def entry_spot(table, index_name, entry):
    """The spot of an index entry: the index and its partition key value there."""
    hash_name = key_schema(table, index_name)[0]
    return index_name, partition_value({hash_name: entry[hash_name]})


def answered_items(bill, payload):
    """The items a Query or Scan read: those answered, or, when a filter, projection or Select shaped the answer,
    those answered when it is asked again without them."""
    params = bill.params
    if any(name in params for name in QUERY_SHAPING):
        payload = bill.rerun(unshaped(params))
    return json.loads(payload).get("Items", [])


def statement_errors(target, payload):
    """{statement's place: its error code} of a BatchExecuteStatement's answer (empty for any other operation)."""
    if target != "BatchExecuteStatement":
        return {}
    responses = json.loads(payload).get("Responses", [])
    return {place: response["Error"].get("Code") for place, response in enumerate(responses) if "Error" in response}


def throttle_answer(table, kind, index=None):
    """DynamoDB's answer to a request throttled on a hot partition key value of `table` (or of its index)."""
    error = ON_DEMAND_THROTTLED if table.billing_mode == "PAY_PER_REQUEST" else PROVISIONED_THROTTLED
    return throttling_error(error, [throttle_reason(table, kind, index)])


def throttling_error(error, reasons):
    """(400, body) of a throttling error (code, message) with its [(reason, resource ARN)]: botocore's model names
    the member throttlingReasons in a ThrottlingException, ThrottlingReasons in a
    ProvisionedThroughputExceededException."""
    code, message = error
    member = "throttlingReasons" if code == "ThrottlingException" else "ThrottlingReasons"
    return 400, {"__type": f"com.amazonaws.dynamodb.v20120810#{code}", "message": message,
                 member: [{"reason": reason, "resource": resource} for reason, resource in reasons]}


def throttle_reason(table, kind, index=None):
    """(reason, resource ARN) of a partition of `table`, or of its index, out of `kind` units."""
    if index is None:
        return f"Table{kind.capitalize()}KeyRangeThroughputExceeded", table.table_arn
    return f"Index{kind.capitalize()}KeyRangeThroughputExceeded", f"{table.table_arn}/index/{index}"


def answered(bill, payload):
    """The answer with DynamoDB's ConsumedCapacity for the level asked."""
    level, transactional = bill.params["ReturnConsumedCapacity"], bill.target in TRANSACTIONS
    answer = json.loads(payload)
    entries = [capacity_answer(name, usage, level, transactional) for name, usage in bill.usage.items()]
    if bill.target == "ExecuteTransaction":
        entries = [unused_kind_left_out(entry) for entry in entries]
    if bill.target in SINGLE:
        answer["ConsumedCapacity"] = entries[0]
    else:
        answer["ConsumedCapacity"] = entries
    return json.dumps(answer).encode()


def unused_kind_left_out(entry):
    """An ExecuteTransaction's table entry without its ReadCapacityUnits or WriteCapacityUnits when none were used:
    nubo-db/dynamodb-conformance records real DynamoDB answering a write transaction's entry with WriteCapacityUnits
    and no ReadCapacityUnits."""
    return {name: value for name, value in entry.items()
            if not (name in ("ReadCapacityUnits", "WriteCapacityUnits") and value == 0)}
