"""The moves a Run offers now: what may arrive, then each held client's, within the bounds (WINDOW) on requests that
meet an ongoing transaction and on reads of a stream whose records are on their way."""


from .footprints import touches
from .moves import batch_item, parse_move
from .reduction import STREAM_RECORDS, Footprint
from .settings import READS, STREAM_READS, WINDOW, WRITES
from .steps import Arrival, Choice, Request, Reveal


class Offers:
    """The moves possible now: the part of a Run the search asks."""

    @property
    def enabled(self):
        """The clients holding a request, in the order the scenario names them."""
        return [name for name in self.clients if name in self.held]



    @property
    def pending(self):
        """True while a client holds a request or something is on its way: the order goes on."""
        return bool(self.held or self.arrivals)

    def moves(self, answers=True):
        """Every move possible now: what may arrive (Arrival), then the clients' moves in the scenario's order of
        clients; with answers=False a read's other answers are left out (ask `answers(name)` once that client is
        chosen). A client that has sent WINDOW requests naming an ongoing transaction's items waits until it has
        ended; one that has read a stream WINDOW times while records are on their way to it, until one enters."""
        ongoing = [held for held in self.held.values() if isinstance(held, Reveal)]
        moves = [Arrival(event).move for event in self.arrivals]
        for name in [name for name in self.enabled if not any(held.others.get(name, 0) >= WINDOW for held in ongoing)
                     and not self.polled_out(name) and not self.queued(name, ongoing)]:
            held = self.held[name]
            if isinstance(held, Reveal):
                moves += held.moves()
            elif isinstance(held, Choice):
                moves += held.moves() if answers else [name]
            elif held.unread:
                for move in (f"{name}@{place}" for place in held.unread):
                    moves += self.answers(move) if answers else [move]
            else:
                if answers and self.reads(held):
                    held.choices = self.choices(held)
                moves += held.moves(self.faults)
        return moves

    def queued(self, name, ongoing):
        """True when `name` holds a write to an item an MRSC write made in the same Region is still replicating: it
        waits until that one is acknowledged (only a write from another Region meets ReplicatedWriteConflict)."""
        held = self.held[name]
        if not isinstance(held, Request) or held.operation not in WRITES:
            return False
        items = self.keys.named(held.operation, held.body, held.region)
        return any(other.replicating == held.region and touches(Footprint(name, frozenset(items), True),
                                                                 self.keys.written(other.request.operation,
                                                                                   other.request.body,
                                                                                   other.request.region))
                   for other in ongoing if other.replicating)

    def polled_out(self, name):
        """True when `name` holds a read of a stream it has read WINDOW times since a record last entered it, while
        records are on their way to it: the read waits until one enters."""
        held = self.held[name]
        if not self.arrivals or not isinstance(held, Request) or held.operation not in STREAM_READS:
            return False
        waiting = {table for event in self.arrivals for kind, table in event["touches"] if kind == STREAM_RECORDS}
        return any(kind == STREAM_RECORDS and self.polls.get((name, table), 0) >= WINDOW and table in waiting
                   for kind, table in self.footprint(name).items)

    def reads(self, held):
        """True when a held request is a read whose answer the model may choose."""
        return self.modelled and isinstance(held, Request) and held.operation in READS

    def answers(self, move):
        """The moves making move `move` ("alice", or "alice@1" for an item of her BatchGetItem): one per answer the
        model allows the read now."""
        name, item = parse_move(move)[0], batch_item(move)
        held = self.held[name]
        if isinstance(held, Choice):
            return held.moves()
        if not self.reads(held):
            return [name]
        if item is not None:
            held.item_choices[item] = self.choices(held, item)
            return [move] + [f"{move}~{place}" for place in range(1, len(held.item_choices[item]))]
        held.choices = self.choices(held)
        return held.moves()

    def choices(self, held, item=None):
        """The answers the model allows the held read (or the item at place `item` of its BatchGetItem) now, asked of
        the lab server once between two moves: nothing else changes what a read may be answered (but a stream record
        entering its stream unwatched, counted apart)."""
        moment = (len(self.taken), self.delivered)
        asked = held.asked.get(item)
        if asked is None or asked[0] != moment:
            asked = held.asked[item] = (moment, self.server.choices(held, item))
        return asked[1]
