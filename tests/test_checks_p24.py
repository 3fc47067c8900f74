"""The notebook 24 checkers fail the racy versions and pass the atomic ones."""
from botocore.exceptions import ClientError

from helpers.checks.p24 import LIMIT, check_allow, check_buy, check_next_invoice, window_key
from support import notebook_functions, swallowing, hidden_missing_table

STOCK = {"PK": "PRODUCT#widget", "SK": "STOCK"}
INVOICE = {"PK": "SEQUENCE#invoice", "SK": "COUNTER"}


def buy_checked_in_code(table):
    stock = table.get_item(Key=STOCK)["Item"]["stock"]
    if stock <= 0:
        return False
    table.put_item(Item={**STOCK, "stock": stock - 1})
    return True


def buy_with_a_floor(table):
    try:
        table.update_item(Key=STOCK, UpdateExpression="ADD stock :minus_one", ConditionExpression="stock > :zero",
                          ExpressionAttributeValues={":minus_one": -1, ":zero": 0})
        return True
    except ClientError as error:
        if error.response["Error"]["Code"] != "ConditionalCheckFailedException":
            raise
        return False


def buy_that_raises_when_sold_out(table):
    table.update_item(Key=STOCK, UpdateExpression="ADD stock :minus_one", ConditionExpression="stock > :zero",
                      ExpressionAttributeValues={":minus_one": -1, ":zero": 0})
    return True


def next_invoice_read_then_put(table):
    item = table.get_item(Key=INVOICE).get("Item", {"next": 0})
    table.put_item(Item={**INVOICE, "next": item["next"] + 1})
    return item["next"] + 1


def next_invoice_with_add(table):
    answer = table.update_item(Key=INVOICE, UpdateExpression="ADD #n :one", ExpressionAttributeNames={"#n": "next"},
                               ExpressionAttributeValues={":one": 1}, ReturnValues="UPDATED_NEW")
    return int(answer["Attributes"]["next"])


def test_buy_checked_in_code_is_caught_overselling(lab):
    report = check_buy(buy_checked_in_code)
    assert not report.passed and "were told they bought one" in report.message


def test_buy_with_a_floor_passes(lab):
    report = check_buy(buy_with_a_floor)
    assert report.passed, report.message


def test_buy_that_raises_for_sold_out_is_told_to_return_false(lab):
    report = check_buy(buy_that_raises_when_sold_out)
    assert not report.passed and "instead of returning False" in report.message


def test_next_invoice_read_then_put_hands_out_a_number_twice(lab):
    report = check_next_invoice(next_invoice_read_then_put)
    assert not report.passed and "handed out twice" in report.message


def test_next_invoice_with_add_passes(lab):
    report = check_next_invoice(next_invoice_with_add)
    assert report.passed, report.message


def test_next_invoice_returning_nothing_is_told_what_to_return(lab):
    report = check_next_invoice(lambda table: None)
    assert not report.passed and "return the new number itself" in report.message


NOTEBOOK = "24-atomic-counters.ipynb"
RACE = "alice: GetItem -> bob: GetItem -> alice: PutItem -> bob: PutItem: "


def test_the_notebooks_starting_buy_is_caught_in_the_same_order_every_run(lab, run):
    starting_buy, = notebook_functions(NOTEBOOK, "buy")
    report = check_buy(starting_buy)
    assert not report.passed and report.schedule == ("alice", "bob", "alice", "bob")
    assert report.message == (RACE + "2 shoppers were told they bought one, and the stock went from 1 to 0 (in 4 of "
                              "the 6 orders in which alice and bob's requests can reach DynamoDB)")


def test_the_notebooks_starting_next_invoice_is_caught_in_the_same_order_every_run(lab, run):
    starting_next_invoice, = notebook_functions(NOTEBOOK, "next_invoice")
    report = check_next_invoice(starting_next_invoice)
    assert not report.passed and report.schedule == ("alice", "bob", "alice", "bob")
    assert report.message == (RACE + "2 callers got [1, 1]: [1] handed out twice (in 4 of the 6 orders in which alice "
                              "and bob's requests can reach DynamoDB)")


def test_the_notebooks_solutions_pass_both_stages(lab):
    buy_solution, next_invoice_solution = notebook_functions(NOTEBOOK, "buy_solution", "next_invoice_solution")
    for report in (check_buy(buy_solution), check_next_invoice(next_invoice_solution)):
        assert report.passed, report.message
        assert report.message.endswith("and in all 2 orders of the exhaustive stage")


def test_checking_the_last_widget_in_code_before_add_is_caught_going_below_zero(lab):
    def buy_checked_then_added(table):
        if table.get_item(Key=STOCK)["Item"]["stock"] <= 0:
            return False
        table.update_item(Key=STOCK, UpdateExpression="ADD stock :minus_one", ExpressionAttributeValues={":minus_one": -1})
        return True

    report = check_buy(buy_checked_then_added)
    assert report.message.startswith("alice: GetItem -> bob: GetItem -> alice: UpdateItem -> bob: UpdateItem: 2 "
                                     "shoppers were told they bought one, and the stock went from 1 to -1 (in 4 of the 6 orders")


def allow_checked_in_code(table, user, now):
    key = window_key(user, now)
    if table.get_item(Key=key).get("Item", {"requests": 0})["requests"] >= LIMIT:
        return False
    table.update_item(Key=key, UpdateExpression="ADD requests :one", ExpressionAttributeValues={":one": 1})
    return True


def allow_with_a_ceiling(table, user, now):
    try:
        table.update_item(Key=window_key(user, now), UpdateExpression="ADD requests :one",
                          ConditionExpression="attribute_not_exists(requests) OR requests < :limit",
                          ExpressionAttributeValues={":one": 1, ":limit": LIMIT})
        return True
    except ClientError as error:
        if error.response["Error"]["Code"] != "ConditionalCheckFailedException":
            raise
        return False


def test_allow_checked_in_code_lets_the_limit_be_passed_naming_the_order(lab):
    report = check_allow(allow_checked_in_code)
    assert not report.passed and report.schedule == ("alice", "bob", "alice", "bob")
    assert report.message == ("alice: GetItem -> bob: GetItem -> alice: UpdateItem -> bob: UpdateItem: 2 of 2 requests "
                              "in alice's window MINUTE#29000000 were allowed, with room for 1 (the window now counts "
                              "4; the limit is 3) (in 4 of the 6 orders in which alice and bob's requests can reach "
                              "DynamoDB)")


def test_allow_with_add_and_a_ceiling_passes(lab):
    report = check_allow(allow_with_a_ceiling)
    assert report.passed, report.message
    assert report.message.endswith("and in all 2 orders of the exhaustive stage")


def test_a_ceiling_that_forgets_the_missing_window_refuses_every_first_request(lab):
    def allow_without_a_missing_window(table, user, now):
        try:
            table.update_item(Key=window_key(user, now), UpdateExpression="ADD requests :one",
                              ConditionExpression="requests < :limit",
                              ExpressionAttributeValues={":one": 1, ":limit": LIMIT})
            return True
        except ClientError as error:
            if error.response["Error"]["Code"] != "ConditionalCheckFailedException":
                raise
            return False

    report = check_allow(allow_without_a_missing_window)
    assert not report.passed
    assert report.message.startswith("0 of 1 requests in alice's window MINUTE#29000000 were allowed, with room for 3")


def test_allow_that_swallows_every_error_is_told_which_error_it_hid(lab):
    report = check_allow(swallowing(allow_with_a_ceiling))
    assert not report.passed
    assert report.message.startswith(hidden_missing_table("allow"))


def test_the_notebooks_starting_allow_is_caught_in_the_same_order_every_run(lab, run):
    starting_allow, = notebook_functions(NOTEBOOK, "allow")
    report = check_allow(starting_allow)
    assert not report.passed and report.schedule == ("alice", "bob", "alice", "bob")
    assert report.message.startswith("alice: GetItem -> bob: GetItem -> alice: UpdateItem -> bob: UpdateItem: 2 of 2 "
                                     "requests in alice's window MINUTE#29000000 were allowed, with room for 1")


def test_the_notebooks_allow_solution_passes_both_stages(lab):
    allow_solution, = notebook_functions(NOTEBOOK, "allow_solution")
    report = check_allow(allow_solution)
    assert report.passed, report.message
    assert report.message.endswith("and in all 2 orders of the exhaustive stage")



def test_every_checker_names_the_error_a_function_that_swallows_everything_hid(lab):
    for check, exercise, solution in ((check_buy, "buy", buy_with_a_floor),
                                      (check_next_invoice, "next_invoice", next_invoice_with_add)):
        report = check(swallowing(solution))
        assert not report.passed
        assert report.message.startswith(hidden_missing_table(exercise))
