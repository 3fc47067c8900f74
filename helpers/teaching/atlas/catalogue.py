"""The atlas's catalogue: its rows (ways of reading and writing), its columns (anomalies, with Adya's and
Berenson's names), the reasons a cell does not apply, and the Scenario and Cell each cell is."""
from dataclasses import dataclass, field

import pandas as pd

from ...lab.trace import tracing

TABLE = "p33-isolation-atlas"
STREAM_TABLE = "p33-atlas-stream"  # the stream row's: the same pair of items, in a table with a stream
STREAM_ROW = "stream consumer (GetRecords)"
MREC_TABLE, MRSC_TABLE = "p33-atlas-mrec", "p33-atlas-mrsc"  # the Region rows': global tables of x and y
MREC_LOST = "version-checked write in two Regions (MREC)"
MRSC_LOST = "version-checked write in two Regions (MRSC)"
MREC_READ = "ConsistentRead in another Region (MREC)"
MRSC_READ = "ConsistentRead in another Region (MRSC)"
REGION_ROWS = {  # row: (its global table, the writer's Region, the other client's Region)
    MREC_LOST: (MREC_TABLE, "us-east-1", "eu-west-1"), MRSC_LOST: (MRSC_TABLE, "us-east-1", "us-west-2"),
    MREC_READ: (MREC_TABLE, "us-east-1", "eu-west-1"), MRSC_READ: (MRSC_TABLE, "us-east-1", "us-west-2"),
}
X = {"PK": "PAIR", "SK": "x"}
Y = {"PK": "PAIR", "SK": "y"}
EMAIL = "EMAIL#ana@example.com"

ROWS = {
    "GetItem (default)": "table.get_item(Key=k)",
    "GetItem, ConsistentRead": "table.get_item(Key=k, ConsistentRead=True)",
    "read, then PutItem": "n = table.get_item(Key=k)['Item']['n']\ntable.put_item(Item={**k, 'n': n + 1})",
    "read, then version-checked write": ("it = table.get_item(Key=k)['Item']\ntable.put_item(Item={**it, 'n': ..., "
                                         "'version': it['version'] + 1},\n  ConditionExpression='version = :v')"),
    "ADD / SET n = n + :one": "table.update_item(Key=k, UpdateExpression='ADD n :one')",
    "check in the condition": ("table.update_item(Key=k, UpdateExpression='SET n = n - :a',\n"
                               "  ConditionExpression='n >= :a')"),
    "TransactWriteItems + ConditionCheck": ("client.transact_write_items(TransactItems=[\n  {'Update': ...},\n"
                                            "  {'ConditionCheck': ...}])"),
    "two GetItems": "a = table.get_item(Key=x)\nb = table.get_item(Key=y)",
    "BatchGetItem": "client.batch_get_item(RequestItems={TABLE: {'Keys': [x, y]}})",
    "TransactGetItems": "client.transact_get_items(TransactItems=[{'Get': ...}, {'Get': ...}])",
    "Query the GSI, then write": ("found = table.query(IndexName='GSI1', KeyConditionExpression=...)\n"
                                  "if not found['Items']: table.put_item(...)"),
    "sentinel item in a transaction": ("client.transact_write_items(TransactItems=[{'Put': user},\n"
                                       "  {'Put': sentinel, 'ConditionExpression': 'attribute_not_exists(PK)'}])"),
    "BatchWriteItem": "client.batch_write_item(RequestItems={TABLE: [{'PutRequest': ...}, ...]})",
    STREAM_ROW: ("it = streams.get_shard_iterator(StreamArn=..., ShardId=...,\n"
                 "  ShardIteratorType='TRIM_HORIZON')['ShardIterator']\nstreams.get_records(ShardIterator=it)"),
    MREC_LOST: ("# alice in us-east-1, bob in eu-west-1, each on her own Region's replica\n"
                "it = here.get_item(TableName=T, Key=k, ConsistentRead=True)['Item']\n"
                "here.put_item(TableName=T, Item={**it, 'n': ..., 'version': it['version'] + 1},\n"
                "  ConditionExpression='version = :v')"),
    MRSC_LOST: "# the same, alice in us-east-1 and bob in us-west-2, on an MRSC global table",
    MREC_READ: ("# alice writes in us-east-1; bob reads in eu-west-1\n"
                "there.get_item(TableName=T, Key=k, ConsistentRead=True)"),
    MRSC_READ: "# the same, bob reading in us-west-2, on an MRSC global table",
}

ELLE_NAMES = {  # column: the name Jepsen's Elle (helpers.anomalies) gives its anomaly: a cycle of which edges
    "G0 dirty write": "G0",
    "G1a aborted read": "G1a",
    "G1b intermediate read": "G1b",
    "P4 lost update": "lost-update",
    "G-single read skew": "G-single-item",
    "G2-item write skew": "G2-item",
    "stale read": "G-single-item-realtime",
    "no read-your-writes": "G-single-item-process",
    "non-monotonic reads": "G-single-item-process",
    "stale index read": "G-single-item-realtime",
}
ELLE_WORDS = {  # Elle's name: what its cycle is, in a learner's words
    "G0": "a cycle of write-write edges only",
    "G1a": "a read of a version only a refused or cancelled write made",
    "G1b": "a read of a version its writer overwrote in the same unit",
    "lost-update": "two units read one version of an item and both write it",
    "G-single-item": "a cycle with exactly one read-write anti-dependency",
    "G2-item": "a cycle with two read-write anti-dependencies in a row",
    "G-single-item-realtime": "a cycle with one anti-dependency, closed by real-time order",
    "G-single-item-process": "a cycle with one anti-dependency, closed by the client's own order",
}


def elle_name(column):
    """A column's everyday name with Elle's beside it: "stale read (G-single-item-realtime)"."""
    return f"{column} ({ELLE_NAMES[column]})"


def with_elle(column, words):
    """A column's words followed by Elle's name for its anomaly and what that name means."""
    name = ELLE_NAMES[column]
    return f"{words} Elle: {name} ({ELLE_WORDS[name]})."


EVERYDAY = {  # column: (the anomaly in plain words, an example in DynamoDB)
    "G0 dirty write": ("Two writers' changes to the same items interleave: x ends as one wrote it, y as the other "
                       "did.", "alice and bob each set x and y to their own name; x says alice, y says bob."),
    "G1a aborted read": ("A reader sees a write that was refused or cancelled.",
                         "a transfer cancelled by its ConditionCheck, yet a GetItem shows its new balance."),
    "G1b intermediate read": ("A reader sees a value a writer later overwrote within the same unit of work.",
                              "an order shown as PENDING by a transaction that set it PENDING and then PAID."),
    "P4 lost update": ("Two read-modify-writes of one item both succeed, and one change is gone.",
                       "two views counted, the counter says 1."),
    "G-single read skew": ("One read sees part of another client's multi-item write: some items before it, some "
                           "after.", "during a transfer of 10 from x to y, a BatchGetItem sees 90 + 100."),
    "G2-item write skew": ("Two clients each check an item the other writes, both checks pass, and together they "
                           "break the rule.", "two on-call doctors each see the other on call and both go off."),
    "stale read": ("A read that starts after a write has completed does not see it.",
                   "bob reads the balance after alice's deposit was acknowledged, and sees the old one."),
    "no read-your-writes": ("A client does not see its own completed write.",
                            "ana saves her profile, reloads it and sees the old one."),
    "non-monotonic reads": ("A client sees a newer value, then an older one.",
                            "the order is SHIPPED, then on the next refresh PENDING again."),
    "stale index read": ("A query on a global secondary index misses a completed write, and a decision is taken "
                         "on it.", "two sign-ups with one email both find it free on the index: a duplicate."),
}

ANOMALIES = {column: (with_elle(column, words), example) for column, (words, example) in EVERYDAY.items()}

EXERCISE_ROW = "Query, ConsistentRead"
EXERCISE_COLUMNS = ("G1a aborted read", "G-single read skew", "stale read", "no read-your-writes",
                    "non-monotonic reads")
READ_ONLY = "a read writes nothing, so there is no write to lose or to interleave."
ONE_ITEM = ("one item per request: DynamoDB applies each write to an item whole and alone, so no write ever lands on "
            "another's uncommitted change.")
NO_UNIT = ("each request is its own unit: DynamoDB has no transaction spanning several requests whose middle "
           "could be read, and a TransactWriteItems or BatchWriteItem may not name an item twice (refused below).")
WRITE_READS_LEADER = "the write decides nothing on a read of its own: its condition and update use the leader."
SEE_GETITEM = "its read is a default GetItem: see that row."
TABLE_NOT_INDEX = "it reads the table, not an index."
NOT_A_READ_ROW = "it reads only what its own request writes or checks, on the leader."
NO_OTHER_ITEM = ("a ConditionExpression sees only the item being written, so it cannot check the other doctor; "
                 "that is what ConditionCheck in a transaction is for (the row below).")
SINGLE_ITEM_READ = "one item: see the two GetItems row for reading several."
STREAM_NOT_INDEX = "it reads the table's stream, not an index."
PREVENTED_BY = {
    "ConditionalCheckFailedException": "refused by a condition",
    "TransactionConflictException": "TransactionConflictException",
    "TransactionCanceledException": "cancelled",
    "ReplicatedWriteConflictException": "ReplicatedWriteConflictException (sent again by the SDK)",
}
MRSC_NO_TRANSACTIONS = ("MRSC global tables refuse transactions (ValidationException), so no write of several items "
                        "can be cancelled or seen in part.")
OWN_REGION_READ = "its read is a ConsistentRead in the writer's own Region: see the ConsistentRead in another Region rows."
ONE_ITEM_RULE = "its rule is on one item, written in two Regions: see the P4 lost update column."
NO_GLOBAL_TABLES = "global tables need the lab server (DynamoDB Local has none): run this notebook on the embedded lab."


@dataclass
class Scenario:
    """A cell's clients and starting state; holds(results) is checked after each order, anomaly(row) judges it, and
    says(row) tells in words what an order in which it occurs shows."""

    clients: dict
    reset: object
    holds: object = None
    anomaly: object = None
    how: str = ""
    note: object = None
    says: object = None

    def check(self, results):
        """True unless the state after this order shows the anomaly (always True without a state check)."""
        return True if self.holds is None else bool(self.holds(results))

    def happened(self, row):
        """True when the explored order `row` shows the anomaly."""
        return self.anomaly(row) if self.anomaly is not None else not row["ok"]

    def judge(self, column):
        """A step-through panel's judge for the cell in `column`: (ok, words naming the anomaly or its absence)."""
        def judged(results, steps):
            with tracing(False):
                row = {"results": results, "steps": steps, "ok": self.check(results)}
            if self.happened(row):
                return False, f"{column}: {self.says(row)}"
            return True, f"no {column} in this order"
        return judged


@dataclass
class Cell:
    """One cell of the atlas: a verdict ("occurs", "prevented", "n/a"), counts and words."""

    row: str
    column: str
    verdict: str
    words: str
    occurs: int = 0
    orders: int = 0
    frame: pd.DataFrame = field(default=None, repr=False)
    scenario: Scenario = field(default=None, repr=False)

    @property
    def text(self):
        """The cell as the pandas table shows it."""
        if self.verdict == "occurs":
            return f"occurs: {self.occurs} of {self.orders}" + (f" ({self.words})" if self.words else "")
        if self.verdict == "prevented":
            return f"prevented: 0 of {self.orders} ({self.words})"
        return f"{self.verdict}: {self.words}"

    @property
    def first(self):
        """The first explored order that shows the anomaly (its schedule)."""
        return self.frame.loc[~self.frame["ok"], "schedule"].iloc[0]
