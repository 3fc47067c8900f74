"""A fresh table in one request: POST /lab/tables {"empty": CreateTable's arguments, "region": the client's}.

helpers.tables.fresh_table drops a table and creates it again before each explored order of a checker, with a
DeleteTable and a CreateTable: two requests, each a round trip through the SDK and moto's description of the table
(about 4 ms of a checker's behaviour here). When the table is one a CreateTable with exactly these arguments made and
nothing since has changed more than its items, dropping and creating it again would leave the same table with no
items, so the server empties it in place instead and answers {"emptied": true}. Otherwise it answers
{"emptied": false} and changes nothing: the caller sends DeleteTable and CreateTable itself.

What the server checks, under the engine lock:
- a successful CreateTable with the same arguments (compared as JSON) made the table, and every request the engine
  applied since was one that changes no table's definition (ITEM_OPERATIONS: item reads and writes, PartiQL, Describe*
  and List*); any other request (DeleteTable, UpdateTable, UpdateTimeToLive, TagResource, ...) forgets every table
  made so far. (A table object may still be replaced by an equal copy: moto restores a copy of every table when a
  transaction is cancelled.);
- the table is the only one of its name, in the client's region (the lab's clients share one account);
- no knob is on (with a knob on, DeleteTable and CreateTable could be delayed, or their answers lost);
- the table keeps no stream (a new table starts a new one) and is not protected from deletion (DeleteTable would be
  refused).
Emptied, the table holds no item and is dated now, as a new one would be, and the consistency model forgets the copies
of its items, as it does when a table is dropped or created (consistency.Model.forget_table).
"""
import json
import time
from collections import defaultdict

from moto.core.utils import utcnow
from moto.dynamodb.models import dynamodb_backends

TABLES_PATH = "/lab/tables"
ITEM_OPERATIONS = frozenset({
    "GetItem", "PutItem", "UpdateItem", "DeleteItem", "BatchGetItem", "BatchWriteItem", "TransactGetItems",
    "TransactWriteItems", "Query", "Scan", "ExecuteStatement", "BatchExecuteStatement", "ExecuteTransaction",
    "DescribeTable", "ListTables", "DescribeTimeToLive", "ListTagsOfResource", "DescribeContinuousBackups",
    "DescribeEndpoints", "DescribeLimits",
})


class Made:
    """The tables CreateTable made that only item operations have touched since: name -> its arguments, as JSON."""

    def __init__(self):
        self.tables = {}

    def applying(self, target):
        """Before the engine applies a request: one that may change a table's definition forgets every table."""
        if target not in ITEM_OPERATIONS:
            self.tables.clear()

    def applied(self, target, params, status):
        """After the engine applied a request: a table a CreateTable made is remembered with its arguments."""
        if target == "CreateTable" and status == 200 and isinstance(params.get("TableName"), str):
            self.tables[params["TableName"]] = canonical(params)

    def empty(self, params, region, knobs, model):
        """Empty the table CreateTable's arguments `params` name in place if dropping and creating it again in `region`
        would leave the same table (module docstring); True if it did. The caller holds the engine lock."""
        name = params.get("TableName")
        if not isinstance(name, str) or self.tables.get(name) != canonical(params) or knobs.on:
            return False
        holders = [(backend.region_name, backend.tables[name]) for regions in list(dynamodb_backends.values())
                   for backend in list(regions.values()) if name in backend.tables]
        if len(holders) != 1 or holders[0][0] != region:
            return False
        table = holders[0][1]
        if table.stream_shard is not None or table.deletion_protection_enabled:
            return False
        if model.active:
            model.sweep(time.monotonic())
            model.forget_table(name)
        table.items = defaultdict(dict)
        table.created_at = utcnow()
        return True


def canonical(params):
    """CreateTable's arguments as JSON with sorted keys, to compare two sets of them."""
    return json.dumps(params, sort_keys=True)
