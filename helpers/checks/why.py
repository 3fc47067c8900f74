"""A failing order's Why, told from what happened in it: the one way every checker tells an order.

First the faults the explorer made (a client that died between two requests, a response lost and the request sent
again), then an error DynamoDB answered that came out of a call or was answered as a refusal, then the anomaly the
order's history shows (helpers.anomalies: its minimal cycle walked in the clients' words, and the change that breaks
it), then what the steps show without a cycle: writes of one item decided in two Regions, a write that no condition
could refuse, a refusal taken for success, a refusal before anyone else wrote, a transaction conflict answered as a
refusal. Each says what broke, at which request, and the change that prevents it.
"""
from botocore.exceptions import ClientError

from ..explore.frames import INDEX_FIX, READS, STALE_FIX, diagnosis, item_words
from ..explore.histories import RESET
from ..explore.moves import FAULT_WORDS

LOST, CRASH = f"({FAULT_WORDS['lost']})", f"({FAULT_WORDS['crash']})"
RESEND_FIX = ("A write must refuse its own repeat: a condition on something unique to the request (an id it writes), "
              "or TransactWriteItems with a ClientRequestToken")
TOGETHER_FIX = ("Writes that belong together must be one request: one TransactWriteItems, or one item, or each "
                "effect refused once it is done (a condition on the record's id), so that a second delivery finishes "
                "what the first began")
CONDITION_FIX = ("Put the check in the write's ConditionExpression (attribute_not_exists on what must be absent, or "
                 "version = :read) and answer from its refusal")
REFUSAL_ANSWERS = {
    "ConditionalCheckFailedException": ("the refusal of its own condition (another write came first): catch that "
                                        "code, then answer the refusal, or read again and retry"),
    "TransactionCanceledException": "a cancelled transaction: answer a failed condition, retry a conflict",
    "TransactionConflictException": "another transaction held the item: retry it",
}
CONFLICT = ("a TransactionConflict means another transaction was using the item at that moment, not that a condition "
            "failed: retry a conflict; report only a failed condition")


class Broken(str):
    """An invariant's words for what broke, carrying its own Why (`why`, from what it found stored): a report tells it
    only when the order's steps tell none, so that a report has one Why."""

    def __new__(cls, words, why=""):
        broken = super().__new__(cls, words)
        broken.why = why
        return broken


def own_why(problem):
    """' Why: ...' of an invariant's Broken words, or ''."""
    found = getattr(problem, "why", "")
    return f". Why: {found}" if found else ""


def why(order, writer="client", setup="the item as the setup left it", meanings=None, first=None):
    """' Why: ...' for a failing order (a row of an exploration's frame), from its steps, replies, results and history,
    or '' when they show nothing to tell. `writer` names what a client is to the learner ("invocation" for a stream
    consumer); `setup` says what the items held before the race; `meanings` {error code: what it means here} adds to
    what an error DynamoDB answered means (REFUSAL_ANSWERS); first(order) -> words or '', a checker's own reading of
    what happened (a stream consumer's batch given up), is told before all the rest."""
    steps = list(zip(order["steps"], order["requests"], order["answers"], order["replies"]))
    meanings = {**REFUSAL_ANSWERS, **(meanings or {})}
    results = order["results"]
    for found in (first(order) if first else "", died(steps, writer), resent(steps), raised(steps, results, meanings),
                  hidden(steps, results, meanings), regions(order), anomaly(order), went_on(steps, order),
                  unrefused(steps, order),
                  refused_first(steps, setup), conflict_answered(steps, results), stale(steps)):
        if found:
            return f". Why: {found}"
    return ""


def who(label):
    """(client, operation) of a step label ("alice: PutItem (stale: ...)")."""
    client, _, rest = label.partition(": ")
    return client, rest.split(" ")[0]


def died(steps, writer):
    """A client that died right after a request: what stayed, and whether its work was done again or left half done."""
    for place, (label, request, _, _) in enumerate(steps):
        if CRASH not in label:
            continue
        client, operation = who(label)
        again = [later for later in steps[place + 1:] if later[1] == request and who(later[0])[0] == client]
        dead = f"the {writer} died" if writer != "client" else f"{client} died"
        sent = "the mapping handed its batch over again, and" if writer == "invocation" else "sent again,"
        if again and again[0][2] == "OK":
            return (f"{dead} right after its {operation}, which stayed applied; {sent} the same {operation} was "
                    f"applied a second time. {TOGETHER_FIX}")
        if again:
            return (f"{dead} right after its {operation}, which stayed applied; {sent} the same {operation} was "
                    f"refused ({again[0][2]}): what the second try did next was decided by that refusal, not by what "
                    "the first had done. Decide what follows from what is stored, whoever stored it, and key every "
                    "later write so that a second try's copy is refused; or make the writes one request")
        return (f"{dead} right after its {operation}, which stayed applied, and before its next request, which never "
                f"happened. {TOGETHER_FIX}")
    return ""


def resent(steps):
    """A request whose response was lost and which the SDK sent again: applied twice, or refused by its own copy."""
    for place, (label, request, _, _) in enumerate(steps):
        if LOST not in label:
            continue
        client, operation = who(label)
        again = next((later for later in steps[place + 1:] if later[1] == request and who(later[0])[0] == client), None)
        if again is None:
            continue
        if again[2] == "OK":
            return (f"{client}'s {operation} was applied and its response lost; the SDK sent it again and it was "
                    f"applied a second time. {RESEND_FIX}")
        return (f"{client}'s {operation} was applied and its response lost; the SDK sent it again and it was refused "
                f"({again[2]}) by that first copy, which {client} then took for another's. Tell your own write from "
                "another's: a mark unique to this attempt, compared with the item the refusal returns")
    return ""


def anomaly(order):
    """The anomaly the order's history shows, its cycle walked in the clients' words, and the change that breaks it."""
    if order.get("history") is None:
        return ""
    found = diagnosis(order["history"], order["steps"], order["requests"])
    if found is None:
        return ""
    name, walk, fix = found
    return f"{walk}: {name}. {fix}"


def writes_by_item(order):
    """[(client, request, item name)] of every write the order's requests made that DynamoDB answered (or applied)."""
    recorded = order.get("history")
    if recorded is None:
        return []
    return [(op["process"], op["requests"][0], key) for op in recorded["ops"]
            if op["type"] in ("ok", "info") and op["process"] != RESET for f, key, _ in op["value"] if f == "w"]


def regions(order):
    """Two clients' writes of one item made in two Regions, each decided on its own Region's replica before the
    other's write arrived there (MREC: an arrival step), so that the later arrival replaced one."""
    made = {}
    for client, request, key in writes_by_item(order):
        item, _, region = item_words(key).partition(" in ")
        request, _, named = request.partition(" in ")  # a global table's item is one in every Region: its request
        region = region or named  # names the Region it was made in ("PutItem in us-east-1")
        if region:
            made.setdefault(item, {}).setdefault(region, (client, request))
    arrivals = [label for label in order["steps"] if " arrives in " in label]
    for item, writes in made.items():
        if len(writes) > 1 and len({client for client, _ in writes.values()}) > 1 and arrivals:
            told = " and ".join(f"{client}'s {request} in {region}" for region, (client, request) in writes.items())
            return (f"{told} were each decided on their own Region's replica of {item}, which did not yet hold the "
                    "other's write; when it arrived, the later write replaced the earlier one (last writer wins) and "
                    "neither client was told. Send every write of an item to one Region, its home "
                    "(home_region(seat)), and decide there with the write's ConditionExpression")
    return ""


def unrefused(steps, order):
    """A write without a condition, answered OK, of an item another client had written before (in any Region): nothing
    could refuse it."""
    written = {}
    for client, request, key in writes_by_item(order):
        item = item_words(key).partition(" in ")[0]
        first = written.setdefault(item, (client, request))
        if first[0] == client:
            continue
        mine = [(label, summary, reply) for label, summary, _, reply in steps if who(label)[0] == client]
        summary, reply = next(((summary, reply) for label, summary, reply in mine
                               if who(label)[1] == request and names(summary, key)), ("", "OK"))
        if " if " in f" {summary} " or request.startswith("Transact"):  # a transaction's conditions are its items'
            continue
        chooses = " (if_not_exists chooses what to write, never whether to write)" if "if_not_exists" in summary else ""
        returned = f" (the old item it returned, {reply}, came after it was replaced)" if reply != "OK" else ""
        read = next((who(label)[1] for label, _, _ in mine if who(label)[1] in READS), None)
        before = (f"; its {read} before it was a request of its own, and another client's write came between them"
                  if read else "")
        return (f"{client}'s {request} wrote {item} after {first[0]}'s {first[1]} had, and nothing refused it: it had "
                f"no ConditionExpression{chooses}{returned}{before}. {CONDITION_FIX}")
    return ""


def went_on(steps, order):
    """A write refused by another client's earlier write, after which its client wrote the item anyway: the refusal
    taken for its own success."""
    written = writes_by_item(order)
    for place, (label, summary, answer, _) in enumerate(steps):
        client, operation = who(label)
        if answer != "ConditionalCheckFailedException" or operation in READS:
            continue
        later = [step for step in steps[place + 1:] if who(step[0])[0] == client and step[2] == "OK"]
        for other, request, key in written:
            item = item_words(key).partition(" in ")[0]
            if other != client and names(summary, key) and any(names(step[1], key) for step in later):
                went = next(who(step[0])[1] for step in later if names(step[1], key))
                return (f"{client}'s {operation} was refused by {other}'s {request}, which had written {item} first, "
                        f"yet {client} went on as if it had succeeded, and its {went} wrote {item}: the refusal was "
                        "taken for its own. Answer a refusal as one, unless the item it met "
                        "(ReturnValuesOnConditionCheckFailure=ALL_OLD) carries a mark made for this attempt alone")
    return ""


def names(summary, key):
    """True when a request summary names the item `key` (every value of its key appears in it)."""
    return all(value in summary for value in item_words(key, most=None).partition(" in ")[0].split("/"))


def refused_first(steps, setup):
    """A conditional write refused before anyone had written anything: its condition refuses the setup's item."""
    wrote = set()
    for label, summary, answer, _ in steps:
        client, operation = who(label)
        if answer in ("ConditionalCheckFailedException", "TransactionCanceledException") and not wrote:
            return (f"{client}'s {summary} was refused before anyone had written anything: its condition "
                    f"is false for {setup}. Make the condition test what must be true for the write to go ahead")
        if answer == "OK" and operation not in READS:
            wrote.add(client)
    return ""


def conflict_answered(steps, results):
    """A transaction cancelled by a conflict, which its client answered as a refusal."""
    for label, _, _, reply in steps:
        client, operation = who(label)
        if "TransactionConflict" in (reply or "") and not isinstance(results.get(client), BaseException):
            return (f"{client}'s {operation} was cancelled by a TransactionConflict, and {client}'s call answered it "
                    f"as a failed condition: {CONFLICT}")
    return ""


def raised(steps, results, meanings):
    """A client whose call raised the error DynamoDB answered one of its requests with."""
    for client, result in results.items():
        while isinstance(result, BaseException) and not isinstance(result, ClientError):
            result = result.__cause__ or getattr(result, "cause", None)  # raised from DynamoDB's (PynamoDB: .cause)
        if not isinstance(result, ClientError):
            continue
        code = result.response["Error"]["Code"]
        operation, reply = next(((who(label)[1], reply) for label, _, answer, reply in steps
                                 if who(label)[0] == client and code in (answer or "")), ("request", ""))
        meaning = CONFLICT if "TransactionConflict" in (reply or "") else meanings.get(
            code, "DynamoDB refused the request itself")
        return f"{client}'s {operation} was answered {reply or code}, and it came out of {client}'s call: {meaning}"
    return ""


def hidden(steps, results, meanings):
    """A client whose request was refused for something other than its condition, and whose call answered anyway."""
    for label, _, answer, _ in steps:
        client, operation = who(label)
        if answer in (None, "OK") or answer in REFUSAL_ANSWERS or isinstance(results.get(client), BaseException):
            continue
        meaning = meanings.get(answer.split(" ")[0], "DynamoDB refused the request itself")
        return (f"{client}'s {operation} was answered {answer} ({meaning}), and {client}'s call returned "
                f"{results.get(client)!r} as if it were a refusal. Catch only ConditionalCheckFailedException, and "
                "let every other error raise")
    return ""


def stale(steps):
    """A read answered without a write DynamoDB had already acknowledged (an eventually consistent read): a read of the
    table first, which ConsistentRead=True makes strong, then one of an index, which is never strong."""
    found = [(" on " in summary and who(label)[1] in ("Query", "Scan"), place, label)
             for place, (label, summary, _, _) in enumerate(steps) if "(stale: " in label]
    if not found:
        return ""
    index, _, label = min(found)
    client, operation = who(label)
    missed = label.split("(stale: ", 1)[1].rstrip(")")
    return f"{client}'s {operation} was answered {missed}. {INDEX_FIX if index else STALE_FIX}"
