"""The lab server reads a request's head however the client sends it: whole, in pieces, with bare LF line ends, or two
requests in one write; a malformed head or one of more than 100 headers is a 400."""
import json
import socket
import subprocess
import sys
import time

import pytest

BODY = json.dumps({}).encode()


@pytest.fixture(scope="module")
def port():
    """A lab server of its own, on a free port."""
    process = subprocess.Popen([sys.executable, "-m", "helpers.labserver", "--port", "0"], stdout=subprocess.PIPE,
                               text=True)
    try:
        yield int(process.stdout.readline().rsplit(":", 1)[1])
    finally:
        process.terminate()
        process.wait()


def head(port, end="\r\n", extra=()):
    """A ListTables request's head, its lines ended by `end`, with `extra` header lines."""
    lines = ["POST / HTTP/1.1", f"Host: 127.0.0.1:{port}", "X-Amz-Target: DynamoDB_20120810.ListTables",
             "Content-Type: application/x-amz-json-1.0", f"Content-Length: {len(BODY)}", *extra]
    return (end.join(lines) + end + end).encode()


def answers(port, *pieces, count=1):
    """The status lines and bodies of `count` responses to `pieces` sent in turn on one connection."""
    with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
        for piece in pieces:
            connection.sendall(piece)
            time.sleep(0.05)
        reader = connection.makefile("rb")
        found = []
        for _ in range(count):
            status, length = reader.readline().decode().strip(), 0
            for line in iter(reader.readline, b"\r\n"):
                name, _, value = line.decode().partition(":")
                length = int(value) if name.lower() == "content-length" else length
            found.append((status, json.loads(reader.read(length))))
        return found


def test_a_head_sent_whole_in_pieces_or_with_bare_line_feeds_is_answered_alike(port):
    whole = answers(port, head(port) + BODY)
    assert whole == [("HTTP/1.1 200 OK", {"TableNames": []})]
    request = head(port) + BODY
    assert answers(port, *(request[i:i + 7] for i in range(0, len(request), 7))) == whole
    assert answers(port, head(port, end="\n") + BODY) == whole


def test_two_requests_in_one_write_are_both_answered(port):
    request = head(port) + BODY
    assert answers(port, request + request, count=2) == [("HTTP/1.1 200 OK", {"TableNames": []})] * 2


@pytest.mark.parametrize("extra", [["no colon here"], [f"X-Many-{n}: {n}" for n in range(97)]],
                         ids=["header without a colon", "101 headers"])
def test_a_malformed_head_is_a_bad_request(port, extra):
    with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
        connection.sendall(head(port, extra=extra) + BODY)
        assert connection.makefile("rb").readline().startswith(b"HTTP/1.1 400")


def test_100_headers_are_read(port):
    assert answers(port, head(port, extra=[f"X-Many-{n}: {n}" for n in range(96)]) + BODY)[0][0] == "HTTP/1.1 200 OK"
