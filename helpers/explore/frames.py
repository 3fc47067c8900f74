"""An exploration's frame in a learner's words: a result described, outcomes counted, one row per order, and the
anomalies each order shows, named and told as Jepsen's Elle names and tells them."""

import pandas as pd
from botocore.exceptions import ClientError

from ..lab import trace
from .errors import Crashed
from .histories import RESET, attempts


def describe(result):
    """A client's result in a few words: the value it returned, the error code it raised, or its crash."""
    if isinstance(result, Crashed):
        return str(result)
    if isinstance(result, ClientError):
        return result.response["Error"]["Code"]
    if isinstance(result, Exception):
        return f"{type(result).__name__}: {result}"
    return repr(trace.plain(result))


def numbered(table, noun):
    """`table` with its rows numbered from 1 under `noun` ("order"), as plots.orders names its rows."""
    return table.set_axis(pd.RangeIndex(1, len(table) + 1, name=noun))


def outcome_counts(frame, outcome):
    """How many schedules end in each outcome(results), as a DataFrame with the verdict beside it; its rows are
    numbered as plots.orders numbers outcomes when it draws one row per outcome."""
    outcomes = frame["results"].map(outcome)
    counts = frame.assign(outcome=outcomes).groupby(["outcome", "ok"], sort=False).size()
    return numbered(counts.rename("orders").reset_index(), "outcome")


def order_table(frame, **columns):
    """One row per order, numbered as plots.orders numbers them: its steps in full, then each of `columns`
    (name=function of the order's results), then the verdict."""
    table = pd.DataFrame({"steps": frame["steps"].map(" → ".join),
                          **{name: frame["results"].map(column) for name, column in columns.items()},
                          "ok": frame["ok"]})
    return numbered(table, "order")


def anomalies(frame, unit="attempt"):
    """Per order, the names of the anomalies its history shows (helpers.anomalies: Elle's names, () for none): of its
    clients' attempts (a client's requests until one is refused: what a learner means as one unit) or, with
    unit="request", of its requests one by one; None for an order with no history (off the lab server's model)."""
    return frame["history"].map(lambda recorded: None if recorded is None else
                                tuple(sorted(analysed(recorded, unit).anomalies)))


def why(recorded, unit="attempt"):
    """The anomalies one order's history shows, each told step by step in its clients' names ("alice's GetItem then
    PutItem"), or '' when it shows none."""
    report = analysed(recorded, unit)
    return "\n\n".join(cases[0].explain(names=learner_name, binding=False) if cases[0].cycle is None
                        else f"{name}\n{cases[0].cycle.explain(names=learner_name, binding=False)}"
                        for name, cases in report.anomalies.items())


def analysed(recorded, unit):
    """helpers.anomalies' report of a history, of its attempts or its requests (`unit`), the server's version order
    given."""
    if unit not in ("attempt", "request"):
        raise ValueError(f'unit must be "attempt" or "request"; got {unit!r}')
    from ..anomalies import analyse  # here, not above: every kernel loads the explorer; few ask it for anomalies
    history = attempts(recorded) if unit == "attempt" else recorded
    return analyse(history["ops"], version_order=history["version_order"])


def learner_name(op):
    """An operation in a learner's words: "alice's GetItem then PutItem", or "reset()"."""
    if op["process"] == RESET:
        return "reset()"
    return f"{op['process']}'s {' then '.join(op['requests'])}"


READS = ("GetItem", "Query", "Scan", "BatchGetItem", "TransactGetItems")  # requests that read and never write
STALE_FIX = ("A default GetItem, BatchGetItem, Query or Scan is eventually consistent: decide on ConsistentRead=True, "
             "or better, put the check in the write's ConditionExpression")
INDEX_FIX = ("A read of a global secondary index is always eventually consistent (it refuses ConsistentRead=True): "
             "confirm what it lists with a strongly consistent read of the table, or decide with a condition on an "
             "item keyed by the value")


def diagnosis(recorded, steps=(), requests=()):
    """(anomaly, its cycle in words, the change that breaks it) of the first cycle one order's history shows among its
    clients' attempts, else among their requests one by one, or None. The order's `steps` and `requests` (its step
    labels and request summaries) tell which reads were stale and which writes had a condition: where a read was
    answered stale, only a cycle through a stale read is its cause (a cycle among attempts that read each other's
    writes is not, when one of them missed its own)."""
    parts = request_parts(recorded)
    for unit in ("attempt", "request"):
        report = analysed(recorded, unit)
        for name, cases in report.anomalies.items():
            case = cases[0]
            if case.cycle is None:
                continue
            told = [told_step(step, parts, steps, requests) for step in case.cycle.steps]
            stale_edges = [edge for _, edge in told if stale_read(edge)]
            if any("(stale:" in label for label in steps) and not stale_edges:
                continue
            if stale_table_read(steps, requests) and all(on_index(edge[2]) for edge in stale_edges):
                continue  # the index is never strong: the table read answered stale is the one to make strong
            everyday = everyday_name(case.cycle)
            elle = ("lost-update, a G-single-item cycle" if everyday == "a lost update" and "lost-update" in
                    report.anomalies else f"a {name} cycle")
            regions = {item_words(step.key).partition(" in ")[2] for step in case.cycle.steps if step.key is not None}
            return f"{everyday} (Elle: {elle})", "; ".join(words for words, _ in told), cycle_fix(told, len(regions) > 1)
    return None


def stale_table_read(steps, requests):
    """True when a read of a table (not of an index) was answered stale in an order's steps."""
    return any("(stale:" in label and not on_index(summary(requests, place)) for place, label in enumerate(steps))


def on_index(request):
    """True for a request summary of a Query or Scan of an index ("Query on GSI1 ...")."""
    return request.startswith(("Query on ", "Scan on "))


def stale_read(edge):
    """True when a cycle's edge (told_step's second part) starts or ends at a read answered stale."""
    return edge[0] == "rw" and edge[5] or edge[0] == "wr" and edge[3]


def everyday_name(cycle):
    """What a learner calls a cycle: a lost update, a stale read, a write skew..."""
    kinds = cycle.kinds
    if "realtime" in kinds:
        return "a stale read"
    if "process" in kinds:
        return "a read that missed its own client's earlier write"
    if kinds.count("rw") >= 2:
        return "a write skew"
    if kinds.count("rw") == 1 and "ww" in kinds and len({step.key for step in cycle.steps}) == 1:
        return "a lost update"
    if "rw" in kinds:
        return "a read skew"
    return "a dirty write" if set(kinds) == {"ww"} else "a circular information flow"


def request_parts(recorded):
    """{(client, item, kind, value): (request name, step, client)} of every read ("r") and write ("w") the requests
    of a history made: which request of an attempt did what."""
    parts = {}
    for op in recorded["ops"]:
        if op["type"] in ("ok", "info") and op["process"] != RESET:
            for f, key, value in op["value"]:
                parts.setdefault((op["process"], key, f, value), (op["requests"][0], op["step"], op["process"]))
    return parts


def told_step(step, parts, labels, requests):
    """(words, what broke it) for one edge of a cycle: "alice's GetItem read SEAT#12A as absent"..."""
    a, b, item = step.a["process"], step.b["process"], item_words(step.key) if step.key is not None else None
    if step.type == "rw":
        read, at = parts.get((a, step.key, "r", step.value), ("request", 0, a))[:2]
        wrote, then = parts.get((b, step.key, "w", step.value_), ("request", 0, b))[:2]
        stale = stale_at(labels, at, step.key)
        when = "had already written a newer one, which that read missed" if stale else "wrote a newer version"
        writes = any(client == a and f == "w" for client, _, f, _ in parts)
        return (f"{a}'s {read} read {item} {as_read(step.value, step.key, parts)}; {b}'s {wrote} {when}",
                ("rw", read, summary(requests, at), wrote, summary(requests, then), stale, writes))
    if step.type == "ww":
        wrote, at = parts.get((b, step.key, "w", step.value_), ("request", 0))[:2]
        over = parts.get((a, step.key, "w", step.value), ("request",))[0]
        return f"{b}'s {wrote} wrote {item} over {a}'s", ("ww", wrote, summary(requests, at), over, b, a)
    if step.type == "wr":
        read, at = parts.get((b, step.key, "r", step.value), ("request", 0))[:2]
        return (f"{b}'s {read} read {item} {as_read(step.value, step.key, parts)}",
                ("wr", read, summary(requests, at), stale_at(labels, at, step.key)))
    if step.type == "process":
        return f"{a} went on after its own earlier request", ("process",)
    if a == b:
        return f"{a}'s {request_name(step.a)} had finished before its {request_name(step.b)} began", ("realtime",)
    return f"{a} had finished before {b} began", ("realtime",)


def request_name(op):
    """The request an operation of a history made ("DeleteItem"), or "request"."""
    return (op.get("requests") or ["request"])[0]


def stale_at(labels, step, key):
    """True when the order's step label at `step` says its read of item `key` was answered stale."""
    return key.partition("}")[0] + "}" in summary(labels, step).partition("(stale: ")[2]


def summary(column, step):
    """An order's step label or request summary at `step`, or '' when the order's were not given."""
    return column[step] if step < len(column) else ""


def as_read(value, key, parts):
    """How a read found an item: "as absent", "as the setup left it", "as bob's PutItem wrote it"."""
    if value is None:
        return "as absent"
    if value == 0:
        return "as the setup left it"
    writer = next(((name, client) for (client, item, f, v), (name, _, _) in parts.items()
                   if item == key and f == "w" and v == value), None)
    return f"as {writer[1]}'s {writer[0]} wrote it" if writer else f"at version {value}"


def item_words(name, most=32):
    """An item as a learner names it: "SEAT#12A" for "{PK: 'SEAT#12A'}", with its Region if the name has one
    ("SEAT#12A in eu-west-1"); a key value longer than `most` cut to its end."""
    key, _, rest = name.partition("}")
    values = [shortened(part.split(": ", 1)[-1].strip("'"), most) for part in key.strip("{").split(", ")]
    region = rest[rest.find("(") + 1:-1] if rest.endswith(")") else ""
    return "/".join(values) + (f" in {region}" if region else "")


def shortened(value, most):
    """A key's value as words can carry it: a long one (an idempotency key's hash) cut to its end, "…d126cf9d1f"."""
    return value if most is None or len(value) <= most else "…" + value[-12:]


def cycle_fix(steps, regions):
    """The change that breaks a cycle, chosen by its edges (and whether its items were in more than one Region): a
    stale read, a plain read trusted for a write, a batch read in parts, a write skew."""
    if regions:
        return ("Each Region decided on its own replica: send every write of an item to one Region, its home, and "
                "decide there with the write's ConditionExpression")
    anti = [edge for _, edge in steps if edge[0] == "rw"]
    checked = [edge for _, edge in steps if edge[0] == "ww" and " if " in edge[2]]
    if checked:
        _, wrote, request, over, writer, other = checked[0]
        condition = request.split(" if ", 1)[1]
        return (f"{writer}'s {wrote} was checked ({condition}), and the check held though {other}'s {over} had "
                f"written the item: {other}'s write did not change what the condition tests. Make every write of the "
                "item change it (raise the version: SET version = version + :one), or test what the writes change")
    if any("realtime" == edge[0] for _, edge in steps) or any(stale_read(edge) for _, edge in steps):
        index = any(on_index(edge[2]) for _, edge in steps if edge[0] in ("rw", "wr"))
        return INDEX_FIX if index else STALE_FIX
    if len(anti) >= 2:
        return ("Each write checked only its own item: put a condition on every item the decision read, in one "
                "TransactWriteItems (a ConditionCheck for each item not written)")
    kinds = {edge[0] for _, edge in steps}
    if "wr" in kinds and "ww" not in kinds and not any(edge[6] for edge in anti):  # a read-only client read around
        return ("A BatchGetItem, Query or Scan reads its items one at a time, and separate reads each at their own "
                "moment, so they can read around a transaction: read the items together with TransactGetItems")
    if any(" if " in edge[4] for edge in anti) and not any(edge[1] in READS for edge in anti):
        return "Make the condition test what the decision needs, so that the later write is refused"
    return ("A read and then a write are two requests: put the check in the write itself, a ConditionExpression "
            "(attribute_not_exists, or version = :read), so that it is refused once another write came between")
