"""Test support: functions taken straight from notebooks, what a refusal is, a transaction sent again on a conflict,
the property tests' Hypothesis settings, a fresh table keyed by PK (with a stream) for the stream tests, and the
clients the explorer's tests and `make bench` explore."""
import ast
import json
import random
import time
from pathlib import Path

from botocore.exceptions import ClientError
from hypothesis import HealthCheck, Phase

from helpers.explore import parse_move

# Property tests: a fixed seed (derandomize), no example database (nothing written to the tree), no "explain" phase
# (it reruns variants of a failing example: each one an exploration).
PROPERTY_SETTINGS = dict(deadline=None, database=None, derandomize=True, print_blob=False,
                         phases=[Phase.explicit, Phase.generate, Phase.shrink],
                         suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow,
                                                HealthCheck.filter_too_much])

NOTEBOOKS = Path(__file__).resolve().parent.parent / "notebooks"


def notebook_functions(notebook, *names):
    """The named functions exactly as the notebook's code cells define them (with the cells' imports)."""
    path = NOTEBOOKS / notebook
    namespace = {}
    for cell in json.loads(path.read_text(encoding="utf-8"))["cells"]:
        if cell["cell_type"] == "code":
            body = [node for node in ast.parse("".join(cell["source"])).body
                    if isinstance(node, (ast.Import, ast.ImportFrom))
                    or (isinstance(node, ast.FunctionDef) and node.name in names)]
            exec(compile(ast.Module(body=body, type_ignores=[]), path.name, "exec"), namespace)
    missing = [name for name in names if name not in namespace]
    assert not missing, f"{notebook} no longer defines {missing}"
    return [namespace[name] for name in names]


def refused(error):
    """True when a write was refused by its condition."""
    return error.response["Error"]["Code"] == "ConditionalCheckFailedException"


def swallowing(function, answer=False):
    """`function` under `except Exception: return answer`, which hides a missing table too."""
    def swallowed(*args):
        try:
            return function(*args)
        except Exception:
            return answer
    return swallowed


def hidden_missing_table(exercise, answer=False):
    """The message a checker gives a function that answered `answer` on a missing table instead of raising."""
    return (f"with its table missing, {exercise} returned {answer!r} instead of raising ResourceNotFoundException: "
            "it hides errors that are not refusals")


def broken_by_a_crash_alone(report):
    """True when an order of the report's exhaustive stage breaks with a client crash in it and no lost response."""
    return any(not order.ok and {parse_move(move)[2] for move in order.schedule if parse_move(move)[1] == "!"}
               == {"crash"} for order in report.orders.itertuples())


def all_or_nothing(table, actions, attempts=10):
    """One TransactWriteItems, sent again after a jittered backoff while it meets another transaction
    (TransactionConflict), at most `attempts` times; True if it was applied, False if a condition refused it; anything
    but a cancellation is re-raised."""
    for attempt in range(attempts):
        try:
            table.meta.client.transact_write_items(TransactItems=actions)
            return True
        except ClientError as error:
            if error.response["Error"]["Code"] != "TransactionCanceledException":
                raise
            if "TransactionConflict" not in [reason["Code"] for reason in error.response["CancellationReasons"]]:
                return False
            time.sleep(random.uniform(0, 0.01 * 2 ** attempt))
    raise RuntimeError("the transaction kept meeting other transactions")


def keyed_table(client, name, stream=True):
    """A fresh table keyed by PK (dropped first if it exists), with a NEW_IMAGE stream unless stream=False."""
    try:
        client.delete_table(TableName=name)
    except ClientError as error:
        if error.response["Error"]["Code"] != "ResourceNotFoundException":
            raise
    client.create_table(
        TableName=name, BillingMode="PAY_PER_REQUEST", KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "PK", "AttributeType": "S"}],
        **({"StreamSpecification": {"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"}} if stream else {}))


def optimistic(table, key):
    """A client that increments the item's views with a version check, reading again after each
    ConditionalCheckFailed (the explorer's tests and `make bench` explore it)."""
    def increment():
        while True:
            item = table.get_item(Key=key, ConsistentRead=True)["Item"]
            try:
                table.put_item(Item={**key, "views": item["views"] + 1, "version": item["version"] + 1},
                               ConditionExpression="version = :v", ExpressionAttributeValues={":v": item["version"]})
                return item["views"] + 1
            except ClientError as error:
                if error.response["Error"]["Code"] != "ConditionalCheckFailedException":
                    raise
    return increment


def two_region_booking(lab, name="bench-global"):
    """(clients, reset, check): alice in us-east-1 and bob in eu-west-1 each read a seat strongly and write it back
    with a version check (23's pattern), on a global table `name` replicated between the two Regions (MREC)."""
    us, eu = lab.client_in("us-east-1"), lab.client_in("eu-west-1")
    if name not in us.list_tables()["TableNames"]:
        us.create_table(TableName=name, KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"}],
                        AttributeDefinitions=[{"AttributeName": "PK", "AttributeType": "S"}],
                        BillingMode="PAY_PER_REQUEST")
        us.update_table(TableName=name, ReplicaUpdates=[{"Create": {"RegionName": "eu-west-1"}}])

    def book(client, holder):
        version = client.get_item(TableName=name, Key={"PK": "seat"}, ConsistentRead=True)["Item"]["version"]
        try:
            client.put_item(TableName=name, Item={"PK": "seat", "version": version + 1, "holder": holder},
                            ConditionExpression="version = :v", ExpressionAttributeValues={":v": version})
        except client.exceptions.ConditionalCheckFailedException:
            return False
        return True

    def reset():
        for client in (us, eu):
            client.put_item(TableName=name, Item={"PK": "seat", "version": 1})

    def check(results):
        written = 1 + results["alice"] + results["bob"]
        return all(client.get_item(TableName=name, Key={"PK": "seat"}, ConsistentRead=True)["Item"]["version"]
                   == written for client in (us, eu))

    return {"alice": lambda: book(us, "alice"), "bob": lambda: book(eu, "bob")}, reset, check
