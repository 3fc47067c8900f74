"""The explorer holds the requests of any DynamoDB client the kernel builds, a library's own included: a request sent on a
client function's thread is that client's step, whichever botocore client sends it. Real libraries, real requests to
the lab server."""
import threading
from datetime import timedelta

import boto3
import pytest
from aws_lambda_powertools.utilities.idempotency import (DynamoDBPersistenceLayer, IdempotencyConfig,
                                                         idempotent_function)
from aws_lambda_powertools.utilities.idempotency.exceptions import IdempotencyAlreadyInProgressError
from pynamodb.attributes import NumberAttribute, UnicodeAttribute, VersionAttribute
from pynamodb.exceptions import PutError, UpdateError
from pynamodb.models import Model
from python_dynamodb_lock.python_dynamodb_lock import DynamoDBLockClient

from helpers.backend import DUMMY_CREDENTIALS
from helpers.clients import ElsewhereError
from helpers.explore import ExplorationError, explore, replay
from helpers.tables import fresh_table, recreate_table

TABLE = "p36-libraries"
KEY_SCHEMA = {"KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
              "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}]}


@pytest.fixture(autouse=True)
def embedded(lab):
    """These tests build clients of their own on the lab's embedded server."""
    if lab.kind != "embedded":
        pytest.skip("the clients these tests build carry the lab's dummy credentials, for the embedded server")


@pytest.fixture
def table(lab):
    """An empty table keyed by a string `id`, as Powertools' persistence layer and the models below expect."""
    recreate_table(lab, TABLE, KEY_SCHEMA)
    return lab.table(TABLE)


def plain_client(lab):
    """A low-level boto3 client of its own on the lab's server, as a library builds one."""
    return boto3.session.Session(**DUMMY_CREDENTIALS).client("dynamodb", endpoint_url=lab.endpoint)


def test_racy_increments_through_clients_built_inside_each_client_lose_updates_in_the_same_orders(lab, table):
    def increment():
        client = plain_client(lab)  # built on the client's thread, during the run
        item = client.get_item(TableName=TABLE, Key={"id": {"S": "counter"}})["Item"]
        client.put_item(TableName=TABLE, Item={"id": {"S": "counter"}, "n": {"N": str(int(item["n"]["N"]) + 1)}})

    orders = explore({"alice": increment, "bob": increment},
                     lambda: table.put_item(Item={"id": "counter", "n": 0}),
                     lambda _: table.get_item(Key={"id": "counter"}, ConsistentRead=True)["Item"]["n"] == 2,
                     consistency="strong")
    assert (len(orders), int((~orders["ok"]).sum())) == (4, 2)
    assert ("alice: GetItem", "bob: GetItem", "alice: PutItem", "bob: PutItem") in set(orders["steps"])


def test_a_client_built_before_the_exploration_is_held_on_whichever_thread_uses_it(lab, table, capsys):
    client = plain_client(lab)

    def write(value):
        return lambda: client.put_item(TableName=TABLE, Item={"id": {"S": "x"}, "v": {"S": value}})

    replay({"alice": write("a"), "bob": write("b")}, lambda: table.delete_item(Key={"id": "x"}), ["bob", "alice"])
    assert table.get_item(Key={"id": "x"}, ConsistentRead=True)["Item"]["v"] == "a"
    transcript = capsys.readouterr().out
    assert transcript.index("--- bob ---") < transcript.index("--- alice ---")
    assert "PutItem" in transcript


def pynamodb_counter(lab):
    """A PynamoDB model with a VersionAttribute, on the lab's server."""
    class Counter(Model):
        class Meta:
            table_name = TABLE
            host = lab.endpoint
            region = DUMMY_CREDENTIALS["region_name"]
            aws_access_key_id = DUMMY_CREDENTIALS["aws_access_key_id"]
            aws_secret_access_key = DUMMY_CREDENTIALS["aws_secret_access_key"]

        id = UnicodeAttribute(hash_key=True)
        views = NumberAttribute(default=0)
        likes = NumberAttribute(default=0)
        version = VersionAttribute()
    return Counter


def test_pynamodbs_version_check_loses_an_add_that_did_not_bump_the_version_in_one_of_three_orders(lab, table):
    counter = pynamodb_counter(lab)

    def reset():
        table.delete_item(Key={"id": "post"})
        counter("post").save()

    def view():
        post = counter.get("post", consistent_read=True)
        post.views += 1
        post.save()  # a whole-item PutItem, conditioned on the version it read

    def like():
        table.update_item(Key={"id": "post"}, UpdateExpression="ADD likes :one", ExpressionAttributeValues={":one": 1})

    orders = explore({"alice": view, "bob": like}, reset,
                     lambda _: table.get_item(Key={"id": "post"}, ConsistentRead=True)["Item"]["likes"] == 1,
                     consistency="strong")
    assert len(orders) == 3
    lost, = orders[~orders["ok"]].itertuples()
    assert lost.steps == ("alice: GetItem", "bob: UpdateItem", "alice: PutItem")
    assert lost.answers == ("OK", "OK", "OK"), "the version check passed: the ADD did not bump the version"


@pytest.mark.filterwarnings("ignore:Couldn't determine the remaining time left")
def test_powertools_idempotency_refuses_its_own_request_when_the_claims_response_is_lost(lab, table):
    layer = DynamoDBPersistenceLayer(table_name=TABLE, boto3_client=plain_client(lab))
    ran = []

    @idempotent_function(data_keyword_argument="order", persistence_store=layer,
                         config=IdempotencyConfig(use_local_cache=False))
    def place(order):
        ran.append(order["id"])
        return {"placed": order["id"]}

    def reset():
        recreate_table(lab, TABLE, KEY_SCHEMA)
        ran.clear()

    bodies = []  # per order: how many times the function's body ran
    orders = explore({"alice": lambda: place(order={"id": "o-1"})}, reset, lambda _: bodies.append(len(ran)) or True,
                     consistency="strong", faults=("lost_response",))
    refused = [place for place, results in enumerate(orders["results"])
               if isinstance(results["alice"], IdempotencyAlreadyInProgressError)]
    assert len(orders) == 3 and len(refused) == 1, "the SDK's retry of the claim meets the claim itself"
    assert orders["steps"][refused[0]][:2] == ("alice: PutItem (response lost, the SDK retries)", "alice: PutItem")
    assert bodies[refused[0]] == 0, "the body never ran for the request"


def test_a_request_from_a_thread_no_client_runs_on_stops_the_exploration_naming_it(lab, table):
    client = plain_client(lab)

    def heartbeat_beside():
        beat = threading.Thread(target=lambda: client.get_item(TableName=TABLE, Key={"id": {"S": "lock"}}))
        beat.start()
        beat.join()
        client.put_item(TableName=TABLE, Item={"id": {"S": "lock"}})

    with pytest.raises(ExplorationError, match="GetItem reached DynamoDB from a thread that is none of the clients'"):
        explore({"alice": heartbeat_beside}, lambda: None, lambda _: True, consistency="strong")


def test_a_client_that_would_reach_amazons_dynamodb_is_refused_saying_where_it_points(lab):
    elsewhere = boto3.session.Session(**DUMMY_CREDENTIALS).client("dynamodb",
                                                                   endpoint_url="https://dynamodb.eu-west-1.amazonaws.com")
    with pytest.raises(ElsewhereError, match="sends ListTables to https://dynamodb.eu-west-1.amazonaws.com, not to "
                                             "the lab's embedded backend"):
        elsewhere.list_tables()


class LambdaContext:
    """A stand-in for Lambda's context object: Powertools only asks it for the remaining time."""

    def __init__(self, remaining_ms):
        self.remaining_ms = remaining_ms

    def get_remaining_time_in_millis(self):
        return self.remaining_ms


def order_deliveries(lab, context=None):
    """(deliver, reset, charges) for notebook 36's scenes: `deliver()` places order o-1 through Powertools'
    @idempotent_function, whose body charges a card (`charges`), with `context` registered when given."""
    layer = DynamoDBPersistenceLayer(table_name=TABLE, boto3_client=plain_client(lab))
    config = IdempotencyConfig()
    if context:
        config.register_lambda_context(context)
    charges = []

    @idempotent_function(data_keyword_argument="order", persistence_store=layer, config=config)
    def place(order):
        charges.append(order["amount"])
        return {"order": order["id"], "charge": f"ch_{len(charges)}"}

    def reset():
        recreate_table(lab, TABLE, KEY_SCHEMA)
        charges.clear()

    return lambda: place(order={"id": "o-1", "amount": 50}), reset, charges


@pytest.mark.filterwarnings("ignore:Couldn't determine the remaining time left")
def test_two_deliveries_of_one_order_never_charge_twice_but_leave_it_unplaced_in_14_of_62_orders(lab, table):
    deliver, reset, charges = order_deliveries(lab)
    counts = []
    orders = explore({"alice": deliver, "bob": deliver}, reset, lambda _: counts.append(len(charges)) or True,
                     consistency="strong", faults=("lost_response", "crash"))
    # After a lost claim, its SDK's retry and the other delivery's claim are both refused by the record: two reads of
    # it, one behaviour in either order.
    assert (len(orders), counts.count(0), counts.count(2)) == (62, 14, 0)
    never = [order for order, charged in zip(orders.itertuples(), counts) if charged == 0]
    refused = [order for order in never if all(isinstance(result, IdempotencyAlreadyInProgressError)
                                               for result in order.results.values())]
    assert len(refused) == 2 and all("!lost" in order.schedule[0] for order in refused), "a lost claim refuses both"
    crashed = [order for order in never if order not in refused]
    assert len(crashed) == 12 and all("crashed after its PutItem" in {str(result) for result in order.results.values()}
                                      for order in crashed), "a crash after the claim leaves a record refusing the other"


def test_deliveries_past_the_invocations_remaining_time_charge_twice_in_4_of_6_orders(lab, table):
    deliver, reset, charges = order_deliveries(lab, LambdaContext(-1000))
    counts = []
    orders = explore({"alice": deliver, "bob": deliver}, reset, lambda _: counts.append(len(charges)) or True,
                     consistency="strong")
    assert (len(orders), counts.count(2)) == (6, 4)
    overtaken = [order.steps for order, charged in zip(orders.itertuples(), counts) if charged == 2]
    assert ("alice: PutItem", "bob: PutItem", "alice: UpdateItem", "bob: UpdateItem") in overtaken


def test_pynamodbs_update_and_a_version_check_in_every_writer_each_keep_the_add_in_every_order(lab, table):
    counter = pynamodb_counter(lab)

    def reset():
        table.delete_item(Key={"id": "post"})
        counter("post").save()

    def both_counted(_):
        item = table.get_item(Key={"id": "post"}, ConsistentRead=True)["Item"]
        return (item["views"], item["likes"]) == (1, 1)

    def view_by_update():
        post = counter.get("post", consistent_read=True)
        post.update(actions=[counter.views.add(1)])  # ADD views 1, version 1, under the version it read

    def like():
        table.update_item(Key={"id": "post"}, UpdateExpression="ADD likes :one", ExpressionAttributeValues={":one": 1})

    def retried(change):
        def run():
            for _ in range(10):
                post = counter.get("post", consistent_read=True)
                try:
                    return change(post)
                except (PutError, UpdateError) as refused:
                    if refused.cause_response_code != "ConditionalCheckFailedException":
                        raise
            raise RuntimeError("still refused")
        return run

    def view_by_save(post):
        post.views += 1
        post.save()

    by_update = explore({"alice": view_by_update, "bob": like}, reset, both_counted, consistency="strong")
    assert (len(by_update), int((~by_update["ok"]).sum())) == (3, 0)
    checked = explore({"alice": retried(view_by_save),
                       "bob": retried(lambda post: post.update(actions=[counter.likes.add(1)]))},
                      reset, both_counted, consistency="strong")
    assert (len(checked), int((~checked["ok"]).sum())) == (4, 0)
    refused = [order.steps for order in checked.itertuples() if "ConditionalCheckFailedException" in order.answers]
    assert refused == [("alice: GetItem", "bob: GetItem", "alice: PutItem", "bob: UpdateItem", "bob: GetItem",
                        "bob: UpdateItem"),
                       ("alice: GetItem", "bob: GetItem", "bob: UpdateItem", "alice: PutItem", "alice: GetItem",
                        "alice: PutItem")], "when both read first, the second write is refused and read again"


def test_a_lock_clients_holder_paused_past_its_lease_writes_after_the_takeover_unless_the_write_checks_the_lock(lab):
    locks = fresh_table("p36-locks")
    lock_item, report = {"lock_key": "invoice-run", "sort_key": "-"}, {"lock_key": "REPORT#invoice-run", "sort_key": "-"}

    def lock_client(owner, lease):
        return DynamoDBLockClient(lab.resource, table_name=locks.name, owner_name=owner, lease_duration=lease,
                                  heartbeat_period=timedelta(hours=1), safe_period=timedelta(hours=1))

    alice_locks, bob_locks, held = lock_client("alice", timedelta(0)), lock_client("bob", timedelta(seconds=10)), {}

    def reset():
        fresh_table(locks.name)
        held["alice"] = alice_locks.acquire_lock("invoice-run")

    def alice_wakes():
        locks.put_item(Item={**report, "text": "stale by alice"})

    def alice_wakes_fenced():
        locks.meta.client.transact_write_items(TransactItems=[
            {"ConditionCheck": {"TableName": locks.name, "Key": lock_item,
                                "ConditionExpression": "record_version_number = :mine",
                                "ExpressionAttributeValues": {":mine": held["alice"].record_version_number}}},
            {"Put": {"TableName": locks.name, "Item": {**report, "text": "stale by alice"}}}])

    def bob_takes_over():
        bob_locks.acquire_lock("invoice-run", retry_period=timedelta(milliseconds=10))
        locks.put_item(Item={**report, "text": "final by bob"})

    def bobs_report_stands(_):
        return locks.get_item(Key=report, ConsistentRead=True)["Item"]["text"] == "final by bob"

    stale = explore({"alice": alice_wakes, "bob": bob_takes_over}, reset, bobs_report_stands, consistency="strong")
    assert (len(stale), int((~stale["ok"]).sum())) == (2, 1)
    assert stale[~stale["ok"]]["steps"].iloc[0][-1] == "alice: PutItem", "the stale write lands after the takeover"
    fenced = explore({"alice": alice_wakes_fenced, "bob": bob_takes_over}, reset, bobs_report_stands,
                     consistency="strong")
    assert (len(fenced), int((~fenced["ok"]).sum())) == (5, 0)
    assert sum(results["alice"] is not None for results in fenced["results"]) == 2, "refused after the takeover"
