"""Faults as the explorer's choices: a response lost on its way back (the SDK retries it), a client that crashes
right after a write. Each happens at most once per order, and only where the scenario asks for it."""
import pytest

from helpers import fresh_table
from helpers.explore import Crashed, describe, explore, replay

TABLE = "p25-transactions"
SENTINEL = {"PK": "EMAIL#ana@example.com", "SK": "EMAIL"}
PROFILE = {"PK": "USER#ana", "SK": "PROFILE"}
COUNTER = {"PK": "COUNTER#views", "SK": "COUNTER"}

pytestmark = pytest.mark.usefixtures("knobs_off")


@pytest.fixture
def table(lab):
    return fresh_table(TABLE, lab)


def nothing_or_both(table):
    """The sign-up's invariant: a sentinel exists exactly when its profile does."""
    def check(_):
        found = [table.get_item(Key=key, ConsistentRead=True).get("Item") is not None for key in (SENTINEL, PROFILE)]
        return found[0] == found[1]
    return check


def empty(table):
    """reset(): no sign-up yet, the counter at 0."""
    def reset():
        for key in (SENTINEL, PROFILE):
            table.delete_item(Key=key)
        table.put_item(Item={**COUNTER, "n": 0})
    return reset


def test_a_crash_between_two_separate_writes_leaves_half_a_sign_up_and_a_transaction_never_does(lab, table):
    def split():
        table.put_item(Item={**SENTINEL, "user": "ana"})
        table.put_item(Item={**PROFILE, "email": "ana@example.com"})

    def together():
        lab.client.transact_write_items(TransactItems=[{"Put": {"TableName": TABLE, "Item": {**SENTINEL, "user": "ana"}}},
                                                       {"Put": {"TableName": TABLE, "Item": PROFILE}}])
    plain = explore({"ana": split}, empty(table), nothing_or_both(table))
    crashing = explore({"ana": split}, empty(table), nothing_or_both(table), faults=("crash",))
    atomic = explore({"ana": together}, empty(table), nothing_or_both(table), faults=("crash",))
    assert (len(plain), plain["ok"].all()) == (1, True), "without the fault nothing can go wrong between them"
    assert list(crashing["schedule"]) == [("ana", "ana"), ("ana", "ana!crash"), ("ana!crash",)]
    assert list(crashing["ok"]) == [True, True, False]
    assert crashing["steps"][2] == ("ana: PutItem (then the client crashes)",)
    assert describe(crashing["results"][2]["ana"]) == "crashed after its PutItem"
    assert isinstance(crashing["results"][2]["ana"], Crashed)
    assert atomic["ok"].all(), "a transaction is never half applied, even when its client crashes"
    assert sorted(atomic["schedule"]) == [("ana", "ana+0", "ana+1"), ("ana!crash", "ana+0", "ana+1")]


def test_a_lost_response_makes_the_sdk_apply_an_add_twice_and_a_conditional_create_refuse_its_own_retry(lab, table):
    def add():
        table.update_item(Key=COUNTER, UpdateExpression="ADD n :one", ExpressionAttributeValues={":one": 1})

    def create():
        table.put_item(Item=SENTINEL, ConditionExpression="attribute_not_exists(PK)")
    counted = explore({"ana": add}, empty(table), lambda _: table.get_item(Key=COUNTER, ConsistentRead=True)["Item"]["n"] == 1,
                      faults=("lost_response",))
    assert list(counted["schedule"]) == [("ana",), ("ana!lost", "ana")]
    assert list(counted["ok"]) == [True, False]
    assert counted["steps"][1] == ("ana: UpdateItem (response lost, the SDK retries)", "ana: UpdateItem")
    created = explore({"ana": create}, empty(table), lambda _: True, faults=("lost_response",))
    assert [describe(result["ana"]) for result in created["results"]] == ["None", "ConditionalCheckFailedException"]


def test_every_order_starts_with_a_fresh_clients_retry_quota_however_many_retries_failed_before(lab, table):
    def create():
        table.put_item(Item=SENTINEL, ConditionExpression="attribute_not_exists(PK)")
    # botocore spends 14 of its 500 on each retry that ends in an error and gives 1 back for each plain success
    # (here the reset's and ana's), and stops retrying once the quota is spent: 11 a time, spent after 46 explorations
    for _ in range(60):
        created = explore({"ana": create}, lambda: table.delete_item(Key=SENTINEL), lambda _: True,
                          faults=("lost_response",))
    assert [describe(result["ana"]) for result in created["results"]] == ["None", "ConditionalCheckFailedException"]


def test_faults_are_named_and_checked(table):
    with pytest.raises(ValueError, match="faults must be a tuple of 'lost_response', 'crash'"):
        explore({"ana": lambda: None}, lambda: None, lambda _: True, faults="crash")


def test_replay_plays_an_order_with_its_fault(lab, table, capsys):
    def split():
        table.put_item(Item={**SENTINEL, "user": "ana"})
        table.put_item(Item={**PROFILE, "email": "ana@example.com"})
    results, ok = replay({"ana": split}, empty(table), ("ana!crash",), nothing_or_both(table), faults=("crash",))
    assert not ok and isinstance(results["ana"], Crashed)
    assert "--- ana (then the client crashes) ---" in capsys.readouterr().out
