"""The notebook 26 checkers pass sentinel transactions and catch check-then-write and case-sensitive sentinels."""
import pytest
from boto3.dynamodb.conditions import Attr
from botocore.exceptions import ClientError

from helpers.checks.p26 import (check_change_user_email, check_claim_handle, check_sign_up_user, handle_key,
                                profile_key, sentinel_key)
from support import notebook_functions, swallowing, hidden_missing_table

pytestmark = pytest.mark.stress

NOTEBOOK = "26-unique-constraints.ipynb"


def refused(error):
    """True for a cancelled transaction; anything else is re-raised."""
    if error.response["Error"]["Code"] != "TransactionCanceledException":
        raise error
    return True


def sign_up(table, user_id, email, fold_case=True):
    """A correct sign-up: profile and case-folded sentinel in one transaction."""
    sentinel = sentinel_key(email) if fold_case else {"PK": f"EMAIL#{email}", "SK": "EMAIL"}
    try:
        table.meta.client.transact_write_items(TransactItems=[
            {"Put": {"TableName": table.name, "Item": {**profile_key(user_id), "email": email},
                     "ConditionExpression": "attribute_not_exists(PK)"}},
            {"Put": {"TableName": table.name, "Item": {**sentinel, "user_id": user_id},
                     "ConditionExpression": "attribute_not_exists(PK)"}},
        ])
        return True
    except ClientError as error:
        return not refused(error)


def sign_up_keeping_case(table, user_id, email):
    """Broken: the sentinel key keeps the case, so spellings do not collide."""
    return sign_up(table, user_id, email, fold_case=False)


def sign_up_after_a_scan(table, user_id, email):
    """Broken: scans for the address first, then writes."""
    taken = table.scan(FilterExpression=Attr("email").eq(email.lower()) | Attr("email").eq(email))["Items"]
    if taken:
        return False
    table.put_item(Item={**profile_key(user_id), "email": email})
    table.put_item(Item={**sentinel_key(email), "user_id": user_id})
    return True


def change_email(table, user_id, new_email):
    """A correct change: guarded release, reservation and profile update in one transaction."""
    old_email = table.get_item(Key=profile_key(user_id), ConsistentRead=True)["Item"]["email"]
    try:
        table.meta.client.transact_write_items(TransactItems=[
            {"Delete": {"TableName": table.name, "Key": sentinel_key(old_email),
                        "ConditionExpression": "user_id = :me", "ExpressionAttributeValues": {":me": user_id}}},
            {"Put": {"TableName": table.name, "Item": {**sentinel_key(new_email), "user_id": user_id},
                     "ConditionExpression": "attribute_not_exists(PK)"}},
            {"Update": {"TableName": table.name, "Key": profile_key(user_id), "UpdateExpression": "SET email = :new",
                        "ConditionExpression": "email = :old",
                        "ExpressionAttributeValues": {":new": new_email, ":old": old_email}}},
        ])
        return True
    except ClientError as error:
        return not refused(error)


def change_email_in_steps(table, user_id, new_email):
    """Broken: reserves the new address but never releases the old one."""
    try:
        table.put_item(Item={**sentinel_key(new_email), "user_id": user_id},
                       ConditionExpression="attribute_not_exists(PK)")
    except ClientError as error:
        if error.response["Error"]["Code"] != "ConditionalCheckFailedException":
            raise
        return False
    table.update_item(Key=profile_key(user_id), UpdateExpression="SET email = :new",
                      ExpressionAttributeValues={":new": new_email})
    return True


def test_a_sentinel_transaction_passes_both_checkers(lab):
    signed_up, changed = check_sign_up_user(sign_up), check_change_user_email(change_email)
    assert signed_up.passed, signed_up.message
    assert changed.passed, changed.message


def test_checking_with_a_scan_first_lets_several_users_win(lab, run):
    report = check_sign_up_user(sign_up_after_a_scan)
    assert not report.passed
    assert "users were told they got" in report.message


def test_a_sentinel_without_case_folding_is_caught(lab):
    report = check_sign_up_user(sign_up_keeping_case)
    assert not report.passed


def test_a_change_that_forgets_the_old_sentinel_leaves_an_orphan(lab):
    report = check_change_user_email(change_email_in_steps)
    assert not report.passed
    assert "sentinel" in report.message


def test_the_notebooks_starting_sign_up_is_caught_in_every_order(lab, run):
    starting_sign_up, = notebook_functions(NOTEBOOK, "sign_up_user")
    report = check_sign_up_user(starting_sign_up)
    assert report.schedule == ("alice",) * 3 + ("bob",) * 3
    assert report.message == (
        "alice: Scan -> alice: PutItem -> alice: PutItem -> bob: Scan -> bob: PutItem -> bob: PutItem: 2 users were "
        "told they got neo@example.com (u0, u1) (in 80 of the 80 orders in which alice and bob's requests can reach "
        "DynamoDB)")


def test_the_notebooks_starting_change_is_caught_leaving_an_orphan_in_every_order(lab, run):
    starting_change, = notebook_functions(NOTEBOOK, "change_user_email")
    report = check_change_user_email(starting_change)
    assert report.schedule == ("alice", "alice", "bob")
    assert report.message == (
        "alice: PutItem -> alice: UpdateItem -> bob: PutItem: the sentinel EMAIL#u0@example.com names user 'u0', "
        "whose profile does not have that address (in 4 of the 4 orders in which alice and bob's requests can reach "
        "DynamoDB)")


def test_the_notebooks_solutions_pass_both_stages(lab):
    _, sign_up_solution, change_solution = notebook_functions(
        NOTEBOOK, "address_taken", "sign_up_user_solution", "change_user_email_solution")
    signed_up, changed = check_sign_up_user(sign_up_solution), check_change_user_email(change_solution)
    assert signed_up.passed and signed_up.message.endswith("and in all 6 orders of the exhaustive stage")
    assert changed.passed and changed.message.endswith("and in all 6 orders of the exhaustive stage")


def claim_handle(table, user_id, handle):
    """A correct claim: the sentinel and the profile's handle in one transaction, each conditioned."""
    try:
        table.meta.client.transact_write_items(TransactItems=[
            {"Put": {"TableName": table.name, "Item": {**handle_key(handle), "user_id": user_id},
                     "ConditionExpression": "attribute_not_exists(PK)"}},
            {"Update": {"TableName": table.name, "Key": profile_key(user_id), "UpdateExpression": "SET handle = :h",
                        "ConditionExpression": "attribute_not_exists(handle)",
                        "ExpressionAttributeValues": {":h": handle}}},
        ])
        return True
    except ClientError as error:
        return not refused(error)


def claim_handle_without_the_profile_condition(table, user_id, handle):
    """Broken: one transaction, but nothing stops a user who already has a handle from taking a second."""
    try:
        table.meta.client.transact_write_items(TransactItems=[
            {"Put": {"TableName": table.name, "Item": {**handle_key(handle), "user_id": user_id},
                     "ConditionExpression": "attribute_not_exists(PK)"}},
            {"Update": {"TableName": table.name, "Key": profile_key(user_id), "UpdateExpression": "SET handle = :h",
                        "ExpressionAttributeValues": {":h": handle}}},
        ])
        return True
    except ClientError as error:
        return not refused(error)


@pytest.mark.parametrize("checker, solution, exercise", [
    (check_sign_up_user, sign_up, "sign_up_user"), (check_change_user_email, change_email, "change_user_email"),
    (check_claim_handle, claim_handle, "claim_handle")], ids=["sign_up_user", "change_user_email", "claim_handle"])
def test_a_solution_that_swallows_every_error_fails_naming_the_error_it_hid(lab, checker, solution, exercise):
    report = checker(swallowing(solution))
    assert not report.passed
    assert report.message.startswith(hidden_missing_table(exercise))


def test_a_correct_claim_handle_passes_both_stages(lab):
    report = check_claim_handle(claim_handle)
    assert report.passed, report.message
    assert report.message.endswith("and in all 2 orders of the exhaustive stage")


def test_the_notebooks_starting_claim_handle_is_caught_in_every_order(lab, run):
    starting_claim, = notebook_functions(NOTEBOOK, "claim_handle")
    report = check_claim_handle(starting_claim)
    assert not report.passed
    assert report.message == (
        "alice: GetItem -> alice: PutItem -> bob: GetItem -> alice: UpdateItem -> bob: PutItem -> bob: UpdateItem: "
        "u0 was told yes for 2 handles (Neo, trinity) (in 18 of the 20 orders in which alice and bob's requests can "
        "reach DynamoDB)")


def test_a_claim_without_the_profile_condition_gives_one_user_two_handles(lab):
    report = check_claim_handle(claim_handle_without_the_profile_condition)
    assert not report.passed
    assert report.message.startswith("alice: TransactWriteItems -> bob: TransactWriteItems: u0 was told yes for 2 "
                                     "handles (Neo, trinity)")


def test_the_notebooks_claim_handle_solution_passes(lab):
    _, claim_solution = notebook_functions(NOTEBOOK, "address_taken", "claim_handle_solution")
    report = check_claim_handle(claim_solution)
    assert report.passed, report.message
    assert report.message.endswith("and in all 2 orders of the exhaustive stage")


def sign_up_sentinel_then_profile(table, user_id, email):
    """Broken: the sentinel and the profile in two requests; a crash between them leaves an orphan sentinel."""
    try:
        table.put_item(Item={"PK": f"EMAIL#{email.lower()}", "SK": "EMAIL", "user_id": user_id},
                       ConditionExpression="attribute_not_exists(PK)")
    except ClientError as error:
        if error.response["Error"]["Code"] != "ConditionalCheckFailedException":
            raise
        return False
    table.put_item(Item={"PK": f"USER#{user_id}", "SK": "PROFILE", "email": email})
    return True


def claim_handle_refusing_everyone(table, user_id, handle):
    """Broken: the profile condition `attribute_exists(handle)` refuses every first claim."""
    try:
        table.meta.client.transact_write_items(TransactItems=[
            {"Put": {"TableName": table.name, "Item": {**handle_key(handle), "user_id": user_id},
                     "ConditionExpression": "attribute_not_exists(PK)"}},
            {"Update": {"TableName": table.name, "Key": {"PK": f"USER#{user_id}", "SK": "PROFILE"},
                        "UpdateExpression": "SET handle = :h", "ConditionExpression": "attribute_exists(handle)",
                        "ExpressionAttributeValues": {":h": handle}}}])
        return True
    except ClientError as error:
        if error.response["Error"]["Code"] != "TransactionCanceledException":
            raise
        return False


def test_a_sentinel_and_profile_written_apart_are_caught_by_a_crash_between_them(lab):
    report = check_sign_up_user(sign_up_sentinel_then_profile)
    assert not report.passed
    assert report.message.startswith("alice: PutItem (then the client crashes) -> bob: PutItem: the sentinel "
                                     "EMAIL#neo@example.com "
                                     "names user 'u0', whose profile does not have that address. Why: u0's call "
                                     "crashed between its writes")


def test_a_claim_that_refuses_every_handle_is_caught(lab):
    report = check_claim_handle(claim_handle_refusing_everyone)
    assert not report.passed
    assert report.message.startswith("u0, with no handle yet, claimed the free handle 'Neo' and was answered False")
