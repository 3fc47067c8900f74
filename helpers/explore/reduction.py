"""Which orders are one behaviour: moves that commute, and the races, wake-up trees and sleep sets that run each class
of orders once.

Two moves commute when they touch no item in common, or only read it: run in either order, they leave the same items,
the same copies and the same answers. The items a move touches come from its request's body (a Scan or Query
touches its whole table, an operation on no item every table). A read answered stale moves a follower forward (and
an index read moves the index's copy), so two such reads of one item do not commute; two moves that could each spend
the same fault of an order (its one lost response, its one crash) do not either. Making an item of a transaction
visible may end the transaction (when it is the last), which frees all of its items: such a move does not commute
with a write, a transaction or a TransactGetItems naming any of them, whose answer depends on whether the
transaction is still ongoing (a plain read's does not). A write that was refused or cancelled changed nothing: it
commutes as a read of its items would. A write naming an item of a transaction still ongoing meets
TransactionConflict whatever its items hold: it commutes with every move but one that ends that transaction or
begins another on its items (an item made visible before the last one changes a value it never reads). Moves of one
client follow each other, except the items of one of its transactions made visible, or of one of its BatchGetItems
read, which are moves of their own and commute with each other. Which item is the last is a property of the order,
not of the move: two of a transaction's items made visible back to back leave the same state in either order, the
later one ending it, so a write refused while it is ongoing is one behaviour whichever of its items came last (26's
two sign-ups with a sentinel: 2 behaviours cancelled in flight, one per sign-up first).

A DynamoDB Streams request reads a stream: GetRecords (and GetShardIterator, but at TRIM_HORIZON) the records it
holds, which a record entering it changes (an "arrival", helpers/explore/); DescribeStream, ListStreams and
GetShardIterator at TRIM_HORIZON only its shards, which no arrival changes. Explored on the lab server's model, a
write only puts records on their way, which no read of a stream sees: it commutes with them (elsewhere a write's
record enters at once, so the explorer takes a read of a stream to touch everything). Two arrivals on one stream do
not commute (the shard's order of records differs); arrivals on different streams do, and so does an arrival with
any write.

Each Region has tables of its own, and each replica of a global table with eventual consistency (MREC) holds its own
copy of an item: an item is named with its Region ("seats in eu-west-1"), so that a request in us-east-1 and one in
eu-west-1 commute, and so does a replicated write arriving in one Region with everything done in another (two such
arrivals, one per Region, leave the same state in either order). A global table with strong consistency (MRSC) keeps
one item in every Region, a write there being in flight for all of them: its items are named by table alone. Two
writes of one item of an MREC table, made in two Regions, still do not commute: each takes a timestamp as it is
applied, and the later one wins in every Region; each also touches the item's write order (WRITE_ORDER).

The explorer's bounds (explore.WINDOW) count, for each client, only requests that do not commute with what they
bound: a transaction stays ongoing while each other client has sent at most three requests naming one of its items;
a client's reads of a stream may go on while records are on their way to it until it has read it three times since
a record last entered it. So each bound is a property of the behaviour, not of the order: a request that commutes
with a transaction counts in no order, and swapping the two cannot change whether a client may go on.

Orders that differ only by swapping neighbouring moves that commute (one Mazurkiewicz trace) are one behaviour: a
learner cannot tell them apart by any answer, any result or the final state. The explorer runs one order of each and
starts no run that repeats one, by optimal dynamic partial-order reduction (Abdulla, Aronis, Jonsson and Sagonas,
"Optimal dynamic partial order reduction", POPL 2014: source sets and wake-up trees, as Nidhugg does). Once an order
has run, each race in it (two moves that do not commute, the later one not needing the earlier, with no move between
them ordered after the first and before the second, but the first's own transaction's items made visible) names an
order to try: at the point before the first move, the moves after it that do not depend on it, then the second move.
That sequence goes into the point's wake-up tree unless a move asleep there starts it (`weak_initial`: an order
starting with that move ran already) or a sequence in the tree already covers it (`insert`); the next run follows the
tree. A move of a client with other answers (a read's older ones, a fault, a choice's other options) has each of them
as a branch of its own where it is made. A refused or cancelled write is recorded as a read of its items. Moves are
named as schedules name them, so a move is the same in two orders, but for arrivals, which the lab server numbers in
the order they were made: the search names a stream record as the k-th of its item's records to reach its stream, and
a replicated write by the move that sent it (search.Guided.arrivals). What a move needs comes before it in every order
it is in: the move that made it possible; for a move that meets a transaction the last of its items ended, all of
that transaction's items made visible (it ended once every one was, whichever came last); for a stream record, every
write of its table before it (the one that made the record may have made it while an earlier record of its item was
on its way, so that the record became possible only when that one entered).
"""
import json
import re
from dataclasses import dataclass, field

from .moves import transition

EVERYTHING = ("*", "*")
# What DynamoDB Streams' requests read, named so that no table can share the name (a table name has no parentheses):
STREAM_RECORDS = "(stream records)"  # (STREAM_RECORDS, stream): the records a stream holds, which an arrival changes
STREAM_SHARDS = "(stream shards)"  # (STREAM_SHARDS, stream): its shards and where they start, which no arrival changes
WRITE_ORDER = "(write order)"  # (WRITE_ORDER, item of an MREC global table, in no Region): the order of its writes
STREAM_TABLE = re.compile(r"arn:aws[a-z-]*:dynamodb:([^:]*):[0-9]{12}:table/([a-zA-Z0-9_.-]+)/stream/.+")


@dataclass(frozen=True)
class Footprint:
    """What a move touches: its client, the items (table, key) it reads or writes, whether it writes them, whether it
    moves a copy (a stale or index read), the fault it spends, if any, the items whose transaction it may end
    (`frees`), whether its answer depends on an ongoing transaction (`meets_transactions`), whether it meets one
    already (`blind`: it is refused with TransactionConflict whatever its items hold, and changes nothing), and
    whether it may begin one (`locks`: a TransactWriteItems that does not meet one)."""

    client: str
    items: frozenset
    writes: bool
    moves_copy: bool = False
    fault: str = ""
    frees: frozenset = frozenset()
    meets_transactions: bool = False
    blind: bool = False
    locks: bool = False


def commute(first, second):
    """True when the two moves leave the same state and answers in either order."""
    if first.fault and first.fault == second.fault:
        return False
    if frees(first, second) or frees(second, first):
        return False
    if not any(overlap(one, other) for one in first.items for other in second.items):
        return True
    if first.blind or second.blind:
        return not (first.locks or second.locks)
    return not (first.writes or second.writes or (first.moves_copy and second.moves_copy))


def frees(first, second):
    """True when `first` may end a transaction holding an item `second` meets."""
    return second.meets_transactions and any(overlap(one, other) for one in first.frees for other in second.items)


def overlap(one, other):
    """True when two items (table, key) may be the same item: equal, or either stands for a whole table or for all."""
    if EVERYTHING in (one, other):
        return True
    return one[0] == other[0] and (one == other or "*" in (one[1], other[1]))


class Keys:
    """The items a request names, as (table, key): key attributes as DynamoDB's DescribeTable gives them, per table."""

    def __init__(self, client):
        self.client, self.names, self.strong, self.eventual = client, {}, set(), set()

    def learn(self, table):
        """Ask DynamoDB once for the table's key attributes, and whether it is a replica of a global table (MRSC or
        MREC)."""
        if table not in self.names:
            try:
                described = self.client.describe_table(TableName=table)["Table"]
                self.names[table] = [part["AttributeName"] for part in described["KeySchema"]]
                if described.get("MultiRegionConsistency") == "STRONG":
                    self.strong.add(table)
                elif described.get("Replicas"):
                    self.eventual.add(table)
            except Exception:  # a table that does not exist (yet): the request's own answer will say so
                self.names[table] = None

    def synchronous(self, table):
        """True when `table` is a replica of an MRSC global table: a write to it stays ongoing until replicated."""
        self.learn(table)
        return table in self.strong

    def place(self, table, region):
        """The table as the request's Region holds it: "<table> in <Region>", its own replica (a table of one Region,
        or one Region's replica of an MREC global table); an MRSC global table's name alone, its items being one item
        in every Region (a write there is in flight for all of them)."""
        self.learn(table)
        return table if region is None or table in self.strong else f"{table} in {region}"

    def item(self, table, attributes, region=None):
        """(the table in `region` (place), the key of `attributes` in it), or the whole table when it cannot be
        told."""
        place, names = self.place(table, region), self.names[table]
        if names is None or not isinstance(attributes, dict):
            return place, "*"
        return place, json.dumps([attributes.get(name) for name in names], sort_keys=True)

    def named(self, operation, body, region=None):
        """[(table, key)] of the items a request signed for `region` names, in the order its body names them; its
        table for a Query or Scan; everything for an operation on no item."""
        if operation in ("GetItem", "UpdateItem", "DeleteItem"):
            return [self.item(body.get("TableName"), body.get("Key"), region)]
        if operation == "PutItem":
            return [self.item(body.get("TableName"), body.get("Item"), region)]
        if operation in ("Query", "Scan"):
            return [(self.place(body.get("TableName"), region), "*")]
        if operation in ("TransactWriteItems", "TransactGetItems"):
            return [self.item(detail.get("TableName"), detail.get("Item") or detail.get("Key"), region)
                    for action in body.get("TransactItems", []) for detail in action.values() if isinstance(detail, dict)]
        if operation == "BatchGetItem":
            return [self.item(table, key, region) for table, request in (body.get("RequestItems") or {}).items()
                    if isinstance(request, dict) for key in request.get("Keys") or []]
        if operation == "BatchWriteItem":
            return [self.item(table, (request.get("PutRequest") or {}).get("Item")
                              or (request.get("DeleteRequest") or {}).get("Key"), region)
                    for table, requests in (body.get("RequestItems") or {}).items() for request in requests
                    if isinstance(request, dict)]
        if operation == "DescribeStream" or operation == "GetShardIterator" and (
                body.get("ShardIteratorType") == "TRIM_HORIZON"):
            return [(STREAM_SHARDS, stream_named(body))]
        if operation in ("GetShardIterator", "GetRecords"):
            return [(STREAM_RECORDS, stream_named(body))]
        if operation == "ListStreams":
            return [(STREAM_SHARDS, "*")]
        return [EVERYTHING]

    def stamped(self, operation, body):
        """The write-order pseudo-items of the items a write names in an MREC global table: a write there takes the next
        timestamp, and last writer wins in every Region, so two writes of one item, in any Regions, do not commute."""
        return [(WRITE_ORDER, "*" if key == "*" else json.dumps([table, key]))
                for table, key in self.named(operation, body) if table in self.eventual]

    def written(self, operation, body, region=None):
        """[(table, key)] of the items a TransactWriteItems or BatchWriteItem writes, in the order its items become
        visible by place (its ConditionChecks left out)."""
        if operation == "TransactWriteItems":
            return [self.item(detail.get("TableName"), detail.get("Item") or detail.get("Key"), region)
                    for action in body.get("TransactItems", []) for kind, detail in action.items()
                    if kind in ("Put", "Update", "Delete") and isinstance(detail, dict)]
        return self.named(operation, body, region)


def stream_named(body):
    """The stream a DynamoDB Streams request reads, as "<table> in <Region>": named by its StreamArn, or by the ARN the
    lab server's shard iterator begins with ("*", every stream, for an iterator of another server). A stream is named
    by its table and Region, not its ARN, which changes each time a scenario's reset creates the table again."""
    arn = body.get("StreamArn") or str(body.get("ShardIterator", "")).rpartition("|1|")[0]
    named = STREAM_TABLE.fullmatch(str(arn))
    return f"{named.group(2)} in {named.group(1)}" if named else "*"


def asleep(sleep, move, base=None):
    """True when `move` sleeps (`sleep`: (move, every answer) entries). Without `base`, `move` stands for every answer
    its request may get; with it, `move` is one answer to request `base`, asleep on its own or with all of that
    request's answers."""
    if base is None:
        return any(entry == move and every for entry, every in sleep)
    return any(entry == move or (entry == base and every) for entry, every in sleep)


def wake(sleeping, footprint):
    """The sleep set after a move with this footprint: of `sleeping` ((move, every answer, its footprint as it stood
    before the move) entries, the move itself and other answers to its request left out), those that commute with it.
    A footprint is taken as the move stands at that point: an item made visible ends its transaction only if last."""
    return [(entry, every) for entry, every, print_ in sleeping if commute(print_, footprint)]


def swaps(first, second, answers=False):
    """True when two steps ((move, footprint) pairs) of an order may be swapped: they commute and are not two moves of
    one client (items of one of its transactions made visible, or of one of its BatchGetItems read, excepted).
    answers: a read that moves a copy also changes which answers another read of its item may get, so neither swaps
    with it (for DPOR, whose move of a read stands for each of its answers: the sleep sets' asleep(every answer))."""
    if first[1].client == second[1].client and not {transition(first[0])[1], transition(second[0])[1]} <= {"+", "@"}:
        return False
    return independent(first[1], second[1]) if answers else commute(first[1], second[1])


def independent(first, second):
    """True when two moves commute whichever answers their reads get: a read that moves a copy also changes which
    answers another read of its item may get."""
    if (first.moves_copy or second.moves_copy) and any(overlap(one, other) for one in first.items
                                                        for other in second.items):
        return False
    return commute(first, second)


def happens_before(steps, enablers):
    """Per step of an order ((move, footprint) pairs), the steps before it that it depends on, as a bit set: those it
    cannot swap with, those it needs (`enablers`: a bit set per step), and what those depend on."""
    before = []
    for later, step in enumerate(steps):
        found = 0
        for earlier in range(later):
            if enablers[later] >> earlier & 1 or not swaps(steps[earlier], step, True):
                found |= (1 << earlier) | before[earlier]
        before.append(found)
    return before


def races(steps, enablers, before):
    """(first, second) places of each race of an order: two steps of different clients that do not commute, the second
    not needing the first, and no step ordered after the first and before the second but the first's own transaction's
    items made visible (a transaction that ended before the second still raced with it for its items: the second may
    come first)."""
    for later, step in enumerate(steps):
        for earlier in range(later):
            if (before[later] >> earlier & 1 and not enablers[later] >> earlier & 1
                    and steps[earlier][1].client != step[1].client
                    and not swaps(steps[earlier], step, True)
                    and not any(before[between] >> earlier & 1 and before[later] >> between & 1
                                and not revealed_by(steps, earlier, between) for between in range(earlier + 1, later))):
                yield earlier, later


def revealed_by(steps, request, step):
    """True when `step` makes visible an item of the transaction (or write) that step `request` sent."""
    return (transition(steps[request][0])[1] == "" and transition(steps[step][0])[1] == "+"
            and steps[request][1].client == steps[step][1].client
            and all(transition(steps[between][0])[1] == "+" for between in range(request + 1, step)
                    if steps[between][1].client == steps[request][1].client))


def reversed_race(steps, before, earlier, later):
    """The sequence to try at the point before step `earlier` for its race with `later`: the steps after it that do not
    depend on it, then `later` (notdep(e, E).e' in the paper)."""
    return [steps[place] for place in range(earlier + 1, len(steps))
            if not before[place] >> earlier & 1] + [steps[later]]


@dataclass
class Branch:
    """A node of a wake-up tree: the move (with its footprint as recorded) and the branches after it."""

    move: str
    print_: Footprint
    after: list = field(default_factory=list)


def weak_initial(move, print_, sequence):
    """True when an order starting with `move` covers `sequence` ((move, footprint) pairs): the move is in it with
    nothing before it that it depends on, or commutes with all of it."""
    for place, (other, _) in enumerate(sequence):
        if other == move and all(swaps(before, sequence[place], True) for before in sequence[:place]):
            return True
    return all(swaps((move, print_), step, True) for step in sequence)


def without(sequence, move):
    """`sequence` less the first step `move`, when it starts it (weak_initial); as it was when `move` commutes with it."""
    for place, (other, _) in enumerate(sequence):
        if other == move and all(swaps(before, sequence[place], True) for before in sequence[:place]):
            return sequence[:place] + sequence[place + 1:]
    return sequence


def insert(tree, sequence, rank, start=0):
    """Add `sequence` to a wake-up tree (a list of Branch) unless a branch already covers it; a new branch goes in
    `rank` order among its siblings from place `start` on (the branch being run stays first)."""
    while sequence:
        for branch in tree:
            if weak_initial(branch.move, branch.print_, sequence):
                if not branch.after:
                    return
                sequence, tree, start = without(sequence, branch.move), branch.after, 0
                break
        else:
            chain = Branch(*sequence[-1])
            for move, print_ in reversed(sequence[:-1]):
                chain = Branch(move, print_, [chain])
            place = next((place for place in range(max(start, 0), len(tree))
                          if rank(tree[place].move) > rank(chain.move)), len(tree))
            tree.insert(max(place, start), chain)
            return
