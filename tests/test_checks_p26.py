"""The notebook 26 checkers pass sentinel transactions and catch check-then-write, case-sensitive sentinels, misread
CancellationReasons and unguarded releases of an old address."""
import random
import time

import pytest
from botocore.exceptions import ClientError

from helpers.checks.p26 import (check_change_user_email, check_claim_handle, check_sign_up_user, freed_address,
                                handle_key, phone_key, profile_key, sentinel_key)
from support import all_or_nothing, notebook_functions, swallowing, hidden_missing_table

pytestmark = pytest.mark.stress

NOTEBOOK = "26-unique-constraints.ipynb"


def sign_up_actions(table, user_id, email, phone, fold_case=True):
    """The three Puts of a sign-up, each with attribute_not_exists(PK): profile, email sentinel, phone sentinel."""
    email_key = sentinel_key(email) if fold_case else {"PK": f"EMAIL#{email}", "SK": "EMAIL"}
    items = ({**profile_key(user_id), "email": email, "phone": phone}, {**email_key, "user_id": user_id},
             {**phone_key(phone), "user_id": user_id})
    return [{"Put": {"TableName": table.name, "Item": item, "ConditionExpression": "attribute_not_exists(PK)"}}
            for item in items]


def reason_codes(error):
    """The cancelled transaction's reason codes, one per action; anything but a cancellation is re-raised."""
    if error.response["Error"]["Code"] != "TransactionCanceledException":
        raise error
    return [reason["Code"] for reason in error.response["CancellationReasons"]]


def sign_up(table, user_id, email, phone, fold_case=True, names=(None, "email", "phone"), attempts=10):
    """A correct sign-up: one transaction, sent again after a jittered backoff while it meets another transaction
    (TransactionConflict), and the refused value read from its action's reason (`names` by position)."""
    for attempt in range(attempts):
        try:
            table.meta.client.transact_write_items(
                TransactItems=sign_up_actions(table, user_id, email, phone, fold_case))
            return "ok"
        except ClientError as error:
            codes = reason_codes(error)
            if "TransactionConflict" not in codes:
                return next(name for name, code in zip(names, codes) if code == "ConditionalCheckFailed")
            time.sleep(random.uniform(0, 0.01 * 2 ** attempt))
    raise RuntimeError(f"{user_id}'s sign-up kept meeting other transactions")


def sign_up_keeping_case(table, user_id, email, phone):
    """Broken: the email sentinel's key keeps the case, so spellings do not collide."""
    return sign_up(table, user_id, email, phone, fold_case=False)


def sign_up_reading_reasons_from_zero(table, user_id, email, phone):
    """Broken: reads the reasons as if the email sentinel were the first action, forgetting the profile's."""
    return sign_up(table, user_id, email, phone, names=("email", "phone", None))


def sign_up_always_blaming_the_email(table, user_id, email, phone):
    """Broken: one transaction, but every refusal is reported as the email, whatever the reasons say."""
    try:
        table.meta.client.transact_write_items(TransactItems=sign_up_actions(table, user_id, email, phone))
        return "ok"
    except ClientError as error:
        reason_codes(error)
        return "email"


def sign_up_taking_any_cancellation_as_taken(table, user_id, email, phone):
    """Broken: one transaction, but a cancellation without ConditionalCheckFailed on the address is read as the phone
    number taken, though on DynamoDB it may be a TransactionConflict."""
    try:
        table.meta.client.transact_write_items(TransactItems=sign_up_actions(table, user_id, email, phone))
        return "ok"
    except ClientError as error:
        return "email" if reason_codes(error)[1] == "ConditionalCheckFailed" else "phone"


def sign_up_taking_any_other_cancellation_for_the_email(table, user_id, email, phone):
    """Broken: one transaction; a refused phone number is read from its reason, and any other cancellation is answered
    'email' (the address taken), though on DynamoDB it may be a TransactionConflict with a sign-up for the same phone
    number, and the address free."""
    try:
        table.meta.client.transact_write_items(TransactItems=sign_up_actions(table, user_id, email, phone))
        return "ok"
    except ClientError as error:
        return "phone" if reason_codes(error)[2] == "ConditionalCheckFailed" else "email"


def sign_up_retrying_only_a_conflict_on_the_address(table, user_id, email, phone, attempts=10):
    """Broken: a refused phone number is read from its reason and a conflict on the address's sentinel is retried, but
    any other cancellation is answered 'email', though on DynamoDB it may be a TransactionConflict with a sign-up for
    the same phone number, and the address free."""
    for attempt in range(attempts):
        try:
            table.meta.client.transact_write_items(TransactItems=sign_up_actions(table, user_id, email, phone))
            return "ok"
        except ClientError as error:
            codes = reason_codes(error)
            if codes[2] == "ConditionalCheckFailed":
                return "phone"
            if codes[1] != "TransactionConflict":
                return "email"
            time.sleep(random.uniform(0, 0.01 * 2 ** attempt))
    raise RuntimeError(f"{user_id}'s sign-up kept meeting other transactions")


def sign_up_raising_on_a_conflict(table, user_id, email, phone):
    """Broken (the notebook's solution before transactions met each other): answers a ConditionalCheckFailed, but
    re-raises a cancellation that has none, such as a TransactionConflict, instead of retrying it."""
    try:
        table.meta.client.transact_write_items(TransactItems=sign_up_actions(table, user_id, email, phone))
        return "ok"
    except ClientError as error:
        for name, code in zip(("email", "phone"), reason_codes(error)[1:]):
            if code == "ConditionalCheckFailed":
                return name
        raise


def sign_up_refusing_everyone(table, user_id, email, phone):
    """Broken: the sentinels' condition is attribute_exists(PK), which no free value meets."""
    actions = sign_up_actions(table, user_id, email, phone)
    for action in actions[1:]:
        action["Put"]["ConditionExpression"] = "attribute_exists(PK)"
    try:
        table.meta.client.transact_write_items(TransactItems=actions)
        return "ok"
    except ClientError as error:
        return "email" if reason_codes(error)[1] == "ConditionalCheckFailed" else "phone"


def sign_up_conditioning_the_wrong_attribute(table, user_id, email, phone):
    """Broken: the phone sentinel's condition is attribute_not_exists(phone), which a sentinel never has."""
    actions = sign_up_actions(table, user_id, email, phone)
    actions[2]["Put"]["ConditionExpression"] = "attribute_not_exists(phone)"
    try:
        table.meta.client.transact_write_items(TransactItems=actions)
        return "ok"
    except ClientError as error:
        return "email" if reason_codes(error)[1] == "ConditionalCheckFailed" else "phone"


def sign_up_one_put_at_a_time(table, user_id, email, phone):
    """Broken: each sentinel is its own conditional PutItem, then the profile; a refused phone keeps the email's."""
    profile, *sentinels = sign_up_actions(table, user_id, email, phone)
    for name, action in zip(("email", "phone"), sentinels):
        try:
            table.put_item(Item=action["Put"]["Item"], ConditionExpression="attribute_not_exists(PK)")
        except ClientError as error:
            if error.response["Error"]["Code"] != "ConditionalCheckFailedException":
                raise
            return name
    table.put_item(Item=profile["Put"]["Item"])
    return "ok"


def change_email(table, user_id, new_email, guards=("user_id = :me", "email = :old")):
    """A correct change in one transaction; `guards`: the old sentinel's and the profile's conditions (None: none)."""
    old_email = table.get_item(Key=profile_key(user_id), ConsistentRead=True)["Item"]["email"]
    release = {"TableName": table.name, "Key": sentinel_key(old_email)}
    update = {"TableName": table.name, "Key": profile_key(user_id), "UpdateExpression": "SET email = :new",
              "ExpressionAttributeValues": {":new": new_email}}
    for action, condition, values in ((release, guards[0], {":me": user_id}), (update, guards[1], {":old": old_email})):
        if condition:
            action["ConditionExpression"] = condition
            action["ExpressionAttributeValues"] = {**action.get("ExpressionAttributeValues", {}), **values}
    return all_or_nothing(table, [
        {"Delete": release},
        {"Put": {"TableName": table.name, "Item": {**sentinel_key(new_email), "user_id": user_id},
                 "ConditionExpression": "attribute_not_exists(PK)"}},
        {"Update": update},
    ])


def change_email_without_a_guard(table, user_id, new_email):
    """Broken: one transaction, but nothing checks that the old address is still this user's."""
    return change_email(table, user_id, new_email, guards=(None, None))


def test_a_sentinel_transaction_passes_both_checkers(lab):
    signed_up, changed = check_sign_up_user(sign_up), check_change_user_email(change_email)
    assert signed_up.passed, signed_up.message
    assert changed.passed, changed.message


@pytest.mark.parametrize("wrong, message", [
    (sign_up_keeping_case, "2 users were told they got neo@example.com (u0, u1)"),
    (sign_up_reading_reasons_from_zero, "u1 was told 'phone': its phone number +15552001 was taken, but no sentinel "
                                        "holds it. Why: it was the address neo@example.com that was taken (by u0): "
                                        "CancellationReasons has one entry per action"),
    (sign_up_always_blaming_the_email, "u1 was told 'email', but to its last TransactWriteItems DynamoDB cancelled it "
                                       "with the reasons [None, TransactionConflict, None]: no condition failed"),
    (sign_up_refusing_everyone, "nobody got neo@example.com, though it was free: every sign-up that wanted it was "
                                "refused (u0 'email', u1 'email'); the first to arrive must get it (does a condition "
                                "refuse every sign-up?)"),
    (sign_up_conditioning_the_wrong_attribute, "u1 was told 'phone': its phone number +15552001 was taken, but no "
                                               "sentinel holds it"),
    (sign_up_one_put_at_a_time, "PutItem (then the client crashes)"),
], ids=lambda value: getattr(value, "__name__", "message"))
def test_a_wrong_sign_up_is_caught_with_its_cause(lab, wrong, message):
    report = check_sign_up_user(wrong)
    assert not report.passed
    assert message in report.message


CONFLICT_WHY = ("a TransactionConflict means another transaction was using the item at that moment, not that a "
                "condition failed: retry a conflict; report only a failed condition")
CONFLICT_CAUSE = "(in 2 of the 4 distinct orders in which alice and bob's requests can reach DynamoDB). Why: "


@pytest.mark.parametrize("wrong, told", [
    (sign_up_taking_any_cancellation_as_taken, "u1 was told 'phone': its phone number +15552001 was taken, but no "
                                               "sentinel holds it"),
    (sign_up_raising_on_a_conflict, "a call raised TransactionCanceledException: Transaction cancelled, please refer "
                                    "cancellation reasons for specific reasons [None, TransactionConflict, None]"),
], ids=lambda value: getattr(value, "__name__", "told"))
def test_a_sign_up_that_does_not_retry_a_conflict_is_caught_with_the_conflict_as_cause(lab, wrong, told):
    report = check_sign_up_user(wrong)
    assert not report.passed
    assert report.schedule == ("alice", "alice+0", "alice+1", "bob", "alice+2")
    assert report.message.startswith(
        "alice: TransactWriteItems -> alice: TransactWriteItems makes {PK: 'USER#u0', SK: 'PROFILE'} visible -> alice: "
        "TransactWriteItems makes {PK: 'EMAIL#neo@example.com', SK: 'EMAIL'} visible -> bob: TransactWriteItems -> "
        "alice: TransactWriteItems makes {PK: 'PHONE#+15552000', SK: 'PHONE'} visible: " + told)
    assert CONFLICT_CAUSE in report.message and report.message.endswith(CONFLICT_WHY)


def test_a_conflict_answered_as_the_address_taken_is_caught_by_two_sign_ups_after_one_phone_number(lab):
    if lab.kind != "embedded":
        pytest.skip("only the lab server's explorer makes a transaction meet another in flight")
    report = check_sign_up_user(sign_up_retrying_only_a_conflict_on_the_address)
    assert not report.passed
    assert report.schedule == ("alice", "alice+0", "alice+1", "bob", "alice+2")
    assert report.message.startswith(
        "alice: TransactWriteItems -> alice: TransactWriteItems makes {PK: 'USER#u0', SK: 'PROFILE'} visible -> alice: "
        "TransactWriteItems makes {PK: 'EMAIL#u0@example.com', SK: 'EMAIL'} visible -> bob: TransactWriteItems -> "
        "alice: TransactWriteItems makes {PK: 'PHONE#+15550100', SK: 'PHONE'} visible: u1 was told 'email': its address "
        "u1@example.com was taken, but no sentinel holds it")
    assert CONFLICT_CAUSE in report.message
    assert report.message.endswith("bob's TransactWriteItems was cancelled by a TransactionConflict, and bob's call "
                                   f"answered it as a failed condition: {CONFLICT_WHY}")


def test_the_notebooks_starting_sign_up_is_caught_in_every_order(lab, run):
    starting_sign_up, = notebook_functions(NOTEBOOK, "sign_up_user")
    report = check_sign_up_user(starting_sign_up)
    assert report.schedule == ("alice", "alice", "bob", "alice", "alice+0", "alice+1", "alice+2", "bob", "bob", "bob+0",
                               "bob+1", "bob+2")
    assert report.message == (
        "alice: GetItem -> alice: GetItem -> bob: GetItem -> alice: TransactWriteItems -> bob: GetItem -> bob: "
        "TransactWriteItems: 2 users were told they got neo@example.com (u0, u1) (in 8 of the 10 distinct orders in "
        "which alice and bob's requests can reach DynamoDB). Why: "
        "bob's GetItem read EMAIL#neo@example.com/EMAIL as absent; alice's TransactWriteItems wrote a "
        "newer version; bob's TransactWriteItems wrote EMAIL#neo@example.com/EMAIL over alice's: a lost "
        "update (Elle: lost-update, a G-single-item cycle). A read and then a write are two requests: "
        "put the check in the write itself, a ConditionExpression (attribute_not_exists, or version = "
        ":read), so that it is refused once another write came between")


def test_two_changes_by_one_user_with_no_guard_on_the_old_address_are_caught(lab):
    report = check_change_user_email(change_email_without_a_guard)
    assert report.schedule == ("alice", "bob", "alice", "alice+0", "alice+1", "alice+2",
                               "bob", "bob+0", "bob+1", "bob+2")
    assert report.message == (
        "alice: GetItem -> bob: GetItem -> alice: TransactWriteItems -> bob: TransactWriteItems: the sentinel "
        "EMAIL#neo@example.com names user 'u0', whose profile does not have that address (in 14 of the 16 distinct "
        "orders in which alice and bob's requests can reach DynamoDB). "
        "Why: bob's GetItem read USER#u0/PROFILE as the setup left it; alice's TransactWriteItems wrote a newer "
        "version; bob's TransactWriteItems wrote EMAIL#u0@example.com/EMAIL over alice's: a read skew (Elle: a "
        "G-single-item cycle). A read and then a write are two requests: put the check in the write itself, a "
        "ConditionExpression (attribute_not_exists, or version = :read), so that it is refused once another write "
        "came between")


@pytest.mark.parametrize("guards", [("user_id = :me", None), (None, "email = :old")], ids=["sentinel", "profile"])
def test_either_guard_on_the_old_address_is_enough(lab, guards):
    report = check_change_user_email(lambda table, user_id, new_email: change_email(table, user_id, new_email, guards))
    assert report.passed, report.message


def test_the_notebooks_starting_change_is_caught_keeping_the_old_sentinel_in_every_order(lab, run):
    starting_change, = notebook_functions(NOTEBOOK, "change_user_email")
    report = check_change_user_email(starting_change)
    assert report.schedule == ("alice", "alice", "bob", "bob")
    assert report.message == (
        "alice: PutItem -> alice: UpdateItem -> bob: PutItem -> bob: UpdateItem: the sentinel EMAIL#neo@example.com "
        "names user 'u0', whose profile does not have that address (in 2 of the 2 distinct orders in which alice and "
        "bob's requests can reach DynamoDB). Why: bob's "
        "UpdateItem wrote USER#u0/PROFILE after alice's UpdateItem had, and nothing refused it: it had no "
        "ConditionExpression. Put the check in the write's ConditionExpression (attribute_not_exists on what must be "
        "absent, or version = :read) and answer from its refusal")


def test_the_notebooks_solutions_pass_both_stages(lab):
    sign_up_solution, _, change_solution = notebook_functions(
        NOTEBOOK, "sign_up_user_solution", "write_all_or_nothing", "change_user_email_solution")
    signed_up, changed = check_sign_up_user(sign_up_solution), check_change_user_email(change_solution)
    assert signed_up.passed and signed_up.message.endswith(
        "and in all 8 distinct orders of the exhaustive stage (two sign-ups after one phone number); and, before it, "
        "in all 8 distinct orders of two sign-ups after one address, in all 5 distinct orders of a sign-up after the "
        "address its holder is giving up and in every order with a crash after any write"), \
        signed_up.message
    assert changed.passed and changed.message.endswith("and in all 8 distinct orders of the exhaustive stage"), \
        changed.message


def claim_handle(table, user_id, handle):
    """A correct claim: the sentinel and the profile's handle in one transaction, each conditioned, sent again on a
    conflict."""
    return all_or_nothing(table, [
        {"Put": {"TableName": table.name, "Item": {**handle_key(handle), "user_id": user_id},
                 "ConditionExpression": "attribute_not_exists(PK)"}},
        {"Update": {"TableName": table.name, "Key": profile_key(user_id), "UpdateExpression": "SET handle = :h",
                    "ConditionExpression": "attribute_not_exists(handle)", "ExpressionAttributeValues": {":h": handle}}},
    ])


def claim_handle_without_the_profile_condition(table, user_id, handle):
    """Broken: one transaction, but nothing stops a user who already has a handle from taking a second."""
    return all_or_nothing(table, [
        {"Put": {"TableName": table.name, "Item": {**handle_key(handle), "user_id": user_id},
                 "ConditionExpression": "attribute_not_exists(PK)"}},
        {"Update": {"TableName": table.name, "Key": profile_key(user_id), "UpdateExpression": "SET handle = :h",
                    "ExpressionAttributeValues": {":h": handle}}},
    ])


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
    assert report.message.endswith("and in all 8 distinct orders of the exhaustive stage")


def test_the_notebooks_starting_claim_handle_is_caught_in_every_order(lab, run):
    starting_claim, = notebook_functions(NOTEBOOK, "claim_handle")
    report = check_claim_handle(starting_claim)
    assert not report.passed
    assert report.message == (
        "alice: GetItem -> alice: PutItem -> bob: GetItem -> alice: UpdateItem -> bob: PutItem -> bob: UpdateItem: "
        "u0 was told yes for 2 handles (Neo, trinity) (in 2 of the 4 distinct orders in which alice and bob's requests "
        "can reach DynamoDB). Why: "
        "bob's GetItem read USER#u0/PROFILE as the setup left it; alice's UpdateItem wrote a newer "
        "version; bob's UpdateItem wrote USER#u0/PROFILE over alice's: a lost update (Elle: lost-update, "
        "a G-single-item cycle). A read and then a write are two requests: put the check in the write "
        "itself, a ConditionExpression (attribute_not_exists, or version = :read), so that it is refused "
        "once another write came between")


def test_a_claim_without_the_profile_condition_gives_one_user_two_handles(lab):
    report = check_claim_handle(claim_handle_without_the_profile_condition)
    assert not report.passed
    assert report.message.startswith("alice: TransactWriteItems -> bob: TransactWriteItems: u0 was told yes for 2 "
                                     "handles (Neo, trinity)")


def test_the_notebooks_claim_handle_solution_passes(lab):
    _, claim_solution = notebook_functions(NOTEBOOK, "write_all_or_nothing", "claim_handle_solution")
    report = check_claim_handle(claim_solution)
    assert report.passed, report.message
    assert report.message.endswith("and in all 8 distinct orders of the exhaustive stage")


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


def test_a_claim_that_refuses_every_handle_is_caught(lab):
    report = check_claim_handle(claim_handle_refusing_everyone)
    assert not report.passed
    assert report.message.startswith("u0, with no handle yet, claimed the free handle 'Neo' and was answered False")


def sign_up_taking_a_conflict_on_the_address_as_taken(table, user_id, email, phone, attempts=10):
    """Broken: a cancellation whose reason on the address's sentinel is a TransactionConflict is answered 'email', as
    if the address were taken (only other conflicts are retried), though the transaction in flight may be its holder
    giving it up."""
    for attempt in range(attempts):
        try:
            table.meta.client.transact_write_items(TransactItems=sign_up_actions(table, user_id, email, phone))
            return "ok"
        except ClientError as error:
            codes = reason_codes(error)
            if codes[1] in ("ConditionalCheckFailed", "TransactionConflict"):
                return "email"
            if codes[2] == "ConditionalCheckFailed":
                return "phone"
            time.sleep(random.uniform(0, 0.01 * 2 ** attempt))
    raise RuntimeError(f"{user_id}'s sign-up kept meeting other transactions")


def sign_up_with_the_address_first(table, user_id, email, phone, attempts=10):
    """A correct sign-up whose actions are in another order (address, phone number, profile): the reasons are read by
    the sentinels' places, and a conflict is sent again."""
    profile, *sentinels = sign_up_actions(table, user_id, email, phone)
    for attempt in range(attempts):
        try:
            table.meta.client.transact_write_items(TransactItems=[*sentinels, profile])
            return "ok"
        except ClientError as error:
            codes = reason_codes(error)
            for name, code in zip(("email", "phone"), codes):
                if code == "ConditionalCheckFailed":
                    return name
            time.sleep(random.uniform(0, 0.01 * 2 ** attempt))
    raise RuntimeError(f"{user_id}'s sign-up kept meeting other transactions")


@pytest.mark.parametrize("wrong", [sign_up_taking_a_conflict_on_the_address_as_taken,
                                   sign_up_taking_any_other_cancellation_for_the_email],
                         ids=lambda wrong: wrong.__name__)
def test_any_cancellation_answered_as_the_address_taken_is_caught_by_its_holder_deleting_its_account(lab, wrong):
    if lab.kind != "embedded":
        pytest.skip("only the lab server's explorer makes a transaction meet another in flight")
    report = check_sign_up_user(wrong)
    assert not report.passed
    assert report.schedule == ("u9", "u1", "u9+0", "u9+1")
    assert report.message == (
        "u9: TransactWriteItems -> u1: TransactWriteItems -> u9: TransactWriteItems makes {PK: 'USER#u9', SK: "
        "'PROFILE'} visible -> u9: TransactWriteItems makes {PK: 'EMAIL#neo@example.com', SK: 'EMAIL'} visible: u1 was "
        "told 'email', but to its last TransactWriteItems DynamoDB cancelled it with the reasons [None, "
        "TransactionConflict, None]: no condition failed, so nothing said the address was taken (u9 was deleting its "
        "account, freeing it) (in 1 of the 3 distinct orders in which u1 and u9's requests can reach DynamoDB). Why: "
        f"u1's TransactWriteItems was cancelled by a TransactionConflict, and u1's call answered it as a failed "
        f"condition: {CONFLICT_WHY}")


@pytest.mark.parametrize("right", [sign_up, sign_up_with_the_address_first], ids=lambda right: right.__name__)
def test_a_sign_up_that_retries_a_conflict_with_the_holder_deleting_its_account_passes(lab, right):
    report, orders = freed_address(right)
    assert report is None
    outcomes = {(results["u1"], any("TransactionConflict" in (reply or "") for reply in replies))
                for results, replies in zip(orders["results"], orders["replies"])}
    if lab.kind == "embedded":  # the three things that can happen: taken, free, and freed while she asked
        assert outcomes == {("email", False), ("ok", False), ("ok", True)}, outcomes
    assert check_sign_up_user(right).passed
