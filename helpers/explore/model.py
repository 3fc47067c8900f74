"""The lab server's consistency model as the explorer drives it over HTTP (/lab/consistency), and the starting state
of each order."""
import json
from contextlib import contextmanager

from ..lab import labhttp
from .errors import ExplorationError
from .hold import HELD
from .settings import CLIENT_TIMEOUT, CONSISTENCIES, CONSISTENCY_PATH, ONLY_ORDERS


class ModelServer:
    """The lab server's consistency model, as the explorer drives it over HTTP (/lab/consistency)."""

    def __init__(self, lab):
        self.endpoint = lab.endpoint.rstrip("/")

    def post(self, request):
        """POST one request to /lab/consistency; its JSON answer."""
        return self.send(self.endpoint + CONSISTENCY_PATH, json.dumps(request).encode(),
                         {"Content-Type": "application/json"})

    def explore(self):
        """Copies move only when told; every copy agrees now."""
        self.post({"mode": "explore", "settle": True})

    def sampled(self):
        """Back to copies that follow the knobs (all caught up while the knobs are off)."""
        self.post({"mode": "sampled"})

    def pause(self):
        """Between two steps: the copies stay as they are, and the next request from anyone else settles them."""
        self.post({"mode": "paused"})

    def resume(self):
        """Explore again after pause(): True if nothing came in between, else False (the copies were settled)."""
        return self.post({"mode": "explore", "resume": True})["resumed"]

    def choices(self, held, item=None):
        """The answers the model allows the held read now (newest first), asked with the read itself (or, given the
        place of one of a BatchGetItem's items, the answers it allows reading that item now)."""
        headers = {**held.http.headers, "X-Lab-Choices": "1", **({} if item is None else {"X-Lab-Batch-Item": item})}
        return self.send(held.http.url, held.http.body, headers)["choices"]

    def read_item(self, held, item, versions):
        """Read one item of the held BatchGetItem now, with the versions chosen for it; (the item read or None, [item,
        label, version, exists] of the version read)."""
        headers = {**held.http.headers, "X-Lab-Batch-Item": item, "X-Lab-Read-Choice": json.dumps(versions)}
        answer = self.send(held.http.url, held.http.body, headers)
        return answer["item"], answer.get("version")

    @staticmethod
    def send(url, body, headers):
        """One HTTP POST to the lab server; a refusal is an ExplorationError with the server's reason."""
        status, answer = labhttp.request(url, "POST", body if isinstance(body, bytes) else (body or "").encode(),
                                         {name: value.decode() if isinstance(value, bytes) else str(value)
                                          for name, value in headers.items()}, timeout=CLIENT_TIMEOUT)
        if status >= 400:
            raise ExplorationError(json.loads(answer or b"{}").get("message", f"HTTP {status}"))
        return json.loads(answer)


def model_server(lab, consistency):
    """The ModelServer to explore with, or None when only orders are explored (said once, off the lab server)."""
    if consistency not in CONSISTENCIES:
        raise ValueError(f"consistency must be one of {', '.join(CONSISTENCIES)}; got {consistency!r}")
    if consistency == "strong":
        return None
    if lab.kind != "embedded":
        print(ONLY_ORDERS.format(kind="DynamoDB Local" if lab.kind == "local" else "real DynamoDB"))
        return None
    return ModelServer(lab)


@contextmanager
def modelled(server):
    """The server in explore mode for the block (nothing to do without one), sampled again afterwards."""
    if server is None:
        yield
        return
    server.explore()
    try:
        yield
    finally:
        server.sampled()


def start_state(reset, server):
    """reset(), then every copy agrees on the state it made, and each SDK client has a fresh client's retry quota."""
    reset()
    for client in list(HELD):
        refill_retry_quota(client)
    if server is not None:
        server.post({"settle": True})


def refill_retry_quota(client):
    """Fill the client's retry quota: botocore's standard retry mode spends it on retries that end in an error and
    stops retrying once it runs out, so a lost response's retry would otherwise depend on the orders run before.
    botocore's legacy retry mode, a library's default, keeps no quota."""
    handler = client.meta.events._emitter._unique_id_handlers["retry-config-dynamodb"]["handler"]
    checker = getattr(getattr(handler, "__self__", None), "_retry_quota", None)
    if checker is not None:
        checker._quota.release(checker._quota.INITIAL_CAPACITY)
