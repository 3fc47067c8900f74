"""The steps of an order, each with its words: a held Request, an ItemRead of a BatchGetItem, an item of a transaction
made visible (Reveal), an Arrival (a stream record, a replicated write) and a client's Choice."""


from ..lab import trace
from .moves import FAULT_MOVES, FAULT_WORDS
from .settings import CREDENTIAL_SCOPE, WRITES


class Request:
    """One held request: who sends it, the operation, its body as DynamoDB JSON, and the HTTP request itself."""

    def __init__(self, client, operation, body, http=None):
        self.client, self.operation, self.body, self.http = client, operation, body, http
        self.answer, self.reply = None, None
        self.choices = []
        self.choice = None
        self.fault = None
        self.items = batch_items(body) if operation == "BatchGetItem" else []
        self.unread = []  # a BatchGetItem read item by item: the places of its items not read yet
        self.item_choices = {}  # and the answers the model allows each of them now
        self.asked = {}  # item place (None: the request) -> (the moment asked, the model's answers then): Offers.choices
        self.read_last = None  # and the place of the item it read last, with the request itself
        self.versions = None  # {"reads": [...], "writes": [...]}: [item, label, version, exists] (the lab server's)

    @property
    def label(self):
        """'alice: GetItem', as the explorer's `steps` column writes a step; a stale answer says what it missed,
        a fault what happened."""
        reads = f" reads {self.items[self.read_last]}" if self.read_last is not None else ""
        return f"{self.client}: {self.operation}{reads}" + (f" ({self.note})" if self.note else "")

    @property
    def note(self):
        """What the model or a fault did to this request, in words ("stale: ... without alice's PutItem"), or ''."""
        return stale_words(self.choice) or (FAULT_WORDS[self.fault] if self.fault else "")

    @property
    def region(self):
        """The Region the request is signed for (its SigV4 credential scope), or None."""
        signed = CREDENTIAL_SCOPE.search(str(self.http.headers.get("Authorization", ""))) if self.http else None
        return signed.group(1) if signed else None

    def moves(self, faults=()):
        """The moves releasing this request: one per answer the model allows a read, one per fault a write may
        meet (of `faults`, those still unused in this order), else just the client."""
        moves = [self.client] + [f"{self.client}~{place}" for place in range(1, len(self.choices))]
        if self.operation in WRITES:
            moves += [f"{self.client}!{FAULT_MOVES[fault]}" for fault in faults]
        return moves

    @property
    def summary(self):
        """The request in one line: 'PutItem {PK: 'seat#14C', holder: 'alice'} if version = 1' (a BatchGetItem read item
        by item: the item it read last, with the request)."""
        if self.read_last is not None:
            return f"{self.operation}: read {self.items[self.read_last]}"
        return request_summary(self.operation, self.body)

    @property
    def block(self):
        """The request's transcript block, as the notebooks print calls."""
        return trace.render_call(self.operation, self.body)


class ItemRead:
    """One item of a held BatchGetItem read before the rest: DynamoDB reads a batch's items one at a time, each as it
    is at that moment (consistency.Model.read_item); the request itself reads the last one."""

    def __init__(self, request, place, choice, item, version=None):
        self.client, self.request, self.place, self.choice = request.client, request, place, choice
        self.operation, self.body, self.answer = request.operation, request.body, "OK"
        self.version = version  # [item, label, version, exists] of what it read, on the lab server
        self.reply = trace.attributes(item) if item else "no such item"

    @property
    def note(self):
        """What the answer missed, in words, or ''."""
        return stale_words(self.choice)

    @property
    def label(self):
        """"alice: BatchGetItem reads {PK: 'A'}", with what it missed if stale."""
        return f"{self.client}: {self.operation} reads {self.request.items[self.place]}" + (
            f" ({self.note})" if self.note else "")

    @property
    def summary(self):
        """What the move does, for the panel's steps."""
        return f"{self.operation}: read {self.request.items[self.place]}"

    @property
    def block(self):
        """The move in the transcript."""
        return f"    ({self.operation} reads {self.request.items[self.place]}: {self.reply})"


def stale_words(choice):
    """What a read's chosen answer missed ("stale: ... without alice's PutItem"), or '' for the latest."""
    return choice["label"] if choice and choice["label"] != "latest" else ""


def batch_items(body):
    """The items a BatchGetItem names, in order, as the transcript writes keys."""
    return [trace.attributes(key) for request in (body.get("RequestItems") or {}).values() if isinstance(request, dict)
            for key in request.get("Keys") or [] if isinstance(key, dict)]


class Arrival:
    """Something the lab server holds on its way arriving (its `arrivals`): a stream record entering its stream, or a
    replicated write its Region. A move the explorer makes, not a client's request."""

    def __init__(self, event):
        self.event = event
        self.client, self.operation, self.answer, self.reply, self.note = event["by"], "arrival", "OK", (
            "entered" if event["by"] == "stream" else "arrived"), ""
        self.body = {}

    @property
    def move(self):
        """'stream#1' (or 'eu-west-1#2'), as a schedule names it."""
        return f"{self.client}#{self.event['id']}"

    @property
    def label(self):
        """"stream: INSERT {PK: 'ORDER#1'} into orders' stream"."""
        return f"{self.client}: {self.event['label']}"

    @property
    def summary(self):
        """What the move does, for the panel's steps."""
        return self.event["label"]

    @property
    def block(self):
        """The move in the transcript."""
        return f"    ({self.event['label']})"


class Choice:
    """A choice a client function leaves to the explorer (`choice_point`): one move per option, "alice?1" for its
    option 1."""

    def __init__(self, client, what, options):
        self.client, self.what, self.options = client, what, list(options)
        self.operation, self.body, self.answer, self.note = "choice", {}, "OK", ""
        self.chosen = None

    @property
    def reply(self):
        """The option chosen, in words."""
        return None if self.chosen is None else self.options[self.chosen]

    @property
    def label(self):
        """"consumer: Kinesis hands over records 1, 2: 2, 1, then 1 again"."""
        return f"{self.client}: {self.summary}"

    @property
    def summary(self):
        """What was chosen, after a colon (while held, what is to be chosen)."""
        return self.what if self.chosen is None else f"{self.what}: {self.reply}"

    @property
    def block(self):
        """The choice in the transcript."""
        return f"    ({self.summary})"

    def moves(self, faults=()):
        """One move per option."""
        return [f"{self.client}?{place}" for place in range(len(self.options))]


class Reveal:
    """An ongoing transaction of a held client: its items not yet visible (consistency.Model.reveal)."""

    def __init__(self, client, request, transaction):
        self.client, self.request = client, request
        self.number, self.items = transaction["id"], transaction["items"]
        self.replicating = transaction.get("replicating")  # an MRSC write: the Region it was made in
        self.hidden = list(range(len(self.items)))
        self.operation, self.body, self.answer, self.reply = "reveal", request.body, "OK", "visible"
        self.note = ""
        self.place = None
        self.others = {}  # client -> requests it sent while this transaction was ongoing
        self.landed = None  # a batch's item made visible: [item, label, version, exists] it landed as

    @property
    def label(self):
        """"alice: TransactWriteItems makes {PK: 'B'} visible" ("alice: PutItem of {PK: 'B'} replicated" for MRSC)."""
        return f"{self.client}: {self.request.operation} {self.done(self.items[self.place])}"

    @property
    def summary(self):
        """What the move does (or, while held, what it may do next), for the panel's steps and buttons."""
        if self.replicating:
            return f"{self.request.operation}: replicate {self.items[0]} to another Region, then answer"
        if self.place is not None:
            return f"{self.request.operation}: make {self.items[self.place]} visible"
        return f"{self.request.operation}: make {' or '.join(self.items[place] for place in self.hidden)} visible"

    @property
    def block(self):
        """The move in the transcript."""
        return f"    ({self.request.operation} {self.done(self.items[self.place])})"

    def done(self, item):
        """What the move did to `item`, in words."""
        if self.replicating:
            return f"of {item} replicated from {self.replicating} to another Region: acknowledged"
        return f"makes {item} visible"

    def moves(self):
        """One move per item still hidden."""
        return [f"{self.client}+{place}" for place in self.hidden]


def request_summary(operation, body):
    """One line for a request body: operation (and the index it reads), item or key, update and condition."""
    if "TransactItems" in body:
        kinds = ", ".join(next(iter(action)) for action in body["TransactItems"])
        return f"{operation} [{kinds}]"
    names, values = body.get("ExpressionAttributeNames", {}), body.get("ExpressionAttributeValues", {})
    parts = [operation] + ([f"on {body['IndexName']}"] if "IndexName" in body else [])
    for field in ("Item", "Key"):
        if field in body:
            parts.append(trace.attributes(body[field]))
    for field, word in (("UpdateExpression", ""), ("ConditionExpression", "if ")):
        if field in body:
            parts.append(word + trace.substitute(body[field], names, values))
    return " ".join(parts)


def reply_summary(operation, answer, parsed):
    """What an answer said, in a few words: the error code (with a cancelled transaction's reasons), the item or
    items read, the attributes returned, or 'OK'."""
    if "CancellationReasons" in parsed:
        return f"{answer} [{', '.join(reason.get('Code', 'None') for reason in parsed['CancellationReasons'])}]"
    if answer != "OK":
        return answer
    if operation == "GetItem":
        return trace.attributes(parsed["Item"]) if "Item" in parsed else "no such item"
    if "Attributes" in parsed:
        return trace.attributes(parsed["Attributes"])
    if operation == "BatchGetItem":
        return "[" + ", ".join(trace.attributes(item) for items in parsed.get("Responses", {}).values()
                               for item in items) + "]"
    if "Items" in parsed:
        return f"{len(parsed['Items'])} items"
    if operation == "TransactGetItems":
        return "[" + ", ".join(trace.attributes(r["Item"]) if "Item" in r else "None" for r in parsed["Responses"]) + "]"
    if operation == "GetRecords":
        return "[" + ", ".join(record_words(record) for record in parsed.get("Records", [])) + "]"
    return "OK"


def record_words(record):
    """"INSERT {PK: 'ORDER#1'}": a stream record's event and its item's key."""
    return f"{record.get('eventName')} {trace.attributes(record.get('dynamodb', {}).get('Keys', {}))}"
