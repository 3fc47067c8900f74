"""The notebook 28 checkers pass correct solutions and catch the broken ones learners write."""
import time

import pytest
from boto3.dynamodb.conditions import Key
from botocore.exceptions import ClientError

from helpers import connect
from helpers.checks.p28 import check_assign_ticket, check_find_user, check_register
from helpers.knobs import get_knobs
from support import notebook_functions, swallowing, hidden_missing_table

NOTEBOOK = "28-gsi-eventual-consistency.ipynb"


def query_email(table, email):
    """One index query for an email."""
    return table.query(IndexName="GSI1", KeyConditionExpression=Key("GSI1PK").eq(f"EMAIL#{email}"))["Items"]


def find_with_retries(table, email):
    for attempt in range(8):
        items = query_email(table, email)
        if items:
            return items
        time.sleep(0.02 * 2**attempt)
    return []


def register_with_sentinel(table, user_id, email):
    try:
        table.meta.client.transact_write_items(TransactItems=[
            {"Put": {"TableName": table.name, "ConditionExpression": "attribute_not_exists(PK)",
                     "Item": {"PK": f"USER#{user_id}", "SK": "PROFILE", "GSI1PK": f"EMAIL#{email}",
                              "GSI1SK": f"USER#{user_id}"}}},
            {"Put": {"TableName": table.name, "ConditionExpression": "attribute_not_exists(PK)",
                     "Item": {"PK": f"EMAIL#{email}", "SK": "EMAIL", "user_id": user_id}}}])
        return True
    except ClientError as error:
        if error.response["Error"]["Code"] != "TransactionCanceledException":
            raise
        return False


def register_after_asking_the_index(table, user_id, email):
    if query_email(table, email):
        return False
    table.put_item(Item={"PK": f"USER#{user_id}", "SK": "PROFILE", "GSI1PK": f"EMAIL#{email}",
                         "GSI1SK": f"USER#{user_id}"})
    return True


def test_a_lookup_that_retries_passes_and_leaves_the_lag_off(lab):
    report = check_find_user(find_with_retries)
    assert report.passed, report.message
    if lab.kind == "embedded":
        assert get_knobs(lab)["gsi_lag"] is None


def test_a_single_index_query_is_caught_missing_a_fresh_write(lab):
    if lab.kind != "embedded":
        pytest.skip("without the lag knob the index is instant, and a single query finds the user")
    report = check_find_user(query_email)
    assert not report.passed
    assert "did not find the user written just before (find_user returned [])" in report.message


def test_a_sentinel_transaction_passes():
    report = check_register(register_with_sentinel)
    assert report.passed, report.message


ASKED_THE_INDEX_FIRST = (
    "alice: Query -> bob: Query -> alice: PutItem -> bob: PutItem: 2 users were told neo@x.com is theirs (user-0, "
    "user-1); the table holds 2 users with it (in 4 of the 6 orders in which alice and bob's requests can reach "
    "DynamoDB)")


def test_asking_the_index_first_is_caught_registering_the_email_twice():
    report = check_register(register_after_asking_the_index)
    assert not report.passed
    assert report.message == ASKED_THE_INDEX_FIRST


@pytest.mark.stress
def test_the_notebooks_starting_register_is_caught_in_the_exhaustive_stage_with_the_index_instant(lab, run):
    starting_register, = notebook_functions(NOTEBOOK, "register")
    report = check_register(starting_register)
    assert report.schedule == ("alice", "bob", "alice", "bob")
    assert report.message == ASKED_THE_INDEX_FIRST


def test_the_notebooks_starting_find_user_passes_every_order_and_is_caught_by_the_lag(lab):
    if lab.kind != "embedded":
        pytest.skip("without the lag knob the index is instant, and a single query finds the user")
    starting_find_user, = notebook_functions(NOTEBOOK, "find_user")
    report = check_find_user(starting_find_user)
    assert not report.passed
    assert report.message.endswith("did not find the user written just before (find_user returned []) "
                                   "(with 2 concurrent calls)")


def test_the_notebooks_solutions_pass_both_stages(lab):
    find_user_solution, register_solution = notebook_functions(NOTEBOOK, "find_user_solution", "register_solution")
    register_solution.__globals__["lab"] = connect(quiet=True)
    found, registered = check_find_user(find_user_solution), check_register(register_solution)
    assert found.passed and found.message.endswith("and in all 6 orders of the exhaustive stage")
    assert registered.passed and registered.message.endswith("and in all 2 orders of the exhaustive stage")


def test_a_register_that_raises_for_a_taken_email_is_caught():
    def raises(table, user_id, email):
        if not register_with_sentinel(table, user_id, email):
            raise LookupError(f"{email} is taken")
        return True

    report = check_register(raises)
    assert not report.passed
    assert report.message == ("alice: TransactWriteItems -> bob: TransactWriteItems: register raised LookupError: "
                              "neo@x.com is taken (instead of returning False) (in 2 of the 2 orders in which alice and "
                              "bob's requests can reach DynamoDB)")


def assign_from_the_index(table, agent):
    """Broken: the first ticket the index lists, written unconditionally."""
    open_tickets = query_queue(table)
    if not open_tickets:
        return None
    move(table, open_tickets[0], agent)
    return open_tickets[0]["ticket"]


def query_queue(table):
    """The open tickets, as GSI1 lists them."""
    return table.query(IndexName="GSI1", KeyConditionExpression=Key("GSI1PK").eq("QUEUE#open"))["Items"]


def move(table, ticket, agent, condition=None):
    """Assign a ticket and move it to QUEUE#assigned, under `condition` when given."""
    options = {"ConditionExpression": condition} if condition else {}
    table.update_item(Key={"PK": ticket["PK"], "SK": "TICKET"},
                      UpdateExpression="SET assignee = :agent, GSI1PK = :moved",
                      ExpressionAttributeValues={":agent": agent, ":moved": "QUEUE#assigned"}, **options)


def assign_with_a_condition(table, agent, candidates=None):
    """The index proposes, the condition decides, a refusal moves on to the next candidate."""
    for ticket in query_queue(table)[:candidates]:
        try:
            move(table, ticket, agent, "attribute_not_exists(assignee)")
            return ticket["ticket"]
        except ClientError as error:
            if error.response["Error"]["Code"] != "ConditionalCheckFailedException":
                raise
    return None


TICKET_TWICE = ("alice: Query -> bob: Query -> alice: UpdateItem -> bob: UpdateItem: 2 agents were told ticket T-1 is "
                "theirs (agent-0, agent-1); the ticket names agent-1 (in 4 of the 6 orders in which alice and bob's "
                "requests can reach DynamoDB)")


def test_a_conditional_assignment_that_moves_on_passes_both_stages(lab):
    report = check_assign_ticket(assign_with_a_condition)
    assert report.passed and report.message.endswith("and in all 6 orders of the exhaustive stage"), report.message
    if lab.kind == "embedded":
        assert get_knobs(lab)["gsi_lag"] is None


def test_deciding_from_the_index_is_caught_giving_a_ticket_twice():
    report = check_assign_ticket(assign_from_the_index)
    assert not report.passed
    assert report.message == TICKET_TWICE


def test_a_refused_assignment_that_gives_up_is_caught_leaving_a_ticket_open():
    report = check_assign_ticket(lambda table, agent: assign_with_a_condition(table, agent, candidates=1))
    assert not report.passed
    assert report.message.startswith("alice: Query -> bob: Query -> alice: UpdateItem -> bob: UpdateItem: agent-1 was "
                                     "told no ticket is open, but T-2 still is (in 4 of the 6 orders")


@pytest.mark.stress
def test_the_notebooks_starting_assign_ticket_is_caught_in_the_exhaustive_stage(lab, run):
    starting_assign, = notebook_functions(NOTEBOOK, "assign_ticket")
    report = check_assign_ticket(starting_assign)
    assert report.schedule == ("alice", "bob", "alice", "bob")
    assert report.message == TICKET_TWICE


def test_the_notebooks_assign_ticket_solution_passes(lab):
    solution, = notebook_functions(NOTEBOOK, "assign_ticket_solution")
    report = check_assign_ticket(solution)
    assert report.passed and report.message.endswith("and in all 6 orders of the exhaustive stage"), report.message


@pytest.mark.parametrize("checker, solution, hidden", [
    (check_find_user, find_with_retries, []), (check_register, register_with_sentinel, None),
    (check_assign_ticket, assign_with_a_condition, None)], ids=["find_user", "register", "assign_ticket"])
def test_a_solution_that_swallows_every_error_fails_naming_the_error_it_hid(lab, checker, solution, hidden):
    report = checker(swallowing(solution, hidden))
    assert not report.passed
    assert report.message.startswith(hidden_missing_table(checker.__name__[len('check_'):], hidden)), report.message
