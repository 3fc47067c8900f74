"""A checker's report reads as written wherever it is shown, and a checker the learner interrupts says so in one line
and records no attempt."""
import threading

import pandas as pd
import pytest
from botocore.exceptions import ClientError

from helpers.checks import CheckInterrupted, Report, as_markdown, interruptible
from helpers.checks.p35 import check_add_payment


def test_a_report_shows_angle_brackets_and_markdown_marks_as_written_but_leaves_code_spans_alone():
    report = Report("add_and_notify", False, "Key it by the customer (NOTIFY#<customer>), refused when it exists: "
                    "`attribute_not_exists(PK) OR version < :v`, 2*3 & total_seen", 1, pd.DataFrame())
    shown = report._repr_markdown_()
    assert "NOTIFY#&lt;customer&gt;" in shown and "<customer>" not in shown
    assert "`attribute_not_exists(PK) OR version < :v`" in shown, "a code span is shown literally by markdown"
    assert r"2\*3 &amp; total\_seen" in shown
    assert r"**add\_and\_notify**" in shown


def test_as_markdown_leaves_plain_words_alone():
    assert as_markdown("held in 6 runs of up to 10 concurrent calls") == "held in 6 runs of up to 10 concurrent calls"


def test_an_interrupted_checker_says_so_in_one_line():
    @interruptible
    def check_something():
        raise KeyboardInterrupt

    with pytest.raises(CheckInterrupted) as interrupted:
        check_something()
    assert isinstance(interrupted.value, KeyboardInterrupt), "Run All still stops there"
    assert interrupted.value._render_traceback_() == [
        "KeyboardInterrupt: the check was interrupted before it finished, and nothing was recorded: run the cell again "
        "to check your function"]
    assert interrupted.value.__cause__ is None and interrupted.value.__suppress_context__


def add_once_then_interrupted(table, record):
    """A right add_payment, until the learner presses Interrupt while the checker's stress stage runs it (the stress
    stage's consumer calls it on the kernel's main thread, where Interrupt lands)."""
    if threading.current_thread() is threading.main_thread():
        raise KeyboardInterrupt
    payment = record["dynamodb"]["NewImage"]
    try:
        table.update_item(Key={"PK": f"TOTAL#{payment['customer']['S']}"}, UpdateExpression="ADD #t :a, applied :ids",
                          ConditionExpression="NOT contains(applied, :id)", ExpressionAttributeNames={"#t": "total"},
                          ExpressionAttributeValues={":a": int(payment["amount"]["N"]), ":ids": {record["eventID"]},
                                                     ":id": record["eventID"]})
    except ClientError as error:
        if error.response["Error"]["Code"] != "ConditionalCheckFailedException":
            raise


@pytest.mark.stress
def test_a_real_checker_interrupted_mid_run_raises_one_line_and_records_no_attempt(lab, progress_file):
    with pytest.raises(CheckInterrupted, match="nothing was recorded"):
        check_add_payment(add_once_then_interrupted)
    assert not progress_file.exists()
