"""Checkers for notebook 26 (unique constraints on non-key attributes)."""
from boto3.dynamodb.conditions import Attr

from ..tables import fresh_table
from . import attack

TABLE = "p26-unique-constraints"
CONTESTED = "neo@example.com"
SPELLINGS = ("neo@example.com", "Neo@Example.com", "NEO@EXAMPLE.COM")


def profile_key(user_id):
    """The key of a user's profile item."""
    return {"PK": f"USER#{user_id}", "SK": "PROFILE"}


def sentinel_key(email):
    """The key of the sentinel item that reserves an email address (case-folded)."""
    return {"PK": f"EMAIL#{email.lower()}", "SK": "EMAIL"}


def raised(log):
    """The first error a call raised, as a message, or None."""
    errors = log["error"].dropna()
    return f"a call raised {errors.iloc[0]}" if len(errors) else None


def winners(log):
    """The user ids whose call returned True."""
    return [args[1] for args, result in zip(log["args"], log["result"]) if result is True]


def table_problem(table):
    """What breaks 'one profile per address, one sentinel per profile, each naming the other', or None."""
    profiles = table.scan(FilterExpression=Attr("SK").eq("PROFILE"), ConsistentRead=True)["Items"]
    sentinels = table.scan(FilterExpression=Attr("SK").eq("EMAIL"), ConsistentRead=True)["Items"]
    owners = {}
    for profile in profiles:
        address = profile["email"].lower()
        if address in owners:
            return f"{owners[address]} and {profile['PK']} both have the address {address}"
        owners[address] = profile["PK"]
    for sentinel in sentinels:
        address = sentinel["PK"].removeprefix("EMAIL#")
        if owners.get(address) != f"USER#{sentinel.get('user_id')}":
            return (f"the sentinel {sentinel['PK']} names user {sentinel.get('user_id')!r}, "
                    "whose profile does not have that address")
    if len(sentinels) != len(owners):
        return f"{len(owners)} addresses are in use but {len(sentinels)} sentinels exist"
    return None


def contested_calls(table, n):
    """n users u0..u(n-1) each claiming the contested address, in its several spellings."""
    return [(table, f"u{i}", SPELLINGS[i % len(SPELLINGS)]) for i in range(n)]


def crashed(log):
    """The user ids whose call crashed (after one of its requests was applied): they were told nothing."""
    return [args[1] for args, gone in zip(log["args"], log["crashed"]) if gone]


def split_write(log, problem):
    """The problem, with its cause when a call crashed between two writes that belong together."""
    if problem and crashed(log):
        return (f"{problem}. Why: {crashed(log)[0]}'s call crashed between its writes, leaving half a sign-up: write "
                "the profile and the sentinel in one TransactWriteItems, so they happen together or not at all")
    return problem


def check_sign_up_user(sign_up_user):
    """Attack sign_up_user(table, user_id, email): two users claim one address in two spellings, in every order and
    with a crash after any write, then many at once."""
    def invariant(table, log):
        if raised(log):
            return raised(log)
        won = winners(log)
        if len(won) > 1 or not (won or crashed(log)):
            return f"{len(won)} users were told they got {CONTESTED} ({', '.join(won) or 'nobody'})"
        sentinel = table.get_item(Key=sentinel_key(CONTESTED), ConsistentRead=True).get("Item", {})
        if won and sentinel.get("user_id") != won[0]:
            return f"{won[0]} won, but the sentinel {sentinel_key(CONTESTED)['PK']} names {sentinel.get('user_id')!r}"
        return split_write(log, table_problem(table))

    # A crash after any write: a sentinel and a profile written in two requests leave half a sign-up.
    return attack("sign_up_user", sign_up_user, lambda: fresh_table(TABLE), contested_calls, invariant,
                  faults=("crash",))


def fresh_users(n=50):
    """n users u0..u(n-1), each with the address u<i>@example.com and its sentinel."""
    table = fresh_table(TABLE)
    with table.batch_writer() as batch:
        for i in range(n):
            batch.put_item(Item={**profile_key(f"u{i}"), "email": f"u{i}@example.com"})
            batch.put_item(Item={**sentinel_key(f"u{i}@example.com"), "user_id": f"u{i}"})
    return table


def check_change_user_email(change_user_email):
    """Attack change_user_email(table, user_id, new_email): two users move to one address in every order (with
    only their two profiles), then many at once."""
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

    return attack("change_user_email", change_user_email, fresh_users, contested_calls, invariant,
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
