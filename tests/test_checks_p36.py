"""The notebook 36 checkers pass correct solutions and catch the broken ones learners write, naming the failing order."""
import random
import time
import uuid

import pytest
from aws_lambda_powertools.utilities.idempotency.exceptions import IdempotencyItemAlreadyExistsError
from aws_lambda_powertools.utilities.idempotency.persistence.dynamodb import DynamoDBPersistenceLayer
from botocore.exceptions import ClientError
from pynamodb.exceptions import PutError, TransactWriteError, UpdateError
from pynamodb.transactions import TransactWrite

from helpers.checks.p36 import TABLE, check_add_view, check_put_record
from support import notebook_functions

NOTEBOOK = "36-libraries.ipynb"
CLAIMABLE = ("attribute_not_exists(#id) OR #expiry < :now OR (#status = :inprogress"
             " AND attribute_exists(#in_progress_expiry) AND #in_progress_expiry < :now_ms)")
NEW_ONLY = "attribute_not_exists(#id)"
SHARED_MARK = uuid.uuid4().hex
LOST_CLAIM = ("alice: PutItem (response lost, the SDK retries) -> alice: PutItem -> bob: PutItem: the order was never "
              "charged and every delivery was told 'already in progress': the SDK resent a claim whose response was "
              "lost, and the claim took its own record for another delivery's (in 2 of the 18 distinct orders in "
              "which alice and bob's requests can reach DynamoDB). Why: alice's PutItem was applied and its response "
              "lost; the SDK sent it again and it was refused (ConditionalCheckFailedException) by that first copy, "
              "which alice then took for another's. Tell your own write from another's: a mark unique to this "
              "attempt, compared with the item the refusal returns")


@pytest.fixture(autouse=True)
def embedded(lab):
    """The checker's library client carries the lab's dummy credentials, for the embedded server."""
    if lab.kind != "embedded":
        pytest.skip("notebook 36 runs on the lab server only: its faults are the lab server's")


def claim_with(mark=None, condition=CLAIMABLE, any_refusal_is_mine=False):
    """A put_record: the claim with `mark` ("attempt": a new one per call; "shared": one for every call; None: no
    mark) under `condition` (None: unconditional); a refused claim whose record holds the mark is this attempt's own
    (or every refused claim, with `any_refusal_is_mine`)."""
    def put_record(layer, record):
        token = {"attempt": uuid.uuid4().hex, "shared": SHARED_MARK, None: None}[mark]
        item = {**layer._get_key(record.idempotency_key), layer.expiry_attr: {"N": str(record.expiry_timestamp)},
                layer.status_attr: {"S": record.status}, **({"attempt": {"S": token}} if token else {})}
        if record.in_progress_expiry_timestamp is not None:
            item[layer.in_progress_expiry_attr] = {"N": str(record.in_progress_expiry_timestamp)}
        now = time.time()
        names = {"#id": layer.key_attr, "#expiry": layer.expiry_attr, "#status": layer.status_attr,
                 "#in_progress_expiry": layer.in_progress_expiry_attr}
        values = {":now": {"N": str(int(now))}, ":now_ms": {"N": str(int(now * 1000))},
                  ":inprogress": {"S": "INPROGRESS"}}
        used = {name: value for name, value in names.items() if condition and name in condition}
        conditioned = {"ConditionExpression": condition, "ExpressionAttributeNames": used,
                       **({"ExpressionAttributeValues": {k: v for k, v in values.items() if k in condition}}
                          if any(k in condition for k in values) else {})} if condition else {}
        try:
            layer.client.put_item(TableName=layer.table_name, Item=item, ReturnValuesOnConditionCheckFailure="ALL_OLD",
                                  **conditioned)
        except ClientError as error:
            if error.response["Error"]["Code"] != "ConditionalCheckFailedException":
                raise
            met = error.response["Item"]
            if any_refusal_is_mine or (token and met.get("attempt") == {"S": token}):
                return
            raise IdempotencyItemAlreadyExistsError(old_data_record=layer._item_to_data_record(met))
    return put_record


def test_a_claim_that_knows_its_own_attempt_passes_lost_responses_included():
    report = check_put_record(claim_with("attempt"))
    assert report.passed, report.message
    assert report.message.endswith("and in all 4 distinct orders of the exhaustive stage, and in all 20 distinct "
                                   "orders with lost responses")


@pytest.mark.parametrize("put_record", [DynamoDBPersistenceLayer._put_record, claim_with()],
                         ids=["powertools' own claim", "the same claim written out"])
def test_powertools_claim_is_caught_refusing_its_own_delivery_when_the_claims_response_is_lost(put_record):
    report = check_put_record(put_record)
    assert not report.passed
    assert report.message == LOST_CLAIM
    assert report.schedule == ("alice!lost", "alice", "bob")


CHARGED_TWICE = ("alice: PutItem -> alice: UpdateItem -> bob: PutItem -> bob: UpdateItem: the order was charged 2 "
                 "times (in 6 of the 6 distinct orders in which alice and bob's requests can reach DynamoDB). Why: bob's "
                 "PutItem ")


@pytest.mark.parametrize("broken", [claim_with("shared"), claim_with(any_refusal_is_mine=True)],
                         ids=["one mark for every attempt", "every refusal taken for its own"])
def test_a_claim_that_takes_another_deliverys_record_for_its_own_is_caught_charging_twice_saying_so(broken):
    report = check_put_record(broken)
    assert not report.passed
    assert report.message.startswith(CHARGED_TWICE + "was refused by alice's PutItem, which had written "), report.message
    assert ("first, yet bob went on as if it had succeeded, and its UpdateItem wrote ") in report.message
    assert report.message.endswith(": the refusal was taken for its own. Answer a refusal as one, unless the item it "
                                   "met (ReturnValuesOnConditionCheckFailure=ALL_OLD) carries a mark made for this "
                                   "attempt alone")


def test_a_claim_with_no_condition_is_caught_charging_twice_saying_the_claim_was_accepted():
    report = check_put_record(claim_with("attempt", condition=None))
    assert not report.passed
    assert report.message.startswith(CHARGED_TWICE + "wrote "), report.message
    assert report.message.endswith(" after alice's PutItem had, and nothing refused it: it had no ConditionExpression. "
                                   "Put the check in the write's ConditionExpression (attribute_not_exists on what "
                                   "must be absent, or version = :read) and answer from its refusal")


def test_put_records_two_wrong_claims_get_two_different_whys_each_naming_the_request_that_let_the_charge_in():
    taken, unconditioned = check_put_record(claim_with("shared")), check_put_record(claim_with("attempt", condition=None))
    whys = [report.message.split(". Why: ")[1] for report in (taken, unconditioned)]
    assert whys[0] != whys[1]
    assert whys[0].startswith("bob's PutItem was refused by alice's PutItem")
    assert whys[1].startswith("bob's PutItem wrote ") and "nothing refused it" in whys[1]


def test_a_claim_comparing_the_in_progress_expiry_in_milliseconds_with_now_in_seconds_is_caught():
    seconds_for_both = CLAIMABLE.replace("#in_progress_expiry < :now_ms", "#in_progress_expiry < :now")
    report = check_put_record(claim_with("attempt", condition=seconds_for_both))
    assert not report.passed
    assert report.message.startswith("a delivery that met an INPROGRESS record whose in-progress expiry has passed "
                                     "raised IdempotencyInconsistentStateError"), report.message
    assert report.message.endswith("(it must take the record over) (one call at a time)")


def test_a_claim_that_forgets_the_expiries_is_caught_refusing_an_expired_record():
    report = check_put_record(claim_with("attempt", condition=NEW_ONLY))
    assert not report.passed
    assert report.message == ("a delivery that met a COMPLETED record whose expiration has passed raised "
                              "IdempotencyInconsistentStateError: save_inprogress and get_record return inconsistent "
                              "results. (it must take the record over) (one call at a time)")


def test_the_notebooks_starting_claim_is_caught_and_its_solution_passes():
    put_record, put_record_solution = notebook_functions(NOTEBOOK, "put_record", "put_record_solution")
    caught, solved = check_put_record(put_record), check_put_record(put_record_solution)
    assert caught.message == LOST_CLAIM
    assert solved.passed, solved.message


def test_passing_something_else_than_a_function_says_what_to_pass():
    with pytest.raises(TypeError, match="Pass your function itself"):
        check_put_record("put_record")
    with pytest.raises(TypeError, match="Pass your function itself"):
        check_add_view("add_view")


def retrying(write, attempts=10, refusals=(PutError, UpdateError), refused="ConditionalCheckFailedException"):
    """add_view that reads the post and writes it with `write(post_model, post, connection)`, reading again when the
    write was refused (`refusals` with `refused` as the cause), after a short wait with jitter."""
    def add_view(post_model, post_id, connection):
        for attempt in range(attempts):
            post = post_model.get(post_id, consistent_read=True)
            try:
                return write(post_model, post, connection)
            except refusals as error:
                if error.cause_response_code != refused:
                    raise
                time.sleep(random.uniform(0, 0.01 * 2 ** attempt))
        raise RuntimeError("still refused")
    return add_view


def save_a_view(post_model, post, connection):
    """Count the view and save the whole post: PynamoDB's PutItem, conditioned on the version read."""
    post.views += 1
    post.save()


def update_the_views(post_model, post, connection):
    """ADD views 1 (and version 1) under the version read: PynamoDB's UpdateItem."""
    post.update(actions=[post_model.views.add(1)])


def transact_the_views(post_model, post, connection):
    """The same update, in a TransactWrite: botocore's ClientRequestToken goes with it, and with its resends."""
    with TransactWrite(connection=connection) as transaction:
        transaction.update(post, actions=[post_model.views.add(1)])


def transacted(write, attempts=10):
    """add_view that writes with `write(post_model, post, connection)`, reading again when its transaction was
    cancelled."""
    return retrying(write, attempts, (TransactWriteError,), "TransactionCanceledException")


def raw_add(bump_version, token=None):
    """add_view as one raw ADD on the table, raising the version too when `bump_version`; in a transaction when given
    a `token` ("botocore": botocore's, a new one per call; else that one, for every call)."""
    def add_view(post_model, post_id, connection):
        from helpers.backend import connect
        update = {"Key": {"id": post_id}, "UpdateExpression": "ADD #v :one, version :one" if bump_version else "ADD #v :one",
                  "ExpressionAttributeNames": {"#v": "views"}, "ExpressionAttributeValues": {":one": 1}}
        lab = connect(quiet=True)
        if token is None:
            return lab.table(TABLE).update_item(**update)
        lab.client.transact_write_items(TransactItems=[{"Update": {"TableName": TABLE, **update}}],
                                        **({} if token == "botocore" else {"ClientRequestToken": token}))
    return add_view


def lost_view(writes, of=3):
    """The report of an add_view whose one write (`writes`: its steps) lands between the rename's read and save."""
    return (f"bob: GetItem -> alice: {writes} -> bob: PutItem: the post has 0 views after 1 add_view call: a view was "
            "lost. A rename put back a copy read before the view was added, and its version check passed because the "
            "view did not raise the version, or add_view returned without its view written (in 1 of the "
            f"{of} distinct orders in which alice and bob's requests can reach DynamoDB). Why: bob's GetItem read p-1 "
            f"as the setup left it; alice's {writes} wrote a newer version; bob's PutItem wrote p-1 over alice's: a "
            "lost update (Elle: lost-update, a G-single-item cycle). bob's PutItem was checked (version = 1), and the "
            f"check held though alice's {writes} had written the item: alice's write did not change what the "
            "condition tests. Make every write of the item change it (raise the version: SET version = version + "
            ":one), or test what the writes change")


COUNTED_TWICE = ("the post has 2 views after 1 add_view call: a view was counted twice. Its write was applied and its "
                 "response lost, and it was written again: by the SDK's resend, or by add_view after the resend was "
                 "refused by the version its own first copy had raised")


@pytest.mark.parametrize("add_view", [transacted(transact_the_views), raw_add(bump_version=True, token="botocore")],
                         ids=["update in a TransactWrite", "raw ADD raising the version, in a transaction"])
def test_a_view_every_version_check_sees_and_whose_resend_is_harmless_passes(add_view):
    report = check_add_view(add_view)
    assert report.passed, report.message
    assert "distinct orders with lost responses" in report.message


@pytest.mark.parametrize("add_view, steps", [
    (retrying(save_a_view), "alice: GetItem -> alice: PutItem (response lost, the SDK retries) -> alice: PutItem -> "
                            "alice: GetItem -> alice: PutItem"),
    (retrying(update_the_views), "alice: GetItem -> alice: UpdateItem (response lost, the SDK retries) -> "
                                 "alice: UpdateItem -> alice: GetItem -> alice: UpdateItem"),
    (raw_add(bump_version=True), "alice: UpdateItem (response lost, the SDK retries) -> alice: UpdateItem")],
    ids=["save, retried", "update, retried", "raw ADD raising the version"])
def test_a_write_the_version_check_sees_is_caught_counting_twice_when_its_response_is_lost(add_view, steps):
    report = check_add_view(add_view)
    assert report.message.startswith(f"{steps} -> bob: GetItem -> bob: PutItem: {COUNTED_TWICE} (in ")


def test_one_client_request_token_for_every_view_is_caught_losing_views():
    report = check_add_view(raw_add(bump_version=True, token=f"views-{uuid.uuid4().hex[:24]}"))
    assert not report.passed and "a view was lost" in report.message


def test_a_raw_add_that_does_not_raise_the_version_is_caught_losing_the_view_to_the_renames_save():
    report = check_add_view(raw_add(bump_version=False))
    assert report.message == lost_view("UpdateItem")
    assert report.schedule == ("bob", "alice", "bob")


def test_an_update_of_a_model_never_read_is_caught_moving_the_version_back():
    def add_view(post_model, post_id, connection):
        post_model(post_id).update(actions=[post_model.views.add(1)], add_version_condition=False)
    assert check_add_view(add_view).message == lost_view("UpdateItem")


@pytest.mark.parametrize("write, sent, of", [(save_a_view, "PutItem", 4), (update_the_views, "UpdateItem", 4),
                                             (transact_the_views, "TransactWriteItems", 10)])
def test_a_version_checked_write_that_is_not_retried_is_caught_raising_when_the_rename_saved_first(write, sent, of):
    report = check_add_view(lambda post_model, post_id, connection: write(
        post_model, post_model.get(post_id, consistent_read=True), connection))
    assert report.message.startswith(f"alice: GetItem -> bob: GetItem -> bob: PutItem -> alice: {sent}: a call raised ")
    assert "on request (" not in report.message
    assert (f"add_view must count its view (read again when the version moved) (in 1 of the {of} distinct orders in "
            f"which alice and bob's requests can reach DynamoDB). Why: alice's {sent} was answered ") in report.message
    assert ", and it came out of alice's call: " in report.message


def every_error_false(add_view):
    """Broken: `add_view`, wrapped so that every error reads as a view counted (False, not raised)."""
    def wrapped(post_model, post_id, connection):
        try:
            return add_view(post_model, post_id, connection)
        except Exception:
            return False
    return wrapped


def test_a_right_view_that_returns_false_on_every_error_is_caught_when_its_table_is_missing():
    report = check_add_view(every_error_false(transacted(transact_the_views)))
    assert not report.passed
    assert report.message.startswith("with p36-libraries deleted, add_view returned False instead of raising: it hides "
                                     "errors that are not refusals")
    assert report.message.endswith("(one call at a time)")


def test_the_notebooks_starting_add_view_is_caught_and_its_solution_passes():
    add_view, add_view_solution = notebook_functions(NOTEBOOK, "add_view", "add_view_solution")
    assert check_add_view(add_view).schedule == ("alice", "bob", "bob", "alice")
    solved = check_add_view(add_view_solution)
    assert solved.passed, solved.message
    assert solved.message == ("held in 6 runs of up to 10 concurrent calls (34 calls in all), and in all 10 distinct "
                              "orders of the exhaustive stage, and in all 82 distinct orders with lost responses")
