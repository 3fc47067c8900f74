"""Making a move in a Run: release a held request with the answer or fault chosen, read an item of a BatchGetItem,
make an item of a transaction visible, give a choice its option, let a stream record or a replicated write arrive."""
import time

from .footprints import touches
from .moves import FAULT_MOVES, batch_item, parse_move
from .reduction import STREAM_RECORDS
from .steps import Arrival, ItemRead, Reveal


class Making:
    """Making moves: the part of a Run that changes what is held, visible or arrived."""

    def release(self, move, footprint=None):
        """Make one move (moves.py names them), then wait for every client to settle again; return the step."""
        step, going = self.make(move, footprint)
        if going is not None:
            self.go[going].set()
            self.settle()
        self.settled(step)
        return step

    def settled(self, step):
        """Once every client has settled after `step`: a write whose response was lost has put its records (stream
        records, replicated writes) on their way, and what it read and wrote is asked of the lab server."""
        if getattr(step, "fault", None) == "lost" and self.modelled:
            answer = self.server.post({})
            self.arrivals, step.versions = answer["arrivals"], answer["versions"]

    def make(self, move, footprint=None):
        """Make one move; return (the step, the client it lets run or None). The client is marked running, not woken."""
        name, kind, place = parse_move(move)
        item = batch_item(move)
        held = self.held.get(name)
        self.taken.append(move)
        if kind == "#":
            return self.arrive(move), None
        if kind == "?":
            return self.pick(name, place)
        if isinstance(held, Reveal) and kind == "+":
            return self.reveal(held, place)
        choices = held.choices if item is None else held.item_choices[item]
        choice = choices[place if kind == "~" else 0] if choices else None
        if item is not None and len(held.unread) > 1:
            return self.read_item(held, item, choice), None
        self.count_waits(name, footprint or self.footprint(move))
        with self.changed:
            request = self.held.pop(name)
            request.choice = choice
            if item is not None:
                request.read_last, request.unread = item, []
            if kind == "!":
                request.fault = place
                self.faults.remove(next(fault for fault, word in FAULT_MOVES.items() if word == place))
            self.running.add(name)
            self.since[name] = time.monotonic()
            self.steps.append(request)
        return request, name

    def count_waits(self, name, footprint):
        """Count a request of `name` towards the window of each ongoing transaction naming one of its items, and
        towards its reads of each stream it reads (reduction.py says why only those)."""
        for other in self.held.values():
            if isinstance(other, Reveal) and touches(footprint, self.keys.written(
                    other.request.operation, other.request.body, other.request.region)):
                other.others[name] = other.others.get(name, 0) + 1
        for kind, table in footprint.items:
            if kind == STREAM_RECORDS:
                self.polls[name, table] = self.polls.get((name, table), 0) + 1

    def read_item(self, held, place, choice):
        """Read one item of a held BatchGetItem now, with the answer chosen; the request stays held."""
        step = ItemRead(held, place, choice, *self.server.read_item(held, place, choice["versions"]))
        held.unread.remove(place)
        self.steps.append(step)
        return step

    def reveal(self, held, place):
        """Make one item of an ongoing transaction visible; after the last, let its client go on (step, client)."""
        step = Reveal(held.client, held.request, {"id": held.number, "items": held.items,
                                                  "replicating": held.replicating})
        step.place = place
        held.hidden.remove(place)
        self.steps.append(step)
        answer = self.server.post({"reveal": [held.number, place]})
        self.arrivals, step.landed = answer["arrivals"], answer.get("landed")
        if held.hidden:
            return step, None
        with self.changed:
            del self.held[held.client]
            self.running.add(held.client)
            self.since[held.client] = time.monotonic()
        return step, held.client

    def pick(self, name, place):
        """Give `name`'s held choice its option `place`; let it go on (step, client)."""
        with self.changed:
            held = self.held.pop(name)
            held.chosen = place
            self.running.add(name)
            self.since[name] = time.monotonic()
            self.steps.append(held)
        return held, name

    def event(self, move):
        """The lab server's event a move such as "stream#1" makes arrive."""
        return next(event for event in self.arrivals if Arrival(event).move == move)

    def arrive(self, move):
        """Make the event `move` names arrive now (a stream record enters its stream, a replicated write its Region)."""
        step = Arrival(self.event(move))
        self.steps.append(step)
        for kind, table in step.event["touches"]:
            if kind == STREAM_RECORDS:
                self.polls = {key: count for key, count in self.polls.items() if key[1] != table}
        self.arrivals = self.server.post({"arrive": {"by": step.client, "id": step.event["id"]}})["arrivals"]
        return step


    def deliver_unwatched(self):
        """Unless streams are watched, every stream record on its way enters its stream now, in the order the lab server
        offers them, as no move (moves.py: nobody reads those streams, so their order is never seen)."""
        while not self.watch_streams and self.modelled:
            waiting = [event for event in self.arrivals if event["by"] == "stream"]
            if not waiting:
                return
            self.arrivals = self.server.post({"arrive": {"by": "stream", "id": waiting[0]["id"]}})["arrivals"]
            self.delivered += 1
