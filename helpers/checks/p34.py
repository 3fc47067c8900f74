"""Checkers for notebook 34 (global tables), and the global tables the notebook and the checkers make.

A global table here is made through DynamoDB's own API on the embedded lab server
(helpers/labserver/replication/globaltables.py): MREC in us-east-1 and eu-west-1, MRSC in us-east-1 and us-west-2 with
a witness in us-east-2. DynamoDB Local has no global tables, so the checkers need the lab server.
"""
from .. import explore
from ..lab import tables
from ..lab.backend import connect
from ..lab.trace import tracing
from . import Report, exhaustive, require_names

BOOKINGS, STRONG_BOOKINGS = "p34-bookings", "p34-strong-bookings"
SEAT = "SEAT#12A"
HOMES = {"SEAT#12A": "eu-west-1", "FLIGHT#1": "eu-west-1"}  # each seat's home Region: its writes go there
MADE = set()  # the checkers' global tables that exist now: each is made again after it was dissolved
NEEDS = ("global tables need the embedded lab server: DynamoDB Local has none, and on real AWS they take replicas in "
         "other Regions, which the explorer cannot time")
SETUP = f"{SEAT} as the checker made it before the race: {{PK: '{SEAT}', version: 1}}, with no holder"
MRSC_REFUSES = {"ValidationException": "an MRSC global table refuses transactions (TransactWriteItems, "
                "TransactGetItems): book with one conditional PutItem or UpdateItem, which is checked against the "
                "latest version in every Region"}
HIDDEN = (". Why: an error other than the refusal (DynamoDB refusing the request itself: an MRSC table refuses "
              "transactions) was turned into the answer False. Catch only ConditionalCheckFailedException")
HIDDEN = ("with {table} deleted, {exercise} returned {answer!r} instead of raising ResourceNotFoundException: it hides "
          "errors that are not refusals (a Region without the table, throttling, a network error would each read as "
          "'someone holds the seat'). Catch only ConditionalCheckFailedException and let every other error raise")


def home_region(seat):
    """The Region where every write of `seat` is made: its home."""
    return HOMES[seat]


def regional_clients(regions, lab=None):
    """{Region: the lab's client signed for it}."""
    lab = lab or connect(quiet=True)
    return {region: lab.client_in(region) for region in regions}


def dissolve(name, lab=None):
    """Delete the global table `name` in every Region the checkers use."""
    MADE.discard(name)
    tables.dissolve(name, regional_clients(tables.REPLICA_REGIONS, lab).values())


def mrec_table(name, lab=None):
    """The lab's table `name` made again as an MREC global table in us-east-1 and eu-west-1; {Region: client}."""
    MADE.add(name)
    return tables.global_table(name, "EVENTUAL", lab)


def mrsc_table(name, lab=None):
    """The lab's table `name` made again as an MRSC global table: replicas in us-east-1 and us-west-2, a witness in
    us-east-2; {Region: client} of its two replicas."""
    MADE.add(name)
    return tables.global_table(name, "STRONG", lab)


def holders(clients, name):
    """{Region: who holds SEAT there, read strongly consistently (None: nobody)}."""
    return {region: client.get_item(TableName=name, Key={"PK": SEAT}, ConsistentRead=True).get("Item", {}).get("holder")
            for region, client in clients.items()}


def booking_problem(clients, name, log):
    """What is wrong after alice and bob both tried to book SEAT, in words, or None: exactly one of them must be told
    True, and every Region must hold that one's booking."""
    who = ("alice", "bob")
    for person, error in zip(who, log["error"]):
        if error:
            return f"{person}'s call raised {error}"
    answers = list(log["result"])
    if any(answer not in (True, False) for answer in answers):
        return f"the calls returned {answers[0]!r} and {answers[1]!r}, not True or False"
    told = [person for person, answer in zip(who, answers) if answer]
    held = holders(clients, name)
    if len(told) == 2:
        kept = ", ".join(f"{region} {holder}" for region, holder in held.items())
        return f"alice and bob were both told they booked {SEAT}, and the Regions hold {kept}: a booking was lost"
    if not told:
        nobody = "" if any(held.values()) else ", and nobody holds it"
        return f"neither alice nor bob was told they booked {SEAT}{nobody}"
    wrong = {region: holder for region, holder in held.items() if holder != told[0]}
    if wrong:
        return f"only {told[0]} was told they booked {SEAT}, but {wrong} holds otherwise"
    return None


def checkable(exercise, book):
    """Refuse what cannot be checked before anything runs, and record nothing: not a function, or a function reading a
    name this kernel has not defined (a cell run before Setup)."""
    if not callable(book):
        raise TypeError(f"Pass your function itself (e.g. {exercise}), not {book!r}.")
    require_names(book)


def explored_booking(exercise, book, clients, name, setup, calls):
    """Explore alice's and bob's calls `calls(clients)` of book in every order, from setup(); then alice's call once
    with the table deleted, which must raise; a Report (a failing order's Why told from what happened in it)."""
    try:
        report, held = exhaustive(exercise, book, setup, calls, lambda state, log: booking_problem(clients, name, log),
                                  telling={"setup": SETUP, "meanings": MRSC_REFUSES})
    finally:
        with tracing(False):
            dissolve(name)
    if report:
        report.scenario.outcome = told
        return report
    hidden = hidden_error(exercise, book, name, calls(clients)[0])
    if hidden:
        return Report(exercise, False, hidden, 1, None)
    regions = " and ".join(f"{person} ({region})" for person, region in zip(("alice", "bob"), clients))
    return Report(exercise, True, f"exactly one of {regions} booked {SEAT}, and every Region holds that booking{held}; "
                                  f"with {name} deleted, its error came out", 2, None)


def told(results):
    """What each of alice and bob was told, in words, for report.figure(): True is "booked", False "told it is
    taken"."""
    words = {True: "booked", False: "told it is taken"}
    return ", ".join(f"{name} {words[result]}" if isinstance(result, bool) else f"{name} got {explore.describe(result)}"
                     for name, result in results.items())


def hidden_error(exercise, book, name, arguments):
    """Call book(*arguments) once with the table `name` deleted in every Region; the message if it returned instead of
    raising, else None."""
    try:
        with tracing(False):
            answer = book(*arguments)
    except Exception:  # any error that comes out is what we want: it was not hidden
        return None
    return HIDDEN.format(table=name, exercise=exercise, answer=answer)


def unavailable(exercise):
    """The Report of a checker on a backend without global tables."""
    return Report(exercise, False, f"not run: {NEEDS}", 0, None)


def check_book_seat(book_seat):
    """Explore book_seat(clients, here, seat, holder) on a two-Region MREC table: alice calls it in us-east-1 and bob
    in eu-west-1 for the same free seat, in every order their requests and the replicated writes' arrivals can take;
    exactly one must be told True, and every Region must end holding that one's booking."""
    checkable("book_seat", book_seat)
    lab = connect(quiet=True)
    if lab.kind != "embedded":
        return unavailable("book_seat")
    clients = mrec_table(BOOKINGS, lab)

    def setup():
        """The free seat in both Regions (the table made again if a check dissolved it)."""
        if BOOKINGS not in MADE:
            mrec_table(BOOKINGS, lab)
        for client in clients.values():
            client.put_item(TableName=BOOKINGS, Item={"PK": SEAT, "version": 1})
        return clients

    def calls(state):
        """alice books SEAT in us-east-1, bob in eu-west-1."""
        return [(state, region, SEAT, person) for region, person in zip(state, ("alice", "bob"))]

    return explored_booking("book_seat", book_seat, clients, BOOKINGS, setup, calls)


def check_book_strong(book_strong):
    """Explore book_strong(client, seat, holder) on an MRSC table: alice calls it with her us-east-1 client and bob with
    his us-west-2 client for the same free seat, in every order, with every write in flight until it is replicated;
    exactly one must be told True, and both Regions must hold that one's booking."""
    checkable("book_strong", book_strong)
    lab = connect(quiet=True)
    if lab.kind != "embedded":
        return unavailable("book_strong")
    clients = mrsc_table(STRONG_BOOKINGS, lab)

    def setup():
        """The free seat (the table made again if a check dissolved it)."""
        if STRONG_BOOKINGS not in MADE:
            mrsc_table(STRONG_BOOKINGS, lab)
        clients["us-east-1"].put_item(TableName=STRONG_BOOKINGS, Item={"PK": SEAT, "version": 1})
        return clients

    def calls(state):
        """alice books SEAT with her us-east-1 client, bob with his us-west-2 client."""
        return [(client, SEAT, person) for client, person in zip(state.values(), ("alice", "bob"))]

    return explored_booking("book_strong", book_strong, clients, STRONG_BOOKINGS, setup, calls)

