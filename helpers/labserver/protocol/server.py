"""The embedded lab server: moto's DynamoDB engine behind a real HTTP server, one request at a time.

Besides DynamoDB's protocol (POST /, the X-Amz-Target header naming the operation), it answers the DynamoDB Streams
protocol (targets DynamoDBStreams_20120810.*) and GET, POST and DELETE on /lab/knobs: the teaching knobs
(helpers/labserver/model/knobs.py), which DynamoDB's protocol never uses, and GET and DELETE on /lab/metrics: the meter
(helpers/labserver/accounting/metering.py), and POST on /lab/tables: a table emptied in place where dropping and
creating it again would leave the same table (helpers/labserver/model/fresh.py). Header names are looked up
case-insensitively, as HTTP defines them, whatever case a client sends.
"""
import email.utils
import json
import os
import threading
import time
import zlib
from functools import lru_cache, partial
from http import HTTPStatus
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

from werkzeug.datastructures import Headers, ImmutableHeadersMixin
from werkzeug.exceptions import BadRequestKeyError

os.environ.setdefault("MOTO_ALLOW_NONEXISTENT_REGION", "true")

from moto.core.model_instances import model_data  # noqa: E402
from moto.core.request import Request  # noqa: E402  (moto reads the variable above at import)
from moto.dynamodbstreams.responses import DynamoDBStreamsHandler  # noqa: E402

from .. import fidelity  # noqa: E402
from ..accounting.metering import METRICS_PATH, Meter  # noqa: E402
from ..model.consistency import (BATCH_ITEM_HEADER, BATCH_READ_HEADER, CHOICE_HEADER, ChoiceError, Model,  # noqa: E402
                                 only_item, step_client)
from ..model.fresh import TABLES_PATH, Made  # noqa: E402
from ..model.knobs import KNOBS_OFF, Knobs, KnobError, knob_values  # noqa: E402
from ..replication import regions, streamlog  # noqa: E402
from ..replication.globaltables import REPLICATION  # noqa: E402
from .handler import FastDynamoHandler, request_identity  # noqa: E402
from .together import LET_IN_HEADER, TOGETHER_HEADER, Doors  # noqa: E402

JSON_TYPE = "application/x-amz-json-1.0"
LAB_PREFIX = "/lab/"
KNOBS_PATH = "/lab/knobs"
CONSISTENCY_PATH = "/lab/consistency"
ARRIVALS_HEADER = "x-lab-arrivals"  # explored: the stream records and replicated writes that may arrive now (arrivals)
CHOICES_HEADER = "X-Lab-Choices"
ANSWER_CHOICES_HEADER = "X-Lab-Answer-Choices"  # an explored read's answer also lists the answers it was allowed
LOSE_HEADER = "X-Lab-Lose-Response"  # the explorer's lost response: applied, then the connection is dropped
ORDER_HEADER = "X-Lab-Order"  # the explored order a request is a step of
ORDER_COST_HEADER = "X-Lab-Order-Cost"  # in its answer: "write units, of which on refused writes" of its order so far
STREAMS_SERVICE = "DynamoDBStreams_20120810"
MAX_LINE = 65536
MAX_HEADERS = 100
SERIALIZATION_ERROR = "com.amazon.coral.service#SerializationException"  # for a body that is not a JSON object
HEADERS_WRITTEN_HERE = frozenset({"status", "content-length", "server", "date"})


class Engine:
    """moto's DynamoDB with DynamoDB's guarantees: each request is applied whole, alone."""

    def __init__(self):
        self.lock = threading.Lock()
        self.model = Model(REPLICATION)
        self.meter = Meter()
        REPLICATION.meter = self.meter
        self.knobs = Knobs(self.model, self.meter, REPLICATION)
        self.doors = Doors()
        self.made = Made()
        self.order = (None, 0.0, 0.0)  # the explored order whose steps were billed last, and their write units

    def handle(self, url, headers, body):
        """Apply one request alone; return (status, headers, body bytes), or None when its response is lost.

        `headers` is a case-insensitive mapping (werkzeug Headers, as Handler reads them), so any client's
        spelling of a header name is found. A request of a group sent together (together.py) first waits for
        the rest of its group.
        """
        together = headers.get(TOGETHER_HEADER)
        let_in = self.doors.let_in(together) if together else None
        reply = self.apply_request(url, headers, body)
        if reply is None:
            return None
        status, out_headers, payload = reply
        if let_in is not None:
            out_headers = {**out_headers, LET_IN_HEADER: f"{let_in:.6f}"}
        if streamlog.pending or REPLICATION.explored:
            out_headers = {**out_headers, ARRIVALS_HEADER: json.dumps(arrivals())}
        return status, out_headers, payload

    def apply_request(self, url, headers, body):
        """Apply one request alone: (status, headers, body bytes), or None when its response is lost."""
        region, _, account = request_identity(url, headers)
        regions.entering((account, region))
        service, _, target = headers.get("X-Amz-Target", "").rpartition(".")
        if service == STREAMS_SERVICE:
            with self.lock:
                return self.apply_streams(url, headers, body)
        params = request_object(body)
        if params is None:
            return answer(HTTPStatus.BAD_REQUEST, {"__type": SERIALIZATION_ERROR})
        knobs, model = self.knobs, self.model
        if not knobs.on and not model.active:
            with self.lock:
                reply = self.apply(url, headers, body, target, params)
            return None if headers.get(LOSE_HEADER) else reply
        if headers.get(CHOICES_HEADER):
            return self.choices(url, headers, body, target, params)
        if headers.get(BATCH_ITEM_HEADER):
            return self.read_batch_item(headers, params)
        if headers.get(ANSWER_CHOICES_HEADER) and model.exploring:
            return self.with_choices(url, headers, body, target, params)
        knobs.wait()
        with self.lock:
            cancelled = knobs.cancelled(target, params, body)
            if cancelled is not None:
                self.meter.conflict(target, params)
                return answer(*cancelled)
            throttle = self.meter.throttle(target, params, partial(self.rerun, url, headers, target))
            if throttle.answer is not None:
                return answer(*throttle.answer)
            params, body = throttle.params, throttle.body or body
            try:
                reply, until = model.handle(target, params, headers,
                                            lambda: self.apply(url, headers, body, target, params))
            except ChoiceError as error:
                return answer(HTTPStatus.BAD_REQUEST, {"__type": "LabChoiceError", "message": str(error)})
            if reply is not None and reply[0] == HTTPStatus.BAD_REQUEST and b"TransactionConflict" in reply[2]:
                self.meter.conflict(target, params)
            if reply is not None and throttle.aside:
                reply = respond(reply[0], reply[1], throttle.merged(int(reply[0]), reply[2]))
            if knobs.loses(target, body) or headers.get(LOSE_HEADER):
                reply = None
        if until is not None:
            time.sleep(max(until - time.monotonic(), 0))
        return reply

    def choices(self, url, headers, body, target, params):
        """The answers an explored read may get now (consistency.Model.choices), as a JSON list."""
        plain = RequestHeaders([(name, value) for name, value in headers.items()
                                if name.lower() not in (CHOICES_HEADER.lower(), CHOICE_HEADER.lower())])
        with self.lock:
            try:
                if headers.get(BATCH_ITEM_HEADER):
                    params = only_item(params, batch_place(headers))
                    body = json.dumps(params).encode()
                found = self.model.choices(target, params,
                                           lambda: self.apply(url, plain, body, target, params, metered=False),
                                           step_client(headers), headers.get(BATCH_READ_HEADER))
            except ChoiceError as error:
                return answer(HTTPStatus.BAD_REQUEST, {"__type": "LabChoiceError", "message": str(error)})
        return answer(HTTPStatus.OK, {"choices": found})

    def with_choices(self, url, headers, body, target, params):
        """An explored read asking for the answers it was allowed (ANSWER_CHOICES_HEADER): applied as any request, its
        answer says in that header what `choices` found just before (or, when the model cannot list them, {"message":
        why}, and the read is refused). None when its response is lost."""
        status, _, payload = self.choices(url, headers, body, target, params)
        found = json.loads(payload)
        if status != HTTPStatus.OK:
            reply = answer(status, found)
        else:
            found = found["choices"]
            reply = self.apply_request(url, RequestHeaders([(name, value) for name, value in headers.items()
                                                            if name.lower() != ANSWER_CHOICES_HEADER.lower()]), body)
        return None if reply is None else (reply[0], {**reply[1], ANSWER_CHOICES_HEADER: json.dumps(found)}, reply[2])

    def read_batch_item(self, headers, params):
        """Explored: one item of a BatchGetItem read now (consistency.Model.read_item); {"item": what it read, "version":
        [item, label, version, exists] of it}."""
        with self.lock:
            try:
                found, version = self.model.read_item(only_item(params, batch_place(headers)), headers)
            except ChoiceError as error:
                return answer(HTTPStatus.BAD_REQUEST, {"__type": "LabChoiceError", "message": str(error)})
        return answer(HTTPStatus.OK, {"item": found, "version": version})

    def consistency_request(self, method, body):
        """GET, or POST {"mode": "explore"|"sampled"|"paused"}, {"mode": "explore", "resume": true}, {"settle": true},
        {"reveal": [transaction, item]} or {"arrive": {"by": "stream" or a Region, "id": ...}} on /lab/consistency:
        (status, JSON answer); a reveal's and an arrival's answer says what may arrive now ("arrivals"), any other's also
        what the last request answered read and wrote ("versions": its response may have been lost)."""
        with self.lock:
            model = self.model
            if method == "POST":
                try:
                    request = knob_values(body)
                    if request.get("mode") == "paused":
                        model.pause()
                    elif request.get("resume"):
                        return HTTPStatus.OK, {"resumed": model.resume()}
                    elif request.get("mode") in ("explore", "sampled"):
                        model.mode = request["mode"]
                        model.settle()
                    if request.get("settle"):
                        model.settle()
                    if "reveal" in request:
                        return HTTPStatus.OK, {**model.reveal(*request["reveal"]), "arrivals": arrivals()}
                    if "arrive" in request:
                        arrive(request["arrive"])
                        return HTTPStatus.OK, {"arrivals": arrivals()}
                except (KnobError, ChoiceError, TypeError, ValueError) as error:
                    return HTTPStatus.BAD_REQUEST, {"message": str(error)}
            return HTTPStatus.OK, {"mode": model.mode, "ongoing_transactions": sorted(model.transactions),
                                   "items_trailing": len(model.histories), "arrivals": arrivals(),
                                   "versions": model.last_versions}

    def tables_request(self, method, body):
        """POST {"empty": CreateTable's arguments, "region": the client's} on /lab/tables (model/fresh.py): (status,
        JSON answer)."""
        if method != "POST":
            return HTTPStatus.METHOD_NOT_ALLOWED, {"message": f"{TABLES_PATH} answers POST only"}
        request = request_object(body)
        if request is None or not isinstance(request.get("empty"), dict):
            return HTTPStatus.BAD_REQUEST, {"message": 'POST {"empty": CreateTable\'s arguments, "region": ...}'}
        with self.lock:
            return HTTPStatus.OK, {"emptied": self.made.empty(request["empty"], request.get("region"), self.knobs,
                                                              self.model)}

    def knob_request(self, method, body):
        """GET, POST (set some knobs) or DELETE (all off) on /lab/knobs: (status, JSON answer)."""
        with self.lock:
            if method == "POST":
                try:
                    self.knobs.update(knob_values(body))
                except KnobError as error:
                    return HTTPStatus.BAD_REQUEST, {"message": str(error), "knobs": self.knobs.state()}
            elif method == "DELETE":
                self.knobs.update(KNOBS_OFF)
            return HTTPStatus.OK, {"knobs": self.knobs.state(), "description": self.knobs.describe()}

    def apply(self, url, headers, body, target, params, metered=True):
        """Apply one request with moto (the caller holds the engine lock): (status, headers, body bytes).

        The meter bills it (accounting/metering.py): what it touches is read before, what it consumed counted after; not
        when `metered` is False (the explorer asking which answers a read may get, which DynamoDB never sees).
        """
        self.made.applying(target)
        REPLICATION.deliver()
        answered = fidelity.before(target, params)
        if answered is not None:
            return answer(*answered)
        original = params
        rewritten = fidelity.rewrite(target, params)
        if rewritten is not None:
            params, body = rewritten, json.dumps(rewritten).encode()
        rerun = partial(self.rerun, url, headers, target)
        bill = self.meter.bill(target, params, rerun) if metered else None
        try:
            status, out_headers, payload = self.dispatch(url, headers, body, target, params)
        except Exception as error:  # the engine failed: answer as DynamoDB does, keep serving
            streamlog.applied(False)
            return engine_failure(error, params)
        streamlog.applied(int(status) == 200)
        if isinstance(payload, str):
            payload = payload.encode()
        payload = fidelity.after(target, params, int(status), payload)
        self.made.applied(target, original, int(status))
        if bill is not None:
            payload = self.meter.settle(bill, int(status), payload)
        order = headers.get(ORDER_HEADER)
        if order:
            out_headers = {**out_headers, ORDER_COST_HEADER: self.order_cost(order, bill)}
        return respond(int(status), out_headers, payload)

    def order_cost(self, order, bill):
        """'units refused': the write units the steps of the explored `order` have cost so far, this request's `bill`
        included, and how many of them on refused writes (so a step whose answer is lost is still counted)."""
        token, units, refused = self.order if self.order[0] == order else (order, 0.0, 0.0)
        usages = bill.usage.values() if bill is not None else ()
        units += sum(usage.write + usage.index_write for usage in usages)
        refused += sum(usage.refused for usage in usages)
        self.order = (token, units, refused)
        return f"{units!r} {refused!r}"

    def rerun(self, url, headers, target, request):
        """moto's answer body to a read sent again as `request` (the meter's Query or Scan without its filter)."""
        payload = self.dispatch(url, headers, json.dumps(request).encode(), target, request)[2]
        return payload.encode() if isinstance(payload, str) else payload

    def metrics_request(self, method):
        """GET (the counters) or DELETE (all back to zero) on /lab/metrics: (status, JSON answer)."""
        with self.lock:
            if method == "DELETE":
                self.meter.reset()
            return HTTPStatus.OK, self.meter.state()

    @staticmethod
    def dispatch(url, headers, body, target, params):
        """moto's answer: set up directly for a plain JSON operation in DynamoDB's model, else as moto sets it up."""
        if target in fidelity.operation_names() and not headers.get("Content-Encoding"):
            return FastDynamoHandler.answer(url, headers, body, target, params)
        return FastDynamoHandler.dispatch(Request.from_primitives("POST", url, headers, body))

    def apply_streams(self, url, headers, body):
        """Answer a DynamoDB Streams request with moto's streams handler (the caller holds the engine lock)."""
        try:
            status, out_headers, payload = DynamoDBStreamsHandler.dispatch(
                Request.from_primitives("POST", url, headers, body))
        except Exception as error:  # the engine failed: answer as DynamoDB Streams does, keep serving
            operation = headers.get("X-Amz-Target", "").rpartition(".")[2]
            return engine_failure(error, request_object(body) or {}, streams_operation=operation)
        return respond(int(status), out_headers, payload.encode() if isinstance(payload, str) else payload)


def arrivals():
    """Explored: what may arrive now, as the explorer offers it: stream records entering their streams, then writes
    replicated to other Regions."""
    return streamlog.arrivals() + REPLICATION.arrivals()


def arrive(event):
    """Explored: the event {"by": ..., "id": ...} of the arrivals offered arrives now (a stream record, by "stream",
    enters its stream; a replicated write, by a Region, arrives there); a ValueError for one not offered."""
    if not isinstance(event, dict) or not isinstance(event.get("by"), str):
        raise ValueError(f'"arrive" takes {{"by": "stream" or a Region, "id": ...}}, one of the arrivals offered; '
                         f"got {event!r}")
    if event["by"] == "stream":
        streamlog.arrive(event.get("id"))
    else:
        REPLICATION.arrive_explored(event["by"], event.get("id"))


def batch_place(headers):
    """The place of the BatchGetItem's item a request names (X-Lab-Batch-Item); a ChoiceError unless a number."""
    place = headers.get(BATCH_ITEM_HEADER, "")
    if not place.isdigit():
        raise ChoiceError(f"{BATCH_ITEM_HEADER} must be the place of one of the BatchGetItem's keys; got {place!r}")
    return int(place)


def request_object(body):
    """A request body's JSON object (an empty body is an empty one), or None when it is not a JSON object."""
    try:
        params = json.loads(body or b"{}")
    except ValueError:
        return None
    return params if isinstance(params, dict) else None


def engine_failure(error, params, streams_operation=None):
    """DynamoDB's (or, naming a streams operation, DynamoDB Streams') answer to a request the engine failed on
    (fidelity.failure), as a response."""
    return answer(*fidelity.failure(params, error, streams_operation))


def answer(status, payload):
    """A response carrying a JSON body the lab composed itself (an error, or a corrected answer)."""
    return respond(status, {"Content-Type": JSON_TYPE}, json.dumps(payload).encode())


def respond(status, headers, payload):
    """A response with DynamoDB's body checksum, which botocore verifies."""
    headers["x-amz-crc32"] = str(zlib.crc32(payload))
    return status, headers, payload


class RequestHeaders(ImmutableHeadersMixin, Headers):
    """A request's headers, as werkzeug's Headers, read-only and found by lower-cased name in one dict lookup.

    Headers compares a name with every header in turn, and a request's headers are looked up a dozen
    times on their way through the engine.
    """

    def __init__(self, fields):
        super().__init__()
        self._list = fields
        self.by_name = {}
        for name, value in fields:
            self.by_name.setdefault(name.lower(), value)

    def get(self, key, default=None, type=None):
        """Headers.get: the first value of the header named `key` in any case, else `default` (converted by `type`)."""
        if type is None and isinstance(key, str):
            return self.by_name.get(key.lower(), default)
        return super().get(key, default, type)

    def _get_key(self, key):
        """The first value of the header named `key`, in any case."""
        try:
            return self.by_name[key.lower()]
        except KeyError:
            raise BadRequestKeyError(key) from None


class Handler(BaseHTTPRequestHandler):
    """Speaks DynamoDB's HTTP protocol on behalf of one Engine.

    The request line and headers are read here rather than by http.server, which parses headers with
    the email package (a tenth of a request's cost); each response goes out in one write.
    """

    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    engine: Engine

    def handle_one_request(self):
        """Read one request's line and headers, then answer it with the do_ method of its verb."""
        self.raw_requestline = self.rfile.readline(MAX_LINE + 1)
        if not self.raw_requestline:
            self.close_connection = True
            return
        self.requestline = self.raw_requestline.decode("latin-1").rstrip("\r\n")
        words, fields = self.requestline.split(), self.header_fields()
        if len(words) != 3 or not words[2].startswith("HTTP/1.") or fields is None:
            self.command, self.request_version = "", "HTTP/1.1"
            return self.send_error(HTTPStatus.BAD_REQUEST, "Bad request")
        self.command, self.path, self.request_version = words
        self.headers = RequestHeaders(fields)
        self.close_connection = (self.request_version == "HTTP/1.0"
                                 or self.headers.get("Connection", "").lower() == "close")
        if self.headers.get("Expect", "").lower() == "100-continue":
            self.wfile.write(b"HTTP/1.1 100 Continue\r\n\r\n")
        method = getattr(self, f"do_{self.command}", None)
        if method is None:
            return self.send_error(HTTPStatus.NOT_IMPLEMENTED, f"Unsupported method ({self.command!r})")
        method()

    def header_fields(self):
        """[(name, value)] of the request's header lines, or None when they are malformed or too many."""
        fields = []
        while True:
            line = self.rfile.readline(MAX_LINE + 1)
            if line in (b"\r\n", b"\n", b""):
                return fields
            name, colon, value = line.decode("latin-1").partition(":")
            if not colon or len(line) > MAX_LINE or len(fields) == MAX_HEADERS:
                return None
            fields.append((name.strip(), value.strip()))

    def do_POST(self):
        """Read one DynamoDB request and write the engine's answer (or drop it, if the knob says so)."""
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        if self.path.startswith(LAB_PREFIX):
            return self.answer_lab(body)
        url = f"http://{self.headers.get('Host', 'localhost')}{self.path}"
        answer = self.engine.handle(url, self.headers, body)
        if answer is None:
            self.close_connection = True
            return
        self.write(*answer)

    def do_GET(self):
        """Only /lab/knobs answers GET; DynamoDB's protocol is POST only."""
        if not self.path.startswith(LAB_PREFIX):
            return self.send_error(HTTPStatus.NOT_IMPLEMENTED, f"Unsupported method ({self.command!r})")
        self.answer_lab(b"")

    do_DELETE = do_GET

    def answer_lab(self, body):
        """The lab's own endpoints, as JSON."""
        regions.entering(None)
        if self.path == KNOBS_PATH:
            status, answer = self.engine.knob_request(self.command, body)
        elif self.path == CONSISTENCY_PATH:
            status, answer = self.engine.consistency_request(self.command, body)
        elif self.path == METRICS_PATH:
            status, answer = self.engine.metrics_request(self.command)
        elif self.path == TABLES_PATH:
            status, answer = self.engine.tables_request(self.command, body)
        else:
            status, answer = HTTPStatus.NOT_FOUND, {
                "message": f"No {self.path} here; the lab's paths are {KNOBS_PATH}, {CONSISTENCY_PATH}, "
                           f"{METRICS_PATH} and {TABLES_PATH}"}
        self.write(status, {"Content-Type": "application/json"}, json.dumps(answer).encode())

    def write(self, status, headers, payload):
        """Send one complete response, in one write: as send_response and send_header would, Server and Date first."""
        lines = [f"{self.protocol_version} {status} {self.responses.get(status, ('',))[0]}",
                 f"Server: {self.version_string()}", f"Date: {date_text(int(time.time()))}",
                 *(f"{name}: {value}" for name, value in headers.items() if name.lower() not in HEADERS_WRITTEN_HERE),
                 f"Content-Length: {len(payload)}"]
        self.wfile.write(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1") + payload)

    def log_message(self, format, *args):
        """Stay quiet: a request log would flood notebook cells."""


@lru_cache(maxsize=1)
def date_text(second):
    """A response's Date, as BaseHTTPRequestHandler.date_time_string writes it, made once a second."""
    return email.utils.formatdate(second, usegmt=True)


class LabHTTPServer(ThreadingHTTPServer):
    """A threaded HTTP server whose listen backlog admits 64 clients connecting at once (the default is 5)."""

    request_queue_size = 128


class Untracked(list):
    """A model class's instance list that keeps nothing (see stop_tracking_instances)."""

    def append(self, _):
        """Forget the instance."""


def stop_tracking_instances():
    """moto lists every model instance it ever made (BaseModel.__new__ appends each to its class's instances_tracked,
    for moto's dashboard, which the lab server does not serve): every item version a request built, for as long as the
    server runs. Measured: 9 items kept per explored order of three racy clients, 150 MB of the server after 25 run
    whole. The lab server keeps only what its tables hold."""
    for service in ("dynamodb", "dynamodbstreams"):
        for model in model_data[service].values():
            model.instances_tracked = Untracked()


def make_server(port=0, host="127.0.0.1"):
    """A threaded HTTP server for a fresh Engine; call serve_forever() on it."""
    stop_tracking_instances()
    handler = type("LabHandler", (Handler,), {"engine": Engine()})
    server = LabHTTPServer((host, port), handler)
    server.daemon_threads = True
    return server
