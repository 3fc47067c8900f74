"""The isolation atlas (notebook 33): each way of reading and writing DynamoDB against each anomaly, explored.

A cell is a small scenario of two clients (sometimes one), run by helpers.explore in every order of their
requests and every choice DynamoDB's consistency leaves open (consistency="dynamodb": which copy answers a
default read, when each item of a transaction becomes visible). It counts the orders in which the anomaly
happens: "occurs: k of n" and what the first such order shows, or "prevented: 0 of n" and what prevented it. A
cell the anomaly cannot apply to says why instead of running anything.
"""
from dataclasses import dataclass, field
from functools import partial

import ipywidgets as widgets
import pandas as pd
import plotly.graph_objects as go
from botocore.exceptions import ClientError
from IPython.display import display

from ... import explore
from ...runs.consumer import streams_client
from ...lab.tables import fresh_table, global_table
from ...lab.trace import tracing
from ...views.widgets import FITTED_ROW_STYLE, StepThrough, fitted_row

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

ANOMALIES = {
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


def setup(lab):
    """A fresh atlas table; returns it."""
    return fresh_table(TABLE, lab)


def code_of(call):
    """Run call(); 'OK' or the DynamoDB error code it raised."""
    try:
        call()
    except ClientError as error:
        return error.response["Error"]["Code"]
    return "OK"


def number(table, key, consistent=False):
    """Item key's attribute n as an int (None when the item is absent)."""
    item = table.get_item(Key=key, ConsistentRead=consistent).get("Item")
    return None if item is None else int(item["n"])


def put_numbers(table, extra=None, **numbers):
    """A reset(): items x and y (and only they, of the pair) hold these n, and the `extra` attributes if any."""
    def reset():
        for name, key in (("x", X), ("y", Y)):
            if name in numbers:
                table.put_item(Item={**key, "n": numbers[name], **(extra or {})})
            else:
                table.delete_item(Key=key)
    return reset


def step_of(row, client, nth=0):
    """The place of `client`'s nth request among the order's steps (reveals of a transaction not counted)."""
    places = [place for place, step in enumerate(row["steps"])
              if step.startswith(f"{client}: ") and " makes " not in step]
    return places[nth]


def readers(table, client):
    """The ways to read item x once: {row: function returning n, or 'cancelled'}."""
    def batch_get():
        found = client.batch_get_item(RequestItems={TABLE: {"Keys": [X]}})["Responses"][TABLE]
        return int(found[0]["n"]) if found else None

    def transact_get():
        try:
            found = client.transact_get_items(TransactItems=[{"Get": {"TableName": TABLE, "Key": X}}])
        except client.exceptions.TransactionCanceledException:
            return "cancelled"
        return int(found["Responses"][0]["Item"]["n"])
    return {"GetItem (default)": lambda: number(table, X),
            "GetItem, ConsistentRead": lambda: number(table, X, consistent=True),
            "BatchGetItem": batch_get, "TransactGetItems": transact_get,
            EXERCISE_ROW: lambda: query_pair(table).get(X["SK"])}


def write_x(table):
    """alice's write of x = 1, told 'OK' or DynamoDB's error code."""
    return lambda: code_of(lambda: table.put_item(Item={**X, "n": 1}))


def stale_read(table, client, row):
    """alice writes x = 1; bob reads x once: stale if bob's read came after alice's write and saw 0."""
    read = readers(table, client)[row]
    return Scenario({"alice": write_x(table), "bob": read}, put_numbers(table, x=0),
                    anomaly=lambda order: order["results"]["bob"] == 0 and step_of(order, "bob") > step_of(order, "alice"),
                    how="answered by the leader, which holds every completed write",
                    says=lambda order: "bob read 0 after alice's PutItem of 1 had returned")


def read_your_writes(table, client, row):
    """ana writes x = 1, then reads x: the anomaly is reading 0."""
    read = readers(table, client)[row]

    def ana():
        table.put_item(Item={**X, "n": 1})
        return read()
    return Scenario({"ana": ana}, put_numbers(table, x=0), holds=lambda results: results["ana"] != 0,
                    how="answered by the leader, which holds ana's write",
                    says=lambda order: "ana's PutItem of 1 returned, then her own read gave 0")


def monotonic(table, client, row):
    """alice writes x = 1; bob reads x twice: the anomaly is 1 then 0."""
    read = readers(table, client)[row]
    return Scenario({"alice": write_x(table), "bob": lambda: (read(), read())},
                    put_numbers(table, x=0), holds=lambda results: results["bob"] != (1, 0),
                    how="each read answered by the leader, which never goes back",
                    says=lambda order: "bob read 1, then 0: his second read went back in time")


def aborted_read(table, client, row):
    """alice's transaction sets x = 99 but its ConditionCheck on y fails; bob reads x: the anomaly is seeing 99."""
    read = readers(table, client)[row]

    def alice():
        return code_of(lambda: client.transact_write_items(TransactItems=[
            {"Update": {"TableName": TABLE, "Key": X, "UpdateExpression": "SET n = :n",
                        "ExpressionAttributeValues": {":n": 99}}},
            {"ConditionCheck": {"TableName": TABLE, "Key": Y, "ConditionExpression": "attribute_not_exists(PK)"}}]))
    return Scenario({"alice": alice, "bob": read}, put_numbers(table, x=0, y=0),
                    holds=lambda results: results["bob"] != 99,
                    how="the cancelled write is in no copy, so no read can show it",
                    says=lambda order: "bob read 99, which only alice's cancelled transaction wrote")


def transfer(client):
    """A client function: move 10 from x to y in one TransactWriteItems; 'OK' or the error code."""
    return lambda: code_of(lambda: client.transact_write_items(TransactItems=[
        {"Update": {"TableName": TABLE, "Key": key, "UpdateExpression": "SET n = n + :d",
                    "ExpressionAttributeValues": {":d": change}}} for key, change in ((X, -10), (Y, 10))]))


def skew_readers(table, client):
    """The ways to read x and y: {row: function returning (x, y), or 'cancelled'}."""
    def batch_get():
        found = client.batch_get_item(RequestItems={TABLE: {"Keys": [X, Y], "ConsistentRead": True}})
        by_key = {item["SK"]: int(item["n"]) for item in found["Responses"][TABLE]}
        return by_key[X["SK"]], by_key[Y["SK"]]

    def transact_get():
        try:
            found = client.transact_get_items(TransactItems=[{"Get": {"TableName": TABLE, "Key": key}} for key in (X, Y)])
        except client.exceptions.TransactionCanceledException:
            return "cancelled"
        return tuple(int(response["Item"]["n"]) for response in found["Responses"])
    def query():
        found = query_pair(table)
        return found[X["SK"]], found[Y["SK"]]
    return {"two GetItems": lambda: (number(table, X), number(table, Y)), "BatchGetItem": batch_get,
            "TransactGetItems": transact_get, EXERCISE_ROW: query}


def query_pair(table):
    """The exercise's access pattern: {SK: n} of the pair's items, by one strongly consistent Query."""
    found = table.query(KeyConditionExpression="PK = :p", ExpressionAttributeValues={":p": X["PK"]},
                        ConsistentRead=True)["Items"]
    return {item["SK"]: int(item["n"]) for item in found}


def read_skew(table, client, row):
    """A transfer of 10 from x to y (both at 100) by transaction; bob reads both: the anomaly is a sum not 200."""
    read = skew_readers(table, client)[row]
    return Scenario({"alice": transfer(client), "bob": read}, put_numbers(table, x=100, y=100),
                    holds=lambda results: results["bob"] == "cancelled" or sum(results["bob"]) == 200,
                    how="a read of an item the transfer is writing is cancelled",
                    says=lambda order: part_of(order["results"]["bob"], "alice's transfer"))


def batch_read_skew(table, client):
    """The same transfer as one BatchWriteItem (x = 90, y = 110); bob reads both with TransactGetItems."""
    def alice():
        client.batch_write_item(RequestItems={TABLE: [{"PutRequest": {"Item": {**key, "n": n}}}
                                                      for key, n in ((X, 90), (Y, 110))]})
    read = skew_readers(table, client)["TransactGetItems"]
    return Scenario({"alice": alice, "bob": read}, put_numbers(table, x=100, y=100),
                    holds=lambda results: results["bob"] == "cancelled" or sum(results["bob"]) == 200,
                    says=lambda order: part_of(order["results"]["bob"], "alice's BatchWriteItem"))


def part_of(read, write):
    """What a read of (x, y) that saw part of `write` shows, in words."""
    x, y = read
    return f"bob read x = {x} and y = {y}, {x + y} in all, not 200: part of {write}"


def final_n(table):
    """x's n as the leader holds it now."""
    return number(table, X, consistent=True)


def oks(results):
    """How many clients returned 'OK'."""
    return sum(result == "OK" for result in results.values())


def lost_update(table, client, row):
    """Two clients each add 1 to x (from 0), or spend 7 of 10, the way the row does: the anomaly is a change lost."""
    def read_put():
        seen = number(table, X)
        return code_of(lambda: table.put_item(Item={**X, "n": seen + 1}))

    def versioned():
        item = table.get_item(Key=X)["Item"]
        return code_of(lambda: table.put_item(Item={**item, "n": item["n"] + 1, "version": item["version"] + 1},
                                              ConditionExpression="version = :v",
                                              ExpressionAttributeValues={":v": item["version"]}))

    def add():
        return code_of(lambda: table.update_item(Key=X, UpdateExpression="ADD n :one",
                                                 ExpressionAttributeValues={":one": 1}))

    def spend():
        return code_of(lambda: table.update_item(Key=X, UpdateExpression="SET n = n - :a", ConditionExpression="n >= :a",
                                                 ExpressionAttributeValues={":a": 7}))

    def transact():
        return code_of(lambda: client.transact_write_items(TransactItems=[
            {"Update": {"TableName": TABLE, "Key": X, "UpdateExpression": "SET n = n + :one",
                        "ExpressionAttributeValues": {":one": 1}}},
            {"ConditionCheck": {"TableName": TABLE, "Key": Y, "ConditionExpression": "attribute_exists(PK)"}}]))

    def batch_write():
        seen = number(table, X)
        return code_of(lambda: client.batch_write_item(
            RequestItems={TABLE: [{"PutRequest": {"Item": {**X, "n": seen + 1}}}]}))
    kinds = {"read, then PutItem": (read_put, 0, 1, ""), "read, then version-checked write": (versioned, 0, 1, ""),
             "ADD / SET n = n + :one": (add, 0, 1, "each ADD is applied on the server, alone"),
             "check in the condition": (spend, 10, -7, "the check and the change are one step on the server"),
             "TransactWriteItems + ConditionCheck": (transact, 0, 1, "the transactions are serialized"),
             "BatchWriteItem": (batch_write, 0, 1, "")}
    function, start, step, how = kinds[row]
    versions = {"version": 1} if function is versioned else None
    return Scenario({"alice": function, "bob": function}, put_numbers(table, versions, x=start, y=0),
                    holds=lambda results: final_n(table) == start + step * oks(results), how=how,
                    says=lambda order: "alice and bob were both told OK, yet x holds only one of their changes")


def dirty_write(table, client, row):
    """alice and bob each write their name to x and y in one TransactWriteItems, or one BatchWriteItem: the anomaly
    is x and y differing."""
    def write(name):
        items = [{**key, "n": 0, "owner": name} for key in (X, Y)]
        if row == "BatchWriteItem":
            return lambda: code_of(lambda: client.batch_write_item(
                RequestItems={TABLE: [{"PutRequest": {"Item": item}} for item in items]}))
        return lambda: code_of(lambda: client.transact_write_items(TransactItems=[
            {"Put": {"TableName": TABLE, "Item": item}} for item in items]))

    def holds(_):
        owners = {table.get_item(Key=key, ConsistentRead=True)["Item"].get("owner") for key in (X, Y)}
        return len(owners) == 1
    return Scenario({"alice": write("alice"), "bob": write("bob")}, put_numbers(table, x=0, y=0), holds=holds,
                    how="a transaction that meets the other in flight is cancelled (TransactionConflict), never queued",
                    says=lambda order: "both were told OK, and x and y ended with different owners, one each")


DOCTORS = {"alice": {"PK": "DOCTOR#alice", "SK": "ON-CALL"}, "bob": {"PK": "DOCTOR#bob", "SK": "ON-CALL"}}


def doctors(table, client, row):
    """Two doctors on call; each goes off call only if the other is still on: the anomaly is nobody on call."""
    def other(name):
        return next(key for doctor, key in DOCTORS.items() if doctor != name)

    def read_put(name):
        def go_off():
            if not table.get_item(Key=other(name), ConsistentRead=True)["Item"]["on_call"]:
                return "stays"
            return code_of(lambda: table.put_item(Item={**DOCTORS[name], "on_call": False, "version": 2}))
        return go_off

    def versioned(name):
        def go_off():
            mine = table.get_item(Key=DOCTORS[name], ConsistentRead=True)["Item"]
            if not table.get_item(Key=other(name), ConsistentRead=True)["Item"]["on_call"]:
                return "stays"
            return code_of(lambda: table.put_item(Item={**mine, "on_call": False, "version": mine["version"] + 1},
                                                  ConditionExpression="version = :v",
                                                  ExpressionAttributeValues={":v": mine["version"]}))
        return go_off

    def transact(name):
        return lambda: code_of(lambda: client.transact_write_items(TransactItems=[
            {"Update": {"TableName": TABLE, "Key": DOCTORS[name], "UpdateExpression": "SET on_call = :f",
                        "ExpressionAttributeValues": {":f": False}}},
            {"ConditionCheck": {"TableName": TABLE, "Key": other(name), "ConditionExpression": "on_call = :t",
                                "ExpressionAttributeValues": {":t": True}}}]))

    def reset():
        for key in DOCTORS.values():
            table.put_item(Item={**key, "on_call": True, "version": 1})

    def holds(_):
        return any(table.get_item(Key=key, ConsistentRead=True)["Item"]["on_call"] for key in DOCTORS.values())
    make = {"read, then PutItem": read_put, "read, then version-checked write": versioned,
            "TransactWriteItems + ConditionCheck": transact}[row]
    return Scenario({name: make(name) for name in DOCTORS}, reset, holds=holds,
                    how="the ConditionCheck on the other doctor is part of the write",
                    says=lambda order: "each doctor saw the other on call and went off: nobody is on call")


def sign_ups(table, client, row):
    """ana and bob sign up with the same email, the way the row checks it: the anomaly is two users with it."""
    def user(name):
        return {"PK": f"USER#{name}", "SK": "PROFILE", "GSI1PK": EMAIL, "GSI1SK": f"USER#{name}"}

    def query_then_put(name):
        def sign_up():
            taken = table.query(IndexName="GSI1", KeyConditionExpression="GSI1PK = :e",
                                ExpressionAttributeValues={":e": EMAIL})["Items"]
            if taken:
                return "taken"
            table.put_item(Item=user(name))
            return "OK"
        return sign_up

    def sentinel(name):
        return lambda: code_of(lambda: client.transact_write_items(TransactItems=[
            {"Put": {"TableName": TABLE, "Item": user(name)}},
            {"Put": {"TableName": TABLE, "Item": {"PK": EMAIL, "SK": "EMAIL", "user": name},
                     "ConditionExpression": "attribute_not_exists(PK)"}}]))

    def reset():
        for key in ({"PK": "USER#ana", "SK": "PROFILE"}, {"PK": "USER#bob", "SK": "PROFILE"},
                    {"PK": EMAIL, "SK": "EMAIL"}):
            table.delete_item(Key=key)

    def holds(_):
        found = table.scan(ConsistentRead=True, FilterExpression="GSI1PK = :e",
                           ExpressionAttributeValues={":e": EMAIL})["Items"]
        return len(found) <= 1

    def after_the_first(frame):
        """How many duplicate orders had the second Query sent after the first sign-up was written."""
        stale = 0
        for _, order in frame[~frame["ok"]].iterrows():
            writes = [place for place, step in enumerate(order["steps"]) if step.endswith(": PutItem")]
            queries = [place for place, step in enumerate(order["steps"]) if ": Query" in step]
            stale += max(queries) > min(writes)
        return f"{stale} of them only because the index trailed: the second Query came after the first sign-up"
    make = {"Query the GSI, then write": query_then_put, "sentinel item in a transaction": sentinel}[row]
    return Scenario({name: make(name) for name in ("ana", "bob")}, reset, holds=holds,
                    how="the sentinel's attribute_not_exists(PK) refuses the second",
                    note=after_the_first if make is query_then_put else None,
                    says=lambda order: f"ana and bob both signed up: two users with {EMAIL.split('#')[1]}")


def reasons(row):
    """What DynamoDB answered the requests of one explored order with, other than OK (cancellation reasons too)."""
    found = set()
    for answer, reply in zip(row["answers"], row["replies"]):
        if answer in PREVENTED_BY:
            found.add(PREVENTED_BY[answer])
        if answer == "TransactionCanceledException" and "TransactionConflict" in (reply or ""):
            found.add("cancelled: TransactionConflict")
        elif answer == "TransactionCanceledException" and "ConditionalCheckFailed" in (reply or ""):
            found.add("cancelled: ConditionalCheckFailed")
    if found & {"cancelled: TransactionConflict", "cancelled: ConditionalCheckFailed"}:
        found.discard("cancelled")
    return found


def how_prevented(frame, how):
    """In words: what stopped the anomaly, with the number of orders each refusal happened in."""
    counts = {}
    for _, row in frame.iterrows():
        for reason in reasons(row):
            counts[reason] = counts.get(reason, 0) + 1
    parts = [f"{reason} in {count}" for reason, count in sorted(counts.items())]
    return "; ".join(([how] if how else []) + parts)


def run_cell(row, column, scenario, lab=None):
    """Explore one cell's scenario over every order and model choice; the Cell with its verdict."""
    with tracing(False):
        frame = explore.explore(scenario.clients, scenario.reset, scenario.check, lab=lab, consistency="dynamodb")
        frame["ok"] = [not scenario.happened(order) for _, order in frame.iterrows()]
    occurs = int((~frame["ok"]).sum())
    if occurs:
        first = frame[~frame["ok"]].iloc[0]
        words = "; ".join([f"for example, {scenario.says(first)}"] + ([scenario.note(frame)] if scenario.note else []))
        return Cell(row, column, "occurs", words, occurs, len(frame), frame, scenario)
    return Cell(row, column, "prevented", how_prevented(frame, scenario.how), 0, len(frame), frame, scenario)


def stream_numbers(lab, **numbers):
    """A reset(): the stream row's table, fresh (a new stream), holding x and y at `numbers`, as put_numbers does."""
    def reset():
        put_numbers(fresh_table(STREAM_TABLE, lab), **numbers)()
    return reset


def stream_read(streams):
    """A client function's read of the stream row's table's stream, from its start: ((SK, n), ...) of its records."""
    def read():
        arn = streams.list_streams(TableName=STREAM_TABLE)["Streams"][-1]["StreamArn"]
        shard = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"][0]["ShardId"]
        iterator = streams.get_shard_iterator(StreamArn=arn, ShardId=shard,
                                              ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
        return tuple((record["dynamodb"]["NewImage"]["SK"]["S"], int(record["dynamodb"]["NewImage"]["n"]["N"]))
                     for record in streams.get_records(ShardIterator=iterator)["Records"])
    return read


def stream_scenarios(lab, streams):
    """The stream row's cells: a consumer reading the stream where the other rows read the table ({column:
    Scenario})."""
    table, client, read = lab.table(STREAM_TABLE), lab.client, stream_read(streams)
    numbers = partial(stream_numbers, lab)
    seen_at = lambda order, client_name: step_of(order, client_name, 3)  # noqa: E731 (its GetRecords)

    def ana():
        table.put_item(Item={**X, "n": 1})
        return read()

    def cancelled():
        return code_of(lambda: client.transact_write_items(TransactItems=[
            {"Update": {"TableName": STREAM_TABLE, "Key": X, "UpdateExpression": "SET n = :n",
                        "ExpressionAttributeValues": {":n": 99}}},
            {"ConditionCheck": {"TableName": STREAM_TABLE, "Key": Y,
                                "ConditionExpression": "attribute_not_exists(PK)"}}]))

    def transfer_on_stream():
        return code_of(lambda: client.transact_write_items(TransactItems=[
            {"Update": {"TableName": STREAM_TABLE, "Key": key, "UpdateExpression": "SET n = n + :d",
                        "ExpressionAttributeValues": {":d": change}}} for key, change in ((X, -10), (Y, 10))]))

    def half_seen(results):
        seen = set(results["bob"])
        return len(seen & {("x", 90), ("y", 110)}) != 1
    return {
        "stale read": Scenario(
            {"alice": lambda: code_of(lambda: table.put_item(Item={**X, "n": 1})), "bob": read}, numbers(x=0),
            anomaly=lambda order: ("x", 1) not in order["results"]["bob"] and seen_at(order, "bob") > step_of(
                order, "alice"),
            says=lambda order: "bob read the stream after alice's PutItem of x = 1 had returned, and its record was "
                               "not there yet"),
        "no read-your-writes": Scenario(
            {"ana": ana}, numbers(x=0), holds=lambda results: ("x", 1) in results["ana"],
            says=lambda order: "ana's PutItem of x = 1 returned, then her read of the stream had no record of it"),
        "non-monotonic reads": Scenario(
            {"alice": lambda: code_of(lambda: table.put_item(Item={**X, "n": 1})), "bob": lambda: (read(), read())},
            numbers(x=0), holds=lambda results: results["bob"][1][:len(results["bob"][0])] == results["bob"][0],
            how="the stream only grows: a record that has entered it stays, in its place",
            says=lambda order: "bob's second read of the stream lacked a record his first had shown"),
        "G1a aborted read": Scenario(
            {"alice": cancelled, "bob": read}, numbers(x=0, y=0), holds=lambda results: ("x", 99) not in results["bob"],
            how="a cancelled transaction writes no stream record",
            says=lambda order: "bob read a record of x = 99, which only alice's cancelled transaction wrote"),
        "G-single read skew": Scenario(
            {"alice": transfer_on_stream, "bob": read}, numbers(x=100, y=100), holds=half_seen,
            says=lambda order: "bob was handed the record of one side of alice's transfer and not of the other"),
    }


def plan(table, client, lab=None, streams=None):
    """{(row, column): a Scenario to explore, or (verdict, reason) for a cell that runs nothing}; the stream row's
    cells need the lab and a DynamoDB Streams client."""
    cells = {}
    read_rows = ("GetItem (default)", "GetItem, ConsistentRead", "two GetItems", "BatchGetItem", "TransactGetItems")
    one_item_writes = ("read, then PutItem", "read, then version-checked write", "ADD / SET n = n + :one",
                       "check in the condition")
    for row in ROWS:
        for column in ANOMALIES:
            cells[(row, column)] = ("n/a", default_reason(row, column, read_rows, one_item_writes))
    for row in ("GetItem (default)", "GetItem, ConsistentRead", "BatchGetItem", "TransactGetItems"):
        cells[(row, "G1a aborted read")] = aborted_read(table, client, row)
        cells[(row, "stale read")] = stale_read(table, client, row)
        cells[(row, "no read-your-writes")] = read_your_writes(table, client, row)
        cells[(row, "non-monotonic reads")] = monotonic(table, client, row)
    for row in ("two GetItems", "BatchGetItem", "TransactGetItems"):
        cells[(row, "G-single read skew")] = read_skew(table, client, row)
    cells[("BatchWriteItem", "G-single read skew")] = batch_read_skew(table, client)
    for row in (*one_item_writes, "TransactWriteItems + ConditionCheck", "BatchWriteItem"):
        cells[(row, "P4 lost update")] = lost_update(table, client, row)
    for row in ("TransactWriteItems + ConditionCheck", "BatchWriteItem"):
        cells[(row, "G0 dirty write")] = dirty_write(table, client, row)
    for row in ("read, then PutItem", "read, then version-checked write", "TransactWriteItems + ConditionCheck"):
        cells[(row, "G2-item write skew")] = doctors(table, client, row)
    for row in ("Query the GSI, then write", "sentinel item in a transaction"):
        cells[(row, "stale index read")] = sign_ups(table, client, row)
    if streams is not None:
        cells.update({(STREAM_ROW, column): scenario for column, scenario in stream_scenarios(lab, streams).items()})
    for row in REGION_ROWS:
        cells.update({(row, column): ("n/a", NO_GLOBAL_TABLES) for column in ANOMALIES} if lab is None or
                     lab.kind != "embedded" else
                     {(row, column): scenario for column, scenario in region_scenarios(lab, row).items()})
    return cells


def default_reason(row, column, read_rows, one_item_writes):
    """Why a cell runs nothing, in words."""
    if column == "G1b intermediate read":
        return NO_UNIT
    if row in REGION_ROWS:
        return region_reason(row, column)
    if row == STREAM_ROW:
        return READ_ONLY if column in ("G0 dirty write", "P4 lost update", "G2-item write skew") else STREAM_NOT_INDEX
    if column in ("G0 dirty write", "P4 lost update", "G2-item write skew") and row in read_rows:
        return READ_ONLY
    if column == "G0 dirty write" and row == "sentinel item in a transaction":
        return "it is a TransactWriteItems: see the TransactWriteItems row."
    if column == "G0 dirty write":
        return ONE_ITEM if row in one_item_writes or row == "Query the GSI, then write" else NO_UNIT
    if column == "stale index read":
        return TABLE_NOT_INDEX if row != "Query the GSI, then write" else ""
    if column == "G-single read skew" and row.startswith("GetItem"):
        return SINGLE_ITEM_READ
    if column == "G2-item write skew" and row == "check in the condition":
        return NO_OTHER_ITEM
    if row in ("read, then PutItem", "read, then version-checked write") and column != "P4 lost update":
        return SEE_GETITEM if column not in ("G-single read skew", "G2-item write skew") else NOT_A_READ_ROW
    if row == "Query the GSI, then write":
        return "its read is an index read: see the stale index read column."
    if row == "two GetItems":
        return "each read is a GetItem: see the GetItem rows."
    if column in ("G1a aborted read", "stale read", "no read-your-writes", "non-monotonic reads"):
        return WRITE_READS_LEADER
    return NOT_A_READ_ROW


def region_reason(row, column):
    """Why a cell of a Region row runs nothing, in words."""
    if column == "stale index read":
        return TABLE_NOT_INDEX
    if row in (MREC_LOST, MRSC_LOST):
        return {"G0 dirty write": ONE_ITEM, "G2-item write skew": ONE_ITEM_RULE}.get(column, OWN_REGION_READ)
    if column in ("G0 dirty write", "P4 lost update", "G2-item write skew"):
        return READ_ONLY
    return MRSC_NO_TRANSACTIONS


@dataclass
class Replica:
    """One Region's replica of a Region row's global table: a client signed for that Region, and the table's name."""

    client: object
    name: str

    def n(self, key):
        """The item's n as this Region's replica holds it, read strongly consistently (None when absent)."""
        item = self.client.get_item(TableName=self.name, Key=key, ConsistentRead=True).get("Item")
        return None if item is None else int(item["n"])

    def put(self, key, n, **extra):
        """'OK' or the error code of a PutItem of the item with this n."""
        return code_of(lambda: self.client.put_item(TableName=self.name, Item={**key, "n": n, **extra}))


def replicas(lab, row):
    """(the writer's replica, the other client's) of a Region row."""
    name, home, away = REGION_ROWS[row]
    return Replica(lab.client_in(home), name), Replica(lab.client_in(away), name)


def replica_numbers(replica, **numbers):
    """A reset(): x and y hold these n (and version 1) in the writer's Region; the explorer lets every Region agree."""
    def reset():
        for name, key in (("x", X), ("y", Y)):
            if name in numbers:
                replica.put(key, numbers[name], version=1)
            else:
                replica.client.delete_item(TableName=replica.name, Key=key)
    return reset


def versioned_in(replica):
    """A client function: read x in the replica's Region and write it back, one more, with a version check."""
    def write():
        item = replica.client.get_item(TableName=replica.name, Key=X, ConsistentRead=True)["Item"]
        return code_of(lambda: replica.client.put_item(
            TableName=replica.name, Item={**item, "n": item["n"] + 1, "version": item["version"] + 1},
            ConditionExpression="version = :v", ExpressionAttributeValues={":v": item["version"]}))
    return write


def region_scenarios(lab, row):
    """A Region row's explored cells ({column: Scenario}): a version-checked write in each of two Regions, or a write
    in one Region read strongly consistently in the other."""
    here, there = replicas(lab, row)
    if row in (MREC_LOST, MRSC_LOST):
        return {"P4 lost update": Scenario(
            {"alice": versioned_in(here), "bob": versioned_in(there)}, replica_numbers(here, x=0, y=0),
            holds=lambda results: {here.n(X), there.n(X)} == {oks(results)},
            how="a write in flight in one Region meets the other's: the later one is refused, then checked again",
            says=lambda order: "alice and bob were both told OK in their Regions, yet x holds only one of their "
                               "changes, in both")}
    write = lambda: here.put(X, 1)  # noqa: E731
    cells = {
        "stale read": Scenario(
            {"alice": write, "bob": lambda: there.n(X)}, replica_numbers(here, x=0),
            anomaly=lambda order: order["results"]["bob"] == 0 and step_of(order, "bob") > returned_at(order, "alice"),
            how="a strongly consistent read in any Region sees every acknowledged write",
            says=lambda order: f"bob read 0 in {there.client.meta.region_name} after alice's PutItem of 1 in "
                               f"{here.client.meta.region_name} had returned"),
        "no read-your-writes": Scenario(
            {"ana": lambda: (here.put(X, 1), there.n(X))[1]}, replica_numbers(here, x=0),
            holds=lambda results: results["ana"] != 0,
            how="her write was acknowledged in every Region before it returned",
            says=lambda order: "ana's PutItem of 1 returned, then her read in the other Region gave 0"),
        "non-monotonic reads": Scenario(
            {"alice": write, "bob": lambda: (there.n(X), there.n(X))}, replica_numbers(here, x=0),
            holds=lambda results: results["bob"] != (1, 0),
            how="a replica takes a write once and keeps the latest: it never goes back",
            says=lambda order: "bob read 1, then 0"),
    }
    if row == MREC_READ:
        cells["G1a aborted read"] = Scenario(
            {"alice": cancelled_in(here), "bob": lambda: there.n(X)}, replica_numbers(here, x=0, y=0),
            holds=lambda results: results["bob"] != 99, how="a cancelled transaction is replicated nowhere",
            says=lambda order: "bob read 99, which only alice's cancelled transaction wrote")
        cells["G-single read skew"] = Scenario(
            {"alice": transfer_in(here), "bob": lambda: (there.n(X), there.n(Y))}, replica_numbers(here, x=100, y=100),
            holds=lambda results: sum(results["bob"]) == 200,
            says=lambda order: part_of(order["results"]["bob"], "alice's transfer, its items replicated one by one"))
    return cells


def returned_at(order, client):
    """The place of `client`'s last step among the order's steps: its call returned then (an MRSC write once
    acknowledged)."""
    return max(place for place, step in enumerate(order["steps"]) if step.startswith(f"{client}: "))


def cancelled_in(replica):
    """A client function: a transaction setting x = 99 in the replica's Region, cancelled by its ConditionCheck on y."""
    return lambda: code_of(lambda: replica.client.transact_write_items(TransactItems=[
        {"Update": {"TableName": replica.name, "Key": X, "UpdateExpression": "SET n = :n",
                    "ExpressionAttributeValues": {":n": 99}}},
        {"ConditionCheck": {"TableName": replica.name, "Key": Y, "ConditionExpression": "attribute_not_exists(PK)"}}]))


def transfer_in(replica):
    """A client function: move 10 from x to y in one TransactWriteItems in the replica's Region."""
    return lambda: code_of(lambda: replica.client.transact_write_items(TransactItems=[
        {"Update": {"TableName": replica.name, "Key": key, "UpdateExpression": "SET n = n + :d",
                    "ExpressionAttributeValues": {":d": change}}} for key, change in ((X, -10), (Y, 10))]))


def global_tables(lab):
    """The Region rows' global tables, made anew from empty tables: MREC_TABLE in us-east-1 and eu-west-1, MRSC_TABLE in
    us-east-1 and us-west-2 with a witness in us-east-2."""
    global_table(MREC_TABLE, "EVENTUAL", lab)
    global_table(MRSC_TABLE, "STRONG", lab)


def build(lab, table=None):
    """Every cell of the atlas, explored: {(row, column): Cell}."""
    table = table or setup(lab)
    cells = {}
    streams = streams_client(lab, lab.client.meta.region_name)
    if lab.kind == "embedded":
        with tracing(False):
            global_tables(lab)
    for (row, column), planned in plan(table, lab.client, lab, streams).items():
        if isinstance(planned, Scenario):
            cells[(row, column)] = run_cell(row, column, planned, lab)
        else:
            cells[(row, column)] = Cell(row, column, *planned)
    return cells


def frame_of(cells):
    """The atlas as a pandas table: one row per access pattern, one column per anomaly, each cell in words."""
    frame = pd.DataFrame(index=list(ROWS), columns=list(ANOMALIES), dtype=object)
    for (row, column), cell in cells.items():
        frame.loc[row, column] = cell.text
    frame.index.name = "access pattern"
    return frame


def verdicts(cells):
    """{(row, column): "occurs" | "prevented" | "n/a"}."""
    return {place: cell.verdict for place, cell in cells.items()}


MARKS = {"occurs": ("occurs", 0), "prevented": ("✓", 1), "n/a": ("", 2)}
COLOURS = [[0.0, "#e57373"], [1 / 3, "#e57373"], [1 / 3, "#81c784"], [2 / 3, "#81c784"], [2 / 3, "#eeeeee"],
           [1.0, "#eeeeee"]]


def figure(cells):
    """The atlas as Hermitage draws it, as wide as the notebook: ✓ prevented (green), occurs (red), each with k/n,
    blank where it cannot apply; hovering a cell gives its words."""
    rows, columns = list(ROWS), list(ANOMALIES)
    z, text, hover = [], [], []
    for row in rows:
        z.append([MARKS[cells[(row, column)].verdict][1] for column in columns])
        text.append([mark_of(cells[(row, column)]).replace(" ", "<br>") for column in columns])
        hover.append([f"<b>{row} · {column}</b><br>{wrap(cells[(row, column)].text)}" for column in columns])
    chart = go.Figure(go.Heatmap(z=z, x=columns, y=rows, text=text, texttemplate="%{text}", textfont={"size": 12},
                                 hovertext=hover, hoverinfo="text", colorscale=COLOURS, zmin=0, zmax=2,
                                 showscale=False, xgap=2, ygap=2))
    chart.update_layout(title={"text": "The isolation atlas<br><sup>✓ prevented in every distinct order · occurs: in k "
                                       "of n distinct orders · blank: does not apply · hover a cell for its words</sup>",
                               "y": 0.98},
                        height=120 + 40 * len(rows), margin={"l": 10, "r": 10, "t": 115, "b": 20},
                        xaxis={"side": "top", "tickangle": 0, "tickfont": {"size": 11}, "tickvals": columns,
                               "ticktext": [column_label(column) for column in columns]},
                        yaxis={"autorange": "reversed", "automargin": True, "tickvals": rows,
                               "ticktext": [wrap(row, 22) for row in rows]},
                        plot_bgcolor="white")
    return chart


def column_label(column):
    """A column's tick in the figure: its first word, then the rest wrapped to fit a narrow column."""
    first, _, rest = column.partition(" ")
    return f"{first}<br>{wrap(rest, 12)}"


def mark_of(cell):
    """The figure's mark for a cell: 'occurs 4/12', '✓ 0/8' or ''."""
    mark = MARKS[cell.verdict][0]
    return f"{mark} {cell.occurs}/{cell.orders}" if cell.verdict in ("occurs", "prevented") else mark


def wrap(text, width=70):
    """Text broken into lines of about `width` characters, for a hover box."""
    lines, line = [], ""
    for word in text.split():
        if line and len(line) + 1 + len(word) > width:
            lines.append(line)
            line = ""
        line = f"{line} {word}".strip()
    return "<br>".join(lines + [line])


def replay_panel(cell, title=None):
    """A step-through panel for a cell's scenario, with its first order that shows the anomaly played; its verdict
    names the anomaly when an order shows it."""
    panel = StepThrough(cell.scenario.clients, cell.scenario.reset, None, orders=cell.frame,
                        title=title or f"{cell.row} · {cell.column}: its orders, step by step",
                        consistency="dynamodb", judge=cell.scenario.judge(cell.column))
    panel.replay(cell.first)
    return panel


class Replayer:
    """A dropdown of the cells where an anomaly occurs and a button that opens the chosen one's order."""

    def __init__(self, cells):
        occurring = [cell for cell in cells.values() if cell.verdict == "occurs"]
        self.cells = {f"{cell.row} · {cell.column} ({cell.occurs} of {cell.orders})": cell for cell in occurring}
        self.choice = widgets.Dropdown(options=list(self.cells), description="cell")
        self.button = widgets.Button(description="Replay this cell", icon="play")
        self.button.on_click(lambda _: self.replay())
        self.output = widgets.Output()
        self.panel = None
        self.view = widgets.VBox([fitted_row(self.choice, self.button), self.output, widgets.HTML(FITTED_ROW_STYLE)])
        self.view.add_class("lab-atlas-replay")

    def replay(self, label=None):
        """Open the chosen cell's first anomalous order in a step-through panel below the button."""
        if self.panel is not None:
            self.panel.stepper.close()
        self.panel = replay_panel(self.cells[label or self.choice.value])
        self.output.clear_output()
        with self.output:
            display(self.panel)
        return self.panel

    def _ipython_display_(self):
        display(self.view)


GUIDE = {
    "serializable": ("GetItem (default)", "GetItem, ConsistentRead", "ADD / SET n = n + :one", "check in the condition",
                     "TransactWriteItems + ConditionCheck", "TransactGetItems", "sentinel item in a transaction"),
    "read-committed": ("BatchGetItem",),
    "not serializable as a unit": ("BatchWriteItem",),
}


def agrees_with_the_guide(cells):
    """[] when the atlas agrees with the Developer Guide's isolation table, else what disagrees, in words.

    Serializable: no single-item operation or transaction shows an anomaly of isolation (G0, G1a, P4, G-single)
    in a cell where it applies. Read-committed: a BatchGetItem never shows an aborted write (G1a) but may show part
    of a transaction (G-single). BatchWriteItem as a unit: some reader sees part of one (G-single), and two of them
    interleave item by item (G0).
    """
    isolation = ("G0 dirty write", "G1a aborted read", "P4 lost update", "G-single read skew")
    wrong = []
    for row in GUIDE["serializable"]:
        wrong += [f"{row} shows {column}" for column in isolation if cells[(row, column)].verdict == "occurs"]
    if cells[("BatchGetItem", "G1a aborted read")].verdict != "prevented":
        wrong.append("BatchGetItem is not read-committed: it shows an aborted write")
    if cells[("BatchGetItem", "G-single read skew")].verdict != "occurs":
        wrong.append("BatchGetItem never sees part of a transaction, stronger than read-committed")
    if cells[("BatchWriteItem", "G-single read skew")].verdict != "occurs":
        wrong.append("a BatchWriteItem is never seen in part: serializable as a unit, stronger than the guide says")
    if cells[("BatchWriteItem", "G0 dirty write")].verdict != "occurs":
        wrong.append("two BatchWriteItems never interleave item by item: isolated as units, stronger than the guide says")
    return wrong


GLOBAL_TABLES_PAGE = {  # "How DynamoDB global tables work": what each Region cell must show
    (MREC_READ, "stale read"): "occurs",  # "may return stale data if the item was last updated in a different Region"
    (MREC_LOST, "P4 lost update"): "occurs",  # conditions see "the version of the item in the Region"; last writer wins
    (MREC_READ, "G-single read skew"): "occurs",  # "Transactional writes are not replicated as a unit across Regions"
    (MREC_READ, "G1a aborted read"): "prevented",  # "replicated ... once they've been committed in the source Region"
    (MRSC_READ, "stale read"): "prevented",  # "on any MRSC replica always return the latest version of an item"
    (MRSC_LOST, "P4 lost update"): "prevented",  # ReplicatedWriteConflictException; conditions see the latest version
}


def agrees_with_global_tables(cells):
    """[] when the atlas's Region rows agree with the Developer Guide's "How DynamoDB global tables work", else what
    disagrees, in words (GLOBAL_TABLES_PAGE: each cell and the sentence that decides it)."""
    return [f"{row} · {column}: {cells[(row, column)].verdict}, where the page says {verdict}"
            for (row, column), verdict in GLOBAL_TABLES_PAGE.items() if cells[(row, column)].verdict != verdict]


def exercise_cells(lab, table=None):
    """The exercise's row (a strongly consistent Query of the pair's partition), explored: {column: Cell}."""
    table = table or setup(lab)
    client = lab.client
    builders = {"G1a aborted read": aborted_read, "G-single read skew": read_skew, "stale read": stale_read,
                "no read-your-writes": read_your_writes, "non-monotonic reads": monotonic}
    return {column: run_cell(EXERCISE_ROW, column, builders[column](table, client, EXERCISE_ROW), lab)
            for column in EXERCISE_COLUMNS}


def prediction_errors(prediction):
    """What is wrong with the form of a prediction ([] when it maps each exercise column to occurs or prevented)."""
    if not isinstance(prediction, dict):
        return [f"predicted_row() must return a dict of column -> 'occurs' or 'prevented'; it returned {prediction!r}"]
    errors = [f"no prediction for {column!r}" for column in EXERCISE_COLUMNS if column not in prediction]
    errors += [f"{column!r} is not one of the exercise's columns ({', '.join(EXERCISE_COLUMNS)})"
               for column in prediction if column not in EXERCISE_COLUMNS]
    errors += [f"{column!r}: say 'occurs' or 'prevented', not {verdict!r}" for column, verdict in prediction.items()
               if column in EXERCISE_COLUMNS and verdict not in ("occurs", "prevented")]
    return errors



def verdicts_of(cells, rows, columns):
    """The verdicts of the given rows (index) in the given columns, as a DataFrame."""
    return pd.DataFrame({column: [cells[(row, column)].verdict for row in rows] for column in columns},
                        index=pd.Index(rows, name="access pattern"))
