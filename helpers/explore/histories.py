"""An order as a history in the shape of Jepsen's rw-register workload, for the anomaly analyser (helpers.anomalies).

What the lab server says each request read and wrote makes the history; nothing is inferred. Every item has versions
numbered from 0 in each order (0: the item as reset() left it); a value is a version's number, and a read of an item
absent since the reset reads None (Elle's nil). Each request is an operation of its client's process:
- invoked at its first step (a BatchGetItem read item by item: at its first item read), done at its own step (a
  transaction, a batch or an MRSC write: once its last item is made visible);
- "ok" when DynamoDB answered OK, "info" when its response was lost or its client crashed after it (applied, but
  the client never heard), "fail" with an empty value when refused or cancelled (it read and wrote nothing anyone
  can see);
- its value: ["r", item, value] for each item it read (a read, a condition, an UpdateItem's item, a ConditionCheck),
  then ["w", item, value] for each item it wrote.
Items that existed at the reset are written first by one operation of the process "reset".

A global table's item is one register however many Regions hold a replica of it (the lab server names it "... in
every Region"): a request in any Region reads the version that Region's replica holds, and a write's version is
numbered in the item's order of writes across Regions, the order of their timestamps, by which last writer wins
decides what every replica ends with (MREC); so one Region's write can come, in that order, right after a version
another Region's condition read, and be overwritten unseen. A replicated write's arrival in another Region is no
operation of its own: it is the original write reaching one more copy, as a follower taking a write is, and it
writes no new value. Were it an operation, each version would have two writers (Elle takes every value to be
written once, so a read could not say which it read) or the copy a new value (and a read in that Region would depend
on the arrival, not on the client whose write it is, so a read after that write had returned, of a Region it had
not reached, would close no cycle by real time). As part of the write, a read of a replica behind it is a read of
an older version: a stale read once the write has returned (G-single-item-realtime), a lost update when a write
follows it. A request on a global table is named with its Region ("PutItem in eu-west-1"; an attempt says it once
for a run of requests in one Region: "GetItem then PutItem in us-east-1").

A learner's function is usually not one request: a GetItem then a PutItem is meant as one unit. `attempts` groups a
client's requests into what it meant as one, an attempt: each refused or cancelled request ends one (a version-checked
retry starts over), and so does the client's return. Requests are applied one at a time, so among requests the
anomalies are those DynamoDB's consistency allows (a stale default read: a cycle closed by real time); among attempts
they are also the learner's (two attempts that read one version and both write it: a lost update).
"""
import json

from .steps import ItemRead, Request, Reveal

RESET = "reset"
EVERY_REGION = "every Region"  # the lab server's Region of a global table's item (replication/versions.py)


def history(steps):
    """{"ops": Elle-shaped records, "version_order": {item: [versions]}} of an order's steps (explored on the lab
    server's model: its requests say what they read and wrote), one operation per request."""
    requests = [step for step in steps if isinstance(step, Request)]
    names = item_names(steps)
    ops = initial_writes(steps, names) + records(operations(steps, requests, names))
    return {"ops": renumbered(ops), "version_order": version_order(ops)}


def operations(steps, requests, names):
    """(first step, last step, client, type, value, [its operation]) of each request, in the order they were sent."""
    first, last, reads, landed = {}, {}, {}, {}
    for place, step in enumerate(steps):
        request = step.request if isinstance(step, (ItemRead, Reveal)) else step
        if not isinstance(request, Request):
            continue
        first.setdefault(id(request), place)
        last[id(request)] = place
        if isinstance(step, ItemRead) and step.version:
            reads.setdefault(id(request), []).append(step.version)
        if isinstance(step, Reveal) and step.landed:
            landed.setdefault(id(request), {})[step.landed[0]] = step.landed
    found = []
    for request in sorted(requests, key=lambda request: first[id(request)]):
        versions = request.versions or {"reads": [], "writes": []}
        written = [landed.get(id(request), {}).get(entry[0], entry) for entry in versions["writes"]]
        read = reads.get(id(request), []) + versions["reads"]
        value = ([["r", names[entry[0]], value_of(entry)] for entry in read]
                 + [["w", names[entry[0]], value_of(entry)] for entry in written])
        found.append((first[id(request)], last[id(request)], request.client, outcome(request), value,
                      [request_name(request, read + written)]))
    return found


def request_name(request, entries):
    """The request as an operation's "requests" name it: "PutItem", or "PutItem in eu-west-1" when it read or wrote a
    global table's item."""
    regional = request.region and any(json.loads(entry[0])[-1] == EVERY_REGION for entry in entries)
    return f"{request.operation} in {request.region}" if regional else request.operation


def attempts(recorded):
    """The history with each client's requests grouped into attempts (the module docstring): one operation each,
    invoked with its first request and done with its last, "info" if one of them was; None for None."""
    if recorded is None:
        return None
    reset = [op for op in recorded["ops"] if op["process"] == RESET]
    grouped, current = [], {}
    for op in recorded["ops"]:
        client = op["process"]
        if client == RESET:
            continue
        if op["type"] == "invoke":
            current.setdefault(client, [op["step"], None, client, "ok", [], []])
        elif op["type"] == "fail":
            attempt = current.pop(client)
            if attempt[1] is not None:
                grouped.append(tuple(attempt))
        else:
            attempt = current[client]
            attempt[1], attempt[4] = op["step"], attempt[4] + op["value"]
            attempt[5] = region_once(attempt[5] + op["requests"])
            attempt[3] = "info" if "info" in (attempt[3], op["type"]) else "ok"
    grouped += [tuple(attempt) for attempt in current.values() if attempt[1] is not None]
    return {"ops": renumbered(reset + records(grouped)), "version_order": recorded["version_order"]}


def region_once(requests):
    """Requests' names with a Region said once for a run of requests in it: "GetItem then PutItem in us-east-1"."""
    said = [name.split(" in ") + [""] for name in requests]  # [operation, its Region or "", ...]
    return [operation if not region or place + 1 < len(said) and said[place + 1][1] == region
            else f"{operation} in {region}" for place, (operation, region, *_) in enumerate(said)]


def outcome(request):
    """The type of a request's completion: "info" (lost response, crash), "ok", or "fail" (refused or cancelled: it
    read and wrote nothing anyone can see, so its value is empty)."""
    if request.fault in ("lost", "crash"):
        return "info"
    return "ok" if request.answer == "OK" else "fail"


def value_of(entry):
    """The value of an [item, label, version, exists] entry: None for an item absent since the reset, else its
    version."""
    _, _, version, exists = entry
    return None if version == 0 and not exists else version


def item_names(steps):
    """{item: its name in the history}: its key as the transcript writes it ("{PK: 'seat#14C'}"), with its table, and
    then its Region, where two items would otherwise share a name."""
    choices = {}
    for identity, label, _, _ in every_entry(steps):
        table, *_, region = json.loads(identity)
        choices[identity] = [label, f"{label} in {table}", f"{label} in {table} ({region})"]
    names = {}
    for depth in range(3):
        taken = [options[depth] for identity, options in choices.items() if identity not in names]
        for identity, options in choices.items():
            if identity not in names and (taken.count(options[depth]) == 1 or depth == 2):
                names[identity] = options[depth]
    return names


def every_entry(steps):
    """Every [item, label, version, exists] entry the steps of an order carry."""
    for step in steps:
        if isinstance(step, Request) and step.versions:
            yield from step.versions["reads"] + step.versions["writes"]
        elif isinstance(step, ItemRead) and step.version:
            yield step.version
        elif isinstance(step, Reveal) and step.landed:
            yield step.landed


def initial_writes(steps, names):
    """The reset's operation: a write of version 0 of every item that existed when the order began (none if none
    did)."""
    existing = sorted({names[entry[0]] for entry in every_entry(steps) if entry[2] == 0 and entry[3]})
    if not existing:
        return []
    writes = [["w", name, 0] for name in existing]
    return [{"process": RESET, "type": kind, "f": "txn", "value": writes, "requests": ["reset()"]}
            for kind in ("invoke", "ok")]


def records(operations):
    """Elle's records of (first step, last step, client, type, value, requests) operations: each invoked at its first
    step (its reads' values not known yet) and done at its last, in the order of the steps (an invocation before a
    completion at the same step); a refused one's value empty. "step" is the step it is invoked or done at, "requests"
    names the requests it is made of."""
    invoked = [(first, 0, client, "invoke", [] if kind == "fail" else [[f, key, None if f == "r" else v]
                                                                       for f, key, v in value], requests)
               for first, _, client, kind, value, requests in operations]
    completed = [(last, 1, client, kind, [] if kind == "fail" else value, requests)
                 for _, last, client, kind, value, requests in operations]
    events = sorted(invoked + completed, key=lambda event: event[:2])
    return [{"process": client, "type": kind, "f": "txn", "value": value, "step": place, "requests": requests}
            for place, _, client, kind, value, requests in events]


def renumbered(ops):
    """The records with their index, in order."""
    return [{"index": index, **{name: value for name, value in op.items() if name != "index"}}
            for index, op in enumerate(ops)]


def version_order(ops):
    """{item: its versions in order}: the lab server numbers them as it applies them (None, an absent item, first)."""
    order = {}
    for op in ops:
        if op["type"] != "invoke":
            for f, key, value in op["value"]:
                if f == "w" and value is not None:
                    order.setdefault(key, set()).add(value)
    return {key: sorted(versions) for key, versions in order.items()}
