"""Every DynamoDB client a kernel builds gets the lab's hooks, the ones a library builds inside included.

PynamoDB's connection, Powertools' persistence layer or a lock client build their own botocore client. Once
`connect()` has run, botocore calls `initialize_client_plugin` for each client built afterwards (botocore's client
plugins, named in BOTOCORE_EXPERIMENTAL__PLUGINS), and a DynamoDB client gets what the lab's own client has: its
requests in the transcript, the gate of `run_at_once`, the explorer's hold (helpers/explore/: a request sent on a
client function's thread is that client's step, whichever botocore client sends it), the watch on the embedded
server and, on AWS, the guard of tables the lab did not create (a client of another Region too). A DynamoDB Streams
client of the lab's backend gets the explorer's hold alone (a stream consumer's requests are steps). A client built in a
lab on the embedded server or DynamoDB Local that would reach Amazon's DynamoDB (no endpoint_url given) is refused at
its first request, saying where it points; a client of another local server is left alone.
"""
from urllib.parse import urlparse

from botocore.exceptions import BotoCoreError

from . import backend


class ElsewhereError(BotoCoreError):
    """A DynamoDB client built in a kernel whose lab runs locally points at Amazon's DynamoDB."""

    fmt = "{message}"


def initialize_client_plugin(client):
    """botocore's hook for each client built: a DynamoDB client of the lab's backend gets the lab's hooks, once the lab
    is connected; one that would reach Amazon's DynamoDB from a lab on a local server is refused."""
    lab = backend.current_lab()
    service = client.meta.service_model.service_name
    if lab is not None and service == "dynamodbstreams" and (
            same_place(client.meta.endpoint_url, lab.endpoint) or lab.kind == "aws"):
        from .. import explore
        explore.install_hold(client)  # a stream consumer's requests are explored steps too
    if lab is None or service != "dynamodb":
        return
    endpoint = client.meta.endpoint_url
    if backend.is_aws_endpoint(endpoint) and lab.kind != "aws":
        client.meta.events.register("before-call.dynamodb", Elsewhere(endpoint, lab).refuse, unique_id="lab-elsewhere")
    elif same_place(endpoint, lab.endpoint) or lab.kind == "aws":
        backend.attach(client, lab)
        from .. import explore  # here, not above: a process without a lab (the lab server's) never loads pandas for it
        explore.install_hold(client)


def same_place(endpoint, other):
    """True when two endpoint URLs name the same host and port."""
    first, second = urlparse(endpoint or ""), urlparse(other or "")
    return (first.hostname, first.port) == (second.hostname, second.port)


class Elsewhere:
    """Refuses every request of a client that points at Amazon's DynamoDB while the lab runs locally."""

    def __init__(self, endpoint, lab):
        self.endpoint, self.lab = endpoint, lab

    def refuse(self, model, **_):
        """botocore before-call hook: raise before the request leaves."""
        raise ElsewhereError(message=(
            f"This DynamoDB client sends {model.name} to {self.endpoint}, not to the lab's {self.lab.kind} backend at "
            f"{self.lab.endpoint}. Build it with endpoint_url=lab.endpoint (PynamoDB: host = lab.endpoint in the "
            "model's Meta), so that it reaches the lab's tables and nothing else."))
