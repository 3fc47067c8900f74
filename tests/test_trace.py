"""The transcript prints calls exactly as the reference texts do."""
import contextlib
import io
import json
import re
import threading
from decimal import Decimal
from pathlib import Path

import boto3
import pytest
from boto3.dynamodb.types import TypeSerializer

from helpers import fresh_table, show, tracing
from helpers.trace import TRACER, render_call

to_wire = TypeSerializer().serialize


@pytest.fixture(autouse=True)
def transcript_closed():
    """Each test starts with no block of an earlier test open in the transcript (a test before it in this worker may
    have left one: the notebook's cell end would have closed it)."""
    with contextlib.redirect_stdout(io.StringIO()):
        TRACER.flush()


def wire(item):
    """A plain dict in DynamoDB JSON, as botocore sends it."""
    return {name: to_wire(value) for name, value in item.items()}


def test_update_with_placeholders_renders_like_the_reference():
    body = {"TableName": "p22-conditional-writes", "Key": wire({"PK": "USER#alice", "SK": "PROFILE"}),
            "UpdateExpression": "SET credits = credits - :a", "ConditionExpression": "credits >= :a AND #s = :active",
            "ExpressionAttributeNames": {"#s": "status"},
            "ExpressionAttributeValues": wire({":a": 7, ":active": "active"})}
    assert render_call("UpdateItem", body) == (
        ">>> UpdateItem p22-conditional-writes\n"
        "    key:        {PK: 'USER#alice', SK: 'PROFILE'}\n"
        "    condition:  credits >= 7 AND status = 'active'\n"
        "    update:     SET credits = credits - 7")


def test_options_follow_the_expressions():
    body = {"TableName": "p24-atomic-counters", "Key": wire({"PK": "SEQUENCE#invoice", "SK": "COUNTER"}),
            "UpdateExpression": "ADD #n :one", "ExpressionAttributeNames": {"#n": "next"},
            "ExpressionAttributeValues": wire({":one": 1}), "ReturnValues": "UPDATED_NEW"}
    assert render_call("UpdateItem", body).splitlines()[2:] == [
        "    update:     ADD next 1", "    ReturnValues: UPDATED_NEW"]


def test_query_on_an_index_shows_key_condition_index_and_consistency():
    body = {"TableName": "p28-gsi-consistency", "IndexName": "GSI1", "ConsistentRead": True,
            "KeyConditionExpression": "#n0 = :v0", "ExpressionAttributeNames": {"#n0": "GSI1PK"},
            "ExpressionAttributeValues": wire({":v0": "EMAIL#a@x.com"})}
    assert render_call("Query", body) == (
        ">>> Query p28-gsi-consistency\n"
        "    key:        GSI1PK = 'EMAIL#a@x.com'\n"
        "    IndexName:  GSI1\n"
        "    ConsistentRead: True")


def test_transactions_list_their_actions_indented():
    body = {"TransactItems": [
        {"Put": {"TableName": "p25-transactions", "Item": wire({"PK": "USER#alice", "SK": "ORDER#o1", "qty": 2}),
                 "ConditionExpression": "attribute_not_exists(PK)"}},
        {"Update": {"TableName": "p25-transactions", "Key": wire({"PK": "USER#alice", "SK": "PROFILE"}),
                    "UpdateExpression": "ADD orderCount :one", "ExpressionAttributeValues": wire({":one": 1})}}]}
    assert render_call("TransactWriteItems", body) == (
        ">>> TransactWriteItems\n"
        "    - Put p25-transactions\n"
        "        item:       {PK: 'USER#alice', SK: 'ORDER#o1', qty: 2}\n"
        "        condition:  attribute_not_exists(PK)\n"
        "    - Update p25-transactions\n"
        "        key:        {PK: 'USER#alice', SK: 'PROFILE'}\n"
        "        update:     ADD orderCount 1")


@pytest.mark.parametrize("value, written", [
    (10, "10"), (Decimal("1.5"), "1.5"), ("it's", '"it\'s"'), (True, "True"), (None, "None"),
    ({"chargeId": "ch_1", "amount": 50}, "{chargeId: 'ch_1', amount: 50}"), ([1, "a"], "[1, 'a']"),
])
def test_values_are_written_as_a_person_would(value, written):
    assert render_call("PutItem", {"TableName": "t", "Item": wire({"v": value})}).endswith(f"{{v: {written}}}")


def test_identical_consecutive_calls_collapse_with_an_honest_count(lab, capsys):
    table = fresh_table("p24-atomic-counters", lab)
    capsys.readouterr()
    for _ in range(50):
        table.update_item(Key={"PK": "POST#hello-world", "SK": "STATS"}, UpdateExpression="ADD #v :one",
                          ExpressionAttributeNames={"#v": "views"}, ExpressionAttributeValues={":one": 1})
    show("After 50 increments")
    assert capsys.readouterr().out == (
        ">>> UpdateItem p24-atomic-counters\n"
        "    key:        {PK: 'POST#hello-world', SK: 'STATS'}\n"
        "    update:     ADD views 1\n"
        "    ... (+49 more UpdateItem calls not shown)\n"
        "\n"
        "=== After 50 increments ===\n"
        "\n")


def test_tracing_can_be_switched_off_for_a_block(lab, capsys):
    capsys.readouterr()
    with tracing(False):
        lab.client.list_tables()
    assert capsys.readouterr().out == ""
    lab.client.list_tables()
    assert capsys.readouterr().out.startswith(">>> ListTables")
    TRACER.flush()


def test_overlapping_quiet_blocks_ending_out_of_order_leave_the_transcript_on(lab, capsys):
    background_began, foreground_began = threading.Event(), threading.Event()

    def background_race():
        with tracing(False):
            background_began.set()
            foreground_began.wait(5)

    capsys.readouterr()
    race = threading.Thread(target=background_race)
    race.start()
    background_began.wait(5)
    with tracing(False):
        foreground_began.set()
        race.join(5)
        lab.client.list_tables()
    assert capsys.readouterr().out == ""
    lab.client.list_tables()
    assert capsys.readouterr().out.startswith(">>> ListTables")
    TRACER.flush()


def test_show_prints_numbers_not_decimals(capsys):
    show("Next invoice number", {"next": Decimal("1"), "ratio": Decimal("0.5"), "tags": {"b", "a"}})
    assert capsys.readouterr().out == (
        '=== Next invoice number ===\n{\n  "next": 1,\n  "ratio": 0.5,\n  "tags": [\n    "a",\n    "b"\n  ]\n}\n\n')


def test_a_client_a_library_builds_on_the_labs_server_is_traced_like_the_labs(lab, capsys):
    fresh_table("p24-atomic-counters", lab)
    capsys.readouterr()
    other = boto3.client("dynamodb", endpoint_url=lab.endpoint, region_name="us-east-1",
                         aws_access_key_id="x", aws_secret_access_key="x")
    other.get_item(TableName="p24-atomic-counters", Key={"PK": {"S": "POST#hello-world"}, "SK": {"S": "STATS"}})
    TRACER.flush()
    assert capsys.readouterr().out.startswith(">>> GetItem p24-atomic-counters\n")


RACY_PUT = r">>> PutItem p24-atomic-counters\n    item:       \{PK: 'POST#hello-world', SK: 'STATS', views: \d+\}\n"
RACY_SECTION = re.compile(  # the reference transcript's racy section: two puts, "...", two puts, then the title
    rf"{RACY_PUT}\n{RACY_PUT}\.\.\.\n{RACY_PUT}\n{RACY_PUT}\n"
    r"=== Racy read-modify-write after 50 'increments' \(expect < 50\) ===\n\{\n(  .*\n)+\}\n\n")


def test_24s_racy_race_prints_its_puts_before_its_title_as_the_reference_does():
    notebook = json.loads((Path(__file__).resolve().parent.parent / "notebooks" / "24-atomic-counters.ipynb").read_text())
    printed = ["".join(output["text"]) for cell in notebook["cells"] if cell["cell_type"] == "code"
               for output in cell["outputs"] if output["output_type"] == "stream"]
    titled = [text for text in printed if "=== Racy read-modify-write after 50 'increments'" in text]
    assert len(titled) == 1 and RACY_SECTION.fullmatch(titled[0]), titled


def test_a_transaction_action_naming_no_operation_is_printed_as_sent_and_dynamodb_answers_it(lab, capsys):
    fresh_table("p24-atomic-counters", lab)
    capsys.readouterr()
    with pytest.raises(lab.client.exceptions.ClientError):
        lab.client.transact_write_items(TransactItems=[
            {"Put": {"TableName": "p24-atomic-counters", "Item": {"PK": "x", "SK": "y"}}}, {}])
    TRACER.flush()
    assert capsys.readouterr().out.startswith(">>> TransactWriteItems\n    - Put p24-atomic-counters\n"
                                               "        item:       {PK: 'x', SK: 'y'}\n    - {}\n")
