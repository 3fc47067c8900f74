"""Notebook 36's libraries on real threads against the lab server made as weak as DynamoDB (stale default reads,
transactions that stay ongoing and conflict): each keeps the guarantee it documents. Real libraries, real requests."""
import threading
import time
from datetime import timedelta

import pytest
from aws_lambda_powertools.utilities.idempotency.exceptions import IdempotencyAlreadyInProgressError
from aws_lambda_powertools.utilities.idempotency.persistence.dynamodb import DynamoDBPersistenceLayer
from pynamodb.exceptions import PutError, TransactWriteError
from pynamodb.transactions import TransactWrite
from python_dynamodb_lock.python_dynamodb_lock import DynamoDBLockClient, DynamoDBLockError

from helpers.checks import as_weak_as
from helpers.checks.p36 import ANSWER, POST, TABLE, Delivery, post_model, pynamodb_connection
from helpers.tables import fresh_table
from helpers.trace import tracing

THREADS = 6
ATTEMPTS = 500  # a stale read is at most 100 ms behind as weak as DynamoDB; each attempt waits BACKOFF_SECONDS
BACKOFF_SECONDS = 0.002


@pytest.fixture(autouse=True)
def embedded(lab):
    """The libraries' clients carry the lab's dummy credentials, and only the lab server can be made as weak."""
    if lab.kind != "embedded":
        pytest.skip("as_weak_as_dynamodb is a knob of the lab server")
    with tracing(False):
        yield


def at_once(work, arguments):
    """work(*args) for every args, each on its own thread, started together; what each returned or raised."""
    start, results = threading.Barrier(len(arguments)), [None] * len(arguments)

    def run(i, args):
        start.wait()
        try:
            results[i] = work(*args)
        except Exception as error:  # the caller asserts on what was raised
            results[i] = error

    threads = [threading.Thread(target=run, args=(i, args)) for i, args in enumerate(arguments)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    return results


def until_not_refused(write, refused, codes):
    """write(), again after a short wait while it raises `refused` with one of `codes`."""
    for _ in range(ATTEMPTS):
        try:
            return write()
        except refused as error:
            if error.cause_response_code not in codes:
                raise
            time.sleep(BACKOFF_SECONDS)
    raise RuntimeError(f"still refused after {ATTEMPTS} attempts")


def test_pynamodb_saves_from_default_reads_count_every_view_the_version_check_refusing_stale_copies(lab):
    post_model_ = post_model(lab.endpoint)
    fresh_table(TABLE)
    post_model_(POST).save()

    def view_by_save():
        post = post_model_.get(POST)  # a default read: may be stale, and the save's version check refuses it
        post.views += 1
        post.save()

    with as_weak_as(lab):
        results = at_once(lambda: until_not_refused(view_by_save, PutError, ("ConditionalCheckFailedException",)),
                          [()] * THREADS)
    assert results == [None] * THREADS
    post = lab.table(TABLE).get_item(Key={"id": POST}, ConsistentRead=True)["Item"]
    assert (post["views"], post["version"]) == (THREADS, THREADS + 1)


def test_pynamodb_transactions_beside_version_checked_saves_keep_every_view_and_title_when_transactions_conflict(lab):
    post_model_, connection = post_model(lab.endpoint), pynamodb_connection(lab.endpoint)
    fresh_table(TABLE)
    post_model_(POST).save()

    def add_view():
        post = post_model_.get(POST, consistent_read=True)
        with TransactWrite(connection=connection) as transaction:
            transaction.update(post, actions=[post_model_.views.add(1)])

    def rename(title):
        post = post_model_.get(POST, consistent_read=True)
        post.title = title
        post.save()

    with as_weak_as(lab):
        results = at_once(lambda action: action(), [
            (lambda: until_not_refused(add_view, TransactWriteError, ("TransactionCanceledException",)),),
            (lambda: until_not_refused(lambda: rename("Renamed"), PutError,
                                       ("ConditionalCheckFailedException", "TransactionConflictException")),)] * 3)
    assert results == [None] * 6
    post = lab.table(TABLE).get_item(Key={"id": POST}, ConsistentRead=True)["Item"]
    assert (post["views"], post["title"], post["version"]) == (3, "Renamed", 7)


@pytest.mark.filterwarnings("ignore:Couldn't determine the remaining time left")
def test_powertools_deliveries_of_one_order_on_threads_charge_it_once_and_answer_its_charge(lab):
    delivery = Delivery(DynamoDBPersistenceLayer._put_record, lab)  # Powertools' own claim
    with as_weak_as(lab):
        results = at_once(delivery.deliver, [()] * THREADS)
    assert delivery.card.charges == [50]
    assert all(result == ANSWER or isinstance(result, IdempotencyAlreadyInProgressError) for result in results)
    assert delivery.deliver() == ANSWER and delivery.card.charges == [50], "a later delivery gets the stored charge"


def test_two_lock_clients_taking_one_free_lock_at_once_give_it_to_exactly_one(lab):
    locks = fresh_table("p36-locks")

    def take(owner):
        client = DynamoDBLockClient(lab.resource, table_name=locks.name, owner_name=owner,
                                    lease_duration=timedelta(seconds=30), heartbeat_period=timedelta(hours=1),
                                    safe_period=timedelta(hours=1))
        return client.acquire_lock("invoice-run", retry_period=timedelta(milliseconds=20),
                                   retry_timeout=timedelta(milliseconds=300))

    with as_weak_as(lab):
        results = at_once(take, [("alice",), ("bob",)])
    held = [result for result in results if not isinstance(result, Exception)]
    refused = [result for result in results if isinstance(result, Exception)]
    assert len(held) == 1 and len(refused) == 1
    assert isinstance(refused[0], DynamoDBLockError) and refused[0].code == DynamoDBLockError.ACQUIRE_TIMEOUT
    item = locks.get_item(Key={"lock_key": "invoice-run", "sort_key": "-"}, ConsistentRead=True)["Item"]
    assert item["owner_name"] == held[0].owner_name
