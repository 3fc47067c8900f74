"""One order in progress (Run): each client running on its thread, held at a request, or done; where a request is held
(hold) and where its answer is read (answered). The moves it makes, offers and weighs are its mixins' (making.py,
offers.py, footprints.py)."""
import threading
import time
import uuid

from .errors import Crashed, ExplorationError, Stopped
from .footprints import Footprints
from .hold import CURRENT
from .making import Making
from .offers import Offers
from .settings import CLIENT_TIMEOUT, SLICE, STOP_WITHIN
from .steps import Request, Reveal, reply_summary


class Run(Making, Offers, Footprints):
    """One schedule in progress: each client running on its thread, held at a request, or done."""

    def __init__(self, clients, timeout=CLIENT_TIMEOUT, server=None, faults=(), metered=False, keys=None,
                 watch_streams=True):
        self.clients = clients
        self.watch_streams = watch_streams  # False: records on their way to a stream enter it at once, as no move
        self.keys = keys  # reduction.Keys: the items each move touches, for the explorer's reduction
        self.blocked = False  # every possible move slept: the run repeated a behaviour already run
        self.prints = []  # the footprint of each move taken
        self.order = uuid.uuid4().hex if metered else None
        self.cost = (0.0, 0.0) if metered else None  # (write units, of which on refused writes) of the steps so far
        self.timeout = timeout
        self.server = server
        self.modelled = server is not None
        self.faults = list(faults)
        self.changed = threading.Condition()
        self.running = set(clients)
        self.since = {name: time.monotonic() for name in clients}
        self.held = {}
        self.results = {}
        self.steps = []
        self.taken = []
        self.stopped = False
        self.exited = 0
        self.go = {name: threading.Event() for name in clients}
        self.strays = []  # operations sent meanwhile from a thread no client runs on (note_stray)
        self.problem = None  # an ExplorationError a client met (choice_point), raised by the explorer once it ran
        self.arrivals = []  # what may arrive now, as the lab server last said (Arrival)
        self.polls = {}  # (client, stream) -> its reads of the stream since a record last entered it
        self.delivered = 0  # stream records that entered their streams as no move (deliver_unwatched)
        self.walk = None  # the explorer's Walk when the clients' threads make its moves (play)
        self.workers, self.unstarted = None, []  # play's: the clients not started yet, started one after the other
        self.ended = threading.Event()  # set by the thread that played the last move, or met a failure
        self.failure = None  # what the explorer's moves raised on a client's thread, raised again by play()

    def start(self, workers):
        """Start every client on its worker thread and wait until each is held at its first request or done."""
        workers.begin(self)
        self.settle()

    def play(self, workers, walk):
        """Start the clients on their worker threads, one after the other, and let `walk` make the moves until the
        order ends: each thread, once its client holds a request or has finished, starts the next client, or, when
        all have started, makes the moves itself (the baton passes from client to client: a client released next goes
        on without a wake-up, another is woken by the one before it, and this thread only once the order ends)."""
        self.walk, self.workers = walk, workers
        first, *self.unstarted = self.clients
        workers.start(self, first)
        while not self.ended.wait(SLICE):
            with self.changed:
                self.check_late()
        if self.failure is not None:
            raise self.failure

    def take_turn(self, name):
        """On `name`'s thread, once it holds a request or has finished and no other client runs: start the next client,
        or make the explorer's moves (drive). True when `name` itself goes on."""
        if not self.unstarted:
            return self.drive(name)
        starting = self.unstarted.pop(0)
        with self.changed:
            self.since[starting] = time.monotonic()
        self.workers.start(self, starting)
        return False

    def drive(self, name):
        """On `name`'s thread, once no client runs: the explorer's next moves; wake the client they let run, or tell
        play() that the order has ended. True when `name` itself goes on."""
        saved, CURRENT.run, CURRENT.driving = getattr(CURRENT, "run", None), None, True  # its requests are no step
        try:
            going = self.walk.next()
        except BaseException as error:
            self.failure, going = error, None
        finally:
            CURRENT.run, CURRENT.driving = saved, False
        if going is None:
            self.ended.set()
        elif going != name:
            self.go[going].set()
        return going == name

    def serve(self, name):
        """On the client's thread: run the client function, keep what it returned or raised."""
        CURRENT.run, CURRENT.name = self, name
        try:
            result = self.clients[name]()
        except Stopped:
            result = None
        except Crashed as crash:
            result = crash
        except Exception as error:  # the client's exception is its result, for check() to judge
            result = error
        finally:
            CURRENT.run = None
        with self.changed:
            if not self.stopped:
                self.results[name] = result
            self.running.discard(name)
            self.exited += 1
            self.changed.notify_all()
            turn = self.walk is not None and self.running == set(self.unstarted) and not self.stopped
        if turn:
            self.take_turn(name)

    def hold(self, name, request):
        """Called on the client's thread before each HTTP attempt: wait until the explorer releases it (when no other
        client runs, make the explorer's moves first: play)."""
        go = self.go[name]
        with self.changed:
            if self.stopped:
                raise Stopped
            go.clear()
            self.held[name] = request
            self.running.discard(name)
            self.changed.notify_all()
            turn = self.walk is not None and self.running == set(self.unstarted)
        if turn and self.take_turn(name):
            return
        go.wait()
        if self.stopped:
            raise Stopped

    def hold_transaction(self, name, transaction):
        """On the client's thread, after its TransactWriteItems was applied: wait until every item is visible."""
        request = next(request for request in reversed(self.steps) if request.client == name)
        self.hold(name, Reveal(name, request, transaction))

    def answered(self, name, answer, parsed):
        """Note the answer to `name`'s latest released request (its error code or "OK"), and what it said."""
        request = next(request for request in reversed(self.steps)
                       if request.client == name and isinstance(request, Request))
        request.answer, request.reply = answer, reply_summary(request.operation, answer, parsed)
        return request

    def settle(self):
        """Wait until no client is running; name any that neither sends a request nor finishes in time."""
        with self.changed:
            while self.running:
                self.check_late()
                self.changed.wait(SLICE)

    def check_late(self):
        """Raise an ExplorationError naming a running client that has neither sent a request nor finished in time
        (self.changed held)."""
        late = [name for name in self.clients
                if name in self.running and time.monotonic() - self.since[name] > self.timeout]
        if late:
            raise ExplorationError(
                f"Client {late[0]!r} neither sent a DynamoDB request nor finished within {self.timeout:g} s. "
                "Between two requests a client must not wait for another client (they run one at a "
                "time here); make it send its requests through the lab's client or return.")


    def stop(self):
        """Release every thread (each held request raises Stopped) and wait up to a second for them."""
        with self.changed:
            self.stopped = True
        for go in self.go.values():
            go.set()
        deadline = time.monotonic() + STOP_WITHIN
        with self.changed:
            while self.exited < len(self.clients) and time.monotonic() < deadline:
                self.changed.wait(max(deadline - time.monotonic(), 0))
