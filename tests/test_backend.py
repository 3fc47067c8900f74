"""Choosing the backend: clear messages, no silent fallback, no foreign table touched."""
import signal
import socket
import subprocess
import sys
import time

import boto3
import pytest

from helpers import fresh_table
from helpers.backend import BackendError, LAB_TAG, _open_lab

ISOLATED = {"AWS_ENDPOINT_URL_DYNAMODB": None, "DYNAMODB_LAB_USE_AWS": None}


@pytest.fixture
def environment(monkeypatch):
    """Set or clear the backend's environment variables for one test."""
    def apply(**variables):
        for name, value in {**ISOLATED, **variables}.items():
            if value is None:
                monkeypatch.delenv(name, raising=False)
            else:
                monkeypatch.setenv(name, value)
    return apply


def free_port():
    """A loopback port nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_default_backend_is_the_embedded_server_on_loopback(lab):
    assert lab.kind == "embedded"
    assert lab.endpoint.startswith("http://127.0.0.1:")
    assert lab.banner.startswith("Backend: embedded lab server at http://127.0.0.1:")


def test_unreachable_endpoint_fails_at_once_saying_what_to_run(environment):
    endpoint = f"http://127.0.0.1:{free_port()}"
    environment(AWS_ENDPOINT_URL_DYNAMODB=endpoint)
    started = time.monotonic()
    with pytest.raises(BackendError) as failure:
        _open_lab()
    assert time.monotonic() - started < 5
    message = str(failure.value)
    assert endpoint in message
    assert "docker compose up -d dynamodb-local" in message and "unset AWS_ENDPOINT_URL_DYNAMODB" in message


def test_real_aws_without_opt_in_is_refused_with_the_variable_to_set(environment):
    environment(AWS_ENDPOINT_URL_DYNAMODB="https://dynamodb.eu-west-1.amazonaws.com")
    with pytest.raises(BackendError, match="DYNAMODB_LAB_USE_AWS=1"):
        _open_lab()


def test_another_endpoint_is_used_as_dynamodb_local(environment, standalone_server):
    environment(AWS_ENDPOINT_URL_DYNAMODB=standalone_server)
    lab = _open_lab()
    assert lab.kind == "local"
    assert lab.banner == f"Backend: DynamoDB Local at {standalone_server} (from AWS_ENDPOINT_URL_DYNAMODB)"


def test_off_the_embedded_server_the_lab_refuses_to_write_tables_it_did_not_create(environment, standalone_server):
    environment(AWS_ENDPOINT_URL_DYNAMODB=standalone_server)
    client = _open_lab().client
    for write in (lambda: client.put_item(TableName="customers", Item={"id": "1"}),
                  lambda: client.delete_table(TableName="customers"),
                  lambda: client.transact_write_items(TransactItems=[
                      {"Put": {"TableName": "p25-transactions", "Item": {"PK": "a", "SK": "b"}}},
                      {"Delete": {"TableName": "customers", "Key": {"id": "1"}}}])):
        with pytest.raises(BackendError, match="'customers'"):
            write()


def test_a_table_the_lab_does_not_define_is_refused_naming_the_ones_it_does(lab):
    with pytest.raises(ValueError, match=r"^'Users' is not one of the lab's tables; choose from \['p00-start-here', 'p22-conditional"):
        fresh_table("Users", lab)
    assert "Users" not in lab.client.list_tables()["TableNames"]


def test_lab_tables_carry_the_lab_tag(lab):
    table = fresh_table("p22-conditional-writes", lab)
    arn = lab.client.describe_table(TableName=table.name)["Table"]["TableArn"]
    assert LAB_TAG in lab.client.list_tags_of_resource(ResourceArn=arn)["Tags"]


def test_standalone_server_serves_other_tools(standalone_server):
    other = boto3.client("dynamodb", endpoint_url=standalone_server, region_name="us-east-1",
                         aws_access_key_id="any", aws_secret_access_key="any")
    assert other.list_tables()["TableNames"] == []


def test_embedded_server_stops_when_its_kernel_dies():
    kernel = subprocess.Popen(
        [sys.executable, "-c", "from helpers import connect; import time; lab = connect(quiet=True); "
                               "print(lab.endpoint, flush=True); time.sleep(60)"],
        stdout=subprocess.PIPE, text=True)
    port = int(kernel.stdout.readline().rsplit(":", 1)[1])
    kernel.send_signal(signal.SIGKILL)
    kernel.wait()
    deadline = time.monotonic() + 5
    while time.monotonic() < deadline:
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) != 0:
                return
        time.sleep(0.1)
    pytest.fail(f"the embedded server on port {port} outlived its kernel")


def test_server_refuses_a_busy_port_with_a_clear_message(standalone_server):
    port = standalone_server.rsplit(":", 1)[1]
    result = subprocess.run([sys.executable, "-m", "helpers.labserver", "--port", port],
                            capture_output=True, text=True, timeout=30)
    assert result.returncode == 1
    assert f"Cannot listen on 127.0.0.1:{port}" in result.stderr and "--port" in result.stderr


def test_after_the_embedded_server_dies_the_next_request_says_so_and_later_ones_work(environment):
    environment()
    lab = _open_lab()
    fresh_table("p22-conditional-writes", lab)
    lab.server.process.kill()
    lab.server.process.wait()
    with pytest.raises(BackendError) as stopped:
        lab.client.list_tables()
    message = str(stopped.value)
    assert "lab server stopped (exit status -9: killed by SIGKILL)" in message
    assert f"A fresh lab server now runs at {lab.endpoint}, with no tables" in message
    assert "Run the notebook again from the top." in message
    assert lab.client.list_tables()["TableNames"] == []
    fresh_table("p22-conditional-writes", lab).put_item(Item={"PK": "a", "SK": "b"})
    assert lab.client.list_tables()["TableNames"] == ["p22-conditional-writes"]
    lab.server.stop()
