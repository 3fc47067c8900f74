"""The notebook 24 checkers fail the racy versions and pass the atomic ones."""
from botocore.exceptions import ClientError

from helpers.checks.p24 import check_buy, check_next_invoice

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
