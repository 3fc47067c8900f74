"""Checkers for notebook 36 (the libraries you run): Powertools' idempotency claim, PynamoDB's version check."""
import functools
import random
import re
import threading
import time
import warnings

import boto3
from aws_lambda_powertools.utilities.idempotency import (DynamoDBPersistenceLayer, IdempotencyConfig,
                                                         idempotent_function)
from aws_lambda_powertools.utilities.idempotency.exceptions import IdempotencyAlreadyInProgressError
from pynamodb.attributes import NumberAttribute, UnicodeAttribute, VersionAttribute
from pynamodb.connection import Connection
from pynamodb.exceptions import PutError
from pynamodb.models import Model

from ..lab.backend import DUMMY_CREDENTIALS, connect
from ..lab.tables import fresh_table
from ..lab.trace import tracing
from . import attack, error_words, interruptible

TABLE = "p36-libraries"
ORDER = {"id": "o-1", "amount": 50}
NO_CONTEXT = "Couldn't determine the remaining time left"  # Powertools' warning outside a Lambda invocation
SIZES = (2, 5, 10)
TRIES = 2
ANSWER = {"order": "o-1", "charge": "ch_1"}
POST = "p-1"
RENAME_ATTEMPTS = 25
BACKOFF_SECONDS = 0.01
REFUSED_SAVES = ("ConditionalCheckFailedException", "TransactionConflictException")


class Card:
    """A fake payment provider that counts its charges (safe to call from many threads)."""

    def __init__(self):
        self.charges = []
        self.lock = threading.Lock()

    def __call__(self, order):
        with self.lock:
            self.charges.append(order["amount"])
            return {"order": order["id"], "charge": f"ch_{len(self.charges)}"}


@functools.cache
def library_client(endpoint):
    """A low-level DynamoDB client of its own on the lab's server, as a library builds one (one per server: building
    a client takes longer than an explored order)."""
    return boto3.session.Session(**DUMMY_CREDENTIALS).client("dynamodb", endpoint_url=endpoint)


class Delivery:
    """One order's idempotent handler, as Powertools runs it with the learner's claim, and the card it charges."""

    def __init__(self, put_record, lab):
        self.table, self.card = fresh_table(TABLE), Card()

        class Layer(DynamoDBPersistenceLayer):
            """Powertools' persistence layer whose claim is the learner's put_record."""

            def _put_record(self, data_record):
                return put_record(self, data_record)

        layer = Layer(table_name=TABLE, boto3_client=library_client(lab.endpoint))

        @idempotent_function(data_keyword_argument="order", persistence_store=layer,
                             config=IdempotencyConfig(use_local_cache=False))
        def place(order):
            return self.card(order)

        self.place = place

    def deliver(self):
        """The handler called with the order, once: what a queue delivery does."""
        with warnings.catch_warnings():
            warnings.filterwarnings("ignore", NO_CONTEXT)
            return self.place(order=ORDER)


def deliver(delivery):
    """One delivery of the order (a client of the attack)."""
    return delivery.deliver()


def delivery_problem(delivery, log):
    """What is wrong after deliveries of one order, each told the charge or 'already in progress', or None."""
    raised = [error for error in log["error"].dropna() if not error.startswith("IdempotencyAlreadyInProgressError")]
    if raised:
        return f"a delivery raised {raised[0]}; only IdempotencyAlreadyInProgressError may be raised"
    charges = len(delivery.card.charges)
    answered = [result for result, error in zip(log["result"], log["error"]) if error is None]
    if charges == 0 and not answered:
        return ("the order was never charged and every delivery was told 'already in progress': the SDK resent a "
                "claim whose response was lost, and the claim took its own record for another delivery's")
    if charges != 1:
        return f"the order was charged {charges} times"
    wrong = [result for result in answered if result != ANSWER]
    if wrong:
        return f"a delivery was answered {wrong[0]!r}, not the charge {ANSWER!r}"
    later = delivery.deliver()
    if later != ANSWER or len(delivery.card.charges) != 1:
        return f"a delivery after the first finished got {later!r}, not the stored {ANSWER!r}"
    return None


def abandoned_claims(delivery):
    """None when the claim takes over a record a dead invocation left, as Powertools' own claim does, else what went
    wrong: a record whose `expiration` has passed, then an INPROGRESS one whose in-progress expiry has passed."""
    deliver(delivery)
    key = {"id": delivery.table.scan(ConsistentRead=True)["Items"][0]["id"]}
    now = time.time()  # as Powertools writes them: the expiration in seconds, the in-progress expiry in milliseconds
    stale = {"a COMPLETED record whose expiration has passed": ("SET expiration = :past", {":past": int(now) - 1}),
             "an INPROGRESS record whose in-progress expiry has passed": (
                 "SET #s = :inprogress, in_progress_expiration = :past",
                 {":inprogress": "INPROGRESS", ":past": int(now * 1000) - 1000})}
    for charged, (record, (update, values)) in enumerate(stale.items(), start=2):
        delivery.table.update_item(Key=key, UpdateExpression=update, ExpressionAttributeValues=values,
                                   **({"ExpressionAttributeNames": {"#s": "status"}} if "#s" in update else {}))
        try:
            answer = deliver(delivery)
        except IdempotencyAlreadyInProgressError:
            return f"a delivery that met {record} was told 'already in progress': it must take the record over"
        except Exception as failure:  # a learner's bug is a finding, not a crash of the checker
            return f"a delivery that met {record} raised {error_words(failure)} (it must take the record over)"
        if len(delivery.card.charges) != charged or answer["charge"] != f"ch_{charged}":
            return f"a delivery that met {record} was answered {answer!r} without charging the order"
    return None


@interruptible
def check_put_record(put_record):
    """Attack put_record(layer, data_record), the claim of Powertools' DynamoDB persistence layer: two deliveries of one
    order in every order their requests can reach DynamoDB, then again with any one response lost (the SDK resends
    the request), then deliveries at once; then, one at a time, records a dead invocation left must be taken over.
    The order is charged once, every answer is that charge, only IdempotencyAlreadyInProgressError may be raised."""
    if not callable(put_record):
        raise TypeError(f"Pass your function itself (e.g. put_record), not {put_record!r}.")
    lab = connect(quiet=True)
    with tracing(False):
        report = attack("put_record", deliver, lambda: Delivery(put_record, lab),
                        lambda delivery, n: [(delivery,)] * n, delivery_problem, sizes=SIZES, tries=TRIES,
                        faults=("lost_response",) if lab.kind == "embedded" else (), probe=abandoned_claims)
    return report


def pynamodb_settings(endpoint):
    """Where PynamoDB sends its requests: the lab's server at `endpoint`, with the lab's dummy credentials."""
    return {"host": endpoint, "region": DUMMY_CREDENTIALS["region_name"],
            "aws_access_key_id": DUMMY_CREDENTIALS["aws_access_key_id"],
            "aws_secret_access_key": DUMMY_CREDENTIALS["aws_secret_access_key"]}


@functools.cache
def post_model(endpoint):
    """Notebook 36's PynamoDB model of a post, with a VersionAttribute, on the lab's server at `endpoint`."""
    class Post(Model):
        Meta = type("Meta", (), {"table_name": TABLE, **pynamodb_settings(endpoint)})

        id = UnicodeAttribute(hash_key=True)
        title = UnicodeAttribute(default="Hello")
        views = NumberAttribute(default=0)
        likes = NumberAttribute(default=0)
        version = VersionAttribute()
    return Post


@functools.cache
def pynamodb_connection(endpoint):
    """A PynamoDB Connection to the lab's server at `endpoint`, for the learner's TransactWrite or TransactGet."""
    return Connection(**pynamodb_settings(endpoint))


def rename(post_model, title):
    """The other writer, written correctly with PynamoDB: read the post, set its title, save it if the version held
    (PynamoDB's save is a PutItem conditioned on the version it read), reading again when it did not, or when the save
    met an ongoing transaction on the post (TransactionConflictException, which botocore does not retry)."""
    for attempt in range(RENAME_ATTEMPTS):
        post = post_model.get(POST, consistent_read=True)
        post.title = title
        try:
            post.save()
            return True
        except PutError as error:
            if error.cause_response_code not in REFUSED_SAVES:
                raise
            if error.cause_response_code == "TransactionConflictException":  # a view's transaction holds the post
                time.sleep(random.uniform(0, BACKOFF_SECONDS * 2 ** min(attempt, 5)))
    raise RuntimeError(f"rename gave up after {RENAME_ATTEMPTS} refused saves")


def check_add_view(add_view):
    """Attack add_view(Post, post_id, connection) beside a PynamoDB rename that checks the version: one of each in every
    order, then again with any one response lost (the SDK resends the request), then views and renames at once. Every
    view counts once, every rename's title stands until the next, nothing raises."""
    if not callable(add_view):
        raise TypeError(f"Pass your function itself (e.g. add_view), not {add_view!r}.")
    lab = connect(quiet=True)
    post_model_, connection = post_model(lab.endpoint), pynamodb_connection(lab.endpoint)

    def fresh_post():
        """The exercise table holding one post, p-1: 'Hello', 0 views, 0 likes, version 1 (saved by PynamoDB)."""
        table = fresh_table(TABLE)
        post_model_(POST).save()
        return table

    def client(action, *args):
        """One call of this scenario: the learner's add_view or the checker's rename."""
        return action(*args)

    def calls(table, n):
        """n calls alternating add_view and rename (to 'Title 1', 'Title 3', ...)."""
        return [(add_view, post_model_, POST, connection) if i % 2 == 0 else (rename, post_model_, f"Title {i}")
                for i in range(n)]

    def invariant(table, log):
        errors = log["error"].dropna()
        if len(errors):
            raised = re.sub(r" on request \([^)]*\)", "", errors.iloc[0])  # PynamoDB's words name the request's id
            return f"a call raised {raised}; add_view must count its view (read again when the version moved)"
        post = table.get_item(Key={"id": POST}, ConsistentRead=True)["Item"]
        views = sum(args[0] is add_view for args in log["args"])
        titles = [args[-1] for args in log["args"] if args[0] is rename]
        calls = "call" if views == 1 else "calls"
        if post["views"] > views:
            return (f"the post has {post['views']} views after {views} add_view {calls}: a view was counted twice. Its "
                    "write was applied and its response lost, and it was written again: by the SDK's resend, or by "
                    "add_view after the resend was refused by the version its own first copy had raised")
        if post["views"] < views:
            return (f"the post has {post['views']} views after {views} add_view {calls}: a view was lost. A rename put "
                    "back a copy read before the view was added, and its version check passed because the view did not "
                    "raise the version, or add_view returned without its view written")
        if titles and post["title"] not in titles:
            return f"the title is {post['title']!r}, not the one a rename saved: a view put back an older copy"
        return None

    def one_of_each(table):
        """alice adds a view while bob renames the post to 'Hello, world'."""
        return [(add_view, post_model_, POST, connection), (rename, post_model_, "Hello, world")]

    def hidden(table):
        """One view once the table is deleted: the error must come out of add_view, not an answer."""
        table.delete()
        table.wait_until_not_exists()
        try:
            answer = add_view(post_model_, POST, connection)
        except Exception:  # any error that comes out is what we want: it was not hidden
            return None
        return (f"with {TABLE} deleted, add_view returned {answer!r} instead of raising: it hides errors that are not "
                "refusals (a view that was never written reads as counted). Catch only the refusal you retry on (the "
                "cancelled transaction, or the failed version check) and let every other error raise")

    with tracing(False):
        return attack("add_view", client, fresh_post, calls, invariant, sizes=SIZES, tries=TRIES, orders_of=one_of_each,
                      faults=("lost_response",) if lab.kind == "embedded" else (), probe=hidden)
