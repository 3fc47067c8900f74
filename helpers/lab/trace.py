"""The transcript: every DynamoDB call printed as the reference texts print it, via botocore events."""
import base64
import json
import re
import sys
import threading
from contextlib import contextmanager
from decimal import Decimal

from botocore.exceptions import ClientError

LABEL_WIDTH = 11
PLACEHOLDER = re.compile(r"[#:][A-Za-z0-9_]+")
EXPRESSION_FIELDS = (("KeyConditionExpression", "key"), ("ConditionExpression", "condition"),
                     ("UpdateExpression", "update"), ("FilterExpression", "filter"),
                     ("ProjectionExpression", "projection"))
OPTION_FIELDS = ("IndexName", "ConsistentRead", "ReturnValues", "ReturnValuesOnConditionCheckFailure",
                 "Limit", "Select")


class Tracer:
    """Prints call blocks; identical consecutive calls collapse into one '... (+N more)' line."""

    def __init__(self):
        self.switches = []
        self.lock = threading.RLock()
        self.last_block = None
        self.last_operation = None
        self.repeats = 0

    def record(self, operation, body):
        """Print the block for one call, or count it when it repeats the previous one."""
        if not self.enabled():
            return
        block = render_call(operation, body)
        with self.lock:
            if block == self.last_block:
                self.repeats += 1
                return
            self.flush()
            self.last_block, self.last_operation = block, operation
            sys.stdout.write(block + "\n")

    def enabled(self):
        """On unless a tracing() block is running; of several (on other threads too), the latest to begin decides."""
        return self.switches[-1] if self.switches else True

    def flush(self):
        """End the open block: the count of calls it stood for, then a blank line."""
        with self.lock:
            if self.repeats:
                sys.stdout.write(f"    ... (+{self.repeats} more {self.last_operation} calls not shown)\n")
            if self.last_block is not None:
                sys.stdout.write("\n")
            self.repeats = 0
            self.last_block = None


TRACER = Tracer()


def flush_after_each_cell():
    """In IPython, end the transcript's open block when a cell finishes, so it lands in that cell."""
    try:
        from IPython import get_ipython
    except ImportError:
        return
    shell = get_ipython()
    if shell is not None:
        shell.events.register("post_execute", TRACER.flush)


flush_after_each_cell()


def on_call(model, params, **_):
    """botocore 'before-call' hook: add the request about to be sent to the transcript."""
    TRACER.record(model.name, json.loads(params["body"] or b"{}"))


@contextmanager
def tracing(enabled):
    """Switch the transcript on or off for a block (threads started inside follow the switch).

    Blocks may overlap and end in any order (a panel's race in the background while a cell runs): once
    the last one ends, the transcript is on again."""
    TRACER.flush()
    with TRACER.lock:
        TRACER.switches.append(enabled)
    try:
        yield
    finally:
        TRACER.flush()
        with TRACER.lock:
            TRACER.switches.remove(enabled)


def show(title, *value):
    """Print '=== title ===' and, when given, the value as JSON, as the reference texts do."""
    with TRACER.lock:
        TRACER.flush()
        sys.stdout.write(f"=== {title} ===\n")
        if value:
            sys.stdout.write(json.dumps(plain(value[0]), indent=2) + "\n")
        sys.stdout.write("\n")


def outcome(call, *args, **kwargs):
    """Run a DynamoDB call and return "OK", or the error code it failed with."""
    try:
        call(*args, **kwargs)
    except ClientError as error:
        return error.response["Error"]["Code"]
    return "OK"


def plain(value):
    """Decimals as numbers, sets as sorted lists, bytes as text: ready for json.dumps."""
    if isinstance(value, Decimal):
        return int(value) if value == value.to_integral_value() else float(value)
    if isinstance(value, dict):
        return {key: plain(item) for key, item in value.items()}
    if isinstance(value, (list, tuple)):
        return [plain(item) for item in value]
    if isinstance(value, (set, frozenset)):
        return sorted(plain(item) for item in value)
    if isinstance(value, (bytes, bytearray)):
        return value.decode(errors="replace")
    return value


def render_call(operation, body):
    """The transcript block for one request body (DynamoDB JSON)."""
    if operation in ("TransactWriteItems", "TransactGetItems"):
        lines = [f">>> {operation}"]
        for action in body.get("TransactItems", []):
            lines += action_lines(action, lambda kind, detail: f"{kind} {detail.get('TableName', '')}")
        return "\n".join(lines)
    if operation == "BatchWriteItem":
        lines = [f">>> {operation}"]
        for table, requests in body.get("RequestItems", {}).items():
            for request in requests:
                lines += action_lines(request, lambda kind, _: f"{kind.replace('Request', '')} {table}")
        return "\n".join(lines)
    header = f">>> {operation} {body.get('TableName', '')}".rstrip()
    return "\n".join([header] + fields(body, indent=4))


def action_lines(action, title):
    """The lines of one transaction action or batch request: '- Put table' and its fields; one that is not a single
    operation ({} or two at once, which DynamoDB refuses) as it was sent."""
    if not (isinstance(action, dict) and len(action) == 1 and isinstance(next(iter(action.values())), dict)):
        return [f"    - {json.dumps(action)}"]
    (kind, detail), = action.items()
    return [f"    - {title(kind, detail)}", *fields(detail, indent=8)]


def fields(body, indent):
    """The labelled lines of one request or transaction action."""
    names = body.get("ExpressionAttributeNames", {})
    values = body.get("ExpressionAttributeValues", {})
    lines = []
    if "Item" in body:
        lines.append(("item", attributes(body["Item"])))
    if "Key" in body:
        lines.append(("key", attributes(body["Key"])))
    for source, label in EXPRESSION_FIELDS:
        if source in body:
            lines.append((label, substitute(body[source], names, values)))
    for option in OPTION_FIELDS:
        if option in body:
            lines.append((option, body[option]))
    return [f"{' ' * indent}{label + ':':<{LABEL_WIDTH}} {value}" for label, value in lines]


def substitute(expression, names, values):
    """Replace #name and :value placeholders with what they stand for."""
    def replace(match):
        token = match.group(0)
        if token in names:
            return names[token]
        if token in values:
            return literal(values[token])
        return token
    return PLACEHOLDER.sub(replace, expression)


def attributes(item):
    """{PK: 'USER#alice', credits: 10} from DynamoDB JSON."""
    return "{" + ", ".join(f"{name}: {literal(value)}" for name, value in item.items()) + "}"


def literal(value):
    """One DynamoDB JSON value written the way a person would write it."""
    (kind, inner), = value.items()
    if kind == "S":
        return repr(inner)
    if kind == "N":
        return number(inner)
    if kind == "BOOL":
        return str(inner)
    if kind == "NULL":
        return "None"
    if kind == "M":
        return attributes(inner)
    if kind == "L":
        return "[" + ", ".join(literal(item) for item in inner) + "]"
    if kind == "SS":
        return "{" + ", ".join(repr(item) for item in inner) + "}"
    if kind == "NS":
        return "{" + ", ".join(number(item) for item in inner) + "}"
    if kind == "B":
        return f"<{len(base64.b64decode(inner))} bytes>"
    return f"<{len(inner)} binary values>"


def number(text):
    """A DynamoDB number as written: 7, not Decimal('7')."""
    return str(Decimal(text).normalize()) if "." in text else text
