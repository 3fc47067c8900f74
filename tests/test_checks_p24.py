"""The notebook 24 checkers fail the racy versions and pass the atomic ones."""
from botocore.exceptions import ClientError

from helpers.checks.p24 import LIMIT, OVERWRITTEN, best_key, check_allow, check_buy, check_record, window_key
from support import notebook_functions, swallowing, hidden_missing_table

STOCK = {"PK": "PRODUCT#widget", "SK": "STOCK"}


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


def test_buy_checked_in_code_is_caught_overselling(lab):
    report = check_buy(buy_checked_in_code)
    assert not report.passed and "were told they bought one" in report.message


def test_buy_with_a_floor_passes(lab):
    report = check_buy(buy_with_a_floor)
    assert report.passed, report.message


def test_buy_that_raises_for_sold_out_is_told_to_return_false(lab):
    report = check_buy(buy_that_raises_when_sold_out)
    assert not report.passed and "instead of returning False" in report.message


NOTEBOOK = "24-atomic-counters.ipynb"
RACE = "alice: GetItem -> bob: GetItem -> alice: PutItem -> bob: PutItem: "


def test_the_notebooks_starting_buy_is_caught_in_the_same_order_every_run(lab, run):
    starting_buy, = notebook_functions(NOTEBOOK, "buy")
    report = check_buy(starting_buy)
    assert not report.passed and report.schedule == ("alice", "bob", "alice", "bob")
    assert report.message == (RACE + "2 shoppers were told they bought one, and the stock went from 1 to 0 (in 4 of "
                              "the 6 distinct orders in which alice and bob's requests can reach DynamoDB). Why: "
        "bob's GetItem read PRODUCT#widget/STOCK as the setup left it; alice's PutItem wrote a newer version; "
        "bob's PutItem wrote PRODUCT#widget/STOCK over alice's: a lost update (Elle: lost-update, a G-single-item "
        "cycle). A read and then a write are two requests: put the check in the write itself, a "
        "ConditionExpression (attribute_not_exists, or version = :read), so that it is refused once another write "
        "came between")


def test_the_notebooks_solutions_pass_both_stages(lab):
    buy_solution, record_solution = notebook_functions(NOTEBOOK, "buy_solution", "record_solution")
    for report in (check_buy(buy_solution), check_record(record_solution)):
        assert report.passed, report.message
        assert report.message.endswith("and in all 2 distinct orders of the exhaustive stage")


def test_checking_the_last_widget_in_code_before_add_is_caught_going_below_zero(lab):
    def buy_checked_then_added(table):
        if table.get_item(Key=STOCK)["Item"]["stock"] <= 0:
            return False
        table.update_item(Key=STOCK, UpdateExpression="ADD stock :minus_one", ExpressionAttributeValues={":minus_one": -1})
        return True

    report = check_buy(buy_checked_then_added)
    assert report.message.startswith("alice: GetItem -> bob: GetItem -> alice: UpdateItem -> bob: UpdateItem: 2 "
                                     "shoppers were told they bought one, and the stock went from 1 to -1 (in 4 of the 6 "
                                     "distinct orders")


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
                              "4; the limit is 3) (in 4 of the 6 distinct orders in which alice and bob's requests can "
                              "reach DynamoDB). Why: "
        "bob's GetItem read RATE#alice/MINUTE#29000000 as the setup left it; alice's UpdateItem wrote a newer "
        "version; bob's UpdateItem wrote RATE#alice/MINUTE#29000000 over alice's: a lost update (Elle: "
        "lost-update, a G-single-item cycle). A read and then a write are two requests: put the check in the "
        "write itself, a ConditionExpression (attribute_not_exists, or version = :read), so that it is refused "
        "once another write came between")


def test_allow_with_add_and_a_ceiling_passes(lab):
    report = check_allow(allow_with_a_ceiling)
    assert report.passed, report.message
    assert report.message.endswith("and in all 2 distinct orders of the exhaustive stage")


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
    assert report.message.endswith("and in all 2 distinct orders of the exhaustive stage")


def test_the_notebooks_starting_record_is_caught_in_the_same_order_every_run(lab, run):
    starting_record, = notebook_functions(NOTEBOOK, "record")
    report = check_record(starting_record)
    assert not report.passed and report.schedule == ("alice", "bob", "alice", "bob")
    assert report.message.startswith(RACE + "lee's best is 70, not 90: bob's record('lee', 70) overwrote a higher "
                                     "best with a lower score (in 2 of the 6 distinct orders in which alice and bob's "
                                     "requests can reach DynamoDB). Why: bob's GetItem read ")
    assert ": a lost update (Elle: lost-update, a G-single-item cycle). A read and then a write are two requests" in \
        report.message


def recording(condition):
    """A record() that makes one update of the best under `condition` and reports a refusal as False."""
    def record(table, player, score):
        try:
            table.update_item(Key=best_key(player), UpdateExpression="SET best = :s", ConditionExpression=condition,
                              ExpressionAttributeValues={":s": score})
            return True
        except ClientError as error:
            if error.response["Error"]["Code"] != "ConditionalCheckFailedException":
                raise
            return False
    return record


def test_a_condition_that_lets_a_tie_through_is_told_a_tie_is_not_a_new_best(lab):
    report = check_record(recording("attribute_not_exists(best) OR best <= :s"))
    assert not report.passed
    assert report.message == ("alice's record('kim', 50) returned True on kim's best of 50: a tie is not a new best: "
                              "return False for a score equal to the best (with 2 concurrent calls)")


def test_a_condition_without_attribute_not_exists_refuses_a_first_score(lab):
    report = check_record(recording("best < :s"))
    assert not report.passed and report.schedule == ("alice", "bob")
    assert report.message.startswith("alice: UpdateItem -> bob: UpdateItem: alice's record('lee', 90) returned False "
                                     "on lee, who had no best yet: record refused a new best")
    assert "let a missing best through with attribute_not_exists(best) OR ..." in report.message


def test_record_that_refuses_everything_is_told_it_refused_a_new_best(lab):
    report = check_record(lambda table, player, score: False)
    assert not report.passed
    assert report.message.startswith("before any request: alice's record('lee', 90) returned False on lee, who had "
                                     "no best yet: record refused a new best (a score above the best must be stored "
                                     "and return True)")


def test_a_comparison_the_wrong_way_round_is_caught_in_both_orders(lab):
    report = check_record(recording("attribute_not_exists(best) OR best > :s"))
    assert not report.passed and report.schedule == ("alice", "bob")
    assert report.message == ("alice: UpdateItem -> bob: UpdateItem: lee's best is 70, not 90: bob's record('lee', 70) "
                              "overwrote a higher best with a lower score (in 2 of the 2 distinct orders in which alice "
                              f"and bob's requests can reach DynamoDB). Why: {OVERWRITTEN}")


def test_a_condition_on_the_wrong_attribute_lets_a_lower_score_overwrite(lab):
    report = check_record(recording("attribute_not_exists(score) OR score < :s"))
    assert not report.passed and report.schedule == ("alice", "bob")
    assert report.message.startswith("alice: UpdateItem -> bob: UpdateItem: lee's best is 70, not 90: bob's "
                                     "record('lee', 70) overwrote a higher best with a lower score")


def test_a_first_score_put_after_a_read_is_caught_overwriting(lab):
    guarded = recording("best < :s")

    def record_first_in_code(table, player, score):
        if "Item" not in table.get_item(Key=best_key(player)):
            table.put_item(Item={**best_key(player), "best": score})
            return True
        return guarded(table, player, score)

    report = check_record(record_first_in_code)
    assert not report.passed and report.schedule == ("alice", "bob", "alice", "bob")
    assert report.message.startswith(RACE + "lee's best is 70, not 90")


def test_record_that_swallows_its_refusal_is_told_a_tie_is_not_a_new_best(lab):
    guarded = recording("attribute_not_exists(best) OR best < :s")
    report = check_record(lambda table, player, score: guarded(table, player, score) or True)
    assert not report.passed
    assert report.message == ("alice's record('kim', 50) returned True on kim's best of 50: a tie is not a new best: "
                              "return False for a score equal to the best (with 2 concurrent calls)")


def test_a_best_stored_as_text_is_told_to_store_the_number(lab):
    def record_as_text(table, player, score):
        return recording("attribute_not_exists(best) OR best < :s")(table, player, str(score))

    report = check_record(record_as_text)
    assert not report.passed
    assert report.message.startswith("alice: UpdateItem -> bob: UpdateItem: lee's best is '90', not 90: store the "
                                     "score itself, as a number, in best")


def test_record_that_swallows_every_error_is_told_which_error_it_hid(lab):
    report = check_record(swallowing(recording("attribute_not_exists(best) OR best < :s")))
    assert not report.passed
    assert report.message.startswith(hidden_missing_table("record"))


def test_buy_that_swallows_every_error_is_told_which_error_it_hid(lab):
    report = check_buy(swallowing(buy_with_a_floor))
    assert not report.passed
    assert report.message.startswith(hidden_missing_table("buy"))
