"""DynamoDB's consistency as the Developer Guide documents it: copies that trail, transactions in phases, lagging
indexes. Without it the lab server would be stronger than DynamoDB: every read would see the latest write.

What it implements, and the sentences it implements:

- Copies. "Eventually consistent is the default read consistent model for all read operations. When issuing
  eventually consistent reads to a DynamoDB table or an index, the responses may not reflect the results of a
  recently completed write operation." With ConsistentRead "DynamoDB returns a response with the most up-to-date
  data, reflecting the updates from all prior write operations that were successful." "The read will never
  present a view to the item from a write which did not ultimately succeed." (Developer Guide, "DynamoDB read
  consistency".) DynamoDB keeps three copies of each partition in three Availability Zones. Here each item has a
  leader and two followers. Every successful write goes to the leader; each follower holds a prefix of the item's
  successful writes and only moves forward. A strongly consistent read, every condition and ReturnValues use the
  leader; an eventually consistent read is answered by any of the three copies. A refused or cancelled write is in
  no copy.
- What is not modelled: the write quorum. DynamoDB answers a write once two of the three copies hold it, so at
  most one copy can trail it; here both followers may. Each item's copies also move on their own, as items on
  different partitions are answered by different replicas, so one multi-item read may mix copies. The lab can
  therefore show a little more staleness than three real copies could, never less. PartiQL statements are
  applied to and read from the leader alone: for them the server stays stronger than DynamoDB.
- Transactions (Developer Guide, "Amazon DynamoDB Transactions: How it works"). A TransactWriteItems checks every
  condition against the leaders, then its items become visible one at a time, in any order; until the last one
  is, it is ongoing. Meanwhile "a PutItem, UpdateItem, or DeleteItem request for an item conflicts with an ongoing
  TransactWriteItems request that includes the same item" (TransactionConflictException; a BatchWriteItem naming
  one of its items is refused the same way); another TransactWriteItems naming one of its items is cancelled with
  reason TransactionConflict on that action; a TransactGetItems naming one of them is cancelled; a GetItem reads
  the item's last visible version. BatchGetItem, Query and Scan are read-committed: "If a transactional write
  updates an item in the middle of a BatchGetItem, Query, or Scan operation, the subsequent part of the read
  operation returns the newly committed value", so each item is read as it is at that moment.
- BatchWriteItem. "The individual PutItem and DeleteItem operations specified in BatchWriteItem are atomic; however
  BatchWriteItem as a whole is not" (API reference), and "there is no serializable isolation between the
  transaction and the BatchWriteItem operation as a unit" (Developer Guide, "Isolation levels for DynamoDB
  transactions"). Explored, each of a batch's puts and deletes takes effect when it becomes visible, one at a time,
  in any order, while nothing conflicts with them: another request that writes or checks one of its items before
  then meets the item as it was, and the batch's put or delete lands after it. So two batches may interleave item by
  item (x as one left it, y as the other: a dirty write). Sampled, with transaction_window on, each of them takes
  effect at its own moment across the window, and the answer waits for the last, as for a transaction.
- Indexes. "All reads from GSIs and streams are eventually consistent." Each global secondary index has a copy
  of its own that trails the table the same way; an index read shows, for each item, a version no older than the
  one that index last showed.

Two drivers move the copies:
- sampled (knobs stale_reads, gsi_lag, transaction_window): a copy takes each write after a random delay, an
  eventually consistent read goes to a random copy, a transaction's items become visible across its window;
- explored ("explore" mode, for helpers/explore.py): copies move only when a read is answered with a version
  the explorer chose among those the model allows (`choices`), and an ongoing transaction's items become
  visible only when it says so (`reveal`). DynamoDB publishes no bound on how long a copy trails, but with none
  at all a read-and-retry loop could read a stale copy forever: one client's reads of one item may be answered
  stale at most STALE_READS (3) times in a row; the next is answered with the latest version. A scenario whose
  clients make at most three requests each never meets the bound.
- paused (between two steps of a step-through panel): explored, as the panel left it, while the consistency knobs
  are off. A request that comes while one is on (a race as weak as DynamoDB) first makes every copy agree and
  returns the copies to the knobs (sampled); the panel, asking to explore again (`resume`), learns it must start over.
A copy's position is the newest version whose ready time for it has come: a sampled write sets ready times in
the future, an explored one sets them to never, and a choice or a reveal sets one to always.
"""
import copy
import itertools
import json
import random
import time
import zlib
from collections import defaultdict
from contextlib import nullcontext

from moto.dynamodb.exceptions import TransactionCanceledException
from moto.dynamodb.models.dynamo_type import DynamoType

from ..replication import streamlog
from ..replication.versions import GlobalVersions
from .knobs import find_table
from ..replication.regions import here

LEADER = "leader"
FOLLOWERS = ("follower 1", "follower 2")
ALWAYS, NEVER = float("-inf"), float("inf")
WRITES = ("PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem")
READS = ("GetItem", "BatchGetItem", "Query", "Scan")
MAX_CHOICES = 256
STALE_READS = 3  # explored: a client's reads of one item answered stale at most three times in a row
CHOICE_HEADER = "X-Lab-Read-Choice"
BATCH_READ_HEADER = "X-Lab-Batch-Read"  # an explored BatchGetItem read item by item: its items read so far
BATCH_ITEM_HEADER = "X-Lab-Batch-Item"  # the place of the one item of that BatchGetItem to read (or to choose for) now
STEP_HEADER = "X-Lab-Step"
HOLD_HEADER = "X-Lab-Hold-Transaction"
TRANSACTION_HEADER = "x-lab-transaction"
VERSIONS_HEADER = "x-lab-versions"  # explored: the version of each item a request read and wrote (the explorer's history)
CONFLICT_MESSAGE = "Transaction is ongoing for the item"
CONFLICT_REASON = ("TransactionConflict", CONFLICT_MESSAGE, None)
REPLICATED_CONFLICT = ("The request was rejected because one or more items in the request are being modified by a "
                       "request in another Region.")  # ReplicatedWriteConflictException, API reference
SINGLE_ITEM_WRITES = ("PutItem", "UpdateItem", "DeleteItem")
KEY_TYPES = ("S", "N", "B")  # the types a key attribute may have


class ChoiceError(ValueError):
    """A read choice the model does not allow now; the message says why."""


class History:
    """One item's successful writes since every copy last agreed: images[0] is the item then (None: absent). In a
    replica of a global table, stamps[i] is the timestamp of the write version i is (Replication.stamp_of)."""

    def __init__(self, table, key, label, image, stamp=None):
        self.table, self.key, self.label = table, key, label
        self.where = here()  # the account and Region of the table's copy this history is of
        self.images = [image]
        self.writers = [""]
        self.ready = [{}]
        self.stamps = [stamp]

    def position(self, copy_name, now):
        """The newest version `copy_name` holds at `now` (followers never pass the leader)."""
        limit = len(self.images) if copy_name == LEADER else self.position(LEADER, now) + 1
        return max(i for i in range(limit) if self.ready[i].get(copy_name, ALWAYS) <= now)

    def append(self, image, writer, ready, stamp=None):
        """Record one more successful write, when each copy takes it and (a global table's) its timestamp."""
        self.images.append(image)
        self.writers.append(writer)
        self.ready.append(ready)
        self.stamps.append(stamp)

    def copy_for(self, copy_name):
        """The copy that answers for this item: an index copy only for items written since the index existed."""
        return LEADER if copy_name.startswith("index ") and copy_name not in self.ready[-1] else copy_name

    def compact(self, now):
        """Forget the versions no copy can show any more (sampled only: explored choices name versions by place)."""
        oldest = min((self.position(name, now) for name in self.ready[-1]), default=0)
        if oldest:
            del self.images[:oldest], self.writers[:oldest], self.ready[:oldest], self.stamps[:oldest]
            self.ready[0] = {}

    def settled(self, now):
        """True when every copy holds the newest version."""
        return all(time_ <= now for time_ in self.ready[-1].values())


class Model:
    """The copies, ongoing transactions and index copies of one lab server (used under the engine lock)."""

    def __init__(self, replicas=None):
        self.mode = "sampled"
        self.replicas = replicas  # globaltables.Replication: writes on their way to other Regions, MRSC replicas
        self.stale_reads = None
        self.gsi_lag = None
        self.transaction_window = None
        self.histories = {}
        self.locked = {}
        self.batched = {}
        self.in_flight = {}  # MRSC writes not acknowledged yet: item, in any Region -> (writer's Region, transaction)
        self.transactions = {}
        self.next_transaction = 1
        self.stale_runs = {}  # explored: (client, item) -> how many of the client's reads of it in a row were stale
        self.batch_reads = {}  # explored: BatchGetItem token -> {item: (table, key, image)} of the items read so far
        self.last_versions = None  # explored: what the last request answered read and wrote (with_versions)
        self.global_versions = GlobalVersions()  # explored: a global table's items' versions, across Regions
        if replicas is not None:
            replicas.arrived = self.arrived

    @property
    def mode(self):
        """"sampled", "explore" or "paused" (the module docstring)."""
        return self._mode

    @mode.setter
    def mode(self, mode):
        self._mode = mode
        streamlog.explored = mode in ("explore", "paused")

    @property
    def exploring(self):
        """True while the explorer moves the copies (paused between a panel's steps included)."""
        return self.mode in ("explore", "paused")

    @property
    def knobbed(self):
        """True while a consistency knob is on."""
        return bool(self.stale_reads or self.gsi_lag or self.transaction_window)

    @property
    def recording(self):
        """True while writes must keep their history."""
        return self.exploring or self.knobbed

    @property
    def active(self):
        """True while a request may be answered otherwise than by moto alone."""
        return self.recording or bool(self.histories) or bool(self.transactions) or self.replicating_late

    @property
    def replicating_late(self):
        """True while replication_lag is on: sampled, an MRSC write is in flight for its lag before it returns."""
        return self.replicas is not None and self.replicas.lag is not None

    def pause(self):
        """Explored copies stay as they are until the next request (a step-through panel between two steps); nothing
        to keep unless exploring."""
        if self.mode == "explore":
            self.mode = "paused"

    def wake(self):
        """A request came while paused with a consistency knob on: every copy agrees; the copies follow the knobs."""
        if self.mode == "paused" and self.knobbed:
            self.mode = "sampled"
            self.settle()

    def resume(self):
        """Explore again: True when the model was paused since the last exploration, else False (everything settled)."""
        paused = self.mode == "paused"
        self.mode = "explore"
        if not paused:
            self.settle()
        return paused

    def settle(self):
        """Every copy takes every write, every ongoing transaction ends, every stream record on its way enters its
        stream (each item's in order), every replicated write on its way arrives: the copies agree again."""
        streamlog.flush()
        for number, transaction in list(self.transactions.items()):
            self.replicate(transaction)
            if "landing" in transaction:
                self.end_transaction(number)
            elif transaction["batch"]:
                for place in transaction["hidden"]:
                    self.land(self.histories[transaction["items"][place]], transaction["versions"][place])
            enter_records(transaction)
        if self.replicas is not None:
            self.replicas.flush_explored()
        streamlog.flush()
        self.histories.clear()
        self.locked.clear()
        self.batched.clear()
        self.in_flight.clear()
        self.transactions.clear()
        self.stale_runs.clear()
        self.batch_reads.clear()
        self.global_versions.clear()

    def catch_up(self):
        """Copies whose lag knob is off take every write now; with transaction_window off, transactions end."""
        if self.mode != "sampled":
            return
        for history in self.histories.values():
            for ready in history.ready:
                for name in ready:
                    lag = self.stale_reads if name in FOLLOWERS else self.gsi_lag
                    if name != LEADER and not lag:
                        ready[name] = ALWAYS
                    elif name == LEADER and not self.transaction_window:
                        ready[name] = ALWAYS
        if not self.transaction_window:
            for number in list(self.transactions):
                self.end_transaction(number)

    def forget_table(self, name):
        """Drop what is kept of a table that was deleted or created."""
        for item_id in [item_id for item_id, history in self.histories.items() if history.table == name]:
            del self.histories[item_id]

    def sweep(self, now):
        """Land sampled batches' due writes; end transactions whose window has passed; forget items every copy has
        caught up with."""
        for number, transaction in list(self.transactions.items()):
            if "landing" in transaction:
                self.land_due(transaction, now)
            if transaction["until"] <= now:
                self.end_transaction(number)
        for item_id in [item_id for item_id, history in self.histories.items()
                        if item_id not in self.locked and item_id not in self.batched and history.settled(now)]:
            del self.histories[item_id]
        if self.mode == "sampled":
            for history in self.histories.values():
                history.compact(now)

    def end_transaction(self, number):
        """The transaction is no longer ongoing: its items can be written again (a sampled batch's last writes land),
        and its stream records kept until now are on their way."""
        if "landing" in self.transactions[number]:
            self.land_due(self.transactions[number], time.monotonic(), every=True)
        enter_records(self.transactions[number])
        self.replicate(self.transactions[number])
        for item_id in self.transactions.pop(number)["items"]:
            self.locked.pop(item_id, None)
            self.batched.pop(item_id, None)
            if self.in_flight.get(everywhere(item_id), (None, None))[1] == number:  # not a later write's, on top
                del self.in_flight[everywhere(item_id)]

    def replicate(self, transaction):
        """An explored transaction has ended, or an MRSC write is acknowledged: its writes to the other Regions'
        replicas are sent now."""
        self.replicas.deliver_now(transaction.pop("replicated", ()))

    def handle(self, target, params, headers, apply):
        """Answer one request under the model: (status, headers, body) plus the time to answer it at (or None)."""
        self.wake()
        now = time.monotonic()
        self.sweep(now)
        if target in ("DeleteTable", "CreateTable") or target == "UpdateTable" and params.get("ReplicaUpdates"):
            self.forget_table(params.get("TableName"))
        refused = self.conflict(target, params)
        if refused is not None:
            return refused, None
        if target in WRITES or target == "TransactWriteItems":
            return self.write(target, params, headers, apply, now)
        reads = read_views(target, params)
        if not reads:
            return apply(), None
        return self.read(target, params, headers, reads, apply, now), None

    def conflict(self, target, params):
        """DynamoDB's answer to a request naming an item of an ongoing transaction, or (MRSC) a write naming an item
        another Region's write is still replicating, else None."""
        if target in WRITES and self.in_flight:
            region = here()[1]
            if any(self.in_flight.get(everywhere(item_id(*pair)), (region,))[0] != region
                   for pair in written_keys(target, params)):
                return error("ReplicatedWriteConflictException", REPLICATED_CONFLICT, status=409)
        if not self.locked:
            return None
        if target in WRITES:
            if any(item_id(*pair) in self.locked for pair in written_keys(target, params)):
                return error("TransactionConflictException", CONFLICT_MESSAGE)
            return None
        if target in ("TransactWriteItems", "TransactGetItems"):
            named = [item_id(detail.get("TableName"), detail.get("Item") or detail.get("Key") or {})
                     for action in params.get("TransactItems", []) for detail in action.values()
                     if isinstance(detail, dict)]
            if any(name in self.locked for name in named):
                reasons = [CONFLICT_REASON if name in self.locked else (None, None, None) for name in named]
                return respond(400, json.loads(TransactionCanceledException(reasons).description))
        return None

    def write(self, target, params, headers, apply, now):
        """Apply a write on the leader and record its new versions; a held or windowed transaction, or an MRSC write
        held (explored) or lagging (sampled), stays ongoing."""
        replicated = (target in SINGLE_ITEM_WRITES and self.replicas is not None
                      and (self.exploring and bool(headers.get(HOLD_HEADER)) or self.mode == "sampled" and
                           self.replicating_late) and self.replicas.synchronous(params.get("TableName") or ""))
        if not self.recording and not replicated:
            return apply(), None
        named = [(name, attributes, item_id(name, attributes)) for name, attributes in written_keys(target, params)]
        for name, attributes, identity in named:
            if identity not in self.histories:
                table = find_table(name)
                key = key_of(table, attributes) if table is not None else None
                if key is not None:
                    self.histories[identity] = History(name, key, key_label(table, key),
                                                       copy.deepcopy(table.get_item(*key)), self.stamp_of(name, key))
                    if self.exploring:  # a global table's item: its version 0 (replication/versions.py)
                        self.global_versions.number(identity, self.histories[identity].stamps[0])
        batch = bool(named) and target == "BatchWriteItem" and (
            bool(headers.get(HOLD_HEADER)) if self.exploring else bool(self.transaction_window))
        before = {identity: copy.deepcopy(find_table(name).get_item(*self.histories[identity].key))
                  for name, _, identity in named if batch and identity in self.histories}
        held = self.exploring and bool(named) and target in ("TransactWriteItems", "BatchWriteItem") and bool(
            headers.get(HOLD_HEADER))
        checked = [item_id(name, attributes) for name, attributes in read_by_write(target, params)]
        prior = {identity: history.position(LEADER, now) for identity in checked
                 if (history := self.histories.get(identity)) is not None}  # what its conditions and updates read
        defer = replicated or held and target == "TransactWriteItems"  # replicated once it ends (MRSC: acknowledged)
        streamlog.holding = [] if held else None
        try:
            with self.replicas.deferring(defer) if self.replicas is not None else nullcontext(None) as deferred:
                answer = apply()
        finally:
            records, streamlog.holding = streamlog.holding or [], None
        if answer[0] != 200:
            return answer, None
        records = [(item_id(stream.table_name, record["dynamodb"]["Keys"]), stream, record)
                   for stream, record in records]
        writer = headers.get(STEP_HEADER) or target
        if batch and self.mode == "sampled":
            return self.begin_sampled_batch(named, before, writer, now, answer)
        transaction = batch or replicated or bool(named) and target == "TransactWriteItems" and (
            bool(headers.get(HOLD_HEADER)) if self.exploring else bool(self.transaction_window))
        window = self.replicas.lag if replicated else self.transaction_window
        reveals = self.reveal_times(len(named), now, window) if transaction else [ALWAYS] * len(named)
        for (name, _, identity), reveal in zip(named, reveals):
            history = self.histories.get(identity)
            if history is not None:
                table = find_table(name)
                history.append(copy.deepcopy(table.get_item(*history.key)), writer,
                               self.ready_times(table, reveal, now), self.stamp_of(name, history.key))
        written = [(identity, len(self.histories[identity].images) - 1) for _, _, identity in named
                   if identity in self.histories]
        answer = self.with_versions(answer, [(None, None, checked)], prior, written)
        if not transaction:
            return answer, None
        if batch:
            self.withhold(before)
        return self.begin_transaction([identity for _, _, identity in named], answer, now, batch, records,
                                      deferred, replicated)

    def begin_sampled_batch(self, named, before, writer, now, answer):
        """Sampled: each of a batch's puts and deletes takes effect at its own moment across the transaction window
        (`sweep` lands it), and the answer waits for the last; until then the leader holds the item as it was."""
        tracked = [(find_table(name), identity) for name, _, identity in named if identity in before]
        moments = self.reveal_times(len(tracked), now, self.transaction_window)
        landing = {identity: (copy.deepcopy(table.get_item(*self.histories[identity].key)), writer,
                              self.ready_times(table, moment, now))
                   for (table, identity), moment in zip(tracked, moments)}
        self.withhold(before)
        number = self.next_transaction
        self.next_transaction += 1
        until = max(moments, default=now)
        self.transactions[number] = {"items": list(landing), "until": until, "hidden": set(), "batch": True,
                                     "landing": landing}
        for identity in landing:
            self.batched[identity] = number
        return answer, until

    def land_due(self, transaction, now, every=False):
        """Sampled: the batch's puts and deletes whose moment has come (`every`: all of them, now at the latest) take
        effect, in the order of their moments, each copy taking them when it was to when the batch arrived."""
        due = sorted((ready[LEADER], identity) for identity, (_, _, ready) in transaction["landing"].items()
                     if every or ready[LEADER] <= now)
        for moment, identity in due:
            image, writer, ready = transaction["landing"].pop(identity)
            history = self.histories.get(identity)
            if history is not None:
                history.append(image, writer, {**ready, LEADER: min(moment, now)})
                store(find_table(history.table, history.where), history.key, image)

    def withhold(self, before):
        """A batch takes effect item by item: until each put or delete does, the leader holds the item as it was
        (`before`: item -> its image before the batch)."""
        for identity, image in before.items():
            history = self.histories[identity]
            store(find_table(history.table, history.where), history.key, image)

    def reveal_times(self, count, now, window):
        """When each of a transaction's items becomes visible: never (explored), or spread evenly across the window
        (transaction_window's, or an MRSC write's replication_lag) in a random order (sampled), the last at its end."""
        if self.exploring:
            return [NEVER] * count
        window = random.uniform(*window)
        times = [now + window * (place + 1) / count for place in range(count)]
        random.shuffle(times)
        return times

    def ready_times(self, table, reveal, now):
        """{copy: when it takes this write}: the leader at `reveal`, followers and index copies after their lag."""
        ready = {LEADER: reveal}
        for name in FOLLOWERS:
            ready[name] = self.later(self.stale_reads, reveal, now)
        for index in table.global_indexes:
            ready[f"index {index.name}"] = self.later(self.gsi_lag, reveal, now)
        return ready

    def later(self, lag, reveal, now):
        """When a trailing copy takes a write the leader shows from `reveal`: never while explored."""
        if self.exploring:
            return NEVER
        return max(reveal, now + random.uniform(*lag)) if lag else reveal

    def begin_transaction(self, identities, answer, now, batch=False, records=(), deferred=None, replicated=False):
        """Keep the transaction (or explored batch, or MRSC write: `replicated`) ongoing: a transaction's items are
        locked until it ends, a batch's only waiting to become visible, an MRSC write's replicating, in flight. Its
        stream records (explored) wait too: a batch's each for its item, a transaction's all for its end; and so do its
        writes to other Regions (`deferred`: sent when it ends)."""
        number = self.next_transaction
        self.next_transaction += 1
        until = NEVER if self.exploring else max(self.histories[identity].ready[-1][LEADER]
                                                         for identity in identities)
        self.transactions[number] = {"items": identities, "until": until, "hidden": set(range(len(identities))),
                                     "batch": batch, "records": list(records),
                                     "versions": [len(self.histories[identity].images) - 1 for identity in identities]}
        for identity in identities if not replicated else ():  # an MRSC write's Region applies the next on top
            (self.batched if batch else self.locked)[identity] = number
        if deferred:
            self.transactions[number]["replicated"] = deferred
        if replicated:
            self.in_flight.update((everywhere(identity), (here()[1], number)) for identity in identities)
        if self.exploring:
            status, out_headers, body = answer
            pending = [self.histories[identity].label for identity in identities]
            ongoing = {"id": number, "items": pending, **({"replicating": here()[1]} if replicated else {})}
            out_headers = {**out_headers, TRANSACTION_HEADER: json.dumps(ongoing)}
            return (status, out_headers, body), None
        return answer, until

    def reveal(self, number, place):
        """Explored: make item `place` of ongoing transaction `number` visible; the last one ends it."""
        transaction = self.transactions.get(number)
        if transaction is None or not 0 <= place < len(transaction["items"]):
            raise ChoiceError(f"No ongoing transaction {number} with an item {place}")
        identity = transaction["items"][place]
        history = self.histories[identity]
        version = transaction["versions"][place]
        if transaction["batch"]:
            self.land(history, version)
            enter_records(transaction, identity)
        else:
            history.ready[version][LEADER] = ALWAYS
        transaction["hidden"].discard(place)
        if not transaction["hidden"]:
            self.end_transaction(number)
        landed = self.version_entry(identity, len(history.images) - 1) if transaction["batch"] else None
        return {"ongoing": number in self.transactions, **({"landed": landed} if landed else {})}

    def land(self, history, version):
        """A batch's put or delete of one item takes effect now: on top of any write the item took meanwhile, as a
        version of its own (the one withheld is then never shown)."""
        table = find_table(history.table, history.where)
        image = history.images[version]
        if version == len(history.images) - 1:
            history.ready[version][LEADER] = ALWAYS
        else:
            history.append(copy.deepcopy(image), history.writers[version], self.ready_times(table, ALWAYS, 0),
                           history.stamps[version])
        store(table, history.key, image)

    def read(self, target, params, headers, reads, apply, now):
        """Answer a read from the copies its consistency allows: chosen (explored) or a random copy (sampled). An
        explored BatchGetItem read item by item answers its items read earlier as they were then."""
        token = headers.get(CHOICE_HEADER)
        read_before = self.batch_reads.pop(headers.get(BATCH_READ_HEADER), {})
        reads = unread(reads, read_before)
        versions = {}
        for table_name, copy_name, keys in reads:
            if self.exploring:
                copy_name = LEADER
            elif copy_name == "any":
                copy_name = random.choice((LEADER, *FOLLOWERS))
            for identity, history in self.histories_of(table_name, keys):
                versions[identity] = history.position(history.copy_for(copy_name), now)
        if token is None:
            return self.with_versions(self.answer_with(versions, apply, read_before), reads, versions)
        client = step_client(headers)
        chosen = self.parse_choice(target, reads, token, now, client)
        answer = self.answer_with({**versions, **chosen}, apply, read_before)
        self.take(chosen, reads, now)
        self.count_stale(client, reads, {**versions, **chosen}, now)
        return self.with_versions(answer, reads, {**versions, **chosen})

    def with_versions(self, answer, reads, versions, written=()):
        """Explored: `answer` with VERSIONS_HEADER saying the version of each item it read (`versions` for the items whose
        copies may disagree, the first for a named item nobody wrote since they last agreed) and wrote; else as it is."""
        status, out_headers, body = answer
        if not self.exploring or status != 200:
            return answer
        read = [self.version_entry(identity, versions.get(identity, 0)) for identity in
                dict.fromkeys([*versions, *(identity for _, _, keys in reads for identity in keys or ())])]
        wrote = [self.version_entry(identity, version) for identity, version in written]
        entries = {"reads": [entry for entry in read if entry], "writes": [entry for entry in wrote if entry]}
        self.last_versions = entries
        return status, {**out_headers, VERSIONS_HEADER: json.dumps(entries)}, body

    def version_entry(self, identity, version):
        """[item, its label, version, whether the item exists in that version] of an item read or written, or None for an
        item of no table; of a global table's item, as replication/versions.py numbers them across Regions."""
        history = self.histories.get(identity)
        if history is not None:
            stamp = history.stamps[version]
            entry = [identity, history.label, version, history.images[version] is not None]
        else:
            table_name, *_ = json.loads(identity)
            table = find_table(table_name)
            attributes = {name: value for name, value in zip(
                [name for name in (table.hash_key_attr, table.range_key_attr) if name], json.loads(identity)[1:-1])
                if value is not None} if table is not None else {}
            key = key_of(table, attributes) if table is not None else None
            if key is None:
                return None
            stamp = self.stamp_of(table_name, key)
            entry = [identity, key_label(table, key), 0, table.get_item(*key) is not None]
        return entry if stamp is None else self.global_versions.entry(identity, entry[1], stamp, entry[3])

    def stamp_of(self, name, key):
        """The timestamp of the write the request's Region's replica of global table `name` holds at `key` (the
        unwritten one for an item no replicated write touched), or None for a table of no global table."""
        return self.replicas.stamp_of(name, key) if self.replicas is not None else None

    def arrived(self, where, name, key, image, stamp):
        """Explored: a replicated write arrived in the replica of table `name` in `where` (account, Region) and is
        stored there: the item's history there, if it has one, takes it as its newest version, held by every copy at
        once (globaltables.py: the followers do not trail an arrival)."""
        for history in self.histories.values() if self.exploring else ():
            if history.table == name and history.where == tuple(where) and history.key == key:
                history.append(copy.deepcopy(image), "replicated write", {}, stamp)

    def read_item(self, params, headers):
        """Explored: read now the one item `params` (a BatchGetItem of one key) names, as one item of the BatchGetItem
        `headers` name: with the version chosen, kept for its answer; (the item as DynamoDB JSON (None: no item), [item,
        label, version, exists] of what it read; both None for a key DynamoDB refuses)."""
        now = time.monotonic()
        reads = read_views("BatchGetItem", params)
        client = step_client(headers)
        chosen = self.parse_choice("BatchGetItem", reads, headers.get(CHOICE_HEADER) or "{}", now, client)
        shown = {**{identity: history.position(LEADER, now) for table_name, _, keys in reads
                    for identity, history in self.histories_of(table_name, keys)}, **chosen}
        self.take(chosen, reads, now)
        self.count_stale(client, reads, shown, now)
        (table_name, attributes), = batch_keys(params)
        table, identity = find_table(table_name), item_id(table_name, attributes)
        key = key_of(table, attributes) if table is not None else None
        if key is None:
            return None, None  # a request DynamoDB refuses: the BatchGetItem itself gets the error
        image = self.histories[identity].images[shown[identity]] if identity in shown else table.get_item(*key)
        self.batch_reads.setdefault(headers.get(BATCH_READ_HEADER), {})[identity] = (table_name, key,
                                                                                       copy.deepcopy(image))
        return (image.to_json()["Attributes"] if image is not None else None,
                self.version_entry(identity, shown.get(identity, 0)))

    def count_stale(self, client, reads, shown, now):
        """Explored: note, per item read, whether `client`'s read showed it stale (`shown`: item -> version shown, for
        the items whose copies disagree); a read that showed the latest version ends a run of stale ones."""
        for table_name, _, keys in reads:
            named = keys if keys is not None else {item for who, item in self.stale_runs
                                                   if who == client and json.loads(item)[0] == table_name}
            for identity in named | {item for item in shown if keys is None or item in keys}:
                version = shown.get(identity)
                if version is not None and version < self.histories[identity].position(LEADER, now):
                    self.stale_runs[client, identity] = self.stale_runs.get((client, identity), 0) + 1
                else:
                    self.stale_runs.pop((client, identity), None)

    def histories_of(self, table_name, keys=None):
        """(item, history) of the items of a table whose copies may disagree (only those named by `keys`, if given)."""
        where = here()
        return [(identity, history) for identity, history in self.histories.items()
                if history.table == table_name and history.where == where and (keys is None or identity in keys)]

    def answer_with(self, versions, apply, images=None):
        """apply() with each item in `versions` shown at that version and each in `images` ({item: (table, key,
        image)}) as that image; moto's own items elsewhere."""
        changed = {}
        for identity, version in versions.items():
            history = self.histories[identity]
            if version != len(history.images) - 1:
                changed.setdefault(history.table, {})[history.key] = history.images[version]
        for table_name, key, image in (images or {}).values():
            changed.setdefault(table_name, {})[key] = image
        if not changed:
            return apply()
        tables = {name: find_table(name) for name in changed}
        kept = {name: table.items for name, table in tables.items()}
        try:
            for name, table in tables.items():
                table.items = as_of(table, changed[name])
            return apply()
        finally:
            for name, table in tables.items():
                table.items = kept[name]

    def allowed(self, identity, copy_name, now, client=None):
        """The versions `client`'s read of this item from `copy_name` ("any": an eventually consistent table read) may
        show, newest first: only the latest once STALE_READS of its reads of the item in a row were stale."""
        history = self.histories[identity]
        leader = history.position(LEADER, now)
        if copy_name == LEADER or self.stale_runs.get((client, identity), 0) >= STALE_READS:
            return [leader]
        oldest = (min(history.position(name, now) for name in FOLLOWERS) if copy_name == "any"
                  else history.position(copy_name, now))
        shown = [i for i in range(leader + 1) if history.ready[i].get(LEADER, ALWAYS) <= now]
        return [i for i in reversed(shown) if i >= oldest]

    def choices(self, target, params, apply, client=None, batch_read=None):
        """Explored: the distinct answers this read may get now, the latest first, each with the versions that give it
        and a label naming what is stale. The latest answer reads the newest versions, which moves no copy, even where
        an older version would give the same answer; among other equal answers, the oldest versions, which leave the
        copies the most freedom."""
        now = time.monotonic()
        reads = unread(read_views(target, params), self.batch_reads.get(batch_read, {}))
        options = self.options(reads, now, client)
        identities = list(options)
        combinations = list(itertools.product(*(options[identity] for identity in identities)))
        if len(combinations) > MAX_CHOICES:
            raise ChoiceError(f"This read could be answered {len(combinations):,} ways (more than {MAX_CHOICES}); "
                              "use fewer items or fewer writes per item in the scenario.")
        latest = {identity: history.position(LEADER, now) for table_name, _, keys in reads
                  for identity, history in self.histories_of(table_name, keys)}
        answers = {}
        for combination in combinations:  # the first is every item's newest version: the latest answer
            versions = dict(zip(identities, combination))
            body = self.answer_with({**latest, **versions}, apply)[2]
            kept = answers.get(body)
            if kept is None or (kept is not next(iter(answers.values())) and sum(combination) < sum(kept.values())):
                answers[body] = versions
        return [{"versions": versions, "label": self.label(versions, now)} for versions in answers.values()]

    def options(self, reads, now, client=None):
        """{item: versions `client`'s read may show} for the items whose copies disagree, in the tables read."""
        options = {}
        for table_name, copy_name, keys in reads:
            for identity, history in self.histories_of(table_name, keys):
                allowed = self.allowed(identity, history.copy_for(copy_name), now, client)
                if len(allowed) > 1:
                    options[identity] = allowed
        return options

    def label(self, versions, now):
        """'latest', or what the answer has not seen: "stale: {PK: 'seat#14C'} without alice's PutItem"."""
        stale = []
        for identity, version in versions.items():
            history = self.histories[identity]
            if version < history.position(LEADER, now):
                missed = next(i for i in range(version + 1, len(history.images))
                              if history.ready[i].get(LEADER, ALWAYS) <= now)
                client, _, operation = history.writers[missed].rpartition(": ")
                writer = f"{client}'s {operation}" if client else operation
                stale.append(f"{history.label} without {writer}")
        return "stale: " + "; ".join(stale) if stale else "latest"

    def parse_choice(self, target, reads, token, now, client=None):
        """The versions `client`'s read choice names, refused unless the model allows each now."""
        try:
            versions = {identity: int(version) for identity, version in json.loads(token).items()}
        except (ValueError, AttributeError, TypeError):
            raise ChoiceError(f"{CHOICE_HEADER} must be a JSON object of item -> version; got {token!r}") from None
        options = self.options(reads, now, client)
        for identity, version in versions.items():
            if version not in options.get(identity, ()):
                raise ChoiceError(f"Version {version} of {identity} is not one this {target} may read now")
        return versions

    def take(self, versions, reads, now):
        """The copies that answered: a follower (or the index copy) moves forward to each version shown."""
        index_copies = [copy_name for _, copy_name, _ in reads if copy_name.startswith("index ")]
        for identity, version in versions.items():
            history = self.histories[identity]
            if index_copies and history.copy_for(index_copies[0]) == index_copies[0]:
                history.ready[version][index_copies[0]] = ALWAYS
            elif version < history.position(LEADER, now):
                follower = max((name for name in FOLLOWERS if history.position(name, now) <= version),
                               key=lambda name: history.position(name, now))
                history.ready[version][follower] = ALWAYS


def read_views(target, params):
    """[(table, copy, items or None for all)] a read request reads: LEADER when strongly consistent, "any" for an
    eventually consistent table read, "index NAME" for a global secondary index; [] for any other request."""
    if target == "GetItem":
        name = params.get("TableName")
        return [(name, LEADER if params.get("ConsistentRead") else "any", {item_id(name, params.get("Key") or {})})]
    if target in ("Query", "Scan"):
        name, index = params.get("TableName"), params.get("IndexName")
        table = find_table(name) if index else None
        if table is not None and index in {gsi.name for gsi in table.global_indexes}:
            return [(name, f"index {index}", None)]
        return [(name, LEADER if params.get("ConsistentRead") else "any", None)]
    if target == "BatchGetItem":
        return [(name, LEADER if request.get("ConsistentRead") else "any",
                 {item_id(name, key) for key in request.get("Keys") or [] if isinstance(key, dict)})
                for name, request in (params.get("RequestItems") or {}).items() if isinstance(request, dict)]
    if target == "TransactGetItems":
        return [(detail.get("TableName"), LEADER, {item_id(detail.get("TableName"), detail.get("Key") or {})})
                for action in params.get("TransactItems", []) for detail in action.values() if isinstance(detail, dict)]
    return []


def unread(reads, read_before):
    """`reads` (read_views) without the items of a BatchGetItem read before, item by item."""
    if not read_before:
        return reads
    return [(name, copy_name, keys - set(read_before)) for name, copy_name, keys in reads]


def batch_keys(params):
    """[(table name, key)] a BatchGetItem names, in the order it names them (the places of its items)."""
    return [(name, key) for name, request in (params.get("RequestItems") or {}).items() if isinstance(request, dict)
            for key in request.get("Keys") or [] if isinstance(key, dict)]


def only_item(params, place):
    """A BatchGetItem's `params` reduced to the item at `place` (batch_keys' order)."""
    named = batch_keys(params)
    if not 0 <= place < len(named):
        raise ChoiceError(f"This BatchGetItem names {len(named)} keys; there is no item {place}")
    name, key = named[place]
    request = {field: value for field, value in params["RequestItems"][name].items() if field != "Keys"}
    return {**params, "RequestItems": {name: {**request, "Keys": [key]}}}


def step_client(headers):
    """The client an explored request is a step of ("alice" of "alice: GetItem"), or None for any other request."""
    step = headers.get(STEP_HEADER)
    return step.rpartition(": ")[0] if step else None


def written_keys(target, params):
    """(table name, attributes holding the key) of every item a write request names."""
    if target == "PutItem":
        return [(params.get("TableName"), params.get("Item") or {})]
    if target in ("UpdateItem", "DeleteItem"):
        return [(params.get("TableName"), params.get("Key") or {})]
    if target == "BatchWriteItem":
        return [(name, (request.get("PutRequest") or {}).get("Item") or (request.get("DeleteRequest") or {}).get("Key")
                 or {}) for name, requests in (params.get("RequestItems") or {}).items() for request in requests]
    if target == "TransactWriteItems":
        return [(detail.get("TableName"), detail.get("Item") or detail.get("Key") or {})
                for action in params.get("TransactItems", []) for kind, detail in action.items()
                if kind in ("Put", "Update", "Delete")]
    return []


def read_by_write(target, params):
    """(table name, key) of every item a write's conditions and updates read: an UpdateItem's (it changes the item as
    stored), a conditional PutItem's or DeleteItem's, and in a TransactWriteItems each such action's and each
    ConditionCheck's. A plain PutItem or DeleteItem, and BatchWriteItem's, read nothing."""
    if target == "UpdateItem" or target in ("PutItem", "DeleteItem") and (
            params.get("ConditionExpression") or params.get("Expected")):
        return written_keys(target, params)
    if target != "TransactWriteItems":
        return []
    return [(detail.get("TableName"), detail.get("Item") or detail.get("Key") or {})
            for action in params.get("TransactItems", []) for kind, detail in action.items() if isinstance(detail, dict)
            and (kind in ("ConditionCheck", "Update") or detail.get("ConditionExpression"))]


def checked_keys(target, params):
    """(table name, key) of every item a TransactWriteItems only checks (its ConditionCheck actions)."""
    if target != "TransactWriteItems":
        return []
    return [(detail.get("TableName"), detail.get("Key") or {}) for action in params.get("TransactItems", [])
            for kind, detail in action.items() if kind == "ConditionCheck" and isinstance(detail, dict)]


def error(code, message, status=400):
    """(status, headers, body) of a DynamoDB error response."""
    return respond(status, {"__type": f"com.amazonaws.dynamodb.v20120810#{code}", "message": message})


def respond(status, payload):
    """A JSON response with DynamoDB's body checksum, which botocore verifies."""
    body = json.dumps(payload).encode()
    return status, {"Content-Type": "application/x-amz-json-1.0", "x-amz-crc32": str(zlib.crc32(body))}, body


def enter_records(transaction, identity=None):
    """An explored transaction's or batch's stream records, kept as (item, stream, record), are on their way to their
    streams (streamlog.deliver): those of the item `identity`, or every one left."""
    kept = []
    for item, stream, record in transaction.get("records", ()):
        if identity is None or item == identity:
            streamlog.deliver(stream, record)
        else:
            kept.append((item, stream, record))
    transaction["records"] = kept


def item_id(table_name, attributes):
    """A stable name for the item with these key attributes in this table of the request's Region (its whole key, as
    sent, then the Region: the replicas of a global table hold an item of the same key each)."""
    table = find_table(table_name)
    names = [table.hash_key_attr, table.range_key_attr] if table is not None else []
    return json.dumps([table_name, *[attributes.get(name) for name in names if name], here()[1]], sort_keys=True)


def everywhere(identity):
    """An item's name (item_id) without its Region: the same item in every replica of a global table."""
    return json.dumps(json.loads(identity)[:-1], sort_keys=True)



def key_label(table, key):
    """"{PK: 'seat#14C'}", as the transcript writes a key."""
    names = [table.hash_key_attr] + ([table.range_key_attr] if table.has_range_key else [])
    parts = [f"{name}: {value.value!r}" if value.type == "S" else f"{name}: {value.value}"
             for name, value in zip(names, key) if value is not None]
    return "{" + ", ".join(parts) + "}"


def store(table, key, image):
    """Hold `image` (None: no item) under `key` in the table itself, as the leader's item."""
    table.items = as_of(table, {key: image})


def as_of(table, images):
    """A copy of table.items in which each key in `images` holds that image (None: no item)."""
    view = defaultdict(dict, table.items)
    for (hash_key, range_key), image in images.items():
        if table.has_range_key:
            items = dict(view.get(hash_key, {}))
            if image is None:
                items.pop(range_key, None)
            else:
                items[range_key] = image
            view[hash_key] = items
        elif image is None:
            view.pop(hash_key, None)
        else:
            view[hash_key] = image
    return view


def key_of(table, attributes):
    """(hash, range) as moto keys its items, or None when the attributes lack part of the key or hold one that is not
    a string, number or binary (a request DynamoDB refuses; moto answers its ValidationException)."""
    try:
        values = [attributes[table.hash_key_attr]] + ([attributes[table.range_key_attr]] if table.has_range_key else [])
    except (KeyError, TypeError, AttributeError, IndexError):
        return None
    if not all(isinstance(value, dict) and len(value) == 1 and next(iter(value)) in KEY_TYPES for value in values):
        return None
    keys = [DynamoType(value) for value in values]
    return keys[0], keys[1] if table.has_range_key else None
