"""Checkers for notebook 27 (idempotency keys)."""
import itertools
import threading
import uuid
from contextlib import nullcontext
from dataclasses import dataclass, field

from boto3.dynamodb.conditions import Attr, Key

from ..lab.backend import connect
from ..lab.knobs import knobs, set_knobs
from ..lab.tables import fresh_table
from ..lab.trace import plain
from . import TRIES, attack, run_at_once

TABLE = "p27-idempotency-keys"
AMOUNT = 50
# The transfer exercise's kinds of request, each on accounts of its own: (amount, requests, what the source opens
# with). "spare": the source can pay twice, so a transfer applied twice shows; "exact": the transfer leaves exactly 0;
# "pair": two requests with different ids and the same source, target and amount; "short": the source lacks 1.
KINDS = {"spare": (30, 1, lambda amount: 3 * amount + 10), "exact": (45, 1, lambda amount: amount),
         "pair": (40, 2, lambda amount: 2 * amount), "short": (25, 1, lambda amount: amount - 1)}
CYCLES = 5  # 5 cycles of the 4 kinds, every request sent twice: 50 calls


class Card:
    """A fake payment provider that counts its charges (safe to call from many threads)."""

    def __init__(self):
        self.charges = []
        self.lock = threading.Lock()

    def __call__(self, amount):
        with self.lock:
            self.charges.append(amount)
            return {"chargeId": f"ch_{len(self.charges)}", "amount": amount}


def first_error(log):
    """The first error a run raised, or None."""
    errors = log["error"].dropna()
    return errors.iloc[0] if len(errors) else None


def account_key(name):
    """The key of account `name` in the transfer exercise."""
    return {"PK": f"ACCOUNT#{name}", "SK": "BALANCE"}


@dataclass
class Group:
    """Requests of one kind on two accounts of their own: each request moves `amount` from source to target."""

    source: str
    target: str
    amount: int
    opening: int
    target_opening: int
    request_ids: list = field(default_factory=list)


class Bank:
    """The transfer exercise's state: a fresh table holding the accounts of its groups of requests."""

    def __init__(self, groups):
        self.table = fresh_table(TABLE)
        self.groups = groups
        with self.table.batch_writer() as batch:
            for group in groups:
                batch.put_item(Item={**account_key(group.source), "balance": group.opening})
                batch.put_item(Item={**account_key(group.target), "balance": group.target_opening})

    def balances(self):
        """Every account's balance, read consistently."""
        items = self.table.scan(FilterExpression=Attr("SK").eq("BALANCE"), ConsistentRead=True)["Items"]
        return {item["PK"].removeprefix("ACCOUNT#"): int(item["balance"]) for item in items}


def fresh_bank():
    """CYCLES cycles of the four kinds, each group on its own two accounts, every request id a new UUID (a token
    is remembered for 10 minutes, so no run may reuse one)."""
    groups = []
    for cycle, (amount, requests, opening) in itertools.product(range(CYCLES), KINDS.values()):
        place, amount = len(groups), amount + 5 * cycle
        groups.append(Group(f"acct-{2 * place}", f"acct-{2 * place + 1}", amount, opening(amount), 10 + place,
                            [str(uuid.uuid4()) for _ in range(requests)]))
    return Bank(groups)


def transfer_calls(bank, n):
    """n calls, every request sent twice, group after group: spare, exact, pair, short, spare, ..."""
    calls = [(bank.table, request_id, group.source, group.target, group.amount)
             for group in bank.groups for request_id in group.request_ids for _ in range(2)]
    return calls[:n]


def one_transfer_twice(bank):
    """One transfer of 30 from acct-0 (holding 100) to acct-1, sent twice: the client retried it."""
    return transfer_calls(bank, 2)


def check_transfer(transfer):
    """Attack transfer(table, request_id, source, target, amount): a request and the client's retry of it in every
    order, each transaction's items becoming visible one at a time as on DynamoDB (so a copy that meets the other's
    ongoing transaction is cancelled for a TransactionConflict), then many requests, each sent twice, at once, on a
    server as weak as DynamoDB; on the lab server, the two in every order again with any response lost (the SDK
    resends it). Each request takes effect once, if its source can pay, and every copy of it is answered alike: True
    or False."""
    def invariant(bank, log):
        """None, or what the calls broke: raised, refused everything, moved money wrongly, or answered wrongly."""
        error = first_error(log)
        if error:
            return f"transfer raised {error.rstrip('.')}{error_cause(error)}"
        balances = bank.balances()
        groups = [group for group in bank.groups if group.request_ids[0] in {args[1] for args in log["args"]}]
        payable = [group for group in groups if funded(group, log)]
        if payable and all(result is False for result in log["result"]) and balances == opening_balances(bank):
            group = payable[0]
            return (f"every call was answered False and nothing moved, though {group.source} holds {group.opening}, "
                    f"enough for a transfer of {group.amount}: refusing every transfer is safe but does nothing; a "
                    "transfer its source can pay must go through")
        for group in groups:
            problem = money_problem(group, log, balances) or answer_problem(group, log)
            if problem:
                return problem
        return None

    losing = connect(quiet=True).kind == "embedded"  # only the lab server can lose a response
    return attack("transfer", transfer, fresh_bank, transfer_calls, invariant, orders_of=one_transfer_twice,
                  faults=("lost_response",) if losing else ())


def opening_balances(bank):
    """What every account held before any transfer."""
    return {**{group.source: group.opening for group in bank.groups},
            **{group.target: group.target_opening for group in bank.groups}}


def sent(group, log):
    """The calls of the log that carry one of the group's request ids."""
    return log[log["args"].map(lambda args: args[1] in group.request_ids)]


def present(group, log):
    """The group's request ids that the log's calls carry."""
    ids = set(sent(group, log)["args"].map(lambda args: args[1]))
    return [request_id for request_id in group.request_ids if request_id in ids]


def funded(group, log):
    """True when the source can pay every request of the group that was sent."""
    return group.opening >= group.amount * len(present(group, log))


def what(group, log):
    """'one transfer of 30 from acct-0 to acct-1, sent twice', or the same for the group's several requests."""
    requests, calls = len(present(group, log)), len(sent(group, log))
    if requests == 1:
        return f"one transfer of {group.amount} from {group.source} to {group.target}, sent {times(calls)},"
    return (f"{requests} transfers of {group.amount} each from {group.source} to {group.target} (different request "
            f"ids), {calls} calls in all,")


def money_problem(group, log, balances):
    """What is wrong with the group's two balances, with its likely cause, or None."""
    moved = group.opening - balances[group.source]
    received = balances[group.target] - group.target_opening
    should = group.amount * len(present(group, log)) if funded(group, log) else 0
    if moved == should and received == should:
        return None
    said = (f"{what(group, log)} moved {moved} (it should move {should}): {group.source} {group.opening} -> "
            f"{balances[group.source]}, {group.target} {group.target_opening} -> {balances[group.target]}")
    return said + money_cause(group, moved, received, should, list(sent(group, log)["result"]))


def money_cause(group, moved, received, should, answers):
    """'. Why: ...' for a group whose balances are wrong, given what its calls were answered."""
    if moved != received:
        return (f". Why: {group.source} lost {moved} but {group.target} gained {received}: the debit and the credit "
                "must be one TransactWriteItems, so they happen together or not at all")
    if should == 0:
        return (f". Why: {group.source} held only {group.opening}: the debit needs the condition balance >= :amount on "
                "the source's balance")
    if moved > should:
        return (f". Why: the client's retry was applied as a new transfer ({times(moved // group.amount)} in all): "
                "pass ClientRequestToken=request_id to the one TransactWriteItems (without it, botocore makes a new "
                "token for each call, which covers only the SDK's own resends of that call)")
    if all(answer is True for answer in answers):
        return (". Why: every call was answered True, so DynamoDB took a request for one it had already done: the "
                "token must be the request id itself (a token is remembered for 10 minutes, and one made from the "
                "source, target or amount names an earlier transfer)")
    if moved == 0 and group.opening == should:
        return (f". Why: {group.source} holds exactly {should}: a transfer may leave 0 (balance >= :amount, not "
                "balance > :amount)")
    return f". Why: {group.source} holds {group.opening}, enough: only the source's balance must cover the amount"


def answer_problem(group, log):
    """What is wrong with the answers the group's calls got, or None: True for a request that took effect (the first
    copy and every retry), False for one its source cannot pay."""
    answers = list(sent(group, log)["result"])
    wanted = funded(group, log)
    if all(answer is wanted for answer in answers):
        return None
    told = " and ".join(repr(answer) for answer in answers)
    if wanted:
        return (f"{what(group, log)} moved its {group.amount} once, but the calls were answered {told}: every copy of "
                "a transfer that took effect must be answered True (a retry asks whether it happened), and only a "
                "refusal False")
    return (f"{what(group, log)} was answered {told}, but {group.source} holds only {group.opening}: a transfer its "
            "source cannot pay is refused, nothing moves, and every copy is answered False")


def error_cause(error):
    """'. Why: ...' naming the likely mistake behind an error transfer raised, or ''."""
    if error.startswith("IdempotentParameterMismatch"):
        return (". Why: a retry sent the same ClientRequestToken with other parameters: build the whole transaction "
                "from the call's arguments alone (no timestamp, no fresh uuid), so every copy sends the same request")
    if error.startswith("TransactionCanceledException") and "ConditionalCheckFailed" in error \
            and "TransactionConflict" not in error:
        return ". Why: a transaction cancelled for ConditionalCheckFailed is a refusal: answer False, do not raise it"
    if "clientRequestToken" in error or "ClientRequestToken" in error:
        return ". Why: a ClientRequestToken is 1 to 36 characters: pass request_id itself"
    return ""


CLAIM = "ConditionExpression"  # a piece of every conditional write's body: the knob loses the first claim's answer
CLAIMS_LOST = ("PutItem", "UpdateItem", None)  # per stress run of a size: a claim by PutItem, by UpdateItem, neither


def check_handle(handle):
    """Attack handle(table, request_id, amount, charge_card): two copies of one request in every order, with any one
    write's response lost (on the lab server), then copies at once, the first conditional PutItem's response lost in
    the first run of each size, the first conditional UpdateItem's in the second: either way the SDK resends the claim.
    The card is charged once, every answer is that charge, only RuntimeError ("retry later") may be raised."""
    if not callable(handle):
        raise TypeError(f"Pass your function itself (e.g. handle), not {handle!r}.")
    lab = connect(quiet=True)
    losing = lab.kind == "embedded"
    runs = itertools.count()

    def request(lose):
        """A fresh table and card; on the lab server, the response of the next conditional `lose` (PutItem or
        UpdateItem: a claim) lost, or none when `lose` is None."""
        table = fresh_table(TABLE)
        if losing:
            set_knobs(lab, quiet=True, **({"lose_response": lose, "lose_count": 1, "lose_matching": CLAIM}
                                          if lose else {"lose_response": None}))
        return table, Card()

    def setup():
        return request(CLAIMS_LOST[next(runs) % TRIES])

    def invariant(state, log):
        table, card = state
        told_later = log["error"].notna().all() and log["error"].str.startswith("RuntimeError").all()
        if not card.charges and told_later and losing:
            return ("the card was never charged and every copy was told to retry later: the SDK resent a claim "
                    "whose response was lost, and the handler took its own claim for another copy's")
        if len(card.charges) != 1:
            return f"the card was charged {len(card.charges)} times for one request"
        charge = {"chargeId": "ch_1", "amount": AMOUNT}
        raised = [e for e in log["error"].dropna() if not e.startswith("RuntimeError")]
        if raised:
            return f"handle raised {raised[0]}; only RuntimeError ('retry later') may be raised"
        answers = [plain(r) for r, e in zip(log["result"], log["error"]) if e is None]
        if any(answer != charge for answer in answers):
            wrong = next(answer for answer in answers if answer != charge)
            return f"a caller was answered {wrong!r}, not the charge {charge!r}"
        retry = run_at_once(handle, [(table, "req-1", AMOUNT, card)])
        result, error = next(zip(retry["result"], retry["error"]))
        if error or plain(result) != charge or len(card.charges) != 1:
            return f"a retry after the first call finished got {error or plain(result)!r}, not the stored {charge!r}"
        return None

    with knobs(lab, quiet=True) if losing else nullcontext():
        report = attack("handle", handle, setup, lambda state, n: [(state[0], "req-1", AMOUNT, state[1])] * n,
                        invariant, explore_setup=lambda: request(None), faults=("lost_response",) if losing else ())
    if not losing and report.passed:
        report.message += (" (no claim's response was lost: only the lab server can lose one, so run this checker "
                           "there for the whole attack)")
    return report


def times(n):
    """'once', 'twice', '3 times'."""
    return {1: "once", 2: "twice"}.get(n, f"{n} times")


def check_on_order_paid(on_order_paid):
    """Attack on_order_paid(table, event_id, order_id): the webhook evt-1 (order-1 paid) delivered twice in every
    order, then in every order again with a crash after any write (the provider, answered nothing, delivers again),
    then many events delivered twice each, at once. Each order gets one shipment and one 'created' (none, when the
    delivery that created it crashed before answering)."""
    def setup():
        return fresh_table(TABLE)

    def deliveries(table, n):
        """n deliveries, each event twice: (evt-0, order-0), (evt-0, order-0), (evt-1, order-1), ..."""
        return [(table, f"evt-{i // 2}", f"order-{i // 2}") for i in range(n)]

    def invariant(table, log):
        error = first_error(log)
        if error:
            return f"on_order_paid raised {error}; a duplicate delivery must be answered, not raised"
        for order_id, calls in log.groupby(log["args"].map(lambda args: args[2]), sort=True):
            shipments = table.query(KeyConditionExpression=Key("PK").eq(f"ORDER#{order_id}"),
                                    ConsistentRead=True)["Items"]
            created, crashed = int((calls["result"] == "created").sum()), int(calls["crashed"].sum())
            if len(shipments) != 1 or created > 1 or created + crashed == 0:
                answered = "1 delivery was" if created == 1 else f"{created} deliveries were"
                return (f"{order_id} has {len(shipments)} shipments after its order.paid event "
                        f"({calls['args'].iloc[0][1]}) was delivered {times(len(calls))}"
                        f"{crash_words(crashed)}, and {answered} answered 'created'{half_done(shipments, crashed)}")
        return None

    def one_event_twice(table):
        """evt-1 (order-1 paid) delivered twice."""
        return [(table, "evt-1", "order-1")] * 2

    return attack("on_order_paid", on_order_paid, setup, deliveries, invariant, orders_of=one_event_twice,
                  faults=("crash",))


def crash_words(crashed):
    """', one delivery crashing before it answered' for a run with a crashed delivery (an order has one at most), or
    ''."""
    return ", one delivery crashing before it answered" if crashed else ""


def half_done(shipments, crashed):
    """'. Why: ...' for an order left without a shipment by a delivery that crashed between its writes, or ''."""
    if shipments or not crashed:
        return ""
    return (". Why: the delivery crashed between its writes, leaving the event recorded and nothing shipped, so the "
            "provider's redelivery was taken for a duplicate: record the event and create the shipment in one "
            "TransactWriteItems, so that they happen together or not at all")
