"""The lab server keeps DynamoDB's guarantees under real concurrent HTTP requests, and hides no race."""
import random
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest
from botocore.exceptions import ClientError

from helpers import fresh_table, tracing

pytestmark = pytest.mark.stress
TABLE = "p24-atomic-counters"
KEY = {"PK": "POST#hello-world", "SK": "STATS"}


def in_threads(threads, tasks, work):
    """Run work(i) for i in range(tasks) on `threads` real threads released together; return results."""
    start = threading.Barrier(threads)

    def task(i):
        if i < threads:
            start.wait()
        return work(i)

    with tracing(False), ThreadPoolExecutor(threads) as pool:
        return list(pool.map(task, range(tasks)))


def conditional_failure(error):
    """True when a ClientError is a failed condition (single item or transaction)."""
    return error.response["Error"]["Code"] in ("ConditionalCheckFailedException", "TransactionCanceledException")


def test_add_from_50_threads_counts_every_increment(lab, run):
    table = fresh_table(TABLE, lab)

    def increment(_):
        answer = table.update_item(Key=KEY, UpdateExpression="ADD #v :one", ExpressionAttributeNames={"#v": "views"},
                                   ExpressionAttributeValues={":one": 1}, ReturnValues="UPDATED_NEW")
        return int(answer["Attributes"]["views"])

    seen = in_threads(50, 1000, increment)
    assert table.get_item(Key=KEY, ConsistentRead=True)["Item"]["views"] == 1000
    assert sorted(seen) == list(range(1, 1001)), "every UPDATED_NEW value must be handed out exactly once"


def test_guarded_stock_decrement_never_oversells(lab, run):
    table = fresh_table(TABLE, lab)
    stock_key = {"PK": "PRODUCT#widget", "SK": "STOCK"}
    table.put_item(Item={**stock_key, "stock": 200})

    def buy(_):
        try:
            table.update_item(Key=stock_key, UpdateExpression="SET stock = stock - :q",
                              ConditionExpression="stock >= :q", ExpressionAttributeValues={":q": 1})
            return True
        except ClientError as error:
            assert conditional_failure(error)
            return False

    sold = sum(in_threads(30, 300, buy))
    assert sold == 200
    assert table.get_item(Key=stock_key, ConsistentRead=True)["Item"]["stock"] == 0


def test_version_check_lets_one_writer_win_each_version(lab, run):
    table = fresh_table(TABLE, lab)
    doc_key = {"PK": "DOC#1", "SK": "META"}
    table.put_item(Item={**doc_key, "version": 0, "writer": "nobody"})

    def write(i):
        wins = []
        for _ in range(20):
            seen = table.get_item(Key=doc_key, ConsistentRead=True)["Item"]["version"]
            try:
                table.put_item(Item={**doc_key, "version": seen + 1, "writer": f"w{i}"},
                               ConditionExpression="version = :v", ExpressionAttributeValues={":v": seen})
                wins.append(int(seen) + 1)
            except ClientError as error:
                assert conditional_failure(error)
        return wins

    wins = [v for per_writer in in_threads(10, 10, write) for v in per_writer]
    assert len(wins) == len(set(wins)), "two writers won the same version"
    assert table.get_item(Key=doc_key, ConsistentRead=True)["Item"]["version"] == len(wins)


def test_transfers_in_transactions_conserve_the_total_and_reads_never_tear(lab, client, run):
    table = fresh_table(TABLE, lab)
    accounts = [{"PK": f"ACCOUNT#{n}", "SK": "META"} for n in range(8)]
    for key in accounts:
        table.put_item(Item={**key, "balance": 100})

    def transfer(i):
        rng = random.Random(i)
        source, target = rng.sample(accounts, 2)
        amount = rng.randint(1, 60)
        try:
            client.transact_write_items(TransactItems=[
                {"Update": {"TableName": TABLE, "Key": source, "UpdateExpression": "SET balance = balance - :a",
                            "ConditionExpression": "balance >= :a", "ExpressionAttributeValues": {":a": amount}}},
                {"Update": {"TableName": TABLE, "Key": target, "UpdateExpression": "SET balance = balance + :a",
                            "ExpressionAttributeValues": {":a": amount}}}])
        except ClientError as error:
            assert conditional_failure(error)

    def snapshot_total(_):
        items = client.transact_get_items(
            TransactItems=[{"Get": {"TableName": TABLE, "Key": key}} for key in accounts])["Responses"]
        return sum(item["Item"]["balance"] for item in items)

    def work(i):
        return snapshot_total(i) if i % 3 == 0 else transfer(i)

    totals = [t for t in in_threads(12, 600, work) if t is not None]
    assert totals and set(totals) == {800}, "a TransactGetItems saw a torn state"
    assert snapshot_total(0) == 800


def test_racy_read_then_put_still_loses_updates(lab, run):
    table = fresh_table(TABLE, lab)
    table.put_item(Item={**KEY, "views": 0})

    def racy_increment(_):
        current = table.get_item(Key=KEY)["Item"]["views"]
        table.put_item(Item={**KEY, "views": current + 1})

    in_threads(10, 50, racy_increment)
    assert table.get_item(Key=KEY, ConsistentRead=True)["Item"]["views"] < 50
