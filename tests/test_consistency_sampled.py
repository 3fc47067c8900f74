"""The consistency knobs, sampled over HTTP: stale default reads, transactions that stay ongoing, lagging indexes.

Each test shows a behaviour DynamoDB documents (helpers/labserver/model/consistency.py quotes the sentences), and that
strongly consistent reads and conditions never see less than every successful write.
"""
import threading
import time

import pytest
from botocore.exceptions import ClientError

from helpers import fresh_table
from helpers.knobs import as_weak_as_dynamodb, get_knobs, set_knobs

TABLE = "p25-transactions"
A = {"PK": "ACCOUNT#a", "SK": "BALANCE"}
B = {"PK": "ACCOUNT#b", "SK": "BALANCE"}
READS = 40

pytestmark = pytest.mark.usefixtures("knobs_off")


@pytest.fixture
def table(lab):
    return fresh_table(TABLE, lab)


def code(error):
    """The error code of a refused request."""
    return error.response["Error"]["Code"]


def balances(table, consistent=False):
    """What one GetItem of account A says, READS times."""
    return [table.get_item(Key=A, ConsistentRead=consistent)["Item"]["balance"] for _ in range(READS)]


def transfer(client, amount=10):
    """Move `amount` from A to B in one transaction."""
    client.transact_write_items(TransactItems=[
        {"Update": {"TableName": TABLE, "Key": A, "UpdateExpression": "SET balance = balance - :a",
                    "ExpressionAttributeValues": {":a": amount}}},
        {"Update": {"TableName": TABLE, "Key": B, "UpdateExpression": "SET balance = balance + :a",
                    "ExpressionAttributeValues": {":a": amount}}}])


def test_a_default_read_may_miss_a_recent_write_a_strongly_consistent_one_never(lab, table):
    table.put_item(Item={**A, "balance": 100})
    set_knobs(lab, quiet=True, stale_reads=5)
    table.put_item(Item={**A, "balance": 50})
    assert set(balances(table, consistent=True)) == {50}
    seen = set(balances(table))
    assert seen == {100, 50}, "a default read is answered by the leader or a trailing follower"


def test_a_key_of_the_wrong_type_is_refused_as_dynamodb_refuses_it_while_the_copies_trail(lab, table):
    """A map where the key's string belongs: DynamoDB's ValidationException, never a dropped connection."""
    set_knobs(lab, quiet=True, stale_reads=5, transaction_window=0.01)
    wrong = {"PK": {"S": "ACCOUNT#a"}, "SK": "BALANCE"}
    with pytest.raises(ClientError) as put:
        table.put_item(Item={**wrong, "balance": 1})
    with pytest.raises(ClientError) as cancelled:
        table.meta.client.transact_write_items(TransactItems=[
            {"Update": {"TableName": TABLE, "Key": wrong, "UpdateExpression": "SET balance = :b",
                        "ExpressionAttributeValues": {":b": 1}}}])
    assert code(put.value) == "ValidationException"
    assert code(cancelled.value) == "TransactionCanceledException"
    assert [reason["Code"] for reason in cancelled.value.response["CancellationReasons"]] == ["ValidationError"]


def test_a_refused_write_is_in_no_copy(lab, table):
    table.put_item(Item={**A, "balance": 100})
    set_knobs(lab, quiet=True, stale_reads=5)
    with pytest.raises(ClientError) as refused:
        table.put_item(Item={**A, "balance": 0}, ConditionExpression="balance > :b",
                       ExpressionAttributeValues={":b": 1000})
    assert code(refused.value) == "ConditionalCheckFailedException"
    assert set(balances(table)) == {100}


def test_conditions_see_the_leader_while_reads_trail(lab, table):
    table.put_item(Item={**A, "balance": 100})
    set_knobs(lab, quiet=True, stale_reads=5)
    table.update_item(Key=A, UpdateExpression="SET balance = :b", ExpressionAttributeValues={":b": 10})
    with pytest.raises(ClientError) as refused:
        table.update_item(Key=A, UpdateExpression="SET balance = balance - :a", ConditionExpression="balance >= :a",
                          ExpressionAttributeValues={":a": 50})
    assert code(refused.value) == "ConditionalCheckFailedException", "the condition saw 10, not a stale 100"


def test_followers_catch_up_after_the_lag_and_at_once_when_it_is_turned_off(lab, table):
    table.put_item(Item={**A, "balance": 100})
    set_knobs(lab, quiet=True, stale_reads=0.3)
    table.put_item(Item={**A, "balance": 50})
    time.sleep(0.4)
    assert set(balances(table)) == {50}
    set_knobs(lab, quiet=True, stale_reads=5)
    table.put_item(Item={**A, "balance": 20})
    set_knobs(lab, quiet=True, stale_reads=0)
    assert set(balances(table)) == {20}


def test_a_batch_get_and_a_query_read_trailing_copies_too(lab, table):
    table.put_item(Item={**A, "balance": 100})
    set_knobs(lab, quiet=True, stale_reads=5)
    table.put_item(Item={**A, "balance": 50})
    batch = {lab.client.batch_get_item(RequestItems={TABLE: {"Keys": [A]}})["Responses"][TABLE][0]["balance"]
             for _ in range(READS)}
    queried = {int(table.query(KeyConditionExpression="PK = :p", ExpressionAttributeValues={":p": A["PK"]})
                   ["Items"][0]["balance"]) for _ in range(READS)}
    consistent = {int(table.query(KeyConditionExpression="PK = :p", ExpressionAttributeValues={":p": A["PK"]},
                                  ConsistentRead=True)["Items"][0]["balance"]) for _ in range(READS)}
    assert (batch, queried, consistent) == ({100, 50}, {100, 50}, {50})


class Ongoing:
    """A transfer running on its own thread while the transaction window keeps it ongoing."""

    def __init__(self, client):
        self.error = None
        self.thread = threading.Thread(target=self.run, args=(client,))
        self.thread.start()
        time.sleep(0.3)

    def run(self, client):
        """Send the transfer; keep what went wrong."""
        try:
            transfer(client)
        except ClientError as error:
            self.error = error

    def finish(self):
        """Wait for the transfer's answer."""
        self.thread.join(10)
        assert self.error is None, "the ongoing transaction itself succeeds"


def test_a_write_to_an_item_of_an_ongoing_transaction_meets_transaction_conflict(lab, table):
    for key in (A, B):
        table.put_item(Item={**key, "balance": 100})
    set_knobs(lab, quiet=True, transaction_window=1.5)
    ongoing = Ongoing(lab.client)
    with pytest.raises(ClientError) as conflict:
        table.update_item(Key=B, UpdateExpression="SET balance = :z", ExpressionAttributeValues={":z": 0})
    assert (code(conflict.value), conflict.value.response["Error"]["Message"]) == (
        "TransactionConflictException", "Transaction is ongoing for the item")
    with pytest.raises(ClientError) as cancelled:
        lab.client.transact_write_items(TransactItems=[
            {"Put": {"TableName": TABLE, "Item": {"PK": "ACCOUNT#c", "SK": "BALANCE"}}},
            {"ConditionCheck": {"TableName": TABLE, "Key": A, "ConditionExpression": "attribute_exists(PK)"}}])
    assert [reason["Code"] for reason in cancelled.value.response["CancellationReasons"]] == [
        "None", "TransactionConflict"]
    with pytest.raises(ClientError) as read_cancelled:
        lab.client.transact_get_items(TransactItems=[{"Get": {"TableName": TABLE, "Key": B}}])
    assert code(read_cancelled.value) == "TransactionCanceledException"
    assert table.get_item(Key=A, ConsistentRead=True)["Item"]["balance"] in (100, 90), "a GetItem succeeds"
    ongoing.finish()
    assert [table.get_item(Key=key, ConsistentRead=True)["Item"]["balance"] for key in (A, B)] == [90, 110]
    table.update_item(Key=B, UpdateExpression="SET balance = :z", ExpressionAttributeValues={":z": 0})


def test_a_transaction_s_items_become_visible_one_at_a_time_across_its_window(lab, table):
    for key in (A, B):
        table.put_item(Item={**key, "balance": 100})
    set_knobs(lab, quiet=True, transaction_window=1.5)
    seen = set()
    ongoing = Ongoing(lab.client)
    while ongoing.thread.is_alive():
        answer = lab.client.batch_get_item(RequestItems={TABLE: {"ConsistentRead": True, "Keys": [A, B]}})
        seen.add(sum(item["balance"] for item in answer["Responses"][TABLE]))
        time.sleep(0.02)
    ongoing.finish()
    assert {200} < seen <= {190, 200, 210}, "a BatchGetItem is read-committed: it can see half a transfer"


def test_a_batch_write_takes_effect_item_by_item_across_the_window_and_a_write_between_lands_first(lab, table):
    for key in (A, B):
        table.put_item(Item={**key, "balance": 100})
    set_knobs(lab, quiet=True, transaction_window=1.5)  # its two puts take effect at 0.75 s and 1.5 s, in either order
    batch = threading.Thread(target=lambda: lab.client.batch_write_item(RequestItems={TABLE: [
        {"PutRequest": {"Item": {**key, "balance": 1}}} for key in (A, B)]}))
    batch.start()
    time.sleep(0.3)
    assert [balance(table, key) for key in (A, B)] == [100, 100], "neither put has taken effect yet"
    table.put_item(Item={**A, "balance": 2})
    conditional = lab.client.transact_write_items(TransactItems=[{"ConditionCheck": {
        "TableName": TABLE, "Key": B, "ConditionExpression": "balance = :b", "ExpressionAttributeValues": {":b": 100}}}])
    assert conditional["ResponseMetadata"]["HTTPStatusCode"] == 200, "a condition meets the item as it was"
    batch.join()
    assert [balance(table, key) for key in (A, B)] == [1, 1], "the batch's put landed after the write between"


def balance(table, key):
    """One account's balance, read strongly."""
    return table.get_item(Key=key, ConsistentRead=True)["Item"]["balance"]


def test_an_index_trails_its_table_by_gsi_lag(lab):
    table = fresh_table("p28-gsi-consistency", lab)
    set_knobs(lab, quiet=True, gsi_lag=5, stale_reads=5)
    assert get_knobs(lab)["stale_reads"] == [5, 5]
    table.put_item(Item={"PK": "USER#1", "SK": "PROFILE", "GSI1PK": "EMAIL#a", "GSI1SK": "USER#1"})
    found = table.query(IndexName="GSI1", KeyConditionExpression="GSI1PK = :e",
                        ExpressionAttributeValues={":e": "EMAIL#a"})["Items"]
    assert found == []
    assert table.get_item(Key={"PK": "USER#1", "SK": "PROFILE"}, ConsistentRead=True)["Item"]["GSI1PK"] == "EMAIL#a"


def test_the_banner_says_the_server_is_stronger_than_dynamodb_until_one_call_makes_it_as_weak(lab):
    assert "Stronger than DynamoDB" in lab.banner and "as_weak_as_dynamodb(lab)" in lab.banner
    as_weak_as_dynamodb(lab, quiet=True)
    assert {name: get_knobs(lab)[name] for name in ("stale_reads", "gsi_lag", "transaction_window")} == {
        "stale_reads": [0.01, 0.1], "gsi_lag": [0.1, 1.0], "transaction_window": [0.01, 0.05]}
    assert "Stronger" not in lab.banner and "stale_reads 0.01-0.1 s" in lab.banner
    as_weak_as_dynamodb(lab, on=False, quiet=True)
    assert "Stronger than DynamoDB" in lab.banner


def test_as_weak_as_dynamodb_a_racy_read_then_conditional_write_still_never_breaks_its_invariant(lab, table):
    as_weak_as_dynamodb(lab, quiet=True)
    table.put_item(Item={**A, "balance": 100})
    refused = []

    def withdraw():
        table.get_item(Key=A)  # a default read, as the code before the write might make: it may be stale
        try:
            table.update_item(Key=A, UpdateExpression="SET balance = balance - :a", ConditionExpression="balance >= :a",
                              ExpressionAttributeValues={":a": 30})
        except ClientError as error:
            refused.append(code(error))
    threads = [threading.Thread(target=withdraw) for _ in range(8)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert table.get_item(Key=A, ConsistentRead=True)["Item"]["balance"] == 10
    assert refused == ["ConditionalCheckFailedException"] * 5
