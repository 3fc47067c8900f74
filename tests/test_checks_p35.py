"""The notebook 35 checker passes a running total kept exactly once per stream record, and catches the ones a learner
would plausibly write that count a redelivered record again, drop a payment, or stop the stream."""
import pytest
from botocore.exceptions import ClientError

from helpers.checks.p35 import check_add_and_notify, check_add_payment, check_apply_price

pytestmark = pytest.mark.stress


def payment(record):
    """(customer, amount) of a payment record."""
    image = record["dynamodb"]["NewImage"]
    return image["customer"]["S"], int(image["amount"]["N"])


def total_key(record):
    """The key of the record's customer's total."""
    return {"PK": f"TOTAL#{payment(record)[0]}"}


def add(table, record, **condition):
    """ADD the record's amount to its customer's total (with a condition, if given)."""
    table.update_item(Key=total_key(record), UpdateExpression="ADD #t :a", ExpressionAttributeNames={"#t": "total"},
                      ExpressionAttributeValues={":a": payment(record)[1]}, **condition)


def refused(error):
    """True for a ConditionalCheckFailedException; re-raise any other error."""
    if error.response["Error"]["Code"] != "ConditionalCheckFailedException":
        raise error
    return True


def add_once_in_one_write(table, record):
    """Correct: the amount and the record's eventID added in one UpdateItem, refused if the eventID is there."""
    try:
        table.update_item(Key=total_key(record), UpdateExpression="ADD #t :a, applied :ids",
                          ConditionExpression="NOT contains(applied, :id)", ExpressionAttributeNames={"#t": "total"},
                          ExpressionAttributeValues={":a": payment(record)[1], ":ids": {record["eventID"]},
                                                     ":id": record["eventID"]})
    except ClientError as error:
        refused(error)


def marker_and_total(table, record):
    """A marker item keyed by the eventID, put only if absent, and the total, in one transaction."""
    table.meta.client.transact_write_items(TransactItems=[
        {"Put": {"TableName": table.name, "Item": {"PK": f"APPLIED#{record['eventID']}"},
                 "ConditionExpression": "attribute_not_exists(PK)"}},
        {"Update": {"TableName": table.name, "Key": total_key(record), "UpdateExpression": "ADD #t :a",
                    "ExpressionAttributeNames": {"#t": "total"},
                    "ExpressionAttributeValues": {":a": payment(record)[1]}}}])


def add_once_in_a_transaction(table, record):
    """Correct: marker_and_total, its cancellation by the marker's condition answered as done."""
    try:
        marker_and_total(table, record)
    except ClientError as error:
        reasons = [reason["Code"] for reason in error.response.get("CancellationReasons", ())]
        if reasons[:1] != ["ConditionalCheckFailed"]:
            raise


def add_every_time(table, record):
    """Broken: a plain ADD, so a record handed over again is added again."""
    add(table, record)


SEEN = set()


def add_unless_seen_in_memory(table, record):
    """Broken: remembers the records it added in the process's memory, after adding each."""
    if record["eventID"] in SEEN:
        return
    add(table, record)
    SEEN.add(record["eventID"])


CLAIMED = set()


def add_after_claiming_in_memory(table, record):
    """Broken: claims each record in the process's memory before adding it; memory that survives a death here would
    not in Lambda, but the SDK's resend of an ADD whose response was lost adds it twice anyway."""
    if record["eventID"] in CLAIMED:
        return
    CLAIMED.add(record["eventID"])
    add(table, record)


def claim_then_add(table, record, marker):
    """Put the marker item unless it exists (then do nothing), and then, in a second write, a plain ADD."""
    try:
        table.put_item(Item={"PK": marker}, ConditionExpression="attribute_not_exists(PK)")
    except ClientError as error:
        refused(error)
        return
    add(table, record)


def add_once_per_customer_and_amount(table, record):
    """Broken: dedupes by what the payment says (customer and amount), which two payments may share."""
    customer, amount = payment(record)
    claim_then_add(table, record, f"APPLIED#{customer}#{amount}")


def check_marker_then_add(table, record):
    """Broken: reads the marker, adds, then writes the marker: three requests, with room to die between them."""
    marker = {"PK": f"APPLIED#{record['eventID']}"}
    if "Item" in table.get_item(Key=marker, ConsistentRead=True):
        return
    add(table, record)
    table.put_item(Item=marker)


def claim_marker_then_add(table, record):
    """Broken: claims the eventID with a conditional put, then adds in a second write, a plain ADD: dying between them
    loses the payment, and the ADD's resend after a lost response adds it twice."""
    claim_then_add(table, record, f"APPLIED#{record['eventID']}")


def transaction_raising_on_a_repeat(table, record):
    """Broken: the marker and the total together, but a record already applied raises, so its batch fails forever."""
    marker_and_total(table, record)


def add_swallowing_errors(table, record):
    """Broken: the one-write answer, but every error is swallowed, a missing table's too."""
    try:
        add_once_in_one_write(table, record)
    except Exception:
        pass


@pytest.mark.parametrize("add_payment", [add_once_in_one_write, add_once_in_a_transaction])
def test_a_total_kept_once_per_event_id_passes(lab, add_payment):
    report = check_add_payment(add_payment)
    assert report.passed, report.message
    assert "in all 22 distinct orders with lost responses and crashes" in report.message
    assert report.figure().layout.title.text.startswith("24 records, handed to the function 48 times")


def test_a_plain_add_is_caught_adding_a_redelivered_payment_again(lab):
    report = check_add_payment(add_every_time)
    assert not report.passed
    assert "TOTAL#alice holds 120, but alice's payments (pay-1 30, pay-3 30) add up to 60" in report.message
    assert "(then the invocation dies)" in report.message and "the client crashes" not in report.message
    assert "(in 21 of the 22 places a crash or a lost response can fall in the consumer's requests)" in report.message
    assert ("Why: the invocation died right after its UpdateItem, which stayed applied; the mapping handed its batch "
            "over again, and the same UpdateItem was applied a second time") in report.message


def test_a_single_consumers_report_counts_the_places_a_fault_can_fall_not_orders_and_says_the_invocation_dies(lab):
    report = check_add_payment(add_every_time)
    assert "distinct orders" not in report.message and "the client crashes" not in report.message
    assert "places a crash or a lost response can fall in the consumer's requests" in report.message
    assert "the invocation died" in report.message and "the client" not in report.message


DIED_AFTER_ADD = ("a payment was added more than once", "Why: the invocation died right after its UpdateItem, which "
                  "stayed applied; the mapping handed its batch over again, and the same UpdateItem was applied a "
                  "second time. Writes that belong together must be one request")


@pytest.mark.parametrize("wrong, words", [
    (add_unless_seen_in_memory, DIED_AFTER_ADD),  # remembered after the ADD the death cut short
    (add_after_claiming_in_memory, ("a payment was added more than once", "Why: the consumer's UpdateItem was applied "
                                    "and its response lost; the SDK sent it again and it was applied a second time")),
    (check_marker_then_add, DIED_AFTER_ADD),  # died between the ADD and the marker
    (transaction_raising_on_a_repeat, ("a batch kept failing, so its records were never handled",
                                       "Why: the function raised on every delivery of the batch")),
    (add_swallowing_errors, ("instead of raising ResourceNotFoundException",)),
])
def test_a_wrong_answer_is_caught_saying_what_went_wrong(lab, wrong, words):
    report = check_add_payment(wrong)
    assert not report.passed and all(word in report.message for word in words), report.message


def test_deduping_by_customer_and_amount_is_caught_dropping_a_second_payment_of_the_same_amount(lab):
    report = check_add_payment(add_once_per_customer_and_amount)
    assert not report.passed
    assert "TOTAL#alice holds 30, but alice's payments (pay-1 30, pay-3 30) add up to 60" in report.message
    assert "(in 1 of the 1 behaviours explored for the consumer)" in report.message
    assert ("Why: pay-1 and pay-3 are two different payments of 30, and only one was added: they were taken for one. "
            "Remember the record's eventID") in report.message


def test_a_marker_claimed_before_a_separate_add_is_caught_when_the_adds_response_is_lost_and_it_is_sent_again(lab):
    report = check_add_payment(claim_marker_then_add)
    assert not report.passed and "a payment was added more than once" in report.message
    assert ("Why: the consumer's UpdateItem was applied and its response lost; the SDK sent it again and it was "
            "applied a second time. A write must refuse its own repeat") in report.message


def test_passing_something_else_than_a_function_says_what_to_pass(lab):
    with pytest.raises(TypeError, match="Pass your function itself"):
        check_add_payment("add_payment")


def tell_once(table, customer):
    """Write the customer's one notification, refused if it exists."""
    try:
        table.put_item(Item={"PK": f"NOTIFY#{customer}"}, ConditionExpression="attribute_not_exists(PK)")
    except ClientError as error:
        refused(error)


def total_of(table, record):
    """The record's customer's total, read strongly."""
    return table.get_item(Key=total_key(record), ConsistentRead=True)["Item"]["total"]


def add_and_notify_from_the_total(table, record):
    """Correct: the payment added once per eventID; then, whoever added it, one notification once the total is 100."""
    add_once_in_one_write(table, record)
    if total_of(table, record) >= 100:
        tell_once(table, payment(record)[0])


def crossed_here(table, record):
    """The payment added once per eventID, answering whether this call took the total to 100 (None: added before)."""
    customer, amount = payment(record)
    try:
        new = table.update_item(Key=total_key(record), UpdateExpression="ADD #t :a, applied :ids",
                                ConditionExpression="NOT contains(applied, :id)", ReturnValues="UPDATED_NEW",
                                ExpressionAttributeNames={"#t": "total"},
                                ExpressionAttributeValues={":a": amount, ":ids": {record["eventID"]},
                                                           ":id": record["eventID"]})["Attributes"]["total"]
    except ClientError as error:
        refused(error)
        return None
    return new - amount < 100 <= new


def notify_every_time_over(table, record):
    """Broken: a notification of its own for every payment that leaves the total at 100 or more."""
    add_once_in_one_write(table, record)
    if total_of(table, record) >= 100:
        table.put_item(Item={"PK": f"NOTIFY#{payment(record)[0]}#{record['eventID']}"})


def notify_only_when_this_call_crossed(table, record):
    """Broken: tells only when its own ADD crossed 100, so a redelivery after a death in between tells nobody."""
    if crossed_here(table, record):
        tell_once(table, payment(record)[0])


def notify_again_when_added_before(table, record):
    """Broken: tells when crossing, and again on a repeat that finds the total at 100, under a key of its own."""
    crossed = crossed_here(table, record)
    if crossed or crossed is None and total_of(table, record) >= 100:
        table.put_item(Item={"PK": f"NOTIFY#{payment(record)[0]}#{record['eventID']}#{crossed}"})


def notify_by_overwriting(table, record):
    """Right, unusually: no condition at all, the customer's one notification item written again whenever the total
    is 100 or more (a second write of the same key leaves one notification)."""
    add_once_in_one_write(table, record)
    if total_of(table, record) >= 100:
        table.put_item(Item={"PK": f"NOTIFY#{payment(record)[0]}"})


@pytest.mark.parametrize("right", [add_and_notify_from_the_total, notify_by_overwriting])
def test_a_notification_decided_from_the_total_under_the_customers_key_passes(lab, right):
    report = check_add_and_notify(right)
    assert report.passed, report.message


@pytest.mark.parametrize("wrong, words", [
    (notify_every_time_over, "alice's total reached 130 and alice was told 2 times (in 1 of the 1 behaviours explored "
                             "for the consumer). Why: alice's notifications are 2 items, each written under a key of its "
                             "own"),
    (notify_only_when_this_call_crossed, "alice's total reached 130 and alice was never told (in 20 of the first 45 "
                                         "places a crash or a lost response can fall in the consumer's requests; the "
                                         "rest were left unexplored: one failing order is enough). "
                                         "Why: the invocation died right after its UpdateItem, which stayed applied; "
                                         "the mapping handed its batch over again, and the same UpdateItem was refused "
                                         "(ConditionalCheckFailedException): what the second try did next was decided "
                                         "by that refusal"),
    (notify_again_when_added_before, "alice was told 4 times (in 41 of the first 45 places a crash or a lost response "
                                     "can fall in the consumer's requests; the rest were left unexplored: one failing "
                                     "order is enough). Why: the invocation died right after its "
                                     "UpdateItem, which stayed applied; the mapping handed its batch over again, and "
                                     "the same UpdateItem was refused"),
    (add_every_time, "alice's total reached 130 and alice was never told"),
])
def test_a_wrong_notification_is_caught_saying_who_was_told_how_often(lab, wrong, words):
    report = check_add_and_notify(wrong)
    assert not report.passed and words in report.message


def price_item(record, version=None):
    """The price item a product record's image makes (its version as given, else the image's number)."""
    image = record["dynamodb"]["NewImage"]
    return {"PK": image["PK"]["S"].replace("PRODUCT#", "PRICE#"), "price": int(image["price"]["N"]),
            "version": int(image["version"]["N"]) if version is None else version}


def put_if_newer(table, record, version=None, compare="<"):
    """Put the price item unless the stored one's version is not below this one's; a refusal is 'done'."""
    item = price_item(record, version)
    try:
        table.put_item(Item=item, ConditionExpression=f"attribute_not_exists(PK) OR version {compare} :v",
                       ExpressionAttributeValues={":v": item["version"]})
    except ClientError as error:
        refused(error)


def price_gated_by_version(table, record):
    """Correct: the image applied only if its version is newer than the stored one."""
    put_if_newer(table, record)


def price_gated_allowing_the_same_version(table, record):
    """Unusual but right: `version <= :v` also lets the same version be written again, which changes nothing."""
    put_if_newer(table, record, compare="<=")


def price_blind(table, record):
    """Broken: the image applied whatever came before (the notebook's starting code)."""
    table.put_item(Item=price_item(record))


def price_version_as_text(table, record):
    """Broken: the version kept as the record's string, so '10' < '9'."""
    put_if_newer(table, record, version=record["dynamodb"]["NewImage"]["version"]["N"])


def price_deduped_by_event_id(table, record):
    """Broken: each record applied once (a marker keyed by its eventID), but in the order handed over."""
    try:
        table.put_item(Item={"PK": f"APPLIED#{record['eventID']}"}, ConditionExpression="attribute_not_exists(PK)")
    except ClientError as error:
        refused(error)
        return
    table.put_item(Item=price_item(record))


def price_gated_by_approximate_time(table, record):
    """Broken: gated by ApproximateCreationDateTime, which is rounded to the second: two updates within one second tie,
    and the newer is refused."""
    put_if_newer(table, record, version=int(record["dynamodb"]["ApproximateCreationDateTime"]))


def price_raising_on_refusal(table, record):
    """Broken: the gate's refusal raised, so a batch with an older record fails for ever."""
    item = price_item(record)
    table.put_item(Item=item, ConditionExpression="attribute_not_exists(PK) OR version < :v",
                   ExpressionAttributeValues={":v": item["version"]})


@pytest.mark.parametrize("apply_price", [price_gated_by_version, price_gated_allowing_the_same_version])
def test_a_price_gated_by_its_version_passes(lab, apply_price):
    report = check_apply_price(apply_price)
    assert report.passed, report.message
    assert report.message.startswith("every price right once all 24 price updates were handed over in batches of 5")


OLDER_LAST = "Why: a Kinesis data stream may hand a newer change over before an older one"


@pytest.mark.parametrize("wrong, words", [
    (price_blind, f"an older update was applied after a newer one (in 3 of the 6 behaviours explored for the consumer, "
                  "which differ in the choices made for it (the order a Kinesis stream hands records over in)). "
                  f"{OLDER_LAST}"),
    (price_version_as_text, "(version '9', a string)"),
    (price_deduped_by_event_id, f"an older update was applied after a newer one (in 3 of the 6 behaviours explored "
                                f"for the consumer, which differ in the choices made for it (the order a Kinesis stream "
                                f"hands records over in)). {OLDER_LAST}"),
    (price_gated_by_approximate_time, "an older update was applied after a newer one"),
    (price_raising_on_refusal, "a batch kept failing, so its records were never handled"),
])
def test_a_wrong_price_projection_is_caught_saying_what_went_wrong(lab, wrong, words):
    report = check_apply_price(wrong)
    assert not report.passed and words in report.message, report.message


def test_a_price_kept_as_text_is_told_why(lab):
    report = check_apply_price(price_version_as_text)
    assert report.message.endswith("as strings '10' comes before '9': keep it a number, as the record's NewImage has "
                                   "it (`N`)"), report.message


def notify_over_100(table, record):
    """Broken: tells when the total exceeds 100, so a customer whose total is exactly 100 is never told."""
    add_once_in_one_write(table, record)
    if total_of(table, record) > 100:
        tell_once(table, payment(record)[0])


def test_telling_only_a_total_over_100_is_caught_by_a_customer_whose_total_is_exactly_100(lab):
    report = check_add_and_notify(notify_over_100)
    assert not report.passed
    assert "bob's total reached 100 and bob was never told" in report.message
    assert report.message.endswith("compare with >= 100, not > 100"), report.message


def price_gated_by_sequence_number(table, record):
    """Broken on Kinesis: gated by the DynamoDB Streams SequenceNumber, which a Kinesis record does not carry."""
    put_if_newer(table, record, version=int(record["dynamodb"]["SequenceNumber"]))


def test_a_price_gated_by_the_streams_sequence_number_fails_in_kinesis_mode_as_on_aws(lab):
    report = check_apply_price(price_gated_by_sequence_number)
    assert not report.passed and "KeyError: 'SequenceNumber'" in report.message, report.message
    assert "a record from a Kinesis data stream has no dynamodb.SequenceNumber" in report.message


def test_a_gate_whose_refusal_comes_out_of_the_function_is_told_why_and_what_to_change(lab):
    report = check_apply_price(price_raising_on_refusal)
    assert not report.passed and "ConditionalCheckFailedException" in report.message
    assert report.message.endswith("catch that code and go on to the next record"), report.message


def test_apply_price_re_raising_its_refusal_is_told_why_from_the_batch_given_up_not_only_that_it_kept_failing(lab):
    report = check_apply_price(price_raising_on_refusal)
    assert ("still failing after 5 attempts: Lambda would retry it until the records expire (24 hours), processing "
            "nothing after them on the shard meanwhile (in 5 of the 6 behaviours explored for the consumer, which "
            "differ in the choices made for it (the order a Kinesis stream hands records over in)). Why: the refusal "
            "of your own condition came out of the function (ConditionalCheckFailedException)") in report.message
