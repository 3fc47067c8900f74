"""The embedded lab server: moto's DynamoDB engine behind a real HTTP server, one request at a time."""
import json
import os
import threading
import zlib
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

os.environ.setdefault("MOTO_ALLOW_NONEXISTENT_REGION", "true")

from moto.core.request import Request  # noqa: E402  (moto reads the variable above at import)
from moto.dynamodb.responses import DynamoHandler  # noqa: E402

from . import fidelity  # noqa: E402

JSON_TYPE = "application/x-amz-json-1.0"


class Engine:
    """moto's DynamoDB with DynamoDB's guarantees: each request is applied whole, alone."""

    def __init__(self):
        self.lock = threading.Lock()

    def handle(self, url, headers, body):
        """Apply one request under the engine lock and return (status, headers, body bytes)."""
        target = headers.get("X-Amz-Target", "").rpartition(".")[2]
        params = json.loads(body or b"{}")
        with self.lock:
            answered = fidelity.before(target, params)
            if answered is not None:
                status, payload = answered
                return respond(status, {"Content-Type": JSON_TYPE}, json.dumps(payload).encode())
            request = Request.from_primitives("POST", url, headers, body)
            try:
                status, out_headers, payload = DynamoHandler.dispatch(request)
            except Exception as error:  # the engine failed: answer as DynamoDB does, keep serving
                status, payload = fidelity.error("InternalServerError", f"{type(error).__name__}: {error}", 500)
                return respond(status, {"Content-Type": JSON_TYPE}, json.dumps(payload).encode())
            if isinstance(payload, str):
                payload = payload.encode()
            payload = fidelity.after(target, params, int(status), payload)
        return respond(int(status), out_headers, payload)


def respond(status, headers, payload):
    """A response with DynamoDB's body checksum, which botocore verifies."""
    headers["x-amz-crc32"] = str(zlib.crc32(payload))
    return status, headers, payload


class Handler(BaseHTTPRequestHandler):
    """Speaks DynamoDB's HTTP protocol on behalf of one Engine."""

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    engine: Engine

    def do_POST(self):
        """Read one DynamoDB request and write the engine's answer."""
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        url = f"http://{self.headers.get('Host', 'localhost')}{self.path}"
        status, headers, payload = self.engine.handle(url, dict(self.headers.items()), body)
        self.send_response(status)
        for name, value in headers.items():
            if name.lower() not in ("status", "content-length", "server", "date"):
                self.send_header(name, str(value))
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        self.wfile.write(payload)

    def log_message(self, format, *args):
        """Stay quiet: a request log would flood notebook cells."""


def make_server(port=0, host="127.0.0.1"):
    """A threaded HTTP server for a fresh Engine; call serve_forever() on it."""
    handler = type("LabHandler", (Handler,), {"engine": Engine()})
    server = ThreadingHTTPServer((host, port), handler)
    server.daemon_threads = True
    return server
