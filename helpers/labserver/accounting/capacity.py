"""Capacity units as DynamoDB bills them, per request, per table and per index.

The rules, from the Amazon DynamoDB Developer Guide and API Reference:

- Item size ("DynamoDB item sizes and formats", CapacityUnitCalculations.html): the sum of the attribute
  names' UTF-8 bytes and the values' sizes. A string is its UTF-8 bytes; a number "(1 byte per two
  significant digits) + (1 byte)", leading and trailing zeroes trimmed; a binary its raw bytes; a null or
  Boolean 1 byte; a List or Map "3 bytes of overhead, regardless of its contents" plus its elements, and
  "each List or Map element also requires 1 byte of overhead". The guide gives sets no overhead: a set is
  the sum of its members' sizes.
- Reads ("DynamoDB read and write operations", read-write-operations.html): "Item sizes for reads are rounded up to
  the next 4 KB multiple"; a strongly consistent read of up to 4 KB is one read unit, an eventually consistent one
  half, a transactional one two. An item that does not exist is read as 0 bytes, rounded up to one 4 KB block like
  any other read. Query and Scan sum the sizes of the items they read (before any filter or projection, from the
  index's entries when they read an index) and round the sum up once. BatchGetItem rounds each item on its own, as
  separate GetItems.
- Writes (same page): 1 KB units, at least one a write. PutItem and UpdateItem are billed by "the larger of"
  the item before and after; DeleteItem by the item deleted; BatchWriteItem per item, each rounded.
  A write refused by its condition is billed too, sized by the larger of the existing and the new item
  (for UpdateItem and DeleteItem, which send no new item, the existing one), and counted in CloudWatch's
  ConditionalCheckFailedRequests.
- Transactions ("Capacity management for transactions", transaction-apis.html): two underlying reads or
  writes of every item, so twice the units of the same standard read or write. A ConditionCheck is billed
  as a transactional read of its item. A transaction cancelled by a condition is billed as refused writes
  are, at the transactional rate (the guide gives no figure of its own for it).
- Indexes ("Using Global Secondary Indexes", GSI.html#GSI.Writes): a write puts, updates or deletes the
  item's entry in each index whose key attributes it has before or after; "If an update to the table
  changes the value of an indexed key attribute (from A to B), two writes are required"; an item in the
  index neither before nor after costs the index nothing, nor does a write that leaves its entry as it was.
  An entry is the item's projected attributes (table key, index key, projection), in 1 KB units.
- The answer (API Reference, ConsumedCapacity): TableName and CapacityUnits; with INDEXES also Table and
  GlobalSecondaryIndexes / LocalSecondaryIndexes, each a Capacity. TransactWriteItems and TransactGetItems
  also give ReadCapacityUnits and WriteCapacityUnits. Batch and transaction operations answer a list, one
  entry per table.
"""
import base64
import math
from dataclasses import dataclass, field

from moto.dynamodb.models.dynamo_type import DynamoType

WRITE_UNIT = 1024
READ_UNIT = 4096
TRANSACTIONAL = 2
CONDITION_FAILED = b"ConditionalCheckFailedException"
CANCELLED = b"TransactionCanceledException"
QUERY_SHAPING = ("FilterExpression", "QueryFilter", "ScanFilter", "ConditionalOperator", "ProjectionExpression",
                 "AttributesToGet", "Select")


def number_size(text):
    """A number's size: one byte per two significant digits, plus one."""
    digits = text.lstrip("+-").lower().split("e")[0].replace(".", "").strip("0")
    return (max(len(digits), 1) + 1) // 2 + 1


def binary_size(value):
    """A binary value's raw bytes (base64 text as it travels, bytes as moto may keep it)."""
    return len(value) if isinstance(value, (bytes, bytearray)) else len(base64.b64decode(value))


def value_size(value):
    """The size of one attribute value, in DynamoDB JSON ({"S": ...}) or as moto's DynamoType."""
    if isinstance(value, DynamoType):
        kind, inner = value.type, value.value
    else:
        (kind, inner), = value.items()
    if kind == "S":
        return len(inner.encode())
    if kind == "N":
        return number_size(inner)
    if kind == "B":
        return binary_size(inner)
    if kind in ("BOOL", "NULL"):
        return 1
    if kind == "SS":
        return sum(len(member.encode()) for member in inner)
    if kind == "NS":
        return sum(number_size(member) for member in inner)
    if kind == "BS":
        return sum(binary_size(member) for member in inner)
    if kind == "L":
        return 3 + sum(1 + value_size(member) for member in inner)
    return 3 + sum(1 + len(name.encode()) + value_size(member) for name, member in inner.items())


def item_size(attributes):
    """An item's size in bytes (0 for no item): its attribute names and values."""
    if not attributes:
        return 0
    return sum(len(name.encode()) + value_size(value) for name, value in attributes.items())


def write_units(size):
    """Write units of one item write: 1 KB units, at least one."""
    return max(1, math.ceil(size / WRITE_UNIT))


def read_units(size, consistent):
    """Read units of reading `size` bytes: 4 KB blocks (at least one), half when eventually consistent."""
    blocks = max(1, math.ceil(size / READ_UNIT))
    return float(blocks) if consistent else blocks / 2


@dataclass
class Usage:
    """What one request consumed on one table: read and write units on the table and on each index."""

    read: float = 0.0
    write: float = 0.0
    refused: float = 0.0
    indexes: dict = field(default_factory=dict)  # index name -> [read units, write units]
    local: frozenset = frozenset()

    def index(self, name, read=0.0, write=0.0):
        """Add units consumed on the index `name`."""
        units = self.indexes.setdefault(name, [0.0, 0.0])
        units[0] += read
        units[1] += write

    @property
    def index_read(self):
        """Read units on all the indexes."""
        return sum(read for read, _ in self.indexes.values())

    @property
    def index_write(self):
        """Write units on all the indexes."""
        return sum(write for _, write in self.indexes.values())

    @property
    def total(self):
        """All units, table and indexes."""
        return self.read + self.write + self.index_read + self.index_write


def capacity_answer(table, usage, level, transactional):
    """The ConsumedCapacity of one table for ReturnConsumedCapacity `level` (TOTAL or INDEXES)."""
    answer = {"TableName": table, "CapacityUnits": usage.total}
    if transactional:
        answer.update(ReadCapacityUnits=usage.read + usage.index_read,
                      WriteCapacityUnits=usage.write + usage.index_write)
    if level == "INDEXES":
        answer["Table"] = capacity(usage.read, usage.write, transactional)
        for kind, local in (("GlobalSecondaryIndexes", False), ("LocalSecondaryIndexes", True)):
            entries = {name: capacity(read, write, transactional) for name, (read, write) in usage.indexes.items()
                       if (name in usage.local) == local}
            if entries:
                answer[kind] = entries
    return answer


def capacity(read, write, transactional):
    """One Capacity object."""
    entry = {"CapacityUnits": read + write}
    if transactional:
        entry.update(ReadCapacityUnits=read, WriteCapacityUnits=write)
    return entry


def index_entry(index, attributes, table_keys):
    """(key values, projected attributes) of an item in one index, or None when the item lacks the index key."""
    if not attributes or any(name not in attributes for name in index.schema_key_attrs):
        return None
    kind = (index.projection or {}).get("ProjectionType", "ALL")
    if kind == "ALL":
        projected = attributes
    else:
        names = set(table_keys) | set(index.schema_key_attrs)
        if kind == "INCLUDE":
            names |= set(index.projection.get("NonKeyAttributes", []))
        projected = {name: value for name, value in attributes.items() if name in names}
    return [attributes[name] for name in index.schema_key_attrs], projected


def index_writes(table, before, after):
    """[(index, entry, write units)] of one item going from `before` to `after` (attribute dicts or None): the entry
    (its projected attributes) written or deleted in each index it changes, both entries when its index key changes
    (one deleted, one written)."""
    writes = []
    keys = table_key_names(table)
    for index in (*table.global_indexes, *table.indexes):
        old, new = index_entry(index, before, keys), index_entry(index, after, keys)
        if old == new or (old is None and new is None):
            continue
        moved = old is not None and new is not None and old[0] != new[0]
        for entry in (old, new) if moved else (new or old,):
            writes.append((index, entry[1], float(write_units(item_size(entry[1])))))
    return writes


def read_sizes(table, name, items):
    """The bytes a Query or Scan reads of each of `items` (whole items): the item's, or, when it reads the index
    `name`, its entry's there (0 for an item the index holds no entry of)."""
    if name is None:
        return [item_size(item) for item in items]
    index = next(index for index in (*table.global_indexes, *table.indexes) if index.name == name)
    keys = table_key_names(table)
    entries = (index_entry(index, item, keys) for item in items)
    return [0 if entry is None else item_size(entry[1]) for entry in entries]


def table_key_names(table):
    """The table's key attribute names."""
    return [name for name in (table.hash_key_attr, table.range_key_attr) if name]


def local_index_names(table):
    """The names of the table's local secondary indexes."""
    return frozenset(index.name for index in table.indexes)


def stored(table, key):
    """The stored item at `key` (DynamoDB JSON key) as a dict of DynamoDB JSON values, or None."""
    hash_value = key.get(table.hash_key_attr)
    range_value = key.get(table.range_key_attr) if table.range_key_attr else None
    if hash_value is None or (table.range_key_attr and range_value is None):
        return None
    item = table.get_item(DynamoType(hash_value), DynamoType(range_value) if range_value is not None else None)
    return None if item is None else item.to_json()["Attributes"]


def item_key(table, item):
    """The key of an item (DynamoDB JSON)."""
    return {name: item[name] for name in table_key_names(table) if name in item}


def partition(table, key):
    """The partition key value of `key`, as text that identifies it."""
    value = key.get(table.hash_key_attr)
    return None if value is None else repr(sorted(value.items()))
