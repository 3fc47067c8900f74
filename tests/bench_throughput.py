"""`make bench`: UpdateItem ops/s against the lab server and against a null server (the client ceiling).

Both servers run as separate processes with the same HTTP layer; the null one answers every request
at once without touching an engine, so the ratio shows what the DynamoDB engine and its lock cost.
"""
import json
import statistics
import subprocess
import sys
import threading
import time
from http.server import ThreadingHTTPServer

import boto3
from botocore.config import Config

from helpers.labserver.server import Handler, respond

OPERATIONS = {1: 1500, 10: 3000}
REPEATS = 3


class NullEngine:
    """Answers every request with a fixed UpdateItem response, instantly."""

    def handle(self, url, headers, body):
        """The same answer for everything."""
        return respond(200, {"Content-Type": "application/x-amz-json-1.0"},
                       json.dumps({"Attributes": {"views": {"N": "1"}}}).encode())


def serve_null():
    """Run the null server on a free port and print where, like the lab server does."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), type("NullHandler", (Handler,), {"engine": NullEngine()}))
    server.daemon_threads = True
    print(f"null server listening on http://127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()


def start(command):
    """Start a server process and return (process, endpoint)."""
    process = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    return process, process.stdout.readline().rsplit(" ", 1)[1].strip()


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
    """Measure both servers at 1 and 10 client threads; print medians and the ratio."""
    lab, lab_endpoint = start([sys.executable, "-m", "helpers.labserver", "--port", "0"])
    null, null_endpoint = start([sys.executable, __file__, "--null-server"])
    try:
        print(f"{'client threads':>14} {'lab server':>12} {'null server':>12} {'ratio':>6}")
        for threads, operations in OPERATIONS.items():
            lab_rate = statistics.median(ops_per_second(lab_endpoint, threads, operations) for _ in range(REPEATS))
            null_rate = statistics.median(ops_per_second(null_endpoint, threads, operations) for _ in range(REPEATS))
            print(f"{threads:>14} {lab_rate:>8.0f} op/s {null_rate:>8.0f} op/s {lab_rate / null_rate:>6.2f}")
    finally:
        for process in (lab, null):
            process.terminate()


if __name__ == "__main__":
    serve_null() if "--null-server" in sys.argv else main()
