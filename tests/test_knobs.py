"""The lab server's teaching knobs do what a notebook promises, and nothing while they are off."""
import json
import socket
import threading
import time
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import SimpleNamespace

import pytest
from boto3.dynamodb.conditions import Key

from helpers import Lab, fresh_table
from helpers.knobs import KnobsUnavailable, ServerSilent, get_knobs, knobs, reset_knobs, set_knobs

TABLE = "p28-gsi-consistency"
USER = {"PK": "USER#1", "SK": "PROFILE"}
COUNTER = {"PK": "COUNTER#1", "SK": "COUNTER"}
LAG = 0.4


pytestmark = pytest.mark.usefixtures("knobs_off")


@pytest.fixture
def table(lab):
    return fresh_table(TABLE, lab)


def by_email(table, email):
    """What the GSI answers for one email right now."""
    return table.query(IndexName="GSI1", KeyConditionExpression=Key("GSI1PK").eq(email))["Items"]


def user(email):
    return {**USER, "GSI1PK": email, "GSI1SK": "USER#1"}


def add_one(table):
    """An unconditional ADD: not idempotent, so a retried request counts twice."""
    return table.update_item(Key=COUNTER, UpdateExpression="ADD n :one", ExpressionAttributeValues={":one": 1})


def test_a_fresh_server_has_every_knob_off(standalone_server):
    with urllib.request.urlopen(standalone_server + "/lab/knobs", timeout=5) as answer:
        reply = json.load(answer)
    assert reply == {"knobs": {"latency": None, "stale_reads": None, "gsi_lag": None, "transaction_window": None,
                               "lose_response": None, "lose_count": 0,
                               "lose_matching": None, "responses_lost": 0,
                               "transaction_conflict": 0, "conflict_matching": None, "conflicts_made": 0,
                               "partition_limits": None, "stream_lag": None, "replication_lag": None,
                               "global_tables": 0},
                     "description": ""}


def test_the_banner_says_which_knobs_are_on(lab):
    assert "knobs" not in lab.banner
    set_knobs(lab, quiet=True, gsi_lag=LAG, lose_response="PutItem")
    assert lab.banner.endswith("; teaching knobs on: gsi_lag 0.4 s, lose_response next 1 PutItem.\nStronger than "
                               "DynamoDB: default reads are never stale and transactions never conflict, batch writes land whole; "
                               "as_weak_as_dynamodb(lab) makes it as weak")
    reset_knobs(lab, quiet=True)
    assert "knobs" not in lab.banner


def test_set_knobs_prints_the_banner_with_the_knob(lab, capsys):
    set_knobs(lab, latency=[0.01, 0.02])
    assert "teaching knobs on: latency 0.01-0.02 s.\n" in capsys.readouterr().out


def test_a_lost_response_is_applied_and_retried_by_the_sdk(lab, table):
    lost_before = get_knobs(lab)["responses_lost"]
    set_knobs(lab, quiet=True, lose_response="UpdateItem")
    answer = add_one(table)
    assert answer["ResponseMetadata"]["RetryAttempts"] == 1
    assert table.get_item(Key=COUNTER, ConsistentRead=True)["Item"]["n"] == 2, "the first try was applied too"
    assert get_knobs(lab)["responses_lost"] == lost_before + 1
    assert get_knobs(lab)["lose_response"] is None, "the knob turns itself off after lose_count responses"
    assert add_one(table)["ResponseMetadata"]["RetryAttempts"] == 0


def test_lose_count_and_lose_matching_pick_which_responses_are_lost(lab, table):
    set_knobs(lab, quiet=True, lose_response="PutItem", lose_count=2, lose_matching="USER#2")
    assert table.put_item(Item={"PK": "USER#1", "SK": "X"})["ResponseMetadata"]["RetryAttempts"] == 0
    assert table.put_item(Item={"PK": "USER#2", "SK": "X"})["ResponseMetadata"]["RetryAttempts"] == 2
    assert get_knobs(lab)["lose_response"] is None


def test_a_conditional_create_whose_response_is_lost_fails_its_own_retry(lab, table):
    set_knobs(lab, quiet=True, lose_response="PutItem")
    with pytest.raises(table.meta.client.exceptions.ConditionalCheckFailedException):
        table.put_item(Item={**USER, "v": 1}, ConditionExpression="attribute_not_exists(PK)")
    assert table.get_item(Key=USER, ConsistentRead=True)["Item"]["v"] == 1


def test_a_lagged_index_returns_the_old_state_then_the_new(lab, table):
    set_knobs(lab, quiet=True, gsi_lag=LAG)
    table.put_item(Item=user("EMAIL#a"))
    assert by_email(table, "EMAIL#a") == []
    assert table.get_item(Key=USER, ConsistentRead=True)["Item"] == user("EMAIL#a"), "base reads are not lagged"
    time.sleep(LAG + 0.1)
    assert by_email(table, "EMAIL#a") == [user("EMAIL#a")]

    table.update_item(Key=USER, UpdateExpression="SET GSI1PK = :b", ExpressionAttributeValues={":b": "EMAIL#b"})
    assert (by_email(table, "EMAIL#a"), by_email(table, "EMAIL#b")) == ([user("EMAIL#a")], [])
    time.sleep(LAG + 0.1)
    assert (by_email(table, "EMAIL#a"), by_email(table, "EMAIL#b")) == ([], [user("EMAIL#b")])

    table.delete_item(Key=USER)
    assert table.scan(IndexName="GSI1")["Items"] == [user("EMAIL#b")]
    time.sleep(LAG + 0.1)
    assert table.scan(IndexName="GSI1")["Items"] == []


def test_writes_inside_transactions_and_batches_are_lagged_too(lab, table):
    set_knobs(lab, quiet=True, gsi_lag=LAG)
    lab.client.transact_write_items(TransactItems=[{"Put": {"TableName": TABLE, "Item": user("EMAIL#t")}}])
    with table.batch_writer() as batch:
        batch.put_item(Item={"PK": "USER#2", "SK": "PROFILE", "GSI1PK": "EMAIL#t", "GSI1SK": "USER#2"})
    assert by_email(table, "EMAIL#t") == []
    time.sleep(LAG + 0.1)
    assert [item["PK"] for item in by_email(table, "EMAIL#t")] == ["USER#1", "USER#2"]


def test_turning_the_lag_off_lets_the_index_catch_up_at_once(lab, table):
    set_knobs(lab, quiet=True, gsi_lag=5)
    table.put_item(Item=user("EMAIL#a"))
    assert by_email(table, "EMAIL#a") == []
    set_knobs(lab, quiet=True, gsi_lag=0)
    assert by_email(table, "EMAIL#a") == [user("EMAIL#a")]


def test_latency_delays_each_request_but_requests_still_overlap(lab, table):
    table.put_item(Item={**COUNTER, "n": 0})
    set_knobs(lab, quiet=True, latency=0.3)
    started = time.perf_counter()
    threads = [threading.Thread(target=add_one, args=(table,)) for _ in range(10)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    took = time.perf_counter() - started
    assert 0.3 <= took < 1.5, f"10 concurrent requests with 0.3 s latency took {took:.2f} s"
    assert table.get_item(Key=COUNTER, ConsistentRead=True)["Item"]["n"] == 10


def test_the_context_manager_puts_the_knobs_back_even_when_the_block_fails(lab):
    set_knobs(lab, quiet=True, latency=0.01)
    with pytest.raises(RuntimeError), knobs(lab, quiet=True, gsi_lag=LAG, lose_response="Query", lose_count=3):
        assert get_knobs(lab)["gsi_lag"] == [LAG, LAG]
        raise RuntimeError("the block failed")
    assert {k: get_knobs(lab)[k] for k in ("latency", "gsi_lag", "lose_response")} == {
        "latency": [0.01, 0.01], "gsi_lag": None, "lose_response": None}


@pytest.mark.parametrize("values, message", [
    ({"gsi_lag": -1}, "gsi_lag must be a number of seconds from 0 to 10"),
    ({"latency": [0.5, 0.1]}, "latency must be a number of seconds from 0 to 10"),
    ({"lose_response": "Charge"}, "lose_response must name a DynamoDB operation, one of PutItem"),
    ({"lose_response": "PutItem", "lose_count": 0}, "lose_count must be a whole number from 1 to 100"),
    ({"lose_count": 2}, "lose_count and lose_matching need lose_response"),
    ({"gsi_lagg": 1}, "Unknown knob 'gsi_lagg'; the knobs are latency, stale_reads, gsi_lag, transaction_window, lose_response"),
])
def test_a_bad_setting_is_refused_with_what_is_allowed_and_changes_nothing(lab, values, message):
    set_knobs(lab, quiet=True, latency=0.01)
    with pytest.raises(ValueError, match=message):
        set_knobs(lab, quiet=True, **{"gsi_lag": 1, **values})
    assert (get_knobs(lab)["latency"], get_knobs(lab)["gsi_lag"]) == ([0.01, 0.01], None)


def test_a_standalone_lab_server_takes_knobs_over_http(standalone_server):
    request = urllib.request.Request(standalone_server + "/lab/knobs", data=json.dumps({"gsi_lag": 0.5}).encode(),
                                     method="POST")
    with urllib.request.urlopen(request, timeout=5) as answer:
        reply = json.load(answer)
    assert (reply["knobs"]["gsi_lag"], reply["description"]) == ([0.5, 0.5], "gsi_lag 0.5 s")


class NotALabServer(BaseHTTPRequestHandler):
    """Answers every request as DynamoDB Local answers an unsigned one."""

    def do_POST(self):
        self.send_response(400)
        self.end_headers()
        self.wfile.write(b'{"__type":"com.amazonaws.dynamodb.v20120810#MissingAuthenticationToken","message":"x"}')

    do_GET = do_DELETE = do_POST

    def log_message(self, format, *args):
        """Quiet."""


def test_backends_without_knobs_say_so_and_what_to_do():
    server = ThreadingHTTPServer(("127.0.0.1", 0), NotALabServer)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        client = SimpleNamespace(meta=SimpleNamespace(region_name="us-east-1"))
        local = Lab("local", f"http://127.0.0.1:{server.server_address[1]}", client, None)
        with pytest.raises(KnobsUnavailable, match="only on the lab's own server.*DynamoDB Local at http"):
            set_knobs(local, gsi_lag=0.5)
        assert local.banner.startswith("Backend: DynamoDB Local") and "knobs" not in local.banner
    finally:
        server.shutdown()
    with pytest.raises(KnobsUnavailable, match="real Amazon DynamoDB.*unset AWS_ENDPOINT_URL_DYNAMODB"):
        set_knobs(Lab("aws", None, None, None), lose_response="PutItem")


def test_a_post_that_is_not_a_json_object_is_refused_with_an_example(standalone_server):
    request = urllib.request.Request(standalone_server + "/lab/knobs", data=b"gsi_lag=0.5", method="POST")
    with pytest.raises(urllib.error.HTTPError) as refused:
        urllib.request.urlopen(request, timeout=5)
    assert refused.value.code == 400
    assert json.load(refused.value)["message"] == 'POST /lab/knobs takes a JSON object, e.g. {"gsi_lag": 0.5}'


def test_a_silent_lab_server_is_named_as_such_not_as_dynamodb_local():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        endpoint = f"http://127.0.0.1:{probe.getsockname()[1]}"  # nothing listens there once the probe closes
    with pytest.raises(ServerSilent, match=f"The lab server at {endpoint} gave no answer to /lab/knobs"):
        set_knobs(Lab("embedded", endpoint, None, None), quiet=True, latency=0.1)
