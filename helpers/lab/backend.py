"""Choose and start the backend the notebooks talk to: embedded lab server, DynamoDB Local, or AWS."""
import atexit
import json
import os
import re
import signal
import subprocess
import sys
import threading
import urllib.error
import urllib.request
from dataclasses import dataclass, field
from urllib.parse import urlparse

import boto3
from botocore.config import Config
from botocore.exceptions import BotoCoreError

from . import gate, trace
from .knobs import knob_note

ENDPOINT_VARIABLE = "AWS_ENDPOINT_URL_DYNAMODB"
AWS_OPT_IN_VARIABLE = "DYNAMODB_LAB_USE_AWS"
LAB_TABLE_PATTERN = re.compile(r"^p\d\d-[a-z0-9-]+$")
LAB_TAG = {"Key": "created-by", "Value": "dynamodb-concurrency-lab"}
DUMMY_CREDENTIALS = {"aws_access_key_id": "lab", "aws_secret_access_key": "lab", "region_name": "us-east-1"}
PLUGINS_VARIABLE = "BOTOCORE_EXPERIMENTAL__PLUGINS"
LAB_PLUGIN = "dynamodb_lab=helpers.lab.clients"
CLIENT_CONFIG = Config(max_pool_connections=64, retries={"mode": "standard", "max_attempts": 3},
                       connect_timeout=3, read_timeout=30)


class BackendError(RuntimeError):
    """The lab cannot reach the backend asked for; the message says what to do."""


@dataclass
class Lab:
    """What a notebook uses: one boto3 client and resource on the chosen backend."""

    kind: str
    endpoint: str
    client: object = field(repr=False)
    resource: object = field(repr=False)
    server: object = field(default=None, repr=False)
    credentials: dict = field(default_factory=dict, repr=False)
    regional_clients: dict = field(default_factory=dict, repr=False)

    def table(self, name):
        """The boto3 Table resource for `name`."""
        return self.resource.Table(name)

    def client_in(self, region):
        """A client like `client` (Python values in, Python values out) signed for `region`, e.g. "eu-west-1"."""
        if region not in self.regional_clients:
            self.regional_clients[region] = _attached_client(self, region)
        return self.regional_clients[region]

    @property
    def banner(self):
        """One line saying which backend is in use, and which teaching knobs are on."""
        return {
            "embedded": f"Backend: embedded lab server at {self.endpoint} (moto engine, one request at a time, "
                        "started for this kernel)",
            "local": f"Backend: DynamoDB Local at {self.endpoint} (from {ENDPOINT_VARIABLE})",
            "aws": f"Backend: real Amazon DynamoDB in {self.client.meta.region_name} (opted in with "
                   f"{AWS_OPT_IN_VARIABLE}=1; requests are billed to your account)",
        }[self.kind] + knob_note(self)


_lab = None


def connect(quiet=False):
    """Return the kernel's Lab, starting the embedded server on first use; print the banner."""
    global _lab
    if _lab is None:
        _lab = _open_lab()
    if not quiet:
        print(_lab.banner)
    return _lab


def current_lab():
    """The kernel's Lab if connect() has made it, else None (nothing is started)."""
    return _lab


def _open_lab():
    """Decide the backend from the environment, as documented in the README."""
    endpoint = os.environ.get(ENDPOINT_VARIABLE, "").strip()
    opted_in = os.environ.get(AWS_OPT_IN_VARIABLE, "") == "1"
    if endpoint and not is_aws_endpoint(endpoint):
        ensure_answers(endpoint)
        return _make_lab("local", endpoint, DUMMY_CREDENTIALS)
    if endpoint or opted_in:
        if not opted_in:
            raise BackendError(
                f"{ENDPOINT_VARIABLE}={endpoint} is real Amazon DynamoDB, and the lab only talks to AWS when you "
                f"opt in: set {AWS_OPT_IN_VARIABLE}=1 (every request is billed to your account; the lab only "
                f"creates and deletes tables named pNN-..., tagged {LAB_TAG['Key']}={LAB_TAG['Value']}). "
                f"Or unset {ENDPOINT_VARIABLE} to use the embedded lab server.")
        return _make_lab("aws", endpoint or None, {})
    return _make_lab("embedded", None, DUMMY_CREDENTIALS, EmbeddedServer())


def is_aws_endpoint(endpoint):
    """True when the URL points at Amazon's own DynamoDB service."""
    host = urlparse(endpoint).hostname or ""
    return host.endswith(".amazonaws.com") or host.endswith(".api.aws")


def ensure_answers(endpoint):
    """Fail at once, saying what to run, when nothing answers at the endpoint."""
    try:
        urllib.request.urlopen(endpoint, timeout=3).close()
    except urllib.error.HTTPError:
        return
    except (urllib.error.URLError, OSError) as error:
        reason = getattr(error, "reason", error)
        raise BackendError(
            f"Nothing answers at {endpoint} ({ENDPOINT_VARIABLE}): {reason}. Start DynamoDB Local with "
            f"`docker compose up -d dynamodb-local`, or unset {ENDPOINT_VARIABLE} to use the embedded lab server."
        ) from None


class EmbeddedServer:
    """This kernel's lab server process on a loopback port; it stops when the kernel exits."""

    def __init__(self):
        self.process, self.endpoint = launch_embedded_server(0)
        self.restarting = threading.Lock()
        atexit.register(self.stop)

    def restart_if_stopped(self, **_):
        """botocore before-send hook: when the server has died, start one fresh one at its address and say so once.

        Many threads can notice at once (a race); the first restarts it under the lock and raises the
        BackendError, the others find the fresh server running and carry on.
        """
        if self.process.poll() is None:
            return
        with self.restarting:
            status = self.process.poll()
            if status is None:
                return
            self.process, _ = launch_embedded_server(urlparse(self.endpoint).port)
        raise BackendError(f"The lab server stopped ({exit_description(status)}). A fresh lab server now runs at "
                           f"{self.endpoint}, with no tables: the tables and items this notebook made are gone. "
                           "Run the notebook again from the top.")

    def stop(self):
        """Stop the server, if it is running."""
        if self.process.poll() is None:
            self.process.stdin.close()
            self.process.terminate()
            self.process.wait(timeout=5)


def launch_embedded_server(port):
    """Start a lab server process on a loopback port (0: a free one); return (process, endpoint).

    It runs in a session of its own, so Kernel -> Interrupt (SIGINT to the kernel's process group) never
    reaches it; it exits when its stdin closes, that is when the kernel exits, even one killed by SIGKILL.
    """
    process = subprocess.Popen(
        [sys.executable, "-m", "helpers.labserver", "--port", str(port), "--until-stdin-closes"],
        stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, start_new_session=True)
    line = process.stdout.readline()
    if not line.startswith("DynamoDB lab server listening on "):
        raise BackendError(f"The embedded lab server did not start (it printed {line!r}). "
                           "Run `make lab` again so the environment is reinstalled.")
    return process, line.rsplit(" ", 1)[1].strip()


def exit_description(status):
    """'exit status 1', or 'exit status -9: killed by SIGKILL' for a process a signal ended."""
    if status >= 0:
        return f"exit status {status}"
    return f"exit status {status}: killed by {signal.Signals(-status).name}"


def _make_lab(kind, endpoint, credentials, server=None):
    """Build the client and resource, with the transcript, the table guard and the server watch attached."""
    endpoint = server.endpoint if server else endpoint
    session = boto3.session.Session(**credentials)
    resource = session.resource("dynamodb", endpoint_url=endpoint, config=CLIENT_CONFIG)
    client = resource.meta.client
    lab = Lab(kind, endpoint or client.meta.endpoint_url, client, resource, server, credentials)
    attach(client, lab)
    try:
        with trace.tracing(False):
            client.list_tables(Limit=1)
    except BotoCoreError as error:
        raise BackendError(f"The {kind} backend at {lab.endpoint} did not answer ListTables: {error}") from None
    every_client_attached()
    return lab


def _attached_client(lab, region):
    """A resource's client with the lab's hooks attached, as Lab.client is, signed for `region`; on AWS the Region's own
    endpoint, whatever AWS_ENDPOINT_URL_DYNAMODB says."""
    endpoint = None if lab.kind == "aws" else lab.endpoint
    config = CLIENT_CONFIG if endpoint else CLIENT_CONFIG.merge(Config(ignore_configured_endpoint_urls=True))
    session = boto3.session.Session(**{**lab.credentials, "region_name": region})
    client = session.resource("dynamodb", endpoint_url=endpoint, config=config).meta.client
    attach(client, lab)
    return client


def attach(client, lab):
    """Give a DynamoDB client the lab's hooks (once each): the transcript, the gate, the watch on the embedded server,
    and, off the embedded server, the guard of tables the lab did not create."""
    events = client.meta.events
    events.register("before-call.dynamodb", trace.on_call, unique_id="lab-transcript")
    gate.attach(client)
    if lab.server:
        events.register("before-send.dynamodb", lab.server.restart_if_stopped, unique_id="lab-server-watch")
    if lab.kind != "embedded":
        events.register("before-call.dynamodb", TableGuard(client, lab.kind).check, unique_id="lab-table-guard")


def every_client_attached():
    """Make botocore call helpers.lab.clients for each client built in this kernel from now on (its client plugins,
    BOTOCORE_EXPERIMENTAL__PLUGINS), so a library's own DynamoDB client gets the lab's hooks too."""
    plugins = [plugin for plugin in os.environ.get(PLUGINS_VARIABLE, "").split(",") if plugin.strip()]
    if LAB_PLUGIN not in plugins:
        os.environ[PLUGINS_VARIABLE] = ",".join([*plugins, LAB_PLUGIN])


class TableGuard:
    """Refuses any write to a table the lab did not create (only on DynamoDB Local and AWS)."""

    WRITES = {"PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems",
              "CreateTable", "DeleteTable", "UpdateTable", "UpdateTimeToLive", "TagResource"}

    def __init__(self, client, kind):
        self.client = client
        self.kind = kind
        self.tagged = set()

    def check(self, model, params, **_):
        """botocore before-call hook: raise before a write reaches a foreign table."""
        if model.name not in self.WRITES:
            return
        for name in tables_named_in(json.loads(params["body"] or b"{}")):
            if not LAB_TABLE_PATTERN.match(name):
                raise BackendError(f"Refusing {model.name} on table {name!r}: the lab only writes tables it "
                                   "creates, named like p22-conditional-writes.")
            if self.kind == "aws" and model.name != "CreateTable" and not self.created_by_lab(name):
                raise BackendError(f"Refusing {model.name} on table {name!r}: it exists in your account but "
                                   f"was not created by the lab (no tag {LAB_TAG['Key']}={LAB_TAG['Value']}).")

    def created_by_lab(self, name):
        """True when the AWS table carries the lab's tag (cached per table)."""
        if name not in self.tagged:
            with trace.tracing(False):
                try:
                    arn = self.client.describe_table(TableName=name)["Table"]["TableArn"]
                except self.client.exceptions.ResourceNotFoundException:
                    return True
                tags = self.client.list_tags_of_resource(ResourceArn=arn).get("Tags", [])
            if LAB_TAG not in tags:
                return False
            self.tagged.add(name)
        return True


def tables_named_in(body):
    """Every table name a DynamoDB request body mentions."""
    names = {body["TableName"]} if "TableName" in body else set()
    names.update(body.get("RequestItems", {}))
    for action in body.get("TransactItems", []):
        for detail in action.values():
            names.add(detail["TableName"])
    return names
