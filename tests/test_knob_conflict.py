"""The transaction_conflict knob cancels transactions as a conflicting one would, applies nothing, then lets them by."""
import json
import urllib.request

import pytest
from botocore.exceptions import ClientError

from helpers import fresh_table
from helpers.knobs import get_knobs, knobs, set_knobs

TABLE = "p25-transactions"
A = {"PK": "ACCOUNT#a", "SK": "BALANCE"}
B = {"PK": "ACCOUNT#b", "SK": "BALANCE"}


pytestmark = pytest.mark.usefixtures("knobs_off")


@pytest.fixture
def table(lab):
    """Two accounts of 100."""
    table = fresh_table(TABLE, lab)
    for key in (A, B):
        table.put_item(Item={**key, "balance": 100})
    return table


def transfer(lab, amount=30):
    """Move `amount` from a to b in one TransactWriteItems; the error code it was refused with, or 'OK'."""
    update = lambda key, sign: {"Update": {"TableName": TABLE, "Key": key, "UpdateExpression": "ADD balance :d",
                                           "ExpressionAttributeValues": {":d": sign * amount}}}
    try:
        lab.client.transact_write_items(TransactItems=[update(A, -1), update(B, 1)])
    except ClientError as error:
        reasons = [reason["Code"] for reason in error.response.get("CancellationReasons", [])]
        return error.response["Error"]["Code"], error.response["Error"]["Message"], reasons
    return "OK"


def balances(table):
    """(a, b) as stored."""
    return tuple(table.get_item(Key=key, ConsistentRead=True)["Item"]["balance"] for key in (A, B))


def test_the_next_n_transactions_are_cancelled_with_nothing_applied_then_they_go_through(lab, table):
    set_knobs(lab, quiet=True, transaction_conflict=2)
    cancelled = ("TransactionCanceledException", "Transaction cancelled, please refer cancellation reasons for "
                 "specific reasons [TransactionConflict, TransactionConflict]",
                 ["TransactionConflict", "TransactionConflict"])
    assert [transfer(lab), transfer(lab)] == [cancelled, cancelled]
    assert balances(table) == (100, 100)
    assert transfer(lab) == "OK"
    assert balances(table) == (70, 130)
    assert get_knobs(lab)["conflicts_made"] == 2 and get_knobs(lab)["transaction_conflict"] == 0


def test_conflict_matching_picks_the_transactions_and_names_only_the_contested_actions(lab, table):
    set_knobs(lab, quiet=True, transaction_conflict=1, conflict_matching="ACCOUNT#b")
    table.put_item(Item={**A, "balance": 100})
    assert transfer(lab)[2] == ["None", "TransactionConflict"]
    assert balances(table) == (100, 100)


def test_other_requests_are_not_touched_and_the_banner_says_what_is_on(lab, table):
    set_knobs(lab, quiet=True, transaction_conflict=1)
    table.update_item(Key=A, UpdateExpression="ADD balance :d", ExpressionAttributeValues={":d": 1})
    assert balances(table) == (101, 100)
    assert "transaction_conflict next 1 TransactWriteItems" in lab.banner


def test_the_context_manager_turns_it_off_again(lab, table):
    with knobs(lab, quiet=True, transaction_conflict=5):
        assert transfer(lab)[0] == "TransactionCanceledException"
    assert transfer(lab) == "OK"


@pytest.mark.parametrize("values, message", [
    ({"transaction_conflict": -1}, "transaction_conflict must be a whole number from 0 (off) to 100"),
    ({"transaction_conflict": "1"}, "transaction_conflict must be a whole number"),
    ({"conflict_matching": "x"}, "conflict_matching needs transaction_conflict"),
])
def test_a_bad_setting_is_refused_with_what_is_allowed(lab, values, message):
    request = urllib.request.Request(f"{lab.endpoint}/lab/knobs", data=json.dumps(values).encode(), method="POST")
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request)
    assert message in json.loads(refused.value.read())["message"]
    assert get_knobs(lab)["transaction_conflict"] == 0
