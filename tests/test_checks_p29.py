"""The notebook 29 checkers pass correct solutions and catch the broken ones learners write."""

import pytest
from botocore.exceptions import ClientError

from helpers import connect
from helpers.checks.p29 import check_acquire, check_claim_job, check_write_fenced
from support import notebook_functions, refused, swallowing, hidden_missing_table

NOTEBOOK = "29-distributed-locking.ipynb"
ORDERS = "orders in which alice and bob's requests can reach DynamoDB)"


def acquire_with_condition(table, name, owner, now, lease=2, condition="attribute_not_exists(PK) OR expiresAt < :now"):
    try:
        values = {"ExpressionAttributeValues": {":now": now}} if ":now" in condition else {}  # unused ones are refused
        table.put_item(Item={"PK": f"LOCK#{name}", "SK": "LOCK", "owner": owner, "expiresAt": now + lease},
                       ConditionExpression=condition, **values)
        return True
    except ClientError as error:
        if not refused(error):
            raise
        return False


def acquire_after_reading(table, name, owner, now, lease=2):
    key = {"PK": f"LOCK#{name}", "SK": "LOCK"}
    current = table.get_item(Key=key, ConsistentRead=True).get("Item")
    if current and current["expiresAt"] >= now:
        return False
    table.put_item(Item={**key, "owner": owner, "expiresAt": now + lease})
    return True


def write_if_newer(table, token, text):
    try:
        table.put_item(Item={"PK": "REPORT#invoice-run", "SK": "REPORT", "fence": token, "text": text},
                       ConditionExpression="attribute_not_exists(fence) OR fence <= :token",
                       ExpressionAttributeValues={":token": token})
        return True
    except ClientError as error:
        if not refused(error):
            raise
        return False


def test_a_conditional_acquire_passes():
    report = check_acquire(acquire_with_condition)
    assert report.passed, report.message


TAKEN_OVER_TWICE = ("alice: GetItem -> bob: GetItem -> alice: PutItem -> bob: PutItem: 2 workers were told they hold "
                    "the lock at now=1003 (the lease had run out at 1002) (taker-0, taker-1); the lock item names "
                    f"taker-1 (in 4 of the 6 {ORDERS}")


def test_read_then_write_is_caught_granting_the_lock_twice():
    report = check_acquire(acquire_after_reading)
    assert not report.passed
    assert report.message == TAKEN_OVER_TWICE


def test_an_acquire_that_forgets_the_lease_is_caught_taking_a_held_lock():
    report = check_acquire(lambda table, name, owner, now: acquire_with_condition(table, name, owner, now, lease=0))
    assert not report.passed
    assert report.message == ("1 of 2 workers took the lock at now=1001 while its lease ran to 1002 "
                              "(with 2 concurrent calls)")


def test_an_acquire_that_never_expires_is_caught_at_the_takeover():
    report = check_acquire(lambda *args: acquire_with_condition(*args, condition="attribute_not_exists(PK)"))
    assert not report.passed
    assert report.message == ("alice: PutItem -> bob: PutItem: 0 workers were told they hold the lock at now=1003 "
                              "(the lease had run out at 1002) (nobody); the lock item names crashed "
                              f"(in 2 of the 2 {ORDERS}")


def test_a_token_checked_write_passes():
    report = check_write_fenced(write_if_newer)
    assert report.passed, report.message


def test_an_unfenced_write_is_caught_by_the_late_stale_write():
    def last_writer_wins(table, token, text):
        table.put_item(Item={"PK": "REPORT#invoice-run", "SK": "REPORT", "fence": token, "text": text})
        return True

    report = check_write_fenced(last_writer_wins)
    assert not report.passed
    assert report.message == ("alice: PutItem -> bob: PutItem: a late write with token 1 after token 2 was answered "
                              f"True and left 'late report 1' (in 2 of the 2 {ORDERS}")


def test_a_write_that_raises_when_refused_is_caught():
    def raises(table, token, text):
        table.put_item(Item={"PK": "REPORT#invoice-run", "SK": "REPORT", "fence": token, "text": text},
                       ConditionExpression="attribute_not_exists(fence) OR fence <= :token",
                       ExpressionAttributeValues={":token": token})
        return True

    report = check_write_fenced(raises)
    assert not report.passed
    assert report.message == ("alice: PutItem -> bob: PutItem: a late write with token 1 after token 2 was "
                              "answered 'ConditionalCheckFailedException: The conditional request failed' and left "
                              f"'report 2' (in 2 of the 2 {ORDERS}")


@pytest.mark.stress
def test_the_notebooks_starting_acquire_is_caught_taking_over_twice(lab, run):
    starting_acquire, = notebook_functions(NOTEBOOK, "acquire")
    report = check_acquire(starting_acquire)
    assert report.schedule == ("alice", "bob", "alice", "bob")
    assert report.message == TAKEN_OVER_TWICE


@pytest.mark.stress
def test_the_notebooks_starting_write_fenced_is_caught_in_every_order(lab, run):
    starting_write, = notebook_functions(NOTEBOOK, "write_fenced")
    report = check_write_fenced(starting_write)
    assert report.schedule == ("alice", "bob")
    assert report.message == ("alice: PutItem -> bob: PutItem: a late write with token 1 after token 2 was answered "
                              f"True and left 'late report 1' (in 2 of the 2 {ORDERS}")


def test_the_notebooks_solutions_pass_both_stages(lab):
    acquire_solution, write_solution = notebook_functions(NOTEBOOK, "acquire_solution", "write_fenced_solution")
    for solution in (acquire_solution, write_solution):
        solution.__globals__["cond_failed"] = connect(quiet=True).client.exceptions.ConditionalCheckFailedException
    acquired, written = check_acquire(acquire_solution), check_write_fenced(write_solution)
    assert acquired.passed and acquired.message.endswith("and in all 2 orders of the exhaustive stage")
    assert written.passed and written.message.endswith("and in all 2 orders of the exhaustive stage")


def claim_with_condition(table, jobs, worker, now, lease=30, condition="attribute_not_exists(PK) OR expiresAt < :now"):
    """Claim the first free job under `condition`; a refusal moves on to the next job."""
    values = {"ExpressionAttributeValues": {":now": now}} if ":now" in condition else {}
    for job in jobs:
        try:
            table.put_item(Item={"PK": f"CLAIM#{job}", "SK": "CLAIM", "worker": worker, "expiresAt": now + lease},
                           ConditionExpression=condition, **values)
            return job
        except ClientError as error:
            if not refused(error):
                raise
    return None


def claim_after_reading_expiry(table, jobs, worker, now, lease=30):
    """Broken: judges the claim by expiresAt, but reads, decides, then writes."""
    for job in jobs:
        key = {"PK": f"CLAIM#{job}", "SK": "CLAIM"}
        current = table.get_item(Key=key, ConsistentRead=True).get("Item")
        if current and current["expiresAt"] >= now:
            continue
        table.put_item(Item={**key, "worker": worker, "expiresAt": now + lease})
        return job
    return None


CLAIM_BY_EXISTENCE = ("alice: GetItem -> alice: GetItem -> alice: PutItem -> bob: GetItem -> bob: GetItem: "
                      "worker-1 was told no job is free at now=1003, but job-1 is: its claim by crashed ran out at "
                      "1002 (in 20 of the 20 orders in which alice and bob's requests can reach DynamoDB)")


def test_a_conditional_claim_passes_both_stages():
    report = check_claim_job(claim_with_condition)
    assert report.passed and report.message.endswith("and in all 2 orders of the exhaustive stage"), report.message


def test_a_claim_judged_by_the_item_existing_is_caught_leaving_an_expired_job():
    report = check_claim_job(lambda *args: claim_with_condition(*args, condition="attribute_not_exists(PK)"))
    assert not report.passed
    assert report.message.startswith("alice: PutItem -> alice: PutItem -> bob: PutItem -> bob: PutItem: worker-1 "
                                     "was told no job is free at now=1003, but job-1 is: its claim by crashed ran "
                                     "out at 1002")


def test_reading_the_expiry_then_writing_is_caught_giving_a_job_twice():
    report = check_claim_job(claim_after_reading_expiry)
    assert not report.passed
    assert report.message == ("alice: GetItem -> bob: GetItem -> alice: PutItem -> bob: PutItem: 2 workers were told "
                              f"job-1 is theirs (worker-0, worker-1); its claim names worker-1 (in 4 of the 6 {ORDERS}")


@pytest.mark.stress
def test_the_notebooks_starting_claim_job_is_caught_in_the_exhaustive_stage(lab, run):
    starting_claim, = notebook_functions(NOTEBOOK, "claim_job")
    report = check_claim_job(starting_claim)
    assert report.schedule[:3] == ("alice", "alice", "alice")
    assert report.message == CLAIM_BY_EXISTENCE


def test_the_notebooks_claim_job_solution_passes(lab):
    solution, = notebook_functions(NOTEBOOK, "claim_job_solution")
    solution.__globals__["cond_failed"] = connect(quiet=True).client.exceptions.ConditionalCheckFailedException
    report = check_claim_job(solution)
    assert report.passed and report.message.endswith("and in all 2 orders of the exhaustive stage"), report.message


@pytest.mark.parametrize("checker, solution, hidden", [
    (check_acquire, acquire_with_condition, False), (check_write_fenced, write_if_newer, False),
    (check_claim_job, claim_with_condition, None)], ids=["acquire", "write_fenced", "claim_job"])
def test_a_solution_that_swallows_every_error_fails_naming_the_error_it_hid(lab, checker, solution, hidden):
    report = checker(swallowing(solution, hidden))
    assert not report.passed
    assert report.message.startswith(hidden_missing_table(checker.__name__[len('check_'):], hidden)), report.message


def write_fenced_strictly_newer(table, token, text):
    """Broken: `fence < :token` refuses the lock holder's own second write with its token."""
    try:
        table.put_item(Item={"PK": "REPORT#invoice-run", "SK": "REPORT", "fence": token, "text": text},
                       ConditionExpression="attribute_not_exists(fence) OR fence < :token",
                       ExpressionAttributeValues={":token": token})
        return True
    except ClientError as error:
        if not refused(error):
            raise
        return False


def test_a_fence_that_refuses_the_holders_second_write_is_caught(lab):
    report = check_write_fenced(write_fenced_strictly_newer)
    assert not report.passed
    assert report.message.startswith("alice: PutItem -> bob: PutItem: the holder of token 2 wrote a second time with the "
                                     "same token and was answered False, leaving 'report 2': the lock holder's own next "
                                     "write must be accepted (fence <= :token, not fence < :token) (in 2 of the 2 ")
