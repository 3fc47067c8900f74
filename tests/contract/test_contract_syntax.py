"""An expression DynamoDB cannot parse is a ValidationException naming the token, never an InternalServerError."""
import pytest
from botocore.exceptions import ClientError


def refusal(call, **request):
    """The error code and message a request is refused with."""
    with pytest.raises(ClientError) as caught:
        call(**request)
    return caught.value.response["Error"]["Code"], caught.value.response["Error"]["Message"]


def test_arithmetic_in_a_condition_is_a_syntax_error_naming_the_token(table, key):
    answer = refusal(table.update_item, Key=key("wallet"), UpdateExpression="SET withdrawn = :a",
                     ConditionExpression="withdrawn + :a <= :limit", ExpressionAttributeValues={":a": 1, ":limit": 2})
    assert answer == ("ValidationException", 'Invalid ConditionExpression: Syntax error; token: "+", near: "withdrawn + :a"')


def test_a_filter_that_cannot_be_parsed_is_a_syntax_error_too(table):
    answer = refusal(table.scan, FilterExpression="views + :one > :two", ExpressionAttributeValues={":one": 1, ":two": 2})
    assert answer == ("ValidationException", 'Invalid FilterExpression: Syntax error; token: "+", near: "views + :one"')
