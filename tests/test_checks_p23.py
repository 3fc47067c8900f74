"""The notebook 23 checkers pass a correct optimistic-locking loop and catch the classic broken ones."""
import itertools
import random
import time

import pytest
from botocore.exceptions import ClientError

from helpers.checks.p23 import ACCOUNT, PLAYLIST, check_deposit, check_rename, check_withdraw
from support import notebook_functions, swallowing, hidden_missing_table

pytestmark = pytest.mark.stress
NOTEBOOK = "23-optimistic-locking.ipynb"


def from_the_notebook(*names):
    """The notebook's functions, with the ACCOUNT and PLAYLIST keys its exercise cells define beside them."""
    functions = notebook_functions(NOTEBOOK, *names)
    functions[0].__globals__.update(ACCOUNT=ACCOUNT, PLAYLIST=PLAYLIST)
    return functions


def change_with_version_check(table, change, attempts=25, consistent=True, backoff=0):
    """Read, apply change(balance) -> new balance or None (refuse), write only if the version is unchanged; after a
    refusal, sleep up to backoff * 2 ** attempt (jittered), and retry, at most `attempts` times (None: forever)."""
    for attempt in range(attempts) if attempts else itertools.count():
        if attempt and backoff:
            time.sleep(random.uniform(0, backoff * 2 ** attempt))
        item = table.get_item(Key=ACCOUNT, ConsistentRead=consistent)["Item"]
        balance = change(item["balance"])
        if balance is None:
            return False
        try:
            table.put_item(Item={**item, "balance": balance, "version": item["version"] + 1},
                           ConditionExpression="version = :v", ExpressionAttributeValues={":v": item["version"]})
            return True
        except ClientError as error:
            if error.response["Error"]["Code"] != "ConditionalCheckFailedException":
                raise
    raise RuntimeError("gave up after retries")


def deposit(table, amount):
    """A correct deposit: the version-checked retry loop."""
    return change_with_version_check(table, lambda balance: balance + amount)


def withdraw(table, amount):
    """A correct withdrawal: refuses on the fresh balance, retries the intent."""
    return change_with_version_check(table, lambda balance: balance - amount if balance >= amount else None)


def deposit_reading_by_default(table, amount):
    """Also correct: the same loop on DynamoDB's default read, which may be stale; the version check catches it."""
    return change_with_version_check(table, lambda balance: balance + amount, consistent=False)


def withdraw_reading_by_default(table, amount):
    """Also correct: a stale read can only show more money than there is here, and the version check refuses the write."""
    return change_with_version_check(table, lambda balance: balance - amount if balance >= amount else None,
                                     consistent=False)


def deposit_backing_off(table, amount):
    """Also correct: 25 attempts, each refusal followed by a jittered exponential backoff that is never capped (up to
    2 ** 24 * 10 ms before the last: the checker must not wait for it)."""
    return change_with_version_check(table, lambda balance: balance + amount, backoff=0.01)


def deposit_retrying_forever(table, amount):
    """Broken: the version-checked loop, with no bound: it waits as long as other writers keep winning."""
    return change_with_version_check(table, lambda balance: balance + amount, attempts=None)


def withdraw_retrying_forever(table, amount):
    """Broken: the same for a withdrawal."""
    return change_with_version_check(table, lambda balance: balance - amount if balance >= amount else None,
                                     attempts=None)


def returning_false_after(attempts):
    """Broken: the version-checked loop, bounded, that returns False instead of raising when its attempts run out."""
    def change(table, balance_change):
        try:
            return change_with_version_check(table, balance_change, attempts=attempts)
        except RuntimeError:
            return False
    return change


def deposit_returning_false(table, amount):
    """Broken: 25 attempts, then False: its caller reads a refusal where the deposit only met other writers."""
    return returning_false_after(25)(table, lambda balance: balance + amount)


def withdraw_returning_false(table, amount):
    """Broken: the same for a withdrawal, whose False says the balance is too low."""
    return returning_false_after(25)(table, lambda balance: balance - amount if balance >= amount else None)


def deposit_without_version_check(table, amount):
    """Broken: read, add, put back, no condition."""
    item = table.get_item(Key=ACCOUNT)["Item"]
    table.put_item(Item={**item, "balance": item["balance"] + amount, "version": item["version"] + 1})
    return True


def deposit_with_add(table, amount):
    """Broken for this exercise: the balance is right but the version never moves."""
    table.update_item(Key=ACCOUNT, UpdateExpression="ADD balance :a", ExpressionAttributeValues={":a": amount})
    return True


def withdraw_retrying_the_stale_write(table, amount):
    """Broken: computes the new balance once and retries that stale write."""
    item = table.get_item(Key=ACCOUNT, ConsistentRead=True)["Item"]
    if item["balance"] < amount:
        return False
    balance = item["balance"] - amount
    return change_with_version_check(table, lambda _: balance)


def rename(table, title):
    """A correct rename: only the title changes, and the version rises."""
    table.update_item(Key=PLAYLIST, UpdateExpression="SET title = :t, version = version + :one",
                      ExpressionAttributeValues={":t": title, ":one": 1})
    return True


def rename_through_the_versioned_loop(table, title):
    """Also correct: read, put the whole item back if the version held, retry on a refusal."""
    for _ in range(25):
        item = table.get_item(Key=PLAYLIST, ConsistentRead=True)["Item"]
        try:
            table.put_item(Item={**item, "title": title, "version": item["version"] + 1},
                           ConditionExpression="version = :v", ExpressionAttributeValues={":v": item["version"]})
            return True
        except ClientError as error:
            if error.response["Error"]["Code"] != "ConditionalCheckFailedException":
                raise
    raise RuntimeError("gave up after retries")


def rename_that_leaves_the_version(table, title):
    """Broken: sets only the title, so add_song's stale copy passes its version check."""
    table.update_item(Key=PLAYLIST, UpdateExpression="SET title = :t", ExpressionAttributeValues={":t": title})
    return True


@pytest.mark.parametrize("read, behaviours", [("strongly consistent", 4), ("the default, as DynamoDB answers it", 16)])
def test_a_versioned_retry_loop_passes_both_checkers_whichever_read_it_makes(lab, read, behaviours):
    loops = (deposit, withdraw) if read == "strongly consistent" else (deposit_reading_by_default,
                                                                       withdraw_reading_by_default)
    for report in (check_deposit(loops[0]), check_withdraw(loops[1])):
        assert report.passed, report.message
        assert report.message.endswith(f"and in all {behaviours} distinct orders of the exhaustive stage")


def test_the_exhaustive_stage_catches_the_notebooks_starting_deposit_on_every_run(lab, run):
    starting_deposit, = from_the_notebook("deposit")
    report = check_deposit(starting_deposit)
    assert not report.passed
    assert report.message == (
        "alice: GetItem -> bob: GetItem -> alice: PutItem -> bob: PutItem: the balance is 110, but 2 calls reported "
        "success and should have left 120 (in 4 of the 6 distinct orders in which alice and bob's requests can reach "
        "DynamoDB). Why: "
        "bob's GetItem read ACCOUNT#a1/META as the setup left it; alice's PutItem wrote a newer version; bob's "
        "PutItem wrote ACCOUNT#a1/META over alice's: a lost update (Elle: lost-update, a G-single-item cycle). A "
        "read and then a write are two requests: put the check in the write itself, a ConditionExpression "
        "(attribute_not_exists, or version = :read), so that it is refused once another write came between")
    assert report.schedule == ("alice", "bob", "alice", "bob")


def test_the_exhaustive_stage_catches_the_notebooks_starting_withdraw_on_every_run(lab, run):
    starting_withdraw, = from_the_notebook("withdraw")
    report = check_withdraw(starting_withdraw)
    assert not report.passed
    assert report.message == (
        "alice: GetItem -> alice: GetItem -> bob: GetItem -> alice: PutItem -> bob: GetItem -> bob: PutItem: "
        "2 withdrawals of 60 from 100 reported success (exactly 1 can); the balance is 40 (in 4 of the 6 distinct "
        "orders in which alice and bob's requests can reach DynamoDB). Why: "
        "bob's GetItem read ACCOUNT#a1/META as the setup left it; alice's PutItem wrote a newer version; bob's "
        "PutItem wrote ACCOUNT#a1/META over alice's: a lost update (Elle: lost-update, a G-single-item cycle). "
        "bob's PutItem was checked (version = 2), and the check held though alice's PutItem had written the item: "
        "alice's write did not change what the condition tests. Make every write of the item change it (raise the "
        "version: SET version = version + :one), or test what the writes change")
    assert report.schedule == ("alice", "alice", "bob", "alice", "bob", "bob")


def test_the_notebooks_solutions_pass_both_stages(lab):
    deposit_solution, withdraw_solution, _ = from_the_notebook("deposit_solution", "withdraw_solution",
                                                               "change_balance")
    for report in check_deposit(deposit_solution), check_withdraw(withdraw_solution):
        assert report.passed, report.message
        assert report.message.endswith("and in all 4 distinct orders of the exhaustive stage")


def test_a_loop_with_a_backoff_that_would_sleep_for_days_passes_without_the_checker_waiting(lab):
    report = check_deposit(deposit_backing_off)
    assert report.passed, report.message


@pytest.mark.parametrize("checker, loop, exercise, then", [
    (check_deposit, deposit_retrying_forever, "deposit", "returned True"),
    (check_withdraw, withdraw_retrying_forever, "withdraw", "returned True")], ids=["deposit", "withdraw"])
def test_a_loop_that_never_gives_up_is_caught_by_a_writer_that_wins_25_races(lab, checker, loop, exercise, then):
    report = checker(loop)
    assert not report.passed
    assert report.message == (
        f"another writer deposited 10 before each of {exercise}'s writes, so its version check was refused 25 times in "
        f"a row, and {exercise} tried again instead of giving up (26 attempts in all, then {then}): raise after 25 "
        "attempts, as the exercise asks. A loop with no bound keeps its caller waiting as long as others keep "
        "winning; the error tells it to try later (one call at a time)")


@pytest.mark.parametrize("checker, loop, exercise", [(check_deposit, deposit_returning_false, "deposit"),
                                                     (check_withdraw, withdraw_returning_false, "withdraw")],
                         ids=["deposit", "withdraw"])
def test_a_loop_that_returns_false_when_its_attempts_run_out_is_caught(lab, checker, loop, exercise):
    report = checker(loop)
    assert not report.passed
    assert report.message == (
        f"another writer deposited 10 before each of {exercise}'s writes, so its version check was refused 25 times in "
        f"a row, and {exercise} returned False: raise after 25 attempts, as the exercise asks (an except that turns "
        "the error into a return value hides it too). The version check was refused because others wrote first, not "
        f"because the {exercise} cannot be made (the balance is 350): False tells the caller it was refused for good, "
        "where an error tells it to try later (one call at a time)")


def test_a_deposit_without_the_version_check_loses_updates(lab, run):
    report = check_deposit(deposit_without_version_check)
    assert not report.passed
    assert report.message.startswith("alice: GetItem -> bob: GetItem -> alice: PutItem -> bob: PutItem: the balance "
                                     "is 110, but 2 calls reported success and should have left 120")


def test_a_deposit_that_skips_the_version_is_caught_even_when_the_balance_is_right(lab):
    report = check_deposit(deposit_with_add)
    assert not report.passed
    assert report.message.startswith("alice: UpdateItem -> bob: UpdateItem: the version is 1 after 2 successful "
                                     "writes from version 1")


def test_retrying_the_stale_write_is_caught(lab, run):
    report = check_withdraw(withdraw_retrying_the_stale_write)
    assert not report.passed
    assert report.message.startswith("alice: GetItem -> alice: GetItem -> bob: GetItem -> alice: PutItem -> "
                                     "bob: GetItem -> bob: PutItem: 2 withdrawals of 60 from 100 reported success")


def test_a_checker_refuses_something_that_is_not_a_function(lab):
    with pytest.raises(TypeError, match="Pass your function itself"):
        check_deposit("deposit")


def test_both_correct_renames_pass(lab):
    for correct, orders in (rename, 3), (rename_through_the_versioned_loop, 4):
        report = check_rename(correct)
        assert report.passed, report.message
        assert report.message.endswith(f"and in all {orders} distinct orders of the exhaustive stage")


def test_the_exhaustive_stage_catches_the_notebooks_starting_rename_on_every_run(lab, run):
    starting_rename, = from_the_notebook("rename")
    report = check_rename(starting_rename)
    assert not report.passed
    assert report.message == (
        "alice: GetItem -> bob: GetItem -> bob: PutItem -> alice: PutItem: the playlist lost song-1: a rename put "
        "back a copy read before the song was added (in 2 of the 5 distinct orders in which alice and bob's requests "
        "can reach DynamoDB). Why: "
        "alice's GetItem read PLAYLIST#p1/META as the setup left it; bob's PutItem wrote a newer version; alice's "
        "PutItem wrote PLAYLIST#p1/META over bob's: a lost update (Elle: lost-update, a G-single-item cycle). A "
        "read and then a write are two requests: put the check in the write itself, a ConditionExpression "
        "(attribute_not_exists, or version = :read), so that it is refused once another write came between")
    assert report.schedule == ("alice", "bob", "bob", "alice")


def test_the_notebooks_rename_solution_passes(lab):
    rename_solution, = from_the_notebook("rename_solution")
    report = check_rename(rename_solution)
    assert report.passed, report.message


def test_a_rename_that_does_not_raise_the_version_is_caught(lab):
    report = check_rename(rename_that_leaves_the_version)
    assert not report.passed
    assert report.message.startswith("alice: UpdateItem -> bob: GetItem -> bob: PutItem: the version is 2 after 2 "
                                     "successful writes from version 1: a rename must raise it too")


def test_a_rename_that_swallows_every_error_fails_naming_the_error_it_hid(lab):
    report = check_rename(swallowing(rename))
    assert not report.passed
    assert report.message.startswith(hidden_missing_table("rename"))


@pytest.mark.parametrize("checker, solution", [(check_deposit, deposit), (check_withdraw, withdraw)],
                         ids=["deposit", "withdraw"])
def test_a_loop_that_swallows_every_error_fails_on_the_give_up_it_hid(lab, checker, solution):
    report = checker(swallowing(solution))
    assert not report.passed
    assert ("refused 25 times in a row, and" in report.message and "returned False: raise after 25 attempts" in
            report.message and "an except that turns the error into a return value hides it too" in report.message)


def test_the_rename_checker_refuses_something_that_is_not_a_function(lab):
    with pytest.raises(TypeError, match="Pass your function itself"):
        check_rename("rename")
