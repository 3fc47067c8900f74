"""moto's DynamoDB request handler, made cheaper per request without changing a byte it answers.

- Serialising: moto walks botocore's output model for every response. Item operations' results are
  already DynamoDB JSON, so for them we keep the output shape's top-level members and encode with
  json.dumps (binary values, which moto keeps as bytes, as the base64 text DynamoDB sends). The
  ConsumedCapacity and ItemCollectionMetrics moto adds unasked are left out, as DynamoDB does.
- Set-up: moto builds a werkzeug request from a WSGI environment, parses the JSON body as a query
  string and a form, and records the account with IAM. `answer` sets up the same handler state from
  the request's parts, so the action methods see the same parameters. The body's JSON object, which
  the server has parsed already, goes through moto's JSON parser compiled once per operation (the
  model's members, names and handlers looked up once, not at every value), and the backend is looked
  up once per request, not at each use.
- UpdateExpression: moto parses each one twice per request into a tree its validator deep-copies;
  the parse is cached by text, and the copy is made node by node (half the cost of unpickling the tree's
  pickle, itself a quarter of deepcopy's), or from its pickle for a tree that is not a plain one.
- Validation: moto's validator walks the tree once per check (ten walks), rebuilding the check's
  processing map at every node and testing nodes against abstract base classes; the map's node
  classes are kept per check, and each class test is remembered per pair of classes. The three checks
  that read nothing but the expression, its #names and the table's key run once per combination that
  passes, and a walk that can find nothing to process is not made (see LabUpdateExpressionValidator).
  An expression that reads nothing of the item (each action one top-level name and a :value, as
  `ADD #v :one`) is validated once per #names and short :values; each request gets a copy of that tree.
- Identity: the region, access key and account moto reads from the URL, the credential scope of the
  Authorization header and the User-Agent are worked out once per client (the signature after the
  scope is not read by moto's rules; it changes with every request).
- Request ids: 52 characters from moto's generator in one call (52 bytes, each mapped to one of the 62
  letters and digits), not one call each, and not then
  searched for in the body's XML, which DynamoDB's JSON never holds. The list of the handler's
  methods, which moto builds with inspect on every request, and the action names it derives with a
  regular expression, are cached.
"""
import base64
import copy
import json
import os
import pickle
import string
import time
from collections import OrderedDict
from datetime import datetime, timezone
from functools import cache, lru_cache, partial
from types import SimpleNamespace
from urllib.parse import urlparse

from moto.core import responses as moto_responses
from moto.core.parse import PROTOCOL_PARSERS, JSONParser
from moto.core.request import determine_request_protocol
from moto.core.responses import get_service_model
from moto.dynamodb import models as dynamodb_models
from moto.dynamodb.models.dynamo_type import DynamoType, Item, LimitedSizeDict
from moto.dynamodb.parsing import validators
from moto.dynamodb.parsing.ast_nodes import (DDBTypedValue, DepthFirstTraverser, ExpressionAttribute,
                                             ExpressionAttributeName, ExpressionAttributeValue, Node, NoneExistingPath,
                                             UpdateExpression, UpdateExpressionAddAction, UpdateExpressionAddActions,
                                             UpdateExpressionAddClause, UpdateExpressionDeleteAction,
                                             UpdateExpressionDeleteActions, UpdateExpressionDeleteClause,
                                             UpdateExpressionPath, UpdateExpressionRemoveAction,
                                             UpdateExpressionRemoveActions, UpdateExpressionRemoveClause,
                                             UpdateExpressionSetAction, UpdateExpressionSetActions,
                                             UpdateExpressionSetClause, UpdateExpressionValue)
from moto.dynamodb.parsing.executors import UpdateExpressionExecutor
from moto.dynamodb.parsing.expressions import UpdateExpressionParser
from moto.dynamodb.responses import DynamoHandler
from moto.moto_api._internal import mock_random
from moto.utilities.utils import get_partition
from werkzeug.datastructures import Headers
from werkzeug.http import http_date

from .. import fidelity
from . import conditions, updates  # noqa: F401  (conditions: moto's condition parses kept)

EXPRESSIONS_KEPT = 1024
REQUEST_ID_ALPHABET = string.ascii_letters + string.digits
REQUEST_ID_LETTERS = bytes(ord(REQUEST_ID_ALPHABET[byte % len(REQUEST_ID_ALPHABET)]) for byte in range(256))


def request_id():
    """A request id as moto makes them, 52 letters and digits from its generator (52 random bytes, each made one)."""
    return mock_random.randbytes(52).translate(REQUEST_ID_LETTERS).decode()


def copy_for_validation(node):
    """validators.deepcopy: a parsed UpdateExpression (cached, never changed) copied node by node when it is a plain
    tree (plain_tree), else from its pickle; anything else by deepcopy."""
    if isinstance(node, UpdateExpression):
        return tree_copy(node) if plain_tree(node) else pickle.loads(pickled(node))
    return copy.deepcopy(node)


@lru_cache(maxsize=EXPRESSIONS_KEPT)
def pickled(node):
    """The pickle of one cached expression tree."""
    return pickle.dumps(node, pickle.HIGHEST_PROTOCOL)


FLAT = (str, int, float, bool, type(None))


@lru_cache(maxsize=EXPRESSIONS_KEPT)
def plain_tree(root):
    """Whether a parsed tree is one tree_copy copies as deepcopy would: each node met once, its parent the node whose
    children hold it (none for the root), its other attributes and its children not nodes flat (text, numbers)."""
    seen, pending = set(), [(root, None)]
    while pending:
        node, parent = pending.pop()
        if id(node) in seen or node.parent is not parent:
            return False
        seen.add(id(node))
        for name, value in vars(node).items():
            if name == "children" and isinstance(value, list):
                pending.extend((child, node) for child in value if isinstance(child, Node))
                if not all(isinstance(child, (Node, *FLAT)) for child in value):
                    return False
            elif name != "parent" and not isinstance(value, FLAT):
                return False
    return True


def tree_copy(node, parent=None):
    """A copy of a plain tree (plain_tree): each node a new object of its class with its attributes, its children
    copied and its parent the copy of its parent."""
    copied = object.__new__(type(node))
    state = node.__dict__.copy()
    state["parent"] = parent
    children = node.children
    if children is not None:
        state["children"] = [child if isinstance(child, FLAT) else tree_copy(child, copied) for child in children]
    copied.__dict__ = state
    return copied


NODE_CLASSES = {}  # DepthFirstTraverser subclass -> the node classes it processes


def nodes_to_be_processed(traverser):
    """DepthFirstTraverser.nodes_to_be_processed, kept per traverser class: its processing map's keys."""
    kind = type(traverser)
    if kind not in NODE_CLASSES:
        NODE_CLASSES[kind] = tuple(traverser._processing_map())
    return NODE_CLASSES[kind]


NOT_A_NODE, KEPT, PROCESSED = 3, 1, 2  # all true, so that a cached role is found with `or`
ROLES = {}  # (traverser class, class of what it meets) -> NOT_A_NODE, KEPT or PROCESSED
WATCHERS = {}  # traverser class -> whether it overrides pre_processing_of_child (the base class's does nothing)


def role(traverser, node_class):
    """What a traverser's walk does with a value of this class: pass it (not a Node), walk it, or walk and process it.

    moto's node classes are abstract base classes, slow to test each time; the answer is kept per pair of classes.
    """
    key = (type(traverser), node_class)
    found = ROLES.get(key)
    if found is None:
        found = ROLES[key] = (NOT_A_NODE if not issubclass(node_class, Node) else
                              PROCESSED if issubclass(node_class, traverser.nodes_to_be_processed()) else KEPT)
    return found


def watches(traverser):
    """Whether a traverser's walk must call its pre_processing_of_child before each child."""
    kind = type(traverser)
    if kind not in WATCHERS:
        WATCHERS[kind] = kind.pre_processing_of_child is not DepthFirstTraverser.pre_processing_of_child
    return WATCHERS[kind]


def traverse_node_recursively(traverser, node, child_id=-1):
    """DepthFirstTraverser.traverse_node_recursively (children first, then the node), with class tests remembered,
    the base class's empty pre_processing_of_child not called and values that are not nodes not visited (no
    traverser overrides this method, so it calls itself directly)."""
    kind = ROLES.get((type(traverser), type(node))) or role(traverser, type(node))
    if kind == NOT_A_NODE:
        return node
    parent_node, children = node.parent, node.children
    if children is not None:
        watching, traverser_class = watches(traverser), type(traverser)
        for i, child_node in enumerate(children):
            if watching:
                traverser.pre_processing_of_child(node, i)
            if (ROLES.get((traverser_class, type(child_node))) or role(traverser, type(child_node))) != NOT_A_NODE:
                traverse_node_recursively(traverser, child_node, i)
    if kind == PROCESSED:
        node = traverser.process(node)
        node.parent = parent_node
        if parent_node:
            parent_node.children[child_id] = node
    return node


EXPRESSION_CHECKS = (validators.ActionCountValidator, validators.OverlappingPathsValidator,
                     validators.UpdateHashRangeKeyValidator)
MADE_BY_VALIDATION = (DDBTypedValue, NoneExistingPath)  # the node classes validation puts into a tree


class LabUpdateExpressionValidator(validators.UpdateExpressionValidator):
    """moto's UpdateExpressionValidator, without walks that could neither change nor reject anything.

    - EXPRESSION_CHECKS read only the parsed expression (cached by its text, so the same object each
      time), its #names and the table's key attributes, and change nothing: a combination that passed
      once passes again, and one that fails is checked again, so it raises as moto does.
    - Every other processor is skipped when none of its node classes can be in the tree: none is in the
      parsed expression or among MADE_BY_VALIDATION, and it does not watch the walk itself.
    - A tree that reads nothing of the item (item_independent) validates the same for the same #names,
      :values and key attributes: its validated tree is kept, and each request gets a copy of it
      (validated_copy), without copying the parsed tree or setting up moto's processors at all.
    """

    def __init__(self, expression, **kwargs):
        self.expression, self.arguments = expression, kwargs
        self.expression_attribute_names = kwargs["expression_attribute_names"]
        self.table = kwargs["table"]

    def validate(self):
        """The validated tree, as moto's validate returns it."""
        names = self.expression_attribute_names
        try:
            names = None if names is None else tuple(names.items())
            key_attributes = tuple(self.table.table_key_attrs)
            checked(self.expression, names, key_attributes)
        except TypeError:  # names that cannot key the cache, or a check's own TypeError: moto's walks answer
            super().__init__(self.expression, **self.arguments)
            return super().validate()
        kept, values = None, repr(self.arguments["expression_attribute_values"])
        if item_independent(self.expression) and len(values) <= VALUES_KEPT_LENGTH:
            kept = (self.expression, names, values, key_attributes)
            if kept in VALIDATED:
                VALIDATED.move_to_end(kept)
                return validated_copy(VALIDATED[kept])
        super().__init__(self.expression, **self.arguments)
        tree = self.walked()
        if kept is not None:
            VALIDATED[kept] = validated_copy(tree)
            if len(VALIDATED) > EXPRESSIONS_KEPT:
                VALIDATED.popitem(last=False)
        return tree

    def walked(self):
        """The tree validated by the walks of the processors that have work in it."""
        tree, classes = self.node_to_validate, node_classes(self.expression)
        copied = nodes_of(tree)
        for processor in self.processors:
            if has_work(processor, classes):
                tree = processor.traverse(tree)
        unlink_parents(copied)
        return tree


VALIDATED = OrderedDict()  # (expression, #names, repr of :values, key attributes) -> its validated tree, oldest first
VALUES_KEPT_LENGTH = 1024  # a tree is kept only for :values of a repr this long or shorter (not a document's)
ACTIONS = (UpdateExpressionSetAction, UpdateExpressionAddAction, UpdateExpressionRemoveAction,
           UpdateExpressionDeleteAction)
CONTAINERS = (UpdateExpression, UpdateExpressionSetClause, UpdateExpressionAddClause, UpdateExpressionRemoveClause,
              UpdateExpressionDeleteClause, UpdateExpressionSetActions, UpdateExpressionAddActions,
              UpdateExpressionRemoveActions, UpdateExpressionDeleteActions)
NAMES = (ExpressionAttribute, ExpressionAttributeName)


@lru_cache(maxsize=EXPRESSIONS_KEPT)
def item_independent(expression):
    """Whether validating a parsed UpdateExpression reads nothing of the item: each action's path is one top-level
    name (whose look-up can only find it or find it creatable) and each value a :value, so no path is resolved
    into a value, and no function or operator is evaluated on one."""
    pending = [expression]
    while pending:
        node = pending.pop()
        kind = type(node)
        if kind in CONTAINERS:
            pending.extend(node.children)
        elif kind in ACTIONS:
            path, *values = node.children
            if (type(path) is not UpdateExpressionPath or len(path.children) != 1 or type(path.children[0]) not in NAMES
                    or not all(type(value) is ExpressionAttributeValue or (
                        kind is UpdateExpressionSetAction and type(value) is UpdateExpressionValue
                        and len(value.children) == 1 and type(value.children[0]) is ExpressionAttributeValue)
                        for value in values)):
                return False
        else:
            return False
    return True


def validated_copy(node):
    """A copy of a validated tree that shares nothing an update may change: its nodes new, parentless as validate
    leaves them, and its values (DynamoType) copied as Item's copy copies them."""
    copied = object.__new__(type(node))
    state = node.__dict__.copy()
    children = node.children
    if children is not None:
        state["children"] = [child if isinstance(child, FLAT) else value_copy(child) if isinstance(child, DynamoType)
                             else validated_copy(child) for child in children]
    copied.__dict__ = state
    return copied


def value_copy(value):
    """A DynamoType copied: a flat one as its type and value, any other by deepcopy."""
    if type(value) is DynamoType and value.type in FLAT_TYPES:
        flat = DynamoType.__new__(DynamoType)
        flat.type, flat.value = value.type, value.value
        return flat
    return copy.deepcopy(value)


NODE_TYPES = {}  # class -> whether it is a Node class


def is_node(value):
    """isinstance(value, Node), the answer kept per class (Node is an abstract base class, slow to test)."""
    kind = type(value)
    found = NODE_TYPES.get(kind)
    if found is None:
        found = NODE_TYPES[kind] = issubclass(kind, Node)
    return found


def nodes_of(tree):
    """Every node of a tree."""
    nodes, pending = [], [tree]
    while pending:
        node = pending.pop()
        if is_node(node):
            nodes.append(node)
            pending.extend(node.children or ())
    return nodes


def unlink_parents(copied):
    """Once a copied tree is validated, cut every node's link to its parent, so that it is freed when dropped.

    A node and its parent refer to each other, so a dropped tree, and each node validation replaced, was
    left to the garbage collector (20 to 30 objects an UpdateItem), whose young-generation collections
    then walked thousands of them. The nodes validation makes hold no nodes, and it places them only
    under copied ones, so the copied nodes and their children are all the nodes with a parent. Nothing
    reads a parent after validation: moto's normalize and executors walk the children.
    """
    for node in copied:
        node.parent = None
        for child in node.children or ():
            if is_node(child):
                child.parent = None


@lru_cache(maxsize=EXPRESSIONS_KEPT)
def checked(expression, names, key_attributes):
    """Run EXPRESSION_CHECKS on a parsed expression (raising what they raise); remembered once they pass."""
    names = None if names is None else dict(names)
    validators.ActionCountValidator().traverse(expression)
    validators.OverlappingPathsValidator(names).traverse(expression)
    validators.UpdateHashRangeKeyValidator(list(key_attributes), names or {}).traverse(expression)
    return True


@lru_cache(maxsize=EXPRESSIONS_KEPT)
def node_classes(expression):
    """The node classes a tree can hold while it is validated: those parsed, and those validation makes."""
    classes, pending = set(MADE_BY_VALIDATION), [expression]
    while pending:
        node = pending.pop()
        if isinstance(node, Node):
            classes.add(type(node))
            pending.extend(node.children or ())
    return frozenset(classes)


WORK = {}  # (processor class, node classes) -> whether validate walks with it


def has_work(processor, classes):
    """Whether validate walks a tree of these node classes with a processor: not one of EXPRESSION_CHECKS, and its walk
    could process a node or sees the walk itself."""
    key = (type(processor), classes)
    if key not in WORK:
        wanted = nodes_to_be_processed(processor)
        WORK[key] = not isinstance(processor, EXPRESSION_CHECKS) and (
            watches(processor) or any(issubclass(node_class, wanted) for node_class in classes))
    return WORK[key]


PLAIN_TYPES = frozenset({"S", "B", "BOOL"})  # the types whose cast_value is their value
FLAT_TYPES = frozenset({"S", "N", "B", "BOOL", "NULL"})  # the types whose value holds no DynamoType
moto_hash, moto_equal = DynamoType.__hash__, DynamoType.__eq__


def value_hash(value):
    """DynamoType.__hash__ (of its type and cast_value) without casting a value that is its own cast_value."""
    kind = value.type
    return hash((kind, value.value)) if kind in PLAIN_TYPES else moto_hash(value)


def value_equal(value, other):
    """DynamoType.__eq__ (same type, equal cast_value) without casting a value that is its own cast_value."""
    kind = value.type
    if kind in PLAIN_TYPES:
        return kind == other.type and value.value == other.value
    return moto_equal(value, other)


def item_copy(item, memo):
    """Item.__deepcopy__ (moto's: no size check of the copy), each flat attribute value copied in place.

    moto copies each value through copy.deepcopy; a flat value (a string, number, binary, boolean or null,
    whose value is immutable) is copied as its type and value, as DynamoType.__deepcopy__ copies it.
    """
    result = type(item).__new__(type(item))
    memo[id(item)] = result
    result.hash_key = copy.deepcopy(item.hash_key, memo)
    result.range_key = copy.deepcopy(item.range_key, memo)
    attrs = LimitedSizeDict.__new__(LimitedSizeDict)
    for name, value in item.attrs.items():
        if value.type in FLAT_TYPES and type(value) is DynamoType:
            flat = DynamoType.__new__(DynamoType)
            flat.type, flat.value = value.type, value.value
            dict.__setitem__(attrs, name, flat)
        else:
            dict.__setitem__(attrs, name, copy.deepcopy(value, memo))
    result.attrs = attrs
    return result


EXECUTIONS = {}  # (executor class, node class) -> the NodeExecutor class its execution_map gives, or None
moto_specific_execution = UpdateExpressionExecutor.get_specific_execution


def specific_execution(executor, node):
    """UpdateExpressionExecutor.get_specific_execution (the first class of its execution_map, a class attribute, that
    the node is an instance of), kept per pair of classes: the map's classes are abstract base classes."""
    key = (type(executor), type(node))
    if key not in EXECUTIONS:
        EXECUTIONS[key] = moto_specific_execution(executor, node)
    return EXECUTIONS[key]


moto_responses.method_names_from_class = cache(moto_responses.method_names_from_class)
moto_responses.camelcase_to_underscores = cache(moto_responses.camelcase_to_underscores)
UpdateExpressionParser.make = classmethod(lru_cache(maxsize=EXPRESSIONS_KEPT)(UpdateExpressionParser.make.__func__))
validators.deepcopy = copy_for_validation
DepthFirstTraverser.nodes_to_be_processed = nodes_to_be_processed
DepthFirstTraverser.traverse_node_recursively = traverse_node_recursively
dynamodb_models.UpdateExpressionValidator = LabUpdateExpressionValidator
DynamoType.__hash__, DynamoType.__eq__ = value_hash, value_equal
Item.__deepcopy__ = item_copy
UpdateExpressionExecutor.get_specific_execution = specific_execution

ITEM_OPERATIONS = frozenset({"GetItem", "PutItem", "UpdateItem", "DeleteItem", "Query", "Scan", "BatchGetItem",
                             "BatchWriteItem", "TransactGetItems", "TransactWriteItems"})
JSON_HEADERS = {"Content-Type": "application/x-amz-json-1.0"}


def base64_text(value):
    """json.dumps fallback: a B or BS member, which moto keeps as bytes, as DynamoDB's base64 text."""
    if isinstance(value, bytes):
        return base64.b64encode(value).decode()
    raise TypeError(f"Object of type {type(value).__name__} is not JSON serializable")


RESULT_ENCODER = json.JSONEncoder(default=base64_text)  # json.dumps(..., default=base64_text) made one encoder a call


@lru_cache(maxsize=256)
def identity(url, credential, user_agent, moto_account, environment_account):
    """(region, access key, account) as moto's set-up works them out from these parts of a request.

    MOTO_ACCOUNT_ID, which moto reads from the environment itself, is in the arguments to key the cache.
    """
    handler = DynamoHandler()
    handler.querystring = {}
    handler.headers = Headers([(name, value) for name, value in (
        ("Authorization", credential or None), ("User-Agent", user_agent), ("x-moto-account-id", moto_account))
        if value is not None])
    region = handler.get_region_from_url(SimpleNamespace(headers=handler.headers), url)
    return region, handler.get_access_key(), handler.get_current_account()


def request_identity(url, headers):
    """(region, access key, account) of a request, as moto's set-up works them out from its URL and headers."""
    return identity(url, (headers.get("Authorization") or "").partition(",")[0], headers.get("User-Agent"),
                    headers.get("x-moto-account-id"), os.environ.get("MOTO_ACCOUNT_ID"))


def request_parser(operation, content_type):
    """moto's parser of one operation's request body (the one its setup_class would choose)."""
    service_model = get_service_model("dynamodb")
    parser_class = PROTOCOL_PARSERS[determine_request_protocol(service_model, content_type)]
    return parser_class(service_model.operation_model(operation), map_type=DynamoHandler.PROTOCOL_PARSER_MAP_TYPE)


@lru_cache(maxsize=256)
def compiled_parser(operation, content_type):
    """A function from a request's JSON object to exactly what moto's JSON parser makes of its body, or None
    where moto would parse it with another protocol's parser."""
    parser = request_parser(operation, content_type)
    if type(parser) is not JSONParser:
        return None
    shape = parser.operation_model.input_shape
    return (lambda request: {}) if shape is None else compiled_shape(shape, parser, {})


def compiled_shape(shape, parser, compiled):
    """parser._parse_shape(shape, value) for JSON values of one shape, with its members, names and handlers
    looked up once; `compiled` holds the structures begun, for the shapes that contain themselves."""
    kind = shape.type_name
    if kind == "structure" and not shape.is_document_type:
        return compiled_structure(shape, parser, compiled)
    if kind == "list":
        parse_member = compiled_shape(shape.member, parser, compiled)
        return lambda value: [parse_member(item) for item in value]
    if kind == "map":
        return compiled_map(shape, parser, compiled)
    handler = getattr(parser, f"_parse_{kind}", None) if kind != "structure" else None
    return (lambda value: value) if handler is None else partial(handler, shape)


def compiled_structure(shape, parser, compiled):
    """BaseJSONParser._parse_structure for one shape: its members in the model's order, nulls left out."""
    if shape.name in compiled:
        cell = compiled[shape.name]
        return lambda value: cell[0](value)
    cell = compiled[shape.name] = [None]
    members = [(name, member.serialization.get("name", name), compiled_shape(member, parser, compiled))
               for name, member in shape.members.items()]
    map_type = parser.MAP_TYPE

    def parse_structure(value):
        if value is None:
            return None
        parsed = map_type()
        for name, json_name, parse_member in members:
            raw = value.get(json_name)
            if raw is not None:
                parsed[name] = parse_member(raw)
        return parsed

    cell[0] = parse_structure
    return parse_structure


def compiled_map(shape, parser, compiled):
    """RequestParser._parse_map for one shape."""
    parse_key = compiled_shape(shape.key, parser, compiled)
    parse_value = compiled_shape(shape.value, parser, compiled)
    map_type = parser.MAP_TYPE

    def parse_map(value):
        parsed = map_type()
        for key, item in value.items():
            parsed[parse_key(key)] = parse_value(item)
        return parsed

    return parse_map


parsed_url = lru_cache(maxsize=256)(urlparse)  # a request's URL, parsed once per URL (urlparse answers a tuple)
partition_of = lru_cache(maxsize=256)(get_partition)  # the partition of a region, as moto names it


@lru_cache(maxsize=1)
def http_date_of(second):
    """The HTTP date of one second since the epoch (a response's Date changes once a second)."""
    return http_date(datetime.fromtimestamp(second, timezone.utc))


def setting(request, name):
    """A request's text member `name`, or None when it is absent or not text."""
    value = request.get(name) if isinstance(request, dict) else None
    return value if isinstance(value, str) else None


@cache
def answered_members(operation, consumed_capacity, item_collection_metrics):
    """The top-level members of an operation's output shape that DynamoDB answers for these Return* settings.

    ConsumedCapacity and ItemCollectionMetrics are only returned when the request asked for them (moto
    adds them to some answers regardless).
    """
    members = set(get_service_model("dynamodb").operation_model(operation).output_shape.members)
    if consumed_capacity not in ("TOTAL", "INDEXES"):
        members.discard("ConsumedCapacity")
    if item_collection_metrics != "SIZE":
        members.discard("ItemCollectionMetrics")
    return frozenset(members)


class FastDynamoHandler(DynamoHandler):
    """DynamoHandler set up without werkzeug, whose item-operation responses skip moto's model-walking serializer."""

    backend = None

    @classmethod
    def answer(cls, url, headers, body, operation, request=None):
        """moto's answer to one DynamoDB request: (status, headers, body); `request` is the body's JSON object."""
        handler = cls()
        handler.set_up(url, headers, body, operation, request)
        return handler.call_action()

    @property
    def dynamodb_backend(self):
        """moto's backend for the request's account and region, looked up once per request, not at each use."""
        if self.backend is None:
            self.backend = super().dynamodb_backend
        return self.backend

    def set_up(self, url, headers, body, operation, request=None):
        """The state moto's setup_class gives a handler, for a JSON request naming its operation."""
        self.is_werkzeug_request = False
        self.parsed_url = parsed_url(url)
        self.uri, self.path, self.raw_path, self.method = url, self.parsed_url.path, self.parsed_url.path, "POST"
        self.headers = headers
        self.raw_body, self.body = body, body.decode("utf-8")
        self.querystring = self.data = OrderedDict()
        self.uri_match = {}
        self.region, self.access_key, self.current_account = request_identity(url, headers)
        self.partition = partition_of(self.region)
        self.response_headers = {"server": "amazon.com", "date": http_date_of(int(time.time()))}
        parse = compiled_parser(operation, headers.get("Content-Type")) if request is not None else None
        self.params = parse(request) if parse else request_parser(operation, headers.get("Content-Type")).parse(
            {"method": "POST", "values": {}, "headers": headers, "body": body, "url_path": self.path, "url_params": {}})

    def update_item(self):
        """UpdateItem, each of moto's steps done once (updates.py)."""
        return updates.update_item(self)

    @staticmethod
    def _enrich_response(headers, body):
        """moto's _enrich_response for JSON bodies: the status as text and a request id; the body as it is."""
        if "status" in headers:
            headers["status"] = str(headers["status"])
        headers["x-amzn-requestid"] = request_id()
        return headers, body

    def serialized(self, action_result):
        """Encode item-operation results directly; everything else as moto does."""
        operation = self._get_action()
        result = action_result.result
        if operation in ITEM_OPERATIONS and isinstance(result, dict):
            members = answered_members(operation, setting(self.body, "ReturnConsumedCapacity"),
                                       setting(self.body, "ReturnItemCollectionMetrics"))
            result = fidelity.corrected(operation, self.body, result)
            body = RESULT_ENCODER.encode({key: value for key, value in result.items() if key in members})
            return 200, {**JSON_HEADERS, **self.response_headers}, body
        return super().serialized(action_result)
