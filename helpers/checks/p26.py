"""Checkers for notebook 26 (unique constraints on non-key attributes)."""
import threading
from contextlib import contextmanager

from boto3.dynamodb.conditions import Attr

from ..explore import TooManyOrders
from ..lab.backend import connect
from ..lab.tables import fresh_table
from . import attack, exhaustive, explored
from .why import Broken

TABLE = "p26-unique-constraints"
CONTESTED = "neo@example.com"
SPELLINGS = ("neo@example.com", "Neo@Example.com", "NEO@EXAMPLE.COM")
CONTESTED_PHONE = "+15550100"
ANSWERS = ("ok", "email", "phone")
REASONS_HINT = ("CancellationReasons has one entry per action, in the order of TransactItems: find the action whose "
                "Code is ConditionalCheckFailed")


def profile_key(user_id):
    """The key of a user's profile item."""
    return {"PK": f"USER#{user_id}", "SK": "PROFILE"}


def sentinel_key(email):
    """The key of the sentinel item that reserves an email address (case-folded)."""
    return {"PK": f"EMAIL#{email.lower()}", "SK": "EMAIL"}


def phone_key(phone):
    """The key of the sentinel item that reserves a phone number."""
    return {"PK": f"PHONE#{phone}", "SK": "PHONE"}


def raised(log):
    """The first error a call raised, as a message, or None."""
    errors = log["error"].dropna()
    return f"a call raised {errors.iloc[0]}" if len(errors) else None


def winners(log):
    """The user ids whose call returned True."""
    return [args[1] for args, result in zip(log["args"], log["result"]) if result is True]


def everything(table):
    """Every item of the table, in one strongly consistent Scan (paged): what a check reads the table from."""
    items, page = [], {"ConsistentRead": True}
    while True:
        response = table.scan(**page)
        items += response["Items"]
        if "LastEvaluatedKey" not in response:
            return items
        page["ExclusiveStartKey"] = response["LastEvaluatedKey"]


def value_problem(items, attribute, sk, nouns, normalise):
    """What breaks 'one profile per value, one sentinel per profile, each naming the other' for `attribute`, or None."""
    noun, plural = nouns
    profiles = [item for item in items if item["SK"] == "PROFILE"]
    sentinels = [item for item in items if item["SK"] == sk]
    owners = {}
    for profile in profiles:
        if attribute not in profile:
            continue
        value = normalise(profile[attribute])
        if value in owners:
            return f"{owners[value]} and {profile['PK']} both have the {noun} {value}"
        owners[value] = profile["PK"]
    for sentinel in sentinels:
        value = sentinel["PK"].removeprefix(f"{sk}#")
        if owners.get(value) != f"USER#{sentinel.get('user_id')}":
            return (f"the sentinel {sentinel['PK']} names user {sentinel.get('user_id')!r}, "
                    f"whose profile does not have that {noun}")
    if len(sentinels) != len(owners):
        return f"{len(owners)} {plural} are in use but {len(sentinels)} sentinels exist"
    return None


def pairing_problem(items):
    """What breaks the pairing of profiles and sentinels among `items`, for addresses and then phone numbers, or
    None."""
    return (value_problem(items, "email", "EMAIL", ("address", "addresses"), str.lower)
            or value_problem(items, "phone", "PHONE", ("phone number", "phone numbers"), str))


def table_problem(table):
    """What breaks the pairing of profiles and sentinels in the table, or None."""
    return pairing_problem(everything(table))


def contested_calls(table, n):
    """n users u0..u(n-1) each claiming the contested address, in its several spellings."""
    return [(table, f"u{i}", SPELLINGS[i % len(SPELLINGS)]) for i in range(n)]


def sign_up_calls(table, n):
    """n sign-ups: even users want the contested address (spelled three ways), odd ones the contested phone number."""
    return [(table, f"u{i}", SPELLINGS[i // 2 % len(SPELLINGS)], f"+1555{2000 + i}") if i % 2 == 0
            else (table, f"u{i}", f"u{i}@example.com", CONTESTED_PHONE) for i in range(n)]


def one_address_two_users(table):
    """The first exhaustive stage: u0 and u1 want the contested address in two spellings, each with its own phone
    number."""
    return [(table, "u0", SPELLINGS[0], "+15552000"), (table, "u1", SPELLINGS[1], "+15552001")]


def one_phone_two_users(table):
    """The second: u0 and u1 want the contested phone number, each with an address of its own. A sign-up that meets
    the other's transaction in flight is cancelled for a TransactionConflict on the phone number's sentinel, and its
    address is free: an answer 'email' without retrying is wrong in that order, as 'phone' is in the first stage."""
    return [(table, "u0", "u0@example.com", CONTESTED_PHONE), (table, "u1", "u1@example.com", CONTESTED_PHONE)]


def crashed(log):
    """The user ids whose call crashed (after one of its requests was applied): they were told nothing."""
    return [args[1] for args, gone in zip(log["args"], log["crashed"]) if gone]


def split_write(log, problem):
    """The problem, with its cause when a call crashed between two writes that belong together."""
    if problem and crashed(log):
        return Broken(problem, f"{crashed(log)[0]}'s call crashed between its writes, leaving half a sign-up: write "
                      "the profile and its sentinels in one TransactWriteItems, so they happen together or not at all")
    return problem


def contest_problem(log, position, value, normalise):
    """What breaks 'exactly one of the sign-ups that want `value` (argument `position`) gets it', or None."""
    rows = [(args[1], result, gone) for args, result, gone in zip(log["args"], log["result"], log["crashed"])
            if normalise(args[position]) == value]
    won = [user for user, result, _ in rows if result == "ok"]
    if len(won) > 1:
        return f"{len(won)} users were told they got {value} ({', '.join(won)})"
    if rows and not won and not any(gone for _, _, gone in rows):
        answers = ", ".join(f"{user} {result!r}" for user, result, _ in rows)
        return (f"nobody got {value}, though it was free: every sign-up that wanted it was refused ({answers}); the "
                "first to arrive must get it (does a condition refuse every sign-up?)")
    return None


def owner_of(table, key):
    """The user_id the sentinel at `key` names, or None when there is no sentinel."""
    return table.get_item(Key=key, ConsistentRead=True).get("Item", {}).get("user_id")


def owners(items):
    """The user_id each sentinel among `items` names, by its PK."""
    return {item["PK"]: item.get("user_id") for item in items if item["SK"] != "PROFILE"}


def wrong_value(owner_by_key, user_id, answer, values):
    """Why a refused user's answer is wrong: the value it names is not held by someone else; or None."""
    (noun, value, key), (other_noun, other, other_key) = values if answer == "email" else values[::-1]
    owner = owner_by_key.get(key["PK"])
    if owner not in (None, user_id):
        return None
    holder = "no sentinel holds it" if owner is None else "its sentinel names that user itself"
    other_owner = owner_by_key.get(other_key["PK"])
    why = (f". Why: it was the {other_noun} {other} that was taken (by {other_owner}): {REASONS_HINT}"
           if other_owner not in (None, user_id) else "")
    return f"{user_id} was told {answer!r}: its {noun} {value} was taken, but {holder}{why}"


def unowned(owner_by_key, user_id, values):
    """For a user told 'ok': its first sentinel that names someone else or is missing, as a message, or None."""
    for _, _, key in values:
        owner = owner_by_key.get(key["PK"])
        if owner != user_id:
            return f"{user_id} was told 'ok', but the sentinel {key['PK']} names {owner!r}"
    return None


def answer_problem(owner_by_key, log):
    """The first answer the sentinels contradict ('ok' without both, a refusal naming a free value), or None."""
    for (_, user_id, email, phone), result, gone in zip(log["args"], log["result"], log["crashed"]):
        values = (("address", email.lower(), sentinel_key(email)), ("phone number", phone, phone_key(phone)))
        if gone:
            continue
        if result not in ANSWERS:
            return f"{user_id}'s sign-up returned {result!r}; return 'ok', 'email' or 'phone'"
        wrong = (unowned(owner_by_key, user_id, values) if result == "ok"
                 else wrong_value(owner_by_key, user_id, result, values))
        if wrong:
            return wrong
    return None


def sign_up_problem(items, log):
    """What the table's items (one read) contradict: the answers, then the pairing of profiles and sentinels."""
    return answer_problem(owners(items), log) or split_write(log, pairing_problem(items))


def check_sign_up_user(sign_up_user):
    """Attack sign_up_user(table, user_id, email, phone): two users claim one address in two spellings, in every order
    with a crash after any write, then in every order as DynamoDB runs transactions (a conflict must be retried), then
    one user claims the address while its holder deletes its account (judged by what DynamoDB answered), then two users
    claim one phone number the same way, then many at once on a server as weak as DynamoDB, half of them racing for
    one phone number instead."""
    def invariant(table, log):
        return (raised(log) or contest_problem(log, 2, CONTESTED, str.lower)
                or contest_problem(log, 3, CONTESTED_PHONE, str) or sign_up_problem(everything(table), log))

    if not callable(sign_up_user):
        raise TypeError(f"Pass your function itself (e.g. sign_up_user), not {sign_up_user!r}.")
    # A crash after any write: sentinels and a profile written in several requests leave half a sign-up.
    try:
        crashed_first, _ = exhaustive("sign_up_user", sign_up_user, lambda: fresh_table(TABLE), one_address_two_users,
                                      invariant, faults=("crash",))
        crashes = True
    except TooManyOrders:
        crashed_first, crashes = None, False
    if crashed_first:
        return crashed_first
    # A conflict on the address, then one on the phone number: in each, the right answer after retrying the conflict
    # names the value the other sign-up took, so a conflict answered 'email' (or 'phone') without retrying is wrong
    # in one of them.
    try:
        on_address, address_orders = explored("sign_up_user", sign_up_user, lambda: fresh_table(TABLE),
                                              one_address_two_users, invariant)
    except TooManyOrders:
        on_address, address_orders = None, None
    if on_address:
        return on_address
    # A conflict with a transaction that frees the address: 'email' is right only where a condition failed.
    try:
        on_freed, freed_orders = freed_address(sign_up_user)
    except TooManyOrders:
        on_freed, freed_orders = None, None
    report = on_freed or attack("sign_up_user", sign_up_user, lambda: fresh_table(TABLE), sign_up_calls, invariant,
                                orders_of=one_phone_two_users)
    return explored_before(report, address_orders, crashes, freed_orders)


SIGNER, LEAVER = "u1", "u9"  # u1 signs up with the contested address while u9, who holds it, deletes its account
NOTE_ID = "p26-last-cancellation"


class LastAnswer:
    """What DynamoDB answered the learner's last TransactWriteItems in this order, as (its error code or "OK", the Codes
    of its CancellationReasons), or None when it sent none: noted on the lab's client while the learner's code runs."""

    def __init__(self, learner):
        self.learner, self.answer, self.running = learner, None, threading.local()

    def call(self, *args):
        """The learner's function on `args`, its TransactWriteItems answers noted."""
        self.running.on = True
        try:
            return self.learner(*args)
        finally:
            self.running.on = False

    def note(self, parsed, **_):
        """botocore's after-call hook: keep the answer to a TransactWriteItems the learner's function sent."""
        if getattr(self.running, "on", False):
            self.answer = (parsed.get("Error", {}).get("Code", "OK"),
                           [reason.get("Code") for reason in parsed.get("CancellationReasons") or ()])

    @contextmanager
    def noting(self, client):
        """The block runs with `client`'s TransactWriteItems answers noted."""
        event = "after-call.dynamodb.TransactWriteItems"
        client.meta.events.register(event, self.note, unique_id=NOTE_ID)
        try:
            yield
        finally:
            client.meta.events.unregister(event, unique_id=NOTE_ID)


def address_held():
    """A fresh table in which LEAVER holds the contested address: its profile and the address's sentinel."""
    table = fresh_table(TABLE)
    table.put_item(Item={**profile_key(LEAVER), "email": CONTESTED})
    table.put_item(Item={**sentinel_key(CONTESTED), "user_id": LEAVER})
    return table


def delete_account(table, user_id, email):
    """A user deletes its account: its profile and its address's sentinel, in one transaction."""
    table.meta.client.transact_write_items(TransactItems=[
        {"Delete": {"TableName": table.name, "Key": profile_key(user_id)}},
        {"Delete": {"TableName": table.name, "Key": sentinel_key(email)}}])
    return "deleted"


def one_signs_up_one_leaves(table):
    """SIGNER signs up with the contested address while LEAVER, who holds it, deletes its account."""
    return [("sign up", table, SIGNER, CONTESTED, "+15552001"), ("delete", table, LEAVER, CONTESTED)]


def freed_address(sign_up_user):
    """(a failing Report or None, the orders explored) of SIGNER signing up with the address LEAVER is giving up.
    'email' is judged by what DynamoDB answered the sign-up's last TransactWriteItems: right after a
    ConditionalCheckFailed (LEAVER still held it), wrong after a cancellation with no failed condition (a
    TransactionConflict with the deletion that was freeing it)."""
    answered = LastAnswer(sign_up_user)

    def setup():
        answered.answer = None
        return address_held()

    def client(action, *args):
        return answered.call(*args) if action == "sign up" else delete_account(*args)

    def invariant(table, log):
        return raised(log) or freed_problem(everything(table), log, answered.answer)

    with answered.noting(connect(quiet=True).client):
        return explored("sign_up_user", client, setup, one_signs_up_one_leaves, invariant, names=(SIGNER, LEAVER))


def freed_problem(items, log, answer):
    """What the sign-up's answer or the table contradict, or None: 'email' by what DynamoDB answered its last
    TransactWriteItems (`answer`, LastAnswer's), any other answer by the sentinels."""
    signed = log[[args[0] == "sign up" for args in log["args"]]].copy()
    signed["args"] = [args[1:] for args in signed["args"]]
    user_id, told = signed["args"].iloc[0][1], signed["result"].iloc[0]
    if told != "email":
        return sign_up_problem(items, signed)
    if answer is not None and "ConditionalCheckFailed" not in answer[1]:
        code, codes = answer
        said = (f"cancelled it with the reasons [{', '.join(map(str, codes))}]" if codes
                else "applied it" if code == "OK" else f"answered it {code}")
        return (f"{user_id} was told 'email', but to its last TransactWriteItems DynamoDB {said}: no condition failed, "
                f"so nothing said the address was taken ({LEAVER} was deleting its account, freeing it)")
    return pairing_problem(items)


def explored_before(report, address_orders, crashes, freed_orders):
    """A passing report that also says what was explored before its exhaustive stage (two sign-ups after one phone
    number): the orders of two after one address, of one after the address its holder gives up, and the crashes; a
    failing one is left as it is."""
    if report.passed:
        before = ([f"in all {len(address_orders)} distinct orders of two sign-ups after one address"]
                  if address_orders is not None else [])
        before += ([f"in all {len(freed_orders)} distinct orders of a sign-up after the address its holder is giving "
                    "up"] if freed_orders is not None else [])
        before += ["in every order with a crash after any write"] if crashes else []
        listed = f"{', '.join(before[:-1])} and {before[-1]}" if len(before) > 1 else "".join(before)
        report.message += " (two sign-ups after one phone number)" + (f"; and, before it, {listed}" if before else "")
    return report


def fresh_users(n=50):
    """n users u0..u(n-1), each with the address u<i>@example.com and its sentinel."""
    table = fresh_table(TABLE)
    with table.batch_writer() as batch:
        for i in range(n):
            batch.put_item(Item={**profile_key(f"u{i}"), "email": f"u{i}@example.com"})
            batch.put_item(Item={**sentinel_key(f"u{i}@example.com"), "user_id": f"u{i}"})
    return table


def one_user_two_changes(table):
    """The first exhaustive stage: u0 changes from u0@example.com to two free addresses at once."""
    return [(table, "u0", SPELLINGS[0]), (table, "u0", "trinity@example.com")]


def both_changes_problem(table, log):
    """What breaks 'u0 ends with an address it was told yes for, and only that address has a sentinel', or None."""
    if raised(log):
        return raised(log)
    told = [new for (_, _, new), result in zip(log["args"], log["result"]) if result is True]
    if not told:
        wanted = " and ".join(new for _, _, new in log["args"])
        return (f"neither of u0's changes ({wanted}) was applied, though both addresses were free: one of them must "
                "succeed (does a condition refuse every change?)")
    email = table.get_item(Key=profile_key("u0"), ConsistentRead=True)["Item"]["email"]
    if email.lower() not in [new.lower() for new in told]:
        return f"u0 has the address {email} after being told yes only for {', '.join(told)}"
    problem = table_problem(table)
    if problem and owner_of(table, sentinel_key("u0@example.com")):
        return Broken(problem, "u0 moved off u0@example.com but its sentinel is still there: release the old "
                      "address (a Delete of its sentinel) in the same transaction as the change")
    if problem and len(told) > 1:
        return Broken(problem, "both of u0's changes were told yes, and each released u0@example.com: guard the old "
                      "address in the transaction (`user_id = :me` on the old sentinel's Delete, or `email = :old` on "
                      "the profile's Update), so that the change that comes second is refused")
    return problem


def check_change_user_email(change_user_email):
    """Attack change_user_email(table, user_id, new_email): u0 makes two changes at once in every order, then two
    users move to one address in every order (with only their two profiles), then many at once."""
    def invariant(table, log):
        if raised(log):
            return raised(log)
        won = winners(log)
        if len(won) != 1:
            return f"{len(won)} users were told they moved to {CONTESTED} ({', '.join(won) or 'nobody'})"
        for _, user_id, _ in log["args"]:
            email = table.get_item(Key=profile_key(user_id), ConsistentRead=True)["Item"]["email"].lower()
            kept = f"{user_id}@example.com"
            if email != (CONTESTED if user_id == won[0] else kept):
                return f"{user_id} has the address {email} after {'winning' if user_id == won[0] else 'losing'}"
        return table_problem(table)

    if not callable(change_user_email):
        raise TypeError(f"Pass your function itself (e.g. change_user_email), not {change_user_email!r}.")
    same_user, _ = exhaustive("change_user_email", change_user_email, lambda: fresh_users(1), one_user_two_changes,
                              both_changes_problem)
    return same_user or attack("change_user_email", change_user_email, fresh_users, contested_calls, invariant,
                               explore_setup=lambda: fresh_users(2))


HANDLES = ("Neo", "trinity")


def handle_key(handle):
    """The key of the sentinel item that reserves a handle (case-folded)."""
    return {"PK": f"HANDLE#{handle.lower()}", "SK": "HANDLE"}


def fresh_accounts(n=50):
    """n users u0..u(n-1), each a profile with no handle yet."""
    table = fresh_table(TABLE)
    with table.batch_writer() as batch:
        for i in range(n):
            batch.put_item(Item=profile_key(f"u{i}"))
    return table


def handle_problem(table, log):
    """What breaks 'one handle per user, one user per handle, sentinel and profile agreeing', or None."""
    told = {}
    for (_, user_id, handle), result in zip(log["args"], log["result"]):
        if result is True:
            told.setdefault(user_id, []).append(handle)
    for user_id, handles in told.items():
        if len(handles) > 1:
            return f"{user_id} was told yes for {len(handles)} handles ({', '.join(handles)})"
    profiles = table.scan(FilterExpression=Attr("SK").eq("PROFILE"), ConsistentRead=True)["Items"]
    sentinels = table.scan(FilterExpression=Attr("SK").eq("HANDLE"), ConsistentRead=True)["Items"]
    owner = {sentinel["PK"]: sentinel.get("user_id") for sentinel in sentinels}
    for sentinel in sentinels:
        user_id = sentinel.get("user_id")
        profile = next((p for p in profiles if p["PK"] == f"USER#{user_id}"), {})
        if handle_key(profile.get("handle", ""))["PK"] != sentinel["PK"]:
            return (f"the sentinel {sentinel['PK']} names {user_id}, whose profile has the handle "
                    f"{profile.get('handle')!r}")
    for profile in profiles:
        user_id = profile["PK"].removeprefix("USER#")
        if "handle" in profile and owner.get(handle_key(profile["handle"])["PK"]) != user_id:
            return f"{profile['PK']} has the handle {profile['handle']!r} but no sentinel names it"
    for user_id, (handle,) in told.items():
        named = owner.get(handle_key(handle)["PK"])
        if named != user_id:
            return f"{user_id} was told yes for {handle!r}, but the sentinel names {named!r}"
    return None


def check_claim_handle(claim_handle):
    """Attack claim_handle(table, user_id, handle): u0 claims two handles at once in every order, then many users
    race for two handles."""
    def invariant(table, log):
        return raised(log) or handle_problem(table, log)

    def claims(table, n):
        """n calls: users u0, u0, u1, u1, ... each claiming Neo then trinity."""
        return [(table, f"u{i // 2}", HANDLES[i % 2]) for i in range(n)]

    def one_user_two_handles(table):
        """u0 claims Neo and trinity at once: at most one may be his."""
        return [(table, "u0", "Neo"), (table, "u0", "trinity")]

    def free_handles(table):
        """u0 claims Neo, then u1 claims trinity: each handle is free and each user has none, so both must succeed."""
        for user_id, handle in (("u0", "Neo"), ("u1", "trinity")):
            claimed = claim_handle(table, user_id, handle)
            if claimed is not True:
                return (f"{user_id}, with no handle yet, claimed the free handle {handle!r} and was answered "
                        f"{claimed!r}; it must succeed (does a condition on the profile refuse every claim? A "
                        "profile with no handle has no handle attribute)")
        return None

    return attack("claim_handle", claim_handle, fresh_accounts, claims, invariant, orders_of=one_user_two_handles,
                  explore_setup=lambda: fresh_accounts(1), probe=free_handles)
