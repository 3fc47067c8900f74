"""The notebook 36 checkers pass correct solutions and catch the broken ones learners write, naming the failing order."""
import time
import uuid

import pytest
from aws_lambda_powertools.utilities.idempotency.exceptions import IdempotencyItemAlreadyExistsError
from aws_lambda_powertools.utilities.idempotency.persistence.dynamodb import DynamoDBPersistenceLayer
from botocore.exceptions import ClientError

from helpers.checks.p36 import check_put_record
from support import notebook_functions

NOTEBOOK = "36-libraries.ipynb"
CLAIMABLE = ("attribute_not_exists(#id) OR #expiry < :now OR (#status = :inprogress"
             " AND attribute_exists(#in_progress_expiry) AND #in_progress_expiry < :now_ms)")
NEW_ONLY = "attribute_not_exists(#id)"
SHARED_MARK = uuid.uuid4().hex
LOST_CLAIM = ("alice: PutItem (response lost, the SDK retries) -> alice: PutItem -> bob: PutItem: the order was never "
              "charged and every delivery was told 'already in progress': the SDK resent a claim whose response was "
              "lost, and the claim took its own record for another delivery's (in 4 of the 20 distinct orders in "
              "which alice and bob's requests can reach DynamoDB, every read strongly consistent)")


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
    assert report.message.endswith("and in all 4 distinct orders of the exhaustive stage, and in all 22 distinct "
                                   "orders with lost responses, every read strongly consistent")


@pytest.mark.parametrize("put_record", [DynamoDBPersistenceLayer._put_record, claim_with()],
                         ids=["powertools' own claim", "the same claim written out"])
def test_powertools_claim_is_caught_refusing_its_own_delivery_when_the_claims_response_is_lost(put_record):
    report = check_put_record(put_record)
    assert not report.passed
    assert report.message == LOST_CLAIM
    assert report.schedule == ("alice!lost", "alice", "bob")


def test_one_mark_for_every_attempt_is_caught_charging_twice():
    report = check_put_record(claim_with("shared"))
    assert not report.passed
    assert report.message == ("alice: PutItem -> alice: UpdateItem -> bob: PutItem -> bob: UpdateItem: the order was "
                              "charged 2 times (in 6 of the 6 distinct orders in which alice and bob's requests can "
                              "reach DynamoDB)"), "a delivery after the first completed takes its record for its own"


@pytest.mark.parametrize("broken", [claim_with("attempt", condition=None), claim_with(any_refusal_is_mine=True)],
                         ids=["no condition: the mark alone", "every refusal taken for its own"])
def test_a_claim_that_lets_a_second_delivery_in_is_caught_charging_twice(broken):
    report = check_put_record(broken)
    assert not report.passed
    assert report.message == ("alice: PutItem -> alice: UpdateItem -> bob: PutItem -> bob: UpdateItem: the order was "
                              "charged 2 times (in 6 of the 6 distinct orders in which alice and bob's requests can "
                              "reach DynamoDB)"), "even a delivery after the first completed claims the order again"


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
