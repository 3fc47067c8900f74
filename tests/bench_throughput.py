"""`make bench`: UpdateItem ops/s against the lab server and against a bare null server (the client ceiling).

Both servers run as separate processes. The null one is as cheap as a server can be: a thread per
connection that reads each request's head and body and sends one prebuilt response buffer, so the
ratio shows what the lab server costs per request, its HTTP layer included. On a shared machine the
rates move with everyone else's load; the CPU time each server process spends per request (read from
/proc, on Linux) moves far less, so it is printed too.
"""
import json
import os
import socket
import statistics
import subprocess
import sys
import threading
import time
import zlib

import boto3
from botocore.config import Config

OPERATIONS = {1: 1500, 10: 3000}
GOALS = {1: 0.6, 10: 0.7}  # the lab server's rate as a share of the null server's, from one and from ten threads
REPEATS = 3
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
NULL_BODY = json.dumps({"Attributes": {"views": {"N": "1"}}}).encode()
NULL_RESPONSE = (b"HTTP/1.1 200 OK\r\nContent-Type: application/x-amz-json-1.0\r\n"
                 b"x-amz-crc32: %d\r\nContent-Length: %d\r\n\r\n%s" % (zlib.crc32(NULL_BODY), len(NULL_BODY), NULL_BODY))


def content_length(head):
    """The Content-Length of a request head (0 when absent)."""
    for line in head.split(b"\r\n"):
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            return int(value)
    return 0


def answer_connection(connection):
    """Answer every request on one connection with NULL_RESPONSE until the client hangs up."""
    connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    pending = b""
    with connection:
        while True:
            while b"\r\n\r\n" not in pending:
                chunk = connection.recv(65536)
                if not chunk:
                    return
                pending += chunk
            head, _, pending = pending.partition(b"\r\n\r\n")
            length = content_length(head)
            while len(pending) < length:
                chunk = connection.recv(65536)
                if not chunk:
                    return
                pending += chunk
            pending = pending[length:]
            connection.sendall(NULL_RESPONSE)


def serve_null():
    """Run the bare null server on a free port and print where, like the lab server does."""
    listener = socket.create_server(("127.0.0.1", 0), backlog=128)
    print(f"null server listening on http://127.0.0.1:{listener.getsockname()[1]}", flush=True)
    while True:
        connection, _ = listener.accept()
        threading.Thread(target=answer_connection, args=(connection,), daemon=True).start()


def start(command):
    """Start a server process and return (process, endpoint)."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    return process, process.stdout.readline().rsplit(" ", 1)[1].strip()


def cpu_seconds(process):
    """CPU seconds a server process has used so far (user and system), or None where /proc is missing."""
    try:
        with open(f"/proc/{process.pid}/stat") as stat:
            fields = stat.read().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def measure(process, endpoint, threads, operations):
    """(UpdateItem calls per second, the server's CPU microseconds per call or None)."""
    before = cpu_seconds(process)
    rate = ops_per_second(endpoint, threads, operations)
    after = cpu_seconds(process)
    return rate, None if before is None else (after - before) * 1e6 / operations


def cpu_text(values):
    """The median CPU microseconds per call, or '-' where they could not be read."""
    return "-" if None in values else f"{statistics.median(values):.0f} us"


def ops_per_second(endpoint, threads, operations):
    """UpdateItem ADD calls per second from `threads` client threads sharing one boto3 client."""
    client = boto3.client("dynamodb", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="lab",
                          aws_secret_access_key="lab", config=Config(max_pool_connections=64))
    try:
        client.create_table(TableName="p99-bench", BillingMode="PAY_PER_REQUEST",
                            KeySchema=[{"AttributeName": "PK", "KeyType": "HASH"}],
                            AttributeDefinitions=[{"AttributeName": "PK", "AttributeType": "S"}])
    except client.exceptions.ResourceInUseException:
        pass

    def work(count):
        for _ in range(count):
            client.update_item(TableName="p99-bench", Key={"PK": {"S": "counter"}}, UpdateExpression="ADD #v :one",
                               ExpressionAttributeNames={"#v": "views"},
                               ExpressionAttributeValues={":one": {"N": "1"}}, ReturnValues="UPDATED_NEW")

    work(50)
    workers = [threading.Thread(target=work, args=(operations // threads,)) for _ in range(threads)]
    began = time.perf_counter()
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join()
    return operations / (time.perf_counter() - began)


def main():
    """Measure both servers at 1 and 10 client threads, interleaved; print medians and the ratios."""
    lab, lab_endpoint = start([sys.executable, "-m", "helpers.labserver", "--port", "0"])
    null, null_endpoint = start([sys.executable, __file__, "--null-server"])
    try:
        print(f"{'client threads':>14} {'lab server':>12} {'null server':>12} {'ratio':>6} {'goal':>6}"
              f" {'lab CPU/call':>13} {'null CPU/call':>14}")
        for threads, operations in OPERATIONS.items():
            lab_runs, null_runs = [], []
            for _ in range(REPEATS):
                lab_runs.append(measure(lab, lab_endpoint, threads, operations))
                null_runs.append(measure(null, null_endpoint, threads, operations))
            lab_rate = statistics.median(rate for rate, _ in lab_runs)
            null_rate = statistics.median(rate for rate, _ in null_runs)
            print(f"{threads:>14} {lab_rate:>8.0f} op/s {null_rate:>8.0f} op/s {lab_rate / null_rate:>6.2f}"
                  f" {'>= ' + str(GOALS[threads]):>6}"
                  f" {cpu_text([cpu for _, cpu in lab_runs]):>13} {cpu_text([cpu for _, cpu in null_runs]):>14}")
    finally:
        for process in (lab, null):
            process.terminate()


if __name__ == "__main__":
    serve_null() if "--null-server" in sys.argv else main()
