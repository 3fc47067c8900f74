"""The Region rows: the same races on a global table, the writer in one Region and the other client in another
(MREC and MRSC)."""
from dataclasses import dataclass

from ...lab.tables import global_table
from .catalogue import (
    MREC_LOST,
    MREC_READ,
    MREC_TABLE,
    MRSC_LOST,
    MRSC_TABLE,
    REGION_ROWS,
    Scenario,
    X,
    Y,
)
from .scenarios import code_of, oks, part_of, step_of


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
