"""PartiQL as DynamoDB answers it, where moto's parser and engine differ: parameters and literals inlined for its
parser, writes refused as DynamoDB refuses them, WHERE comparisons by DynamoDB's rules, transactions all or nothing."""
import base64
import copy
import json
import operator
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal

from moto.dynamodb.exceptions import (ConditionalCheckFailed, DynamodbException, MockValidationException,
                                      TransactionCanceledException)
from moto.dynamodb.models import DynamoDBBackend
from moto.dynamodb.models.dynamo_type import DynamoType
from moto.dynamodb.parsing import partiql as moto_partiql
from py_partiql_parser import QueryMetadata
from py_partiql_parser._internal import parser as partiql_parser
from py_partiql_parser._internal import where_parser
from py_partiql_parser._internal.insert_parser import InsertParser
from py_partiql_parser._internal.update_parser import UpdateParser
from py_partiql_parser.exceptions import ParserException
from py_partiql_parser._internal.utils import CaseInsensitiveDict, is_dict
from py_partiql_parser._internal.utils import serializer as partiql_serializer

from .answers import error, lower_camel
from .expressions import as_bytes
from ..model.knobs import find_table

NOT_WELL_FORMED = "Statement wasn't well formed, can't be processed: "  # then what the parser expected, if anything
NOT_DML = NOT_WELL_FORMED + "Expected data manipulation"
DANGLING = frozenset({"=", "<", ",", "(", "[", ".", "AND", "OR", "NOT", "WHERE", "BETWEEN", "IN", "IS", "FROM", "SET",
                      "VALUE", "INTO"})  # the last words of a statement cut short: each needs something after it
EXISTS = re.compile(r"\s*EXISTS\s*\((.*)\)\s*;?\s*$", re.I | re.S)
EMPTY_STATEMENT = ("1 validation error detected: Value '' at 'statement' failed to satisfy constraint: "
                   "Member must have length greater than or equal to 1")
STATEMENT_TABLE = re.compile(r'\s*(?:EXISTS\s*\(\s*)?(?:UPDATE|DELETE\s+FROM|INSERT\s+INTO|SELECT\s.*?\bFROM)\s+'
                             r'("(?:[^"]|"")+"|[A-Za-z0-9_.-]+)', re.I | re.S)  # the table a statement names
NO_SUCH_TABLE = "Requested resource not found"
TOO_FEW_PARAMETERS = "Number of parameters in request and statement don't match."
DUPLICATE_ITEM = "Duplicate primary key exists in table"
INCOMPLETE_KEY = "Where clause does not contain a mandatory equality on all key attributes"
PARAMETER_MARK = "\x00lab parameter:"
LIST_INDEX = re.compile(r"\[(\d+)\]")
ORDERINGS = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}
PARTIQL_VERBS = ("SELECT", "INSERT", "UPDATE", "DELETE", "EXISTS")
STATEMENT_PIECE = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|\?|[^'\"?]+")
STATEMENT_TOKEN = re.compile(r"'(?:[^']|'')*'|\"(?:[^\"]|\"\")*\"|[A-Za-z_][A-Za-z0-9_]*|"
                             r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?|\s+|.", re.S)
NUMBER_LITERAL = re.compile(r"[+-]?(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
LITERAL_WORDS = {"TRUE": {"BOOL": True}, "FALSE": {"BOOL": False}, "NULL": {"NULL": True}}
LITERAL_WORD = re.compile(r"\b(?:true|false|null)\b", re.I)
ARITHMETIC = "lab:arithmetic"  # the kind of the typed value that carries an UPDATE's SET path = a + b to the engine
NO_SUCH_OPERAND = "The provided expression refers to an attribute that does not exist in the item"
OPERAND_TYPE = "An operand in the update expression has an incorrect data type"
RETURNING = re.compile(r"\s+RETURNING\s+(ALL|MODIFIED)\s+(OLD|NEW)\s+\*\s*;?\s*$", re.I)
DELETE_RETURNING = ("Invalid returning clause: RETURNING {} {} *. Only RETURNING ALL OLD * is allowed in DELETE "
                    "statements.")
NO_STATEMENTS = ("1 validation error detected: Value '[]' at '{}' failed to satisfy constraint: Member must have "
                 "length greater than or equal to 1")  # DynamoDB's answer to an empty Statements, an AWS Lambda's log
TRANSACTION_RETURNING = ("Validation failed in TransactStatements[{}]: RETURNING clause is not supported in "
                         "ExecuteTransaction.")
BARE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
QUOTED_ARGUMENT = frozenset({"begins_with", "contains"})  # the functions whose attribute moto's parser reads quoted
PARTIQL_KEYWORDS = frozenset({"AND", "OR", "NOT", "BETWEEN", "IN", "IS", "WHERE", "SET", "VALUE", "SELECT", "FROM",
                              "REMOVE"})
TABLE_AND_INDEX = re.compile(r'("(?:[^"]|"")+"|[^".]+)(?:\.("(?:[^"]|"")+"|[^".]+))?')
SORT_KEY_TESTS = frozenset({"=", "<", "<=", ">", ">=", "begins_with"})  # what a Query's sort key condition may say
UNPARSED = (ParserException, AssertionError, LookupError, ValueError, TypeError, StopIteration)
OPERATORS = {"=": "=", "<": "<", ">": ">", "<=": "<=", ">=": ">=", "<>": "<>", "!=": "<>"}  # != is <> (ql-operators)
WHERE_KEYWORDS = frozenset({"AND", "OR", "NOT", "IS", "MISSING", "NULL", "BETWEEN", "IN"})


def statement_well_formed(params):
    """A statement DynamoDB's parser cannot read (not_well_formed) is a ValidationException; moto failed on it. An
    empty one is left to statement_not_empty."""
    message = params["Statement"].strip() and not_well_formed(params["Statement"])
    return error("ValidationException", message) if message else None


def each_statement_well_formed(params):
    """ExecuteTransaction refuses a statement DynamoDB's parser cannot read (not_well_formed, inside EXISTS(...) too)
    with its ValidationException; moto failed on it. Whether DynamoDB names the statement's place here, as it does
    for a RETURNING clause, is not known to us: it is not named."""
    for statement in params["TransactStatements"]:
        text = statement["Statement"]
        exists = EXISTS.match(text)
        message = text.strip() and not_well_formed(exists.group(1) if exists else text)
        if message:
            return error("ValidationException", message)
    return None


def not_well_formed(statement):
    """DynamoDB's words for a statement its parser cannot read, else None: one that does not start with a PartiQL
    verb (nubo-db/dynamodb-conformance's capture: "Statement wasn't well formed, can't be processed: Expected data
    manipulation"), or one cut short (cut_short) in the same words without what the parser expected, the form that
    suite records for a statement cut short inside a quoted name: no capture of its words for this case was found."""
    if not starts_with_a_verb(statement):
        return NOT_DML
    return NOT_WELL_FORMED if cut_short(statement) else None


def starts_with_a_verb(statement):
    """Whether a statement starts with a PartiQL verb (SELECT, INSERT, UPDATE, DELETE, EXISTS)."""
    words = statement.split(None, 1)
    return bool(words) and words[0].upper() in PARTIQL_VERBS


def cut_short(statement):
    """Whether a statement ends in an operator or keyword that needs something after it (WHERE PK =, ... AND)."""
    words = [piece for piece in STATEMENT_TOKEN.findall(statement.rstrip().rstrip(";")) if not piece.isspace()]
    last = words[-1].upper() if words else ""
    return last in DANGLING or (last == ">" and words[-2:-1] != [">"])  # >> closes a set literal


def each_statement_answered(self, statements):
    """BatchExecuteStatement answers a statement DynamoDB's parser cannot read (not_well_formed) in its own entry, as a
    ValidationError in DynamoDB's words, and runs the others (nubo-db/dynamodb-conformance's capture: "a malformed
    member does not poison the batch"); moto's validation failed on it, failing the whole batch with a 500."""
    refusals = [not_well_formed(statement["Statement"]) for statement in statements]
    answers = iter(plain_batch_execute(self, [statement for statement, refusal in zip(statements, refusals)
                                              if refusal is None]))
    return [next(answers) if refusal is None else {"Error": {"Code": "ValidationError", "Message": refusal}}
            for refusal in refusals]


def parameters_inlined(params):
    """An ExecuteStatement's ? parameters and number literals, each written into the statement as a literal
    moto's parser reads back as the typed value (see read_literal): moto's parser ignores parameters in INSERT
    and DELETE, has no literal for binary values or sets, and reads no unquoted number (UPDATE and DELETE failed
    on one, SELECT compared it as a string)."""
    return statement_inlined(params)


def each_statement_inlined(member, params):
    """BatchExecuteStatement's Statements or ExecuteTransaction's TransactStatements, each with its ? and numbers
    inlined."""
    statements = params[member]
    inlined = [statement_inlined(statement) for statement in statements]
    if not any(inlined):
        return None
    return {**params, member: [new or old for new, old in zip(inlined, statements)]}


def statement_inlined(statement):
    """One statement (a dict with Statement and Parameters) with each ? replaced by its parameter, each number
    literal by the same literal of an N value and each true, false and null by a BOOL or NULL one (moto's parser
    failed on null, and on any of them after SET's =), and the unquoted attribute a function names quoted
    (begins_with(s, ...) as begins_with("s", ...), which moto's parser reads), else None (a statement with none of
    them)."""
    text, parameters = statement["Statement"], statement.get("Parameters")
    updating = text.lstrip()[:6].upper() == "UPDATE"
    if not (parameters or updating or "<<" in text or "(" in text or any(character.isdigit() for character in text)
            or LITERAL_WORD.search(text) or "where" in text.lower()):
        return None
    values, pieces, previous = iter(parameters or ()), [], ("", "")
    for piece in STATEMENT_TOKEN.findall(text):
        if piece == "?":
            piece = parameter_literal(next(values))
        elif NUMBER_LITERAL.fullmatch(piece) and not (previous[1] == "[" and names_a_path(previous[0])):
            if pieces and pieces[-1] in "+-" and not names_a_value(previous[0]):  # a sign of the number's own
                piece = pieces.pop().replace("+", "") + piece
            piece = parameter_literal({"N": piece})
        elif piece.upper() in LITERAL_WORDS and previous[1].upper() not in ("IS", "NOT", "."):
            piece = parameter_literal(LITERAL_WORDS[piece.upper()])  # IS [NOT] NULL stays the parser's
        elif previous[1] == "(" and previous[0].lower() in QUOTED_ARGUMENT and BARE_NAME.fullmatch(piece):
            piece = '"' + piece + '"'
        pieces.append(piece)
        if not piece.isspace():
            previous = (previous[1], piece)
    if "<<" in text:
        pieces = sets_inlined(pieces)
    if updating:
        pieces = sums_carried(set_clauses_joined(pieces))
    pieces = where_normalized(pieces)
    if not parameters and pieces == STATEMENT_TOKEN.findall(text):
        return None
    return {**statement, "Parameters": [], "Statement": "".join(pieces)}


def sets_inlined(pieces):
    """The pieces with each set literal, <<'a', 'b'>> or <<1, 2.5>> (the Developer Guide's PartiQL String Set and
    Number Set), written as one parameter literal of its SS or NS value; moto's parser had no literal for sets
    (StopIteration). A set of mixed or other members is left as it is."""
    index = 0
    while index < len(pieces) - 1:
        if pieces[index] == "<" and pieces[index + 1] == "<":
            end = next((at for at in range(index + 2, len(pieces) - 1)
                        if pieces[at] == ">" and pieces[at + 1] == ">"), None)
            members = [piece for piece in pieces[index + 2:end] if not piece.isspace()] if end else []
            kinds = {set_member(piece)[0] for piece in members[::2]} if members else set()
            if end and len(kinds) == 1 and None not in kinds and all(piece == "," for piece in members[1::2]) \
                    and len(members) % 2:
                kind = kinds.pop()
                value = {kind + "S": [set_member(piece)[1] for piece in members[::2]]}
                pieces = pieces[:index] + [parameter_literal(value)] + pieces[end + 2:]
        index += 1
    return pieces


def where_normalized(pieces):
    """A statement's pieces with its WHERE clause in the one form moto's parser reads: each comparison operator
    between single spaces (it read PK='a' as a name), keywords in capitals (it read only IS MISSING), each
    BETWEEN and IN written as the comparisons they stand for (betweens_expanded, in_lists_expanded)."""
    start = next((index for index, piece in enumerate(pieces) if piece.upper() == "WHERE"), None)
    if start is None:
        return pieces
    tail = [piece.upper() if piece.upper() in WHERE_KEYWORDS else piece
            for piece in operators_spaced(pieces[start + 1:])]
    return pieces[:start + 1] + in_lists_expanded(betweens_expanded(tail))


def operators_spaced(pieces):
    """The pieces with each comparison operator (=, <>, !=, <, <=, >, >=) one piece between single spaces, != as <>
    (a set literal's << and >> left as they are)."""
    spaced, index = [], 0
    while index < len(pieces):
        pair = "".join(pieces[index:index + 2])
        if pair in ("<<", ">>"):
            spaced += pieces[index:index + 2]
            index += 2
        elif pair in OPERATORS or pieces[index] in OPERATORS:
            operator_text = pair if pair in OPERATORS else pieces[index]
            index += len(operator_text)
            while spaced and spaced[-1].isspace():
                spaced.pop()
            while index < len(pieces) and pieces[index].isspace():
                index += 1
            spaced += [" ", OPERATORS[operator_text], " "]
        else:
            spaced.append(pieces[index])
            index += 1
    return spaced


def operand_before(pieces, end):
    """The index where the operand ending just before pieces[end] (and any spaces) starts: its pieces run back to a
    space or an opening parenthesis."""
    start = end
    while start > 0 and pieces[start - 1].isspace():
        start -= 1
    while start > 0 and not pieces[start - 1].isspace() and pieces[start - 1] != "(":
        start -= 1
    return start


def words_after(pieces, start, count):
    """The places of the next `count` pieces from `start` that are not spaces (fewer at the statement's end)."""
    places = [index for index in range(start, len(pieces)) if not pieces[index].isspace()]
    return places[:count]


def betweens_expanded(pieces):
    """The pieces with each `path BETWEEN low AND high` as `(path >= low AND path <= high)`, the range BETWEEN holds
    for, bounds included (the Developer Guide's PartiQL operators: "This operator is inclusive of the lower and
    upper bound"); moto's parser compared the path with the lower bound for equality."""
    while "BETWEEN" in pieces:
        at = pieces.index("BETWEEN")
        start, words = operand_before(pieces, at), words_after(pieces, at + 1, 3)
        if len(words) < 3 or pieces[words[1]] != "AND" or start == at:
            return pieces
        path = "".join(pieces[start:at]).strip()
        pieces = pieces[:start] + ["(", path, " >= ", pieces[words[0]], " AND ", path, " <= ",
                                   pieces[words[2]], ")"] + pieces[words[2] + 1:]
    return pieces


def in_lists_expanded(pieces):
    """The pieces with each `path IN [a, b]` as `(path = a OR path = b)`, what IN holds for (the Developer Guide's
    PartiQL operators: "TRUE if the operand is equal to one of a list of expressions"); moto's parser compared the
    path with the first value only."""
    while "IN" in pieces:
        at = pieces.index("IN")
        start, opening = operand_before(pieces, at), words_after(pieces, at + 1, 1)
        closing = next((index for index in range(at, len(pieces)) if pieces[index] == "]"), None)
        if not opening or pieces[opening[0]] != "[" or closing is None or start == at:
            return pieces
        path = "".join(pieces[start:at]).strip()
        values = [piece for piece in pieces[opening[0] + 1:closing] if not piece.isspace()]
        if not values or values[1::2] != [","] * (len(values) // 2) or len(values) % 2 == 0:
            return pieces
        tests = " OR ".join(f"{path} = {value}" for value in values[::2])
        pieces = pieces[:start] + ["(", tests, ")"] + pieces[closing + 1:]
    return pieces


def set_member(piece):
    """(S, the string) of a string literal, (N, the number) of a number's parameter literal, else (None, None)."""
    if piece.startswith("'" + PARAMETER_MARK):
        value = json.loads(base64.b64decode(piece[1 + len(PARAMETER_MARK):-1]))
        return ("N", value["N"]) if list(value) == ["N"] else (None, None)
    if len(piece) > 1 and piece[0] == piece[-1] == "'":
        return "S", piece[1:-1].replace("''", "'")
    return None, None


def set_clauses_joined(pieces):
    """An UPDATE's pieces with each SET clause after the first joined to it by a comma (SET a = 1 SET b = 2, the
    form of the Developer Guide's PartiQL examples, as SET a = 1, b = 2: moto's parser failed on the second)."""
    seen_set = False
    for index, piece in enumerate(pieces):
        word = piece.upper()
        if word == "WHERE":
            break
        if word == "SET":
            if seen_set:
                pieces = pieces[:index] + [","] + pieces[index + 1:]
            seen_set = True
    return pieces


def sums_carried(pieces):
    """An UPDATE's pieces with each SET path = a + b (or a - b), a and b an attribute name or a value, written as
    one parameter literal of an ARITHMETIC value, which arithmetic_applied works out against the item (moto's
    parser reads only a literal after =)."""
    words = [index for index, piece in enumerate(pieces) if not piece.isspace()]
    for place in range(len(words) - 1, 2, -1):
        if pieces[words[place - 1]] not in "+-" or pieces[words[place - 3]] != "=":
            continue
        if any(pieces[index].upper() == "WHERE" for index in words[:place]):
            continue
        ends = words[place + 1] if place + 1 < len(words) else None
        if ends is not None and pieces[ends] != "," and pieces[ends].upper() not in ("WHERE", "SET", "REMOVE"):
            continue
        operands = [operand(pieces[words[place - 2]]), operand(pieces[words[place]])]
        if None in operands:
            continue
        value = parameter_literal({ARITHMETIC: [operands[0], pieces[words[place - 1]], operands[1]]})
        pieces = pieces[:words[place - 2]] + [value] + pieces[words[place] + 1:]
    return pieces


def operand(piece):
    """An operand of SET arithmetic: {"path": name} for an attribute name, the typed value of a parameter literal,
    or None for anything else (left to moto's parser)."""
    if piece.startswith("'" + PARAMETER_MARK):
        return json.loads(base64.b64decode(piece[1 + len(PARAMETER_MARK):-1]))
    if piece[:1] == '"' and piece[-1:] == '"' and len(piece) > 1:
        return {"path": piece[1:-1].replace('""', '"')}
    if re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", piece) and piece.upper() not in PARTIQL_KEYWORDS:
        return {"path": piece}
    return None


def arithmetic_applied(before, after):
    """The item an UPDATE writes, each ARITHMETIC value worked out against the item as it was: both operands
    numbers, as UpdateItem's SET a = b + c requires, else its ValidationException in its words (moto's UpdateItem
    words both alike; no capture of PartiQL's own was found)."""
    for name, value in list(after.items()):
        if not (isinstance(value, dict) and ARITHMETIC in value):
            continue
        left, sign, right = value[ARITHMETIC]
        values = []
        for side in (left, right):
            found = before.get(side["path"]) if "path" in side else side
            if found is None:
                raise MockValidationException(NO_SUCH_OPERAND)
            if not (isinstance(found, dict) and list(found) == ["N"]):
                raise MockValidationException(OPERAND_TYPE)
            values.append(Decimal(found["N"]))
        total = values[0] + values[1] if sign == "+" else values[0] - values[1]
        after[name] = {"N": format(total.normalize(), "f") if total else "0"}  # 1.5 + 1.5 is 3, as DynamoDB writes it
    return after


def names_a_path(token):
    """Whether a statement token ends a document path, so that a [ after it indexes a list (a[0], "a"[0], a[0][1])
    rather than opening a list literal."""
    return token[:1] == '"' or token == "]" or (token[:1].isalpha() or token[:1] == "_") and \
        token.upper() not in PARTIQL_KEYWORDS


def names_a_value(token):
    """Whether a statement token ends an operand, so that a + or - after it is arithmetic, not a number's sign."""
    return names_a_path(token) or token in (")", "?") or token[:1] == "'" or NUMBER_LITERAL.fullmatch(token) is not None


def parameter_literal(value):
    """A typed value as a PartiQL string literal that carries it whole: the mark, then its JSON in base64."""
    if not isinstance(value, dict) or len(value) != 1:
        raise ValueError("a parameter is one typed value")
    return "'" + PARAMETER_MARK + base64.b64encode(json.dumps(value).encode()).decode() + "'"


def read_literal(text):
    """moto's PartiQL parser turns each literal into a typed value here: a parameter literal (parameter_literal)
    becomes the parameter's value, binary members as the bytes moto keeps for them; any other literal as before."""
    if isinstance(text, str) and text.startswith(PARAMETER_MARK):
        return stored_value(json.loads(base64.b64decode(text[len(PARAMETER_MARK):])))
    return plain_literal(text)


def stored_value(value):
    """A typed value as moto keeps it from any write: B and BS members as bytes, at every depth."""
    (kind, inner), = value.items()
    if kind == "B":
        return {kind: base64.b64decode(inner)}
    if kind == "BS":
        return {kind: [base64.b64decode(member) for member in inner]}
    if kind == "L":
        return {kind: [stored_value(member) for member in inner]}
    if kind == "M":
        return {kind: {name: stored_value(member) for name, member in inner.items()}}
    return value


def same_value(self, other):
    """PartiQL's = on two attribute values, as DynamoDB compares them: numbers by value, sets as sets, binary by
    bytes, maps by name (with the case of each name); moto's parser compared their JSON, case-insensitively."""
    if not isinstance(other, Mapping):
        return NotImplemented
    return values_equal(regular(self), regular(other))


def regular(value):
    """A parser's case-insensitive mapping as a plain dict (other values as they are)."""
    return value.get_regular() if isinstance(value, CaseInsensitiveDict) else value


def values_equal(left, right):
    """Whether two typed values ({type: value}) are equal by DynamoDB's rules."""
    left, right = regular(left), regular(right)
    if not (isinstance(left, dict) and isinstance(right, dict) and len(left) == 1 == len(right)):
        return left == right
    (kind, first), = left.items()
    (other_kind, second), = right.items()
    if kind != other_kind:
        return False
    try:
        if kind == "N":
            return Decimal(first) == Decimal(second)
        if kind == "NS":
            return {Decimal(member) for member in first} == {Decimal(member) for member in second}
        if kind == "B":
            return as_bytes(first) == as_bytes(second)
        if kind == "BS":
            return {as_bytes(member) for member in first} == {as_bytes(member) for member in second}
        if kind == "SS":
            return set(first) == set(second)
        if kind == "L":
            return len(first) == len(second) and all(map(values_equal, first, second))
        if kind == "M":
            first, second = regular(first), regular(second)
            return first.keys() == second.keys() and all(values_equal(first[name], second[name]) for name in first)
    except (ArithmeticError, TypeError, ValueError):
        pass
    return first == second


def enough_parameters(params):
    """A statement with more ? than Parameters is refused, as DynamoDB does (more Parameters than ? are accepted)."""
    statements = params.get("Statements") or params.get("TransactStatements") or [params]
    for statement in statements:
        if STATEMENT_PIECE.findall(statement["Statement"]).count("?") > len(statement.get("Parameters") or ()):
            return error("ValidationException", TOO_FEW_PARAMETERS)
    return None


def value_at(path, item):
    """The value a WHERE clause's path names in an item, or None: its first name an attribute, each further name a
    member of a map, each [n] an element of a list (moto's read an item with an attribute named m as a map)."""
    value = {"M": item}
    for step in path:
        name, *indexes = LIST_INDEX.split(step)
        members = value.get("M") if is_dict(value) else None
        if not is_dict(members) or name not in members:
            return None
        value = members[name]
        for index in indexes[::2]:
            elements = value.get("L") if is_dict(value) else None
            if not isinstance(elements, list) or int(index) >= len(elements):
                return None
            value = elements[int(index)]
    return value


def where_applies(clause, find_value, row):
    """A WHERE comparison <, <=, > or >= compares as DynamoDB does (ordered): values of one type, numbers by value,
    strings by their UTF-8 bytes, binary by byte; one of another type, or missing, is false (moto's parser read
    both sides as numbers, and failed on a string). <> is the complement of = (moto's parser answered it as =)."""
    if clause.fn == "<>":
        return not values_equal(find_value(clause.left, row), clause.right)
    if clause.fn == "begins_with":
        return begins_with(regular(find_value(clause.left, row)), regular(clause.right))
    if clause.fn in ORDERINGS:
        return ordered(clause.fn, regular(find_value(clause.left, row)), regular(clause.right))
    return plain_where(clause, find_value, row)


def ordered(fn, value, bound):
    """Whether `value` `fn` `bound` (<, <=, > or >=) holds by DynamoDB's rules: both numbers, both strings (by their
    UTF-8 bytes, the Developer Guide's Data Types: "DynamoDB collates and compares strings using the bytes of the
    underlying UTF-8 string encoding") or both binary (each byte unsigned); anything else is false."""
    if not (isinstance(value, dict) and isinstance(bound, dict) and len(value) == 1 and value.keys() == bound.keys()):
        return False
    (kind, first), = value.items()
    second = bound[kind]
    if kind == "N":
        first, second = Decimal(first), Decimal(second)
    elif kind == "S":
        first, second = first.encode(), second.encode()
    elif kind == "B":
        first, second = as_bytes(first), as_bytes(second)
    else:
        return False
    return ORDERINGS[fn](first, second)


def begins_with(value, prefix):
    """PartiQL's begins_with(path, value): both strings, or both binary, the first starting with the second (the
    Developer Guide's PartiQL functions: BEGINS_WITH); moto's parser compared them for equality."""
    if not (isinstance(value, dict) and isinstance(prefix, dict) and len(value) == 1 and value.keys() == prefix.keys()):
        return False
    (kind, first), = value.items()
    if kind == "S":
        return first.startswith(prefix["S"])
    return kind == "B" and as_bytes(first).startswith(as_bytes(prefix["B"]))


@dataclass
class Access:
    """What one PartiQL statement names: its verb (SELECT, INSERT, UPDATE, DELETE, or EXISTS for a transaction's
    check), its table and index, the values its WHERE clause's top-level conjuncts set attributes equal to, those
    conjuncts, and an INSERT's item."""

    verb: str
    table: str
    index: str = None
    equal: dict = field(default_factory=dict)
    conjuncts: list = field(default_factory=list)
    item: dict = None

    def narrows(self, range_name):
        """The conjuncts a Query's sort key condition would hold: those on the sort key `range_name`."""
        return [clause for clause in self.conjuncts if isinstance(clause, where_parser.WhereClause)
                and clause.left == [range_name] and clause.fn in SORT_KEY_TESTS]

    def pinned(self, name):
        """The values the WHERE clause pins the attribute `name` to, each once: its = value, or those of a conjunct
        that ORs only `name = value` comparisons (IN [...] comes written so, in_lists_expanded); else None."""
        if name in self.equal:
            return [self.equal[name]]
        for clause in self.conjuncts:
            tests = list(joined(clause, where_parser.WhereOrClause))
            if isinstance(clause, where_parser.WhereOrClause) and all(equality_on(test, name) for test in tests):
                return distinct(regular(test.right) for test in tests)
        return None


def equality_on(clause, name):
    """Whether a WHERE clause is `name = value`."""
    return isinstance(clause, where_parser.WhereClause) and clause.fn == "=" and clause.left == [name]


def distinct(values):
    """The typed values, each once (by DynamoDB's equality), in their order."""
    kept = []
    for value in values:
        if not any(values_equal(value, seen) for seen in kept):
            kept.append(value)
    return kept


def statement_access(text):
    """The Access of one statement, its parameters inlined (statement_inlined), or None when moto's parsers cannot read
    it (moto then refuses it too)."""
    exists = EXISTS.match(text)
    text = exists.group(1) if exists else text
    returning = RETURNING.search(text)
    text = text if returning is None else text[:returning.start()]
    verb = text.split(None, 1)[0].upper() if text.strip() else ""
    try:
        if verb == "SELECT":
            return selected(text, "EXISTS" if exists else verb)
        if verb == "INSERT":
            name, item = InsertParser().parse(text)
            return Access(verb, unquoted(name), item=item)
        if verb == "DELETE":
            name, where = delete_parsed(text)
            conjuncts = conjuncts_of(where)
            return Access(verb, name, equal=equalities(conjuncts), conjuncts=conjuncts)
        if verb != "UPDATE":
            return None
        name, _, filters = UpdateParser().parse(text)
    except UNPARSED:
        return None
    return Access(verb, unquoted(name), equal=dict(filters))


def selected(text, verb):
    """The Access of a SELECT (`verb` EXISTS for one inside EXISTS(...)): its table, index and WHERE conjuncts, each
    value typed as moto's parser types it."""
    metadata = plain_query_metadata(text)
    (source,) = metadata.get_table_names()
    table, index = TABLE_AND_INDEX.fullmatch(source).groups()
    where = metadata._where_clause
    if where is not None:
        where.process_value(partiql_serializer.serialize)
    conjuncts = conjuncts_of(where)
    return Access(verb, unquoted(table), index and unquoted(index), equalities(conjuncts), conjuncts)


def conjuncts_of(where):
    """The clauses a WHERE clause (None for none) ANDs together at its top (an OR is one of them, whole)."""
    return [] if where is None else list(joined(where, where_parser.WhereAndClause))


def equalities(conjuncts):
    """{attribute: value} of the conjuncts that set a top-level attribute equal to a value."""
    return {clause.left[0]: regular(clause.right) for clause in conjuncts
            if isinstance(clause, where_parser.WhereClause) and clause.fn == "=" and len(clause.left) == 1}


def delete_parsed(text):
    """(table, WHERE clause or None) of a DELETE statement without RETURNING, its WHERE clause read as a SELECT's is
    (any comparison, function, AND, OR), each value typed: moto's DELETE parser read only =, and failed on the rest."""
    pieces = STATEMENT_TOKEN.findall(text)
    start = next((index for index, piece in enumerate(pieces) if piece.upper() == "WHERE"), None)
    name = unquoted(STATEMENT_TABLE.match(text).group(1))
    if start is None:
        return name, None
    where = where_parser.WhereParser.parse_where_clause("".join(pieces[start + 1:]).strip())
    where.process_value(partiql_serializer.serialize)
    return name, where


def joined(clause, kind):
    """The clauses a WHERE clause joins at its top with `kind` (WhereAndClause: its conjuncts, an OR one of them
    whole; WhereOrClause: its disjuncts), nested joins of the same kind flattened."""
    if isinstance(clause, kind):
        for child in clause.children:
            yield from joined(child, kind)
    else:
        yield clause


def index_named_in_quotes(self, from_clause):
    """moto's FROM clause of a SELECT, a table and index named in quotes ("t"."i", as the Developer Guide's PartiQL
    select statements write it) read as the t.i moto keys an index's items by; moto looked up t"."i, and answered
    ResourceNotFoundException."""
    plain_from_parser(self, from_clause)
    named = TABLE_AND_INDEX.fullmatch(from_clause.strip())
    if named and named.group(2):
        self.clauses = {from_clause.strip(): f"{unquoted(named.group(1))}.{unquoted(named.group(2))}"}


def holds(clause, item):
    """Whether one WHERE clause holds for an item (DynamoDB JSON), by DynamoDB's rules (where_applies)."""
    return clause.apply(value_at, item)


class DuplicateItem(DynamodbException):
    """PartiQL INSERT of a key the table holds; `name` is the code BatchExecuteStatement answers (moto reads it)."""
    name = "DuplicateItem"

    def __init__(self):
        super().__init__("com.amazonaws.dynamodb.v20120810#DuplicateItemException", DUPLICATE_ITEM)


class WhereNotHeld(ConditionalCheckFailed):
    """PartiQL UPDATE or DELETE whose WHERE clause does not hold for the item its key names (an UPDATE's also when no
    item has that key); `name` is the code BatchExecuteStatement answers (moto reads it)."""
    name = "ConditionalCheckFailed"


class IncompleteKey(MockValidationException):
    """PartiQL DELETE whose WHERE clause does not set each key attribute equal to a value; `name` is the code
    BatchExecuteStatement answers (moto reads it)."""
    name = "ValidationError"

    def __init__(self):
        super().__init__(INCOMPLETE_KEY)


def partiql_writes_refused(statement, source_data, parameters):
    """moto's PartiQL statement, refused where DynamoDB refuses it: an INSERT of a key the table already holds
    (moto overwrote the item), an UPDATE that matches no item (moto changed nothing and answered 200). A DELETE is
    applied here (held_delete). An UPDATE or DELETE ending in RETURNING answers the items it names (returned_items);
    moto's parser failed on the clause."""
    verb = statement.split(None, 1)[0].upper() if statement.strip() else ""
    returning = RETURNING.search(statement) if verb in ("UPDATE", "DELETE") else None
    if returning is not None:
        which, image = returning.group(1).upper(), returning.group(2).upper()
        if verb == "DELETE" and (which, image) != ("ALL", "OLD"):
            raise MockValidationException(DELETE_RETURNING.format(which, image))
        statement = statement[:returning.start()]
    if verb == "SELECT":
        source_data = global_indexes_projected(source_data)
    if verb == "DELETE":
        answer = held_delete(statement, source_data)
    else:
        answer = plain_partiql_query(statement, source_data, parameters)
    if verb == "INSERT":
        for table_name, changes in answer[1].items():
            table = find_table(table_name)
            if table is not None and any(before is None and holds_key(table, after) for before, after in changes):
                raise DuplicateItem()
    elif verb == "UPDATE" and not any(answer[1].values()):
        raise WhereNotHeld()
    elif verb == "UPDATE" and PARAMETER_MARK in statement:  # a SET sum arrives as a parameter literal
        for changes in answer[1].values():
            changes[:] = [(before, arithmetic_applied(before, after)) for before, after in changes]
    if returning is not None:
        answer = (returned_items(answer[1], which, image), answer[1])
    return answer


def held_delete(statement, source_data):
    """moto's answer to a DELETE as DynamoDB applies it: the item whose whole key its WHERE clause sets equal deleted
    when the rest of the clause holds for it, else refused (the Developer Guide's PartiQL delete statements: "If the
    table has an item with same primary key, but the condition in the WHERE clause of the DELETE statement evaluates
    to false, ConditionalCheckFailedException is returned."), nothing deleted when no item has that key ("SUCCESS is
    returned with 0 items deleted"); a clause without the whole key (or none) is refused in DynamoDB's words as
    nubo-db/dynamodb-conformance records them. moto's parser read only = and deleted every item the = matched."""
    name, where = delete_parsed(statement)
    items, table = source_data[name], find_table(name)
    key = equalities(conjuncts_of(where))
    names = [attribute for attribute in (table.hash_key_attr, table.range_key_attr) if attribute]
    if any(attribute not in key for attribute in names):
        raise IncompleteKey()
    found = next((item for item in items if all(values_equal(item.get(attribute), key[attribute])
                                                 for attribute in names)), None)
    if found is not None and not holds(where, found):
        raise WhereNotHeld()
    return [], {name: [] if found is None else [(found, None)]}


def global_indexes_projected(source_data):
    """moto's source data with each global secondary index's entries cut to the attributes the index projects, as a
    SELECT from it reads them (the Developer Guide's Global Secondary Indexes: "global secondary index queries
    cannot fetch attributes from the base table"); moto answered whole items."""
    projected = dict(source_data)
    for name in source_data:
        table = find_table(name)
        for index in table.global_indexes if table is not None else ():
            entries = f"{name}.{index.name}"
            if entries in projected and (index.projection or {}).get("ProjectionType", "ALL") != "ALL":
                kept = projected_names(table, index)
                projected[entries] = [{key: value for key, value in item.items() if key in kept}
                                      for item in projected[entries]]
    return projected


def projected_names(table, index):
    """The attributes an index holds: the table's key, the index's key and its projection's NonKeyAttributes."""
    names = {table.hash_key_attr, table.range_key_attr, *(part["AttributeName"] for part in index.schema)}
    return (names | set(index.projection.get("NonKeyAttributes", ()))) - {None}


def returned_items(changes, which, image):
    """The items RETURNING ALL|MODIFIED OLD|NEW * answers, from the (before, after) of each item written: the whole
    item before or after the write, or only the attributes the write set or removed (as UPDATE's ReturnValues
    UPDATED_OLD / UPDATED_NEW do)."""
    items = []
    for table_changes in changes.values():
        for before, after in table_changes:
            chosen = (before if image == "OLD" else after) or {}
            if which == "MODIFIED":
                other = (after if image == "OLD" else before) or {}
                chosen = {name: value for name, value in chosen.items() if other.get(name) != value}
            if chosen:
                items.append(chosen)
    return items


def metadata_without_returning(statement):
    """moto's get_query_metadata (BatchExecuteStatement reads each statement's table with it) of the statement
    without its RETURNING clause, which its parser fails on, and with each table's name unquoted: moto looked up
    "p90-contract", quotes and all, so a batch's statements on a table whose name needs quotes found no table. A
    DELETE's table is read as held_delete reads it (moto's parser failed on a comparison other than =)."""
    returning = RETURNING.search(statement)
    text = statement if returning is None else statement[:returning.start()]
    if text.lstrip()[:6].upper() == "DELETE":
        name = delete_parsed(text)[0]
        return QueryMetadata(tables={name: name})
    metadata = plain_query_metadata(text)
    metadata._tables = {alias: unquoted(name) for alias, name in metadata._tables.items()}  # the names it answers
    return metadata


def unquoted(name):
    """A table name as a statement names it ("a""b" or a_b), as the table is called (a"b, a_b)."""
    return name[1:-1].replace('""', '"') if name[:1] == '"' and name[-1:] == '"' and len(name) > 1 else name


def statements_not_empty(member, params):
    """An empty Statements (BatchExecuteStatement) or TransactStatements (ExecuteTransaction) is refused by the model's
    minimum length of 1, as DynamoDB words a length constraint on a list; moto answered no responses."""
    if params[member] == []:
        return error("ValidationException", NO_STATEMENTS.format(lower_camel(member)))
    return None


def statement_not_empty(params):
    """An empty Statement is refused by the model's minimum length of 1, as DynamoDB's validation words a length
    constraint (paritysuite/dynamodb-conformance's captures: "Value '' at 'tableName' failed to satisfy
    constraint: Member must have length greater than or equal to 1"); moto's parser failed on it (TypeError)."""
    if params["Statement"] == "":
        return error("ValidationException", EMPTY_STATEMENT)
    return None


def statement_tables_exist(params):
    """A statement naming a table the lab does not hold is a ResourceNotFoundException, as moto answers a SELECT
    of one and as nubo-db/dynamodb-conformance records real DynamoDB answering ('Requested resource not found');
    moto's UPDATE, DELETE and INSERT, and ExecuteTransaction's statements, failed on one with a KeyError. A
    FAILURE rule: it runs only once moto has failed."""
    statements = params.get("TransactStatements") or [params]
    for statement in statements:
        named = STATEMENT_TABLE.match(statement["Statement"])
        name = named and unquoted(named.group(1))
        if name and find_table(name) is None:
            return error("ResourceNotFoundException", NO_SUCH_TABLE)
    return None


def no_returning_in_transaction(params):
    """ExecuteTransaction refuses a statement with a RETURNING clause, in DynamoDB's words as
    nubo-db/dynamodb-conformance pins them from real DynamoDB (eu-west-2)."""
    for place, statement in enumerate(params["TransactStatements"]):
        if RETURNING.search(statement["Statement"]):
            return error("ValidationException", TRANSACTION_RETURNING.format(place))
    return None


def holds_key(table, item):
    """Whether the table holds an item with this item's key (False when the item lacks a key attribute)."""
    names = [name for name in (table.hash_key_attr, table.range_key_attr) if name]
    if item is None or any(name not in item for name in names):
        return False
    key = [DynamoType(item[name]) for name in names]
    return table.get_item(*key) is not None


def transaction_all_or_nothing(backend, statements):
    """ExecuteTransaction applied whole or not at all: a statement DynamoDB refuses cancels the transaction, with
    each statement's reason in its place, and leaves every table as it was (moto applied statements one by one
    and stopped at the first refusal, keeping the ones before it). EXISTS(SELECT ...), the Developer Guide's
    condition check of a PartiQL transaction, holds when its SELECT finds an item, else cancels the transaction
    as a failed condition (moto's parser failed on it)."""
    saved = {name: copy.deepcopy(table) for name, table in backend.tables.items()}
    reasons, responses = [], []
    for statement in statements:
        text, exists = statement["Statement"], EXISTS.match(statement["Statement"])
        try:
            items = backend.execute_statement(statement=exists.group(1) if exists else text,
                                              parameters=statement.get("Parameters", []))
            if exists is not None:
                if not items:
                    raise ConditionalCheckFailed()
                items = []  # a check answers no item
        except DuplicateItem as refused:
            reasons.append(("ValidationError", refused.message, None))
        except ConditionalCheckFailed as refused:
            reasons.append(("ConditionalCheckFailed", refused.message, None))
        else:
            reasons.append((None, None, None))
            responses.extend({"Item": item} for item in items)
    if any(code for code, _, _ in reasons):
        backend.tables.update(saved)
        raise TransactionCanceledException(reasons)
    return responses


plain_partiql_query = moto_partiql.query
moto_partiql.query = partiql_writes_refused  # DynamoDBBackend.execute_statement calls partiql.query at each statement
plain_query_metadata = moto_partiql.get_query_metadata
moto_partiql.get_query_metadata = metadata_without_returning
DynamoDBBackend.execute_transaction = transaction_all_or_nothing
plain_batch_execute = DynamoDBBackend.batch_execute_statement
DynamoDBBackend.batch_execute_statement = each_statement_answered
plain_literal = partiql_serializer.serialize
partiql_serializer.serialize = read_literal  # the instance every PartiQL parser module serializes literals with
CaseInsensitiveDict.__eq__ = same_value
plain_where = where_parser.WhereClause.apply
where_parser.WhereClause.apply = where_applies
where_parser.find_value_in_dynamodb_document = value_at  # the function DynamoDBWhereParser reads values with
plain_from_parser = partiql_parser.DynamoDBFromParser.__init__
partiql_parser.DynamoDBFromParser.__init__ = index_named_in_quotes
