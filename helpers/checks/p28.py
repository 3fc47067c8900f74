"""Checkers for notebook 28 (GSIs are eventually consistent): attacks run with the index lagging."""
from contextlib import nullcontext

from boto3.dynamodb.conditions import Attr

from ..backend import connect
from ..knobs import knobs
from ..tables import fresh_table
from . import attack

TABLE = "p28-gsi-consistency"
LAG = [0.05, 0.3]
EMAIL = "neo@x.com"


def lagging():
    """The lab server's GSI lag knob on for one attack; nothing on backends without knobs."""
    lab = connect(quiet=True)
    return knobs(lab, quiet=True, gsi_lag=LAG) if lab.kind == "embedded" else nullcontext()


def user(n, email):
    """User n, indexed by email in GSI1."""
    return {"PK": f"USER#{n}", "SK": "PROFILE", "GSI1PK": f"EMAIL#{email}", "GSI1SK": f"USER#{n}"}


def check_find_user(find_user):
    """Attack find_user(table, email): each call comes right after its user was written; every call must find it."""
    if not callable(find_user):
        raise TypeError(f"Pass your function itself (e.g. find_user), not {find_user!r}.")

    def write_then_find(table, n):
        table.put_item(Item=user(n, f"user{n}@x.com"))
        return find_user(table, f"user{n}@x.com")

    def invariant(table, log):
        errors = log["error"].dropna()
        if len(errors):
            return f"find_user raised {errors.iloc[0]!r}"
        missed = [(args[1], result) for args, result in zip(log["args"], log["result"])
                  if not any(item.get("GSI1SK") == f"USER#{args[1]}" for item in result or [])]
        if missed:
            return (f"{len(missed)} of {len(log)} calls did not find the user written just before "
                    f"(find_user returned {missed[0][1]!r})")
        return None

    with lagging():
        return attack("find_user", write_then_find, lambda: fresh_table(TABLE),
                      lambda table, n: [(table, i) for i in range(n)], invariant, sizes=(2, 5, 20), tries=2)


def check_register(register):
    """Attack register(table, user_id, email): many users take the same email at once; exactly one may get it."""
    def invariant(table, log):
        errors = log["error"].dropna()
        if len(errors):
            return f"register raised {errors.iloc[0]!r} instead of returning False"
        told = sorted(args[1] for args, result in zip(log["args"], log["result"]) if result is True)
        holders = table.scan(FilterExpression=Attr("GSI1PK").eq(f"EMAIL#{EMAIL}"), ConsistentRead=True)["Items"]
        owners = sorted(item["PK"] for item in holders)
        if len(told) != 1 or owners != [f"USER#{told[0]}"]:
            return (f"{len(told)} users were told {EMAIL} is theirs ({', '.join(told) or 'nobody'}); "
                    f"the table holds {len(owners)} users with it")
        return None

    with lagging():
        return attack("register", register, lambda: fresh_table(TABLE),
                      lambda table, n: [(table, f"user-{i}", EMAIL) for i in range(n)], invariant)
