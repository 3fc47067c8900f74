"""The lab server's memory follows what its tables hold, not how many requests it has answered."""
import psutil
import pytest

from helpers import fresh_table, tracing


def test_the_lab_server_keeps_no_item_version_it_no_longer_holds(lab):
    if lab.kind != "embedded":
        pytest.skip("only the embedded lab server is a process of this lab")
    table = fresh_table("p24-atomic-counters", lab)
    server = psutil.Process(lab.server.process.pid)

    def overwrite(times):
        with tracing(False):
            for n in range(times):
                table.put_item(Item={"PK": "COUNTER#memory", "SK": "ITEM", "n": n, "payload": "x" * 2000})

    overwrite(300)
    before = server.memory_full_info().uss
    overwrite(3000)
    grown = (server.memory_full_info().uss - before) / 2**20
    assert grown < 3, f"the lab server grew {grown:.1f} MB over 3,000 overwrites of one 2 KB item"


def test_the_lab_server_keeps_no_large_value_of_past_expressions(lab):
    if lab.kind != "embedded":
        pytest.skip("only the embedded lab server is a process of this lab")
    table = fresh_table("p24-atomic-counters", lab)
    server = psutil.Process(lab.server.process.pid)
    key = {"PK": "COUNTER#memory", "SK": "EXPRESSIONS"}

    def write(first, times):
        with tracing(False):
            for n in range(first, first + times):
                payload = f"{n:06}" + "x" * 4000
                table.update_item(Key=key, UpdateExpression="SET payload = :p",
                                  ExpressionAttributeValues={":p": payload})
                table.put_item(Item={**key, "payload": payload}, ConditionExpression="payload <> :p",
                               ExpressionAttributeValues={":p": payload + "!"})

    write(0, 300)
    before = server.memory_full_info().uss
    write(300, 1500)
    grown = (server.memory_full_info().uss - before) / 2**20
    assert grown < 3, f"the lab server grew {grown:.1f} MB over 1,500 updates and conditional puts of 4 KB values"
