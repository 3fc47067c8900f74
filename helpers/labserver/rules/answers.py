"""DynamoDB's error answers, and requests checked against its API model: required members, JSON types."""
import json
import zlib
from functools import cache

from moto.core.responses import get_service_model

NULL_MEMBER = "Value null at '{}' failed to satisfy constraint: Member must not be null"
JAVA_MODEL = "com.amazonaws.dynamodb.v20120810"
UNKNOWN_OPERATION = "com.amazon.coral.service#UnknownOperationException"
SERIALIZATION = "com.amazon.coral.service#SerializationException"
NOT_EXPECTED_OBJECT = "Start of structure or map found where not expected"
PARAMETERIZED = ("class sun.reflect.generics.reflectiveObjects.ParameterizedTypeImpl cannot be cast to class "
                 "java.lang.Class (sun.reflect.generics.reflectiveObjects.ParameterizedTypeImpl and java.lang.Class "
                 "are in module java.base of loader 'bootstrap')")  # DynamoDB's words for a scalar as a map of lists
JAVA_SCALARS = {"string": "java.lang.String", "boolean": "java.lang.Boolean", "integer": "java.lang.Integer",
                "long": "java.lang.Long", "blob": "java.nio.ByteBuffer"}


def error(code, message, status=400, **extra):
    """(status, body) of a DynamoDB error response."""
    return status, {"__type": f"com.amazonaws.dynamodb.v20120810#{code}", "message": message, **extra}


def required_members(target, params):
    """A required member left out is a ValidationException naming each one; moto fails on the missing key."""
    if target not in operation_names():
        return None
    return members_missing([name for name in required_names(target) if params.get(name) is None])


def members_missing(missing):
    """The ValidationException naming each required member left out, or None when none is."""
    return constraints_failed([NULL_MEMBER.format(lower_camel(name)) for name in missing])


def constraints_failed(failures):
    """The ValidationException listing each failed constraint as DynamoDB counts them ("2 validation errors detected:
    ...; ..."), or None when there is none."""
    if not failures:
        return None
    count = f"{len(failures)} validation error{'s' if len(failures) > 1 else ''} detected: "
    return error("ValidationException", count + "; ".join(failures))


def java_list(model_class, members):
    """A list as Java's List.toString prints DynamoDB's model objects: [class@hash, ...]."""
    return "[" + ", ".join(f"{JAVA_MODEL}.{model_class}@{zlib.crc32(json.dumps(member, sort_keys=True).encode()):x}"
                           for member in members) + "]"


def first_answer(rules, params):
    """The answer of the first rule that has one for the request; a rule the request trips up has none."""
    for rule in rules:
        try:
            answer = rule(params)
        except Exception:  # a request malformed otherwise: the rules after this one, or moto, say what is wrong
            answer = None
        if answer is not None:
            return answer
    return None


@cache
def operation_names():
    """Every operation in DynamoDB's API model."""
    return frozenset(get_service_model("dynamodb").operation_names)


SERVICE_REQUIRED = {"CreateTable": {"AttributeDefinitions", "KeySchema"}}  # optional in the model, not to DynamoDB


@cache
def required_names(target):
    """The top-level members an operation requires, in the model's order: those its input shape requires, and
    those DynamoDB refuses a request without though the model leaves them optional (CreateTable's key schema
    and attribute definitions: "Value null at 'keySchema' ...", recorded from DynamoDB by ack-api-quirks)."""
    shape = get_service_model("dynamodb").operation_model(target).input_shape
    required = set(shape.required_members) | SERVICE_REQUIRED.get(target, set())
    return tuple(name for name in shape.members if name in required)


def lower_camel(name):
    """'TableName' -> 'tableName', as DynamoDB names members in validation errors."""
    return name[:1].lower() + name[1:]


def type_mismatch(shape, value, place):
    """DynamoDB's SerializationException message for the first value in a request (in its order) whose JSON type
    is not its shape's, or None. `place` is "member" for a structure's member, "value" in a list or a map."""
    if value is None:
        return None
    kind = shape.type_name
    if kind == "structure":
        if isinstance(value, dict):
            for name, member in value.items():
                if name in shape.members:
                    found = type_mismatch(shape.members[name], member, "member")
                    if found is not None:
                        return found
            return None
        if isinstance(value, list):
            return f"Unrecognized collection type class {JAVA_MODEL}.{shape.name}"
        attribute_value = place == "value" or shape.name == "AttributeValue"
        return "Unexpected value type in payload" if attribute_value else "Unexpected field type"
    if kind in ("list", "map"):
        inner = shape.member if kind == "list" else shape.value
        if isinstance(value, dict if kind == "list" else list):
            if kind == "list":
                return NOT_EXPECTED_OBJECT
            if inner.type_name == "list":  # BatchWriteItem's RequestItems, worded as dynalite's tests record it
                return f"Unrecognized collection type java.util.Map<java.lang.String, java.util.List<" \
                       f"{java_class(inner.member)}>>"
            return None if inner.type_name == "map" else \
                f"Unrecognized collection type java.util.Map<java.lang.String, {java_class(inner)}>"
        if not isinstance(value, (list, dict)):
            return PARAMETERIZED if inner.type_name in ("list", "map") else "Unexpected field type"
        for member in value if kind == "list" else value.values():
            found = type_mismatch(inner, member, "value")
            if found is not None:
                return found
        return None
    if isinstance(value, dict):
        return NOT_EXPECTED_OBJECT
    if isinstance(value, list):
        return f"Unrecognized collection type class {java_class(shape)}"
    java = JAVA_SCALARS.get(kind)
    token = "TRUE_VALUE" if value is True else "FALSE_VALUE" if value is False else \
        "NUMBER_VALUE" if isinstance(value, int) else "DECIMAL_VALUE" if isinstance(value, float) else "STRING_VALUE"
    if kind == "blob":
        return None if isinstance(value, str) else "only base-64-encoded strings are convertible to bytes"
    if kind == "boolean" and isinstance(value, str):
        return "Unexpected token received from parser"
    if java is None or (kind == "string" and isinstance(value, str)) or (kind == "boolean" and isinstance(value, bool)):
        return None
    if kind in ("integer", "long") and (isinstance(value, int) and not isinstance(value, bool)):
        return None
    if kind in ("integer", "long") and isinstance(value, float):
        return None
    return f"{token} cannot be converted to {java.rsplit('.', 1)[1]}"


def java_class(shape):
    """The Java class DynamoDB reads a shape's values into, as its serialization errors name it."""
    return JAVA_SCALARS.get(shape.type_name) or f"{JAVA_MODEL}.{shape.name}"
