"""Checkers for notebook 23 (optimistic locking)."""
from ..tables import fresh_table
from . import attack

TABLE = "p23-optimistic-locking"
ACCOUNT = {"PK": "ACCOUNT#a1", "SK": "META"}
SIZES = (2, 5, 10, 20)


def fresh_account():
    """The exercise table holding one account: balance 100 at version 1."""
    table = fresh_table(TABLE)
    table.put_item(Item={**ACCOUNT, "balance": 100, "version": 1})
    return table


def raised(log):
    """The first error a call raised, as a message, or None."""
    errors = log["error"].dropna()
    return f"a call raised {errors.iloc[0]!r}" if len(errors) else None


def ledger_problem(table, writes, balance):
    """What is wrong with the account after `writes` successful writes that should leave `balance`, or None."""
    item = table.get_item(Key=ACCOUNT, ConsistentRead=True)["Item"]
    if item.get("balance") != balance:
        return (f"the balance is {item.get('balance')}, but {writes} calls reported success "
                f"and should have left {balance}")
    if item.get("version") != 1 + writes:
        return (f"the version is {item.get('version')} after {writes} successful writes from version 1: "
                "each write must be conditional on the version it read and raise it by one")
    return None


def check_deposit(deposit):
    """Attack deposit(table, amount): concurrent deposits of 10 must all land, each as one new version."""
    def invariant(table, log):
        if raised(log):
            return raised(log)
        if not (log["result"] == True).all():  # noqa: E712  (True, not just truthy)
            return "a deposit returned something other than True"
        return ledger_problem(table, len(log), 100 + 10 * len(log))

    return attack("deposit", deposit, fresh_account, lambda table, n: [(table, 10)] * n, invariant, sizes=SIZES)


def check_withdraw(withdraw):
    """Attack withdraw(table, amount): concurrent withdrawals of 30 from 100; exactly three may succeed."""
    def invariant(table, log):
        if raised(log):
            return raised(log)
        accepted = int((log["result"] == True).sum())  # noqa: E712
        if accepted != min(len(log), 3):
            return f"{accepted} withdrawals of 30 from 100 reported success (exactly {min(len(log), 3)} can)"
        return ledger_problem(table, accepted, 100 - 30 * accepted)

    return attack("withdraw", withdraw, fresh_account, lambda table, n: [(table, 30)] * n, invariant, sizes=SIZES)
