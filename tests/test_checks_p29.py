"""The notebook 29 checkers pass correct solutions and catch the broken ones learners write."""

import pytest
from botocore.exceptions import ClientError

from helpers import connect
from helpers.checks.p29 import check_claim_job, check_release, check_renew
from support import all_or_nothing, notebook_functions, refused, swallowing, hidden_missing_table

NOTEBOOK = "29-distributed-locking.ipynb"
ORDERS = "distinct orders in which alice and bob's requests can reach DynamoDB)"


def renew_under(condition, extend=lambda now, lease: now + lease):
    """A conditional renew: SET expiresAt = extend(now, lease) under `condition`; a refusal answers False."""
    def renew(table, name, owner, now, lease=2):
        values = {":me": owner, ":now": now}
        try:
            table.update_item(Key={"PK": f"LOCK#{name}", "SK": "LOCK"}, UpdateExpression="SET expiresAt = :later",
                              ConditionExpression=condition,
                              **({"ExpressionAttributeNames": {"#o": "owner"}} if "#o" in condition else {}),
                              ExpressionAttributeValues={":later": extend(now, lease),
                                                         **{k: v for k, v in values.items() if k in condition}})
            return True
        except ClientError as error:
            if not refused(error):
                raise
            return False
    return renew


def release_under(condition, action="REMOVE #o, expiresAt"):
    """A conditional release: UpdateItem `action` (or DeleteItem for "delete") under `condition`; a refusal is False."""
    def release(table, name, owner, token):
        key = {"PK": f"LOCK#{name}", "SK": "LOCK"}
        values = {k: v for k, v in {":me": owner, ":token": token}.items() if k in condition}
        written = dict(Key=key, ConditionExpression=condition, ExpressionAttributeNames={"#o": "owner"},
                       ExpressionAttributeValues=values)
        try:
            if action == "delete":
                table.delete_item(**written)
            else:
                table.update_item(UpdateExpression=action, **written)
            return True
        except ClientError as error:
            if not refused(error):
                raise
            return False
    return release


def in_one_transaction(table, update, attempts=5):
    """A write as a one-action TransactWriteItems (`update`: its Update action, without TableName), sent again after a
    jittered backoff while it meets another transaction, at most `attempts` times; True if applied, False if its
    condition refused it."""
    return all_or_nothing(table, [{"Update": {"TableName": table.name, **update}}], attempts)


def renew_in_a_transaction(table, name, owner, now, lease=2):
    """Also correct: the conditional renew as a one-action transaction, sent again on a conflict."""
    return in_one_transaction(table, {
        "Key": {"PK": f"LOCK#{name}", "SK": "LOCK"}, "UpdateExpression": "SET expiresAt = :later",
        "ConditionExpression": "#o = :me AND expiresAt >= :now", "ExpressionAttributeNames": {"#o": "owner"},
        "ExpressionAttributeValues": {":me": owner, ":now": now, ":later": now + lease}})


def release_in_a_transaction(table, name, owner, token):
    """Also correct: the conditional release as a one-action transaction, sent again on a conflict."""
    return in_one_transaction(table, {
        "Key": {"PK": f"LOCK#{name}", "SK": "LOCK"}, "UpdateExpression": "REMOVE #o, expiresAt",
        "ConditionExpression": "#o = :me AND fence = :token", "ExpressionAttributeNames": {"#o": "owner"},
        "ExpressionAttributeValues": {":me": owner, ":token": token}})


RENEW_RACE = ("alice: GetItem -> bob: PutItem -> alice: UpdateItem: 2 workers were told they hold the lock "
              "(worker-A's renew at now=1002, worker-C's takeover at now=1003); the lock item holds owner worker-C, "
              "expiresAt 1004: a renew must check the owner and the lease in the same write as it extends it "
              f"(ConditionExpression), not in a read before it (in 1 of the 3 {ORDERS}. Why: "
              "alice's GetItem read LOCK#invoice-run/LOCK as the setup left it; bob's PutItem wrote a newer "
              "version; alice's UpdateItem wrote LOCK#invoice-run/LOCK over bob's: a lost update (Elle: "
              "lost-update, a G-single-item cycle). A read and then a write are two requests: put the check in "
              "the write itself, a ConditionExpression (attribute_not_exists, or version = :read), so that it is "
              "refused once another write came between")
RELEASE_DELETES = ("alice: DeleteItem -> bob: UpdateItem: the takeovers were answered: worker-A's takeover at now=1003 "
                   "got token 1, where exactly one should get token 2: the release deleted the lock item and its fence "
                   "counter with it, so the next grant's ADD fence :one counts from nothing and tokens repeat. REMOVE "
                   f"owner and expiresAt; keep fence (in 2 of the 2 {ORDERS}")


@pytest.mark.stress
def test_the_notebooks_starting_renew_is_caught_extending_a_lock_taken_over_between_its_read_and_write(lab, run):
    starting_renew, = notebook_functions(NOTEBOOK, "renew")
    report = check_renew(starting_renew)
    assert report.schedule == ("alice", "bob", "alice")
    assert report.message == RENEW_RACE


@pytest.mark.stress
def test_the_notebooks_starting_release_is_caught_throwing_the_fence_counter_away(lab, run):
    starting_release, = notebook_functions(NOTEBOOK, "release")
    starting_release.__globals__["cond_failed"] = connect(quiet=True).client.exceptions.ConditionalCheckFailedException
    report = check_release(starting_release)
    assert report.schedule == ("alice", "bob")
    assert report.message == RELEASE_DELETES


def test_the_notebooks_renew_and_release_solutions_pass_both_stages(lab):
    renew_solution, release_solution = notebook_functions(NOTEBOOK, "renew_solution", "release_solution")
    for solution in (renew_solution, release_solution):
        solution.__globals__["cond_failed"] = connect(quiet=True).client.exceptions.ConditionalCheckFailedException
    for report in (check_renew(renew_solution), check_release(release_solution)):
        assert report.passed and report.message.endswith("and in all 2 distinct orders of the exhaustive stage"), \
            report.message


def test_a_renew_that_checks_only_the_owner_is_caught_reviving_a_lease_that_ran_out():
    report = check_renew(renew_under("#o = :me"))
    assert not report.passed
    assert report.message.startswith("alice: UpdateItem -> bob: PutItem: then worker-A, whose lease ran out at 1008, "
                                     "renewed at now=1009 and was answered True, leaving owner worker-A, expiresAt "
                                     "1011: once expiresAt < now the lock is free for anyone to take"), report.message


def test_a_renew_that_ends_the_lease_a_second_early_is_caught_at_its_last_second():
    report = check_renew(renew_under("#o = :me AND expiresAt > :now"))
    assert not report.passed
    assert report.message.startswith("alice: UpdateItem -> bob: PutItem: then worker-C, which holds lock 'invoice-run' "
                                     "until 1007, renewed at now=1007 (the last second of its lease) and was answered "
                                     "False"), report.message
    assert "renew needs expiresAt >= :now, not expiresAt > :now" in report.message


def test_a_renew_that_checks_only_the_lease_is_caught_renewing_another_workers_lock():
    report = check_renew(renew_under("expiresAt >= :now"))
    assert not report.passed
    assert report.message.startswith("alice: UpdateItem -> bob: PutItem: then worker-C, who does not hold lock "
                                     "'invoice-run' (worker-A does, until 1004), renewed at now=1003 and was answered "
                                     "True"), report.message


def test_a_renew_that_ignores_the_lease_it_is_given_is_caught():
    report = check_renew(renew_under("#o = :me AND expiresAt >= :now", extend=lambda now, lease: now + 2))
    assert not report.passed
    assert "renewed at now=1003 (asking for lease=3) and was answered True, leaving owner worker-A, expiresAt 1005: " \
           "the holder's renew must succeed and set expiresAt to now + lease = 1006" in report.message, report.message


def test_a_renew_that_refuses_everything_is_caught_as_useless():
    report = check_renew(lambda table, name, owner, now, lease=2: False)
    assert not report.passed
    assert report.message.startswith("bob: PutItem: then worker-C, which holds lock 'invoice-run' until 1005, renewed "
                                     "at now=1004 (asking for lease=3) and was answered False"), report.message
    assert "a renew that refuses its own holder is safe but useless" in report.message


def test_a_renew_for_one_hard_coded_lock_is_caught_on_another_lock():
    renew = renew_under("#o = :me AND expiresAt >= :now")
    report = check_renew(lambda table, name, owner, now, lease=2: renew(table, "invoice-run", owner, now, lease))
    assert not report.passed
    assert report.message.startswith("then taker-1, which holds lock 'migration' until 1005"), report.message
    assert report.message.endswith("(with 2 concurrent calls)")


def test_a_release_that_checks_only_the_owner_is_caught_freeing_a_newer_grant():
    report = check_release(release_under("#o = :me"))
    assert not report.passed
    assert report.message.startswith("alice: UpdateItem -> bob: UpdateItem: then worker-A's release with its old token "
                                     "1 (from the grant before) was answered True and left fence 2: the owner alone "
                                     "cannot tell two grants to the same worker apart"), report.message


def test_a_release_that_deletes_the_item_is_caught_even_with_the_right_condition():
    report = check_release(release_under("#o = :me AND fence = :token", action="delete"))
    assert not report.passed
    assert report.message == RELEASE_DELETES


def test_a_release_that_refuses_its_holders_own_token_is_caught():
    report = check_release(release_under("#o = :me AND fence < :token"))
    assert not report.passed
    assert report.message.startswith("alice: UpdateItem -> bob: UpdateItem: then the holder worker-A released with its "
                                     "token 2 and was answered False, leaving owner worker-A, expiresAt 1005, fence 2: "
                                     "the holder's release with its own token must free the lock"), report.message


def test_a_release_that_leaves_the_lease_behind_is_caught():
    report = check_release(release_under("#o = :me AND fence = :token", action="REMOVE #o"))
    assert not report.passed
    assert "released with its token 2 and was answered True, leaving expiresAt 1005, fence 2: a released lock keeps " \
           "only its key and fence" in report.message, report.message


def test_a_release_that_reads_then_writes_is_caught_freeing_the_takeover():
    def release_after_reading(table, name, owner, token):
        key = {"PK": f"LOCK#{name}", "SK": "LOCK"}
        current = table.get_item(Key=key, ConsistentRead=True).get("Item")
        if not current or current.get("owner") != owner or current.get("fence") != token:
            return False
        table.update_item(Key=key, UpdateExpression="REMOVE #o, expiresAt",
                          ExpressionAttributeNames={"#o": "owner"})
        return True

    report = check_release(release_after_reading)
    assert not report.passed
    assert report.message == ("alice: GetItem -> bob: UpdateItem -> alice: UpdateItem: worker-A's takeover at "
                              "now=1003 got token 2, but the lock item then holds fence 2: a release with token 1 "
                              "freed the newer grant; the condition must check the token (fence = :token) in the same "
                              f"write (in 1 of the 3 {ORDERS}. Why: "
                              "alice's GetItem read LOCK#invoice-run/LOCK as the setup left it; bob's UpdateItem "
                              "wrote a newer version; alice's UpdateItem wrote LOCK#invoice-run/LOCK over bob's: "
                              "a lost update (Elle: lost-update, a G-single-item cycle). A read and then a write "
                              "are two requests: put the check in the write itself, a ConditionExpression "
                              "(attribute_not_exists, or version = :read), so that it is refused once another "
                              "write came between")


@pytest.mark.parametrize("checker, transactional", [(check_renew, renew_in_a_transaction),
                                                     (check_release, release_in_a_transaction)],
                         ids=["renew", "release"])
def test_a_lock_written_as_a_one_action_transaction_passes_though_the_takeover_meets_it_in_flight(lab, checker,
                                                                                                transactional):
    """On DynamoDB the checker's own takeover (a plain write) can meet the learner's transaction in flight and be
    refused with TransactionConflictException; the checker must send it again itself, not blame the learner."""
    refused_plain_writes = []

    def count(parsed, model, **_):
        if parsed.get("Error", {}).get("Code") == "TransactionConflictException":
            refused_plain_writes.append(model.name)

    lab.client.meta.events.register("after-call.dynamodb", count)
    try:
        report = checker(transactional)
    finally:
        lab.client.meta.events.unregister("after-call.dynamodb", count)
    assert report.passed, report.message
    if lab.kind == "embedded":  # only the lab server keeps a transaction ongoing for the takeover to meet
        assert refused_plain_writes, "in some order the takeover met the transaction in flight, and was sent again"
        assert report.message.endswith("and in all 5 distinct orders of the exhaustive stage"), report.message


def test_a_release_judged_by_the_token_alone_passes():
    report = check_release(release_under("fence = :token"))
    assert report.passed, report.message


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
                      f"1002 (in 4 of the 4 {ORDERS}")


def test_a_conditional_claim_passes_both_stages():
    report = check_claim_job(claim_with_condition)
    assert report.passed and report.message.endswith("and in all 2 distinct orders of the exhaustive stage"), \
        report.message


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
                              f"job-1 is theirs (worker-0, worker-1); its claim names worker-1 (in 2 of the 4 {ORDERS}. Why: "
                              "bob's GetItem read CLAIM#job-1/CLAIM as the setup left it; alice's PutItem wrote a "
                              "newer version; bob's PutItem wrote CLAIM#job-1/CLAIM over alice's: a lost update "
                              "(Elle: lost-update, a G-single-item cycle). A read and then a write are two "
                              "requests: put the check in the write itself, a ConditionExpression "
                              "(attribute_not_exists, or version = :read), so that it is refused once another "
                              "write came between")


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
    assert report.passed and report.message.endswith("and in all 2 distinct orders of the exhaustive stage"), \
        report.message


@pytest.mark.parametrize("checker, solution, hidden", [
    (check_renew, renew_under("#o = :me AND expiresAt >= :now"), False),
    (check_release, release_under("#o = :me AND fence = :token"), False),
    (check_claim_job, claim_with_condition, None)], ids=["renew", "release", "claim_job"])
def test_a_solution_that_swallows_every_error_fails_naming_the_error_it_hid(lab, checker, solution, hidden):
    report = checker(swallowing(solution, hidden))
    assert not report.passed
    assert report.message.startswith(hidden_missing_table(checker.__name__[len('check_'):], hidden)), report.message
