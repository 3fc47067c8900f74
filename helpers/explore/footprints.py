"""What a move touches (reduction.Footprint), for the reduction: the items it reads or writes, whether it may read
stale, meets transactions or locks its items."""


from .moves import batch_item, parse_move
from .reduction import EVERYTHING, Footprint, overlap
from .settings import READS, SINGLE_ITEM_WRITES, STREAM_READS
from .steps import Choice, Reveal


class Footprints:
    """What each move touches: the part of a Run the reduction asks."""

    def footprint(self, move, every_answer=False):
        """What move `move` touches (reduction.Footprint); every_answer: whichever answer its read gets."""
        name, kind, place = parse_move(move)
        if kind == "#":
            return Footprint(move, frozenset(tuple(touched) for touched in self.event(move)["touches"]), True)
        held, item = self.held[name], batch_item(move)
        if isinstance(held, Choice):
            return Footprint(name, frozenset(), False)
        if isinstance(held, Reveal):
            written = self.keys.written(held.request.operation, held.request.body, held.request.region)
            last = (held.request.operation == "TransactWriteItems" or held.replicating) and held.hidden == [place]
            return Footprint(name, frozenset([written[place]]), True, frees=frozenset(written) if last else frozenset())
        stale = kind == "~" or (every_answer and self.modelled)
        if item is not None:
            return Footprint(name, frozenset([self.keys.named(held.operation, held.body, held.region)[item]]), False,
                             stale)
        items = frozenset(self.keys.named(held.operation, held.body, held.region))
        if held.operation in STREAM_READS:  # off the model, a write's record enters at once: the read meets every write
            return Footprint(name, items if self.modelled else frozenset([EVERYTHING]), False)
        blind = held.operation not in READS and bool(items & self.locked())
        if held.operation == "TransactGetItems":
            return Footprint(name, items, False, meets_transactions=True, blind=blind)
        if held.operation in READS:
            return Footprint(name, items, False, stale or (self.modelled and "IndexName" in held.body))
        locks = self.modelled and (held.operation == "TransactWriteItems" or held.operation in SINGLE_ITEM_WRITES
                                   and place != "lost" and self.keys.synchronous(held.body.get("TableName")))
        items |= frozenset(self.keys.stamped(held.operation, held.body))
        return Footprint(name, items, not blind, fault=place if kind == "!" else "", meets_transactions=True,
                         blind=blind, locks=not blind and locks)

    def locked(self):
        """The items of every transaction still ongoing (a request naming one meets TransactionConflict), and of every
        MRSC write still replicating (a write from another Region meets ReplicatedWriteConflict)."""
        return {item for held in self.held.values() if isinstance(held, Reveal)
                and (held.request.operation == "TransactWriteItems" or held.replicating)
                for item in self.keys.written(held.request.operation, held.request.body, held.request.region)}


def touches(footprint, items):
    """True when a move with this footprint names one of `items` ((table, key) pairs)."""
    return any(overlap(one, other) for one in footprint.items for other in items)
