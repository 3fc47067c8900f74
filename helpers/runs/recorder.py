"""One recorder of DynamoDB calls, through botocore's before-call, after-call and before-send events.

Races tag each worker thread's calls (join, begin); notebook 29 draws its lease timelines from the calls;
notebook 32 reads each transaction attempt's answer and counts the HTTP requests sent.
"""
import itertools
import json
import threading
import time
from collections import namedtuple

Call = namedtuple("Call", "thread operation name began ended body status content answer")
Call.__doc__ = "One DynamoDB call: its worker thread and operation (None outside a race), times, request and answer."
Call.request = property(lambda call: json.loads(call.body or b"{}"), doc="The request body, parsed.")

numbers = itertools.count()


class CallRecorder:
    """Notes every DynamoDB call made through one client while it records (as a `with` block, or start/stop)."""

    def __init__(self, client):
        self.client = client
        self.local = threading.local()
        self.key = f"recorder-{next(numbers)}"
        self.calls, self.sent, self.origin, self.started_at = [], [], None, None

    def __enter__(self):
        return self.start()

    def __exit__(self, *_):
        self.stop()

    def start(self):
        """Begin a fresh recording; time 0 (origin, and started_at on the wall clock) is now."""
        self.calls, self.sent = [], []
        self.origin, self.started_at = time.perf_counter(), time.time()
        events = self.client.meta.events
        events.register("before-call.dynamodb", self.before, unique_id=f"{self.key}-before")
        events.register("after-call.dynamodb", self.after, unique_id=f"{self.key}-after")
        events.register("before-send.dynamodb", self.sending, unique_id=f"{self.key}-send")
        return self

    def stop(self):
        """End the recording; its calls stay in `calls`."""
        events = self.client.meta.events
        events.unregister("before-call.dynamodb", unique_id=f"{self.key}-before")
        events.unregister("after-call.dynamodb", unique_id=f"{self.key}-after")
        events.unregister("before-send.dynamodb", unique_id=f"{self.key}-send")
        return self

    def join(self, thread_number):
        """Tag the calling thread's calls with this worker number."""
        self.local.thread = thread_number

    def begin(self, operation):
        """Tag the calling thread's calls that follow with this operation number."""
        self.local.operation = operation

    def before(self, params, context, **_):
        """botocore before-call: note the request and when it left."""
        context[self.key] = (time.perf_counter(), params["body"])

    def after(self, model, http_response, parsed, context, **_):
        """botocore after-call: note the call with its answer."""
        began, body = context.pop(self.key)
        self.calls.append(Call(getattr(self.local, "thread", None), getattr(self.local, "operation", None),
                               model.name, began, time.perf_counter(), body, http_response.status_code,
                               http_response.content, parsed))

    def sending(self, event_name, **_):
        """botocore before-send: note each HTTP request sent, the SDK's own retries included."""
        self.sent.append(event_name.rpartition(".")[2])

    def answers(self, operation):
        """Each recorded `operation` call's error code ('OK' if none) and cancellation reasons, in order."""
        return [(call.answer.get("Error", {}).get("Code", "OK"),
                 [reason["Code"] for reason in call.answer.get("CancellationReasons", [])])
                for call in self.calls if call.name == operation]
