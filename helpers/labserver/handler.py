"""moto's DynamoDB request handler, made cheaper per request without changing a byte it answers.

moto serialises every response by walking botocore's output model, about a quarter of its time per
UpdateItem. Item operations' results are already DynamoDB JSON, so for them we keep only the
output shape's top-level members and encode with json.dumps: the same body, much sooner (binary
values, which moto keeps as bytes, as the base64 text DynamoDB sends). moto also lists the handler's
methods with inspect on every request; that list never changes, so it is cached.

moto's per-request set-up builds a werkzeug request from a WSGI environment, parses the JSON body as
a query string and a form, and records the account with IAM: a quarter of an UpdateItem. `answer`
sets up the same handler state from the request's parts directly, with moto's own body parser, so
the action methods see exactly the parameters they would. moto parses each UpdateExpression twice
per request into a tree that its validator deep-copies before use: the parse is cached by text, and
the validator's copy is unpickled from that tree's pickle, a quarter of deepcopy's cost. Its request
ids are drawn one character per call; here all 52 in one call, from the same alphabet and generator.
"""
import base64
import copy
import json
import pickle
import string
from collections import OrderedDict
from functools import cache, lru_cache
from types import SimpleNamespace
from urllib.parse import urlparse

from moto.core import responses as moto_responses
from moto.core.parse import PROTOCOL_PARSERS
from moto.core.request import determine_request_protocol
from moto.core.responses import get_service_model
from moto.core.utils import utcnow
from moto.dynamodb.parsing import validators
from moto.dynamodb.parsing.ast_nodes import UpdateExpression
from moto.dynamodb.parsing.expressions import UpdateExpressionParser
from moto.dynamodb.responses import DynamoHandler
from moto.moto_api._internal import mock_random
from moto.utilities.utils import get_partition
from werkzeug.http import http_date

EXPRESSIONS_KEPT = 1024
REQUEST_ID_ALPHABET = string.ascii_letters + string.digits


def request_id(headers=None):
    """moto's 52-character request id, drawn in one call; recorded in `headers` as moto does."""
    value = "".join(mock_random.choices(REQUEST_ID_ALPHABET, k=52))
    if isinstance(headers, dict):
        headers["x-amzn-requestid"] = value
    return value


def copy_for_validation(node):
    """validators.deepcopy: a parsed UpdateExpression (cached, never changed) from its pickle; else a deepcopy."""
    if isinstance(node, UpdateExpression):
        return pickle.loads(pickled(node))
    return copy.deepcopy(node)


@lru_cache(maxsize=EXPRESSIONS_KEPT)
def pickled(node):
    """The pickle of one cached expression tree."""
    return pickle.dumps(node, pickle.HIGHEST_PROTOCOL)


moto_responses.method_names_from_class = cache(moto_responses.method_names_from_class)
moto_responses.gen_amzn_requestid_long = request_id
UpdateExpressionParser.make = classmethod(lru_cache(maxsize=EXPRESSIONS_KEPT)(UpdateExpressionParser.make.__func__))
validators.deepcopy = copy_for_validation

ITEM_OPERATIONS = frozenset({"GetItem", "PutItem", "UpdateItem", "DeleteItem", "Query", "Scan", "BatchGetItem",
                             "BatchWriteItem", "TransactGetItems", "TransactWriteItems"})
JSON_HEADERS = {"Content-Type": "application/x-amz-json-1.0"}


def base64_text(value):
    """json.dumps fallback: a B or BS member, which moto keeps as bytes, as DynamoDB's base64 text."""
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


def request_parser(operation, content_type):
    """moto's parser of one operation's request body (the one its setup_class would choose)."""
    service_model = get_service_model("dynamodb")
    parser_class = PROTOCOL_PARSERS[determine_request_protocol(service_model, content_type)]
    return parser_class(service_model.operation_model(operation), map_type=DynamoHandler.PROTOCOL_PARSER_MAP_TYPE)


@cache
def output_members(operation):
    """The top-level member names of an operation's output shape."""
    return frozenset(get_service_model("dynamodb").operation_model(operation).output_shape.members)


class FastDynamoHandler(DynamoHandler):
    """DynamoHandler set up without werkzeug, whose item-operation responses skip moto's model-walking serializer."""

    @classmethod
    def answer(cls, url, headers, body, operation):
        """moto's answer to one DynamoDB request: (status, headers, body)."""
        handler = cls()
        handler.set_up(url, headers, body, operation)
        return handler.call_action()

    def set_up(self, url, headers, body, operation):
        """The state moto's setup_class gives a handler, for a JSON request naming its operation."""
        self.is_werkzeug_request = False
        self.parsed_url = urlparse(url)
        self.uri, self.path, self.raw_path, self.method = url, self.parsed_url.path, self.parsed_url.path, "POST"
        self.headers = headers
        self.raw_body, self.body = body, body.decode("utf-8")
        self.querystring = self.data = OrderedDict()
        self.uri_match = {}
        self.region = self.get_region_from_url(SimpleNamespace(headers=headers), url)
        self.partition = get_partition(self.region)
        self.response_headers = {"server": "amazon.com", "date": http_date(utcnow())}
        self.params = request_parser(operation, headers.get("Content-Type")).parse(
            {"method": "POST", "values": {}, "headers": headers, "body": body, "url_path": self.path, "url_params": {}})
        self.access_key = self.get_access_key()
        self.current_account = self.get_current_account()

    def serialized(self, action_result):
        """Encode item-operation results directly; everything else as moto does."""
        operation = self._get_action()
        result = action_result.result
        if operation in ITEM_OPERATIONS and isinstance(result, dict):
            members = output_members(operation)
            body = json.dumps({key: value for key, value in result.items() if key in members}, default=base64_text)
            return 200, {**JSON_HEADERS, **self.response_headers}, body
        return super().serialized(action_result)
