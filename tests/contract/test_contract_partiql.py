"""PartiQL ? parameters of every attribute type are written and matched as DynamoDB does, never an
InternalServerError (moto's parser has no literal for binary values or sets, and ignores INSERT's parameters)."""
import pytest
from botocore.exceptions import ClientError

from helpers import tracing
from helpers.tables import recreate_table

VALUES = {"BOOL": {"BOOL": True}, "NULL": {"NULL": True}, "B": {"B": b"\x00\x01"}, "BS": {"BS": [b"\x00\x01", b"\x01\x02"]},
          "SS": {"SS": ["a", "b"]}, "NS": {"NS": ["1", "2.5"]}, "S": {"S": "it's"}, "N": {"N": "1.5"},
          "L": {"L": [{"S": "a"}, {"N": "1"}, {"BOOL": False}, {"NULL": True}, {"B": b"\x02"}]},
          "M": {"M": {"a": {"S": "b"}, "set": {"SS": ["q"]}, "bin": {"BS": [b"\x03"]}}}}


def typed_key(key, name):
    """A low-level key no other test uses."""
    return {"PK": {"S": key(name)["PK"]}, "SK": {"S": "META"}}


@pytest.mark.parametrize("kind", sorted(VALUES))
def test_a_parameter_of_each_type_is_inserted_matched_updated_and_deleted(unvalidated_client, table, key, kind):
    client, item, value = unvalidated_client, typed_key(key, kind), VALUES[kind]
    where = 'WHERE PK = ? AND SK = ? AND v = ?'
    with tracing(False):
        client.execute_statement(Statement=f"INSERT INTO \"{table.name}\" VALUE {{'PK': ?, 'SK': ?, 'v': ?}}",
                                 Parameters=[item["PK"], item["SK"], value])
        stored = client.get_item(TableName=table.name, Key=item, ConsistentRead=True)["Item"]
        selected = client.execute_statement(Statement=f'SELECT v FROM "{table.name}" {where}',
                                            Parameters=[item["PK"], item["SK"], value])["Items"]
        client.execute_statement(Statement=f'UPDATE "{table.name}" SET w = ? {where}',
                                 Parameters=[value, item["PK"], item["SK"], value])
        updated = client.get_item(TableName=table.name, Key=item, ConsistentRead=True)["Item"]
        client.execute_statement(Statement=f'DELETE FROM "{table.name}" {where}',
                                 Parameters=[item["PK"], item["SK"], value])
        left = client.get_item(TableName=table.name, Key=item, ConsistentRead=True)
    assert stored == {**item, "v": value}
    assert selected == [{"v": value}]
    assert updated == {**item, "v": value, "w": value}
    assert "Item" not in left


def test_a_set_parameter_matches_the_same_set_in_another_order(unvalidated_client, table, key):
    item = typed_key(key, "set")
    with tracing(False):
        unvalidated_client.put_item(TableName=table.name, Item={**item, "ns": {"NS": ["2", "1.50"]}})
        selected = unvalidated_client.execute_statement(
            Statement=f'SELECT PK FROM "{table.name}" WHERE PK = ? AND SK = ? AND ns = ?',
            Parameters=[item["PK"], item["SK"], {"NS": ["1.5", "2"]}])["Items"]
    assert selected == [{"PK": item["PK"]}]


def test_a_number_parameter_compares_by_value_and_an_attribute_named_m_is_no_map(unvalidated_client, table, key):
    item = typed_key(key, "m")
    with tracing(False):
        unvalidated_client.put_item(TableName=table.name, Item={**item, "m": {"N": "10"}})
        selected = unvalidated_client.execute_statement(
            Statement=f'SELECT m FROM "{table.name}" WHERE PK = ? AND SK = ? AND m > ?',
            Parameters=[item["PK"], item["SK"], {"N": "9.5"}])["Items"]
    assert selected == [{"m": {"N": "10"}}]


def test_the_transaction_and_batch_operations_take_typed_parameters(unvalidated_client, table, key):
    item = typed_key(key, "transaction")
    with tracing(False):
        unvalidated_client.execute_transaction(TransactStatements=[{
            "Statement": f"INSERT INTO \"{table.name}\" VALUE {{'PK': ?, 'SK': ?, 'tags': ?}}",
            "Parameters": [item["PK"], item["SK"], {"SS": ["x", "y"]}]}])
        stored = unvalidated_client.get_item(TableName=table.name, Key=item, ConsistentRead=True)["Item"]
    assert stored == {**item, "tags": {"SS": ["x", "y"]}}


def test_fewer_parameters_than_question_marks_is_refused(unvalidated_client, table):
    with pytest.raises(ClientError) as refused, tracing(False):
        unvalidated_client.execute_statement(Statement=f'SELECT * FROM "{table.name}" WHERE PK = ? AND SK = ?',
                                             Parameters=[{"S": "a"}])
    assert refused.value.response["Error"] == {"Code": "ValidationException",
                                               "Message": "Number of parameters in request and statement don't match."}


DUPLICATE = {"Code": "DuplicateItemException", "Message": "Duplicate primary key exists in table"}
NO_ITEM = {"Code": "ConditionalCheckFailedException", "Message": "The conditional request failed"}
NOT_WELL_FORMED = "Statement wasn't well formed, can't be processed"


def partiql_refusal(call, **params):
    """The whole error response a PartiQL call gets (it must fail)."""
    with pytest.raises(ClientError) as refused, tracing(False):
        call(**params)
    return refused.value.response


def insert(table, item, **values):
    """(statement, parameters) of an INSERT of the item's key with these values (typed)."""
    names = ["PK", "SK", *values]
    body = ", ".join(f"'{name}': ?" for name in names)
    return f'INSERT INTO "{table.name}" VALUE {{{body}}}', [item["PK"], item["SK"], *values.values()]


def test_an_insert_of_a_key_the_table_holds_is_refused_and_changes_nothing(unvalidated_client, table, key):
    item = typed_key(key, "duplicate")
    client = unvalidated_client
    with tracing(False):
        statement, parameters = insert(table, item, v={"N": "1"})
        client.execute_statement(Statement=statement, Parameters=parameters)
    statement, parameters = insert(table, item, v={"N": "2"})
    response = partiql_refusal(client.execute_statement, Statement=statement, Parameters=parameters)
    with tracing(False):
        stored = client.get_item(TableName=table.name, Key=item, ConsistentRead=True)["Item"]
    assert response["Error"] == DUPLICATE
    assert stored == {**item, "v": {"N": "1"}}


def test_an_update_that_matches_no_item_is_refused_and_creates_none(unvalidated_client, table, key):
    item = typed_key(key, "missing")
    response = partiql_refusal(unvalidated_client.execute_statement,
                               Statement=f'UPDATE "{table.name}" SET v = ? WHERE PK = ? AND SK = ?',
                               Parameters=[{"N": "1"}, item["PK"], item["SK"]])
    with tracing(False):
        left = unvalidated_client.get_item(TableName=table.name, Key=item, ConsistentRead=True)
    assert response["Error"] == NO_ITEM
    assert "Item" not in left


def test_an_update_whose_condition_does_not_hold_is_refused_and_changes_nothing(unvalidated_client, table, key):
    item = typed_key(key, "condition")
    with tracing(False):
        unvalidated_client.put_item(TableName=table.name, Item={**item, "v": {"N": "1"}})
    response = partiql_refusal(unvalidated_client.execute_statement,
                               Statement=f'UPDATE "{table.name}" SET v = ? WHERE PK = ? AND SK = ? AND v = ?',
                               Parameters=[{"N": "2"}, item["PK"], item["SK"], {"N": "5"}])
    with tracing(False):
        stored = unvalidated_client.get_item(TableName=table.name, Key=item, ConsistentRead=True)["Item"]
    assert response["Error"] == NO_ITEM
    assert stored == {**item, "v": {"N": "1"}}


def test_a_delete_that_matches_no_item_succeeds(unvalidated_client, table, key):
    item = typed_key(key, "never-written")
    with tracing(False):
        answer = unvalidated_client.execute_statement(Statement=f'DELETE FROM "{table.name}" WHERE PK = ? AND SK = ?',
                                                      Parameters=[item["PK"], item["SK"]])
    assert answer["Items"] == []


def test_a_delete_with_a_condition_beyond_the_key_deletes_the_item_only_when_it_holds(unvalidated_client, table, key):
    item = typed_key(key, "conditional-delete")
    with tracing(False):
        unvalidated_client.put_item(TableName=table.name, Item={**item, "v": {"N": "7"}})
    delete = f'DELETE FROM "{table.name}" WHERE PK = ? AND SK = ? AND v > ?'
    response = partiql_refusal(unvalidated_client.execute_statement, Statement=delete,
                               Parameters=[item["PK"], item["SK"], {"N": "9"}])
    with tracing(False):
        kept = unvalidated_client.get_item(TableName=table.name, Key=item, ConsistentRead=True)
        unvalidated_client.execute_statement(Statement=delete, Parameters=[item["PK"], item["SK"], {"N": "5"}])
        deleted = unvalidated_client.get_item(TableName=table.name, Key=item, ConsistentRead=True)
    assert response["Error"] == NO_ITEM
    assert kept["Item"] == {**item, "v": {"N": "7"}} and "Item" not in deleted


def test_a_delete_that_does_not_name_the_whole_key_is_refused(unvalidated_client, table, key):
    item = typed_key(key, "half-key")
    with tracing(False):
        unvalidated_client.put_item(TableName=table.name, Item=item)
    response = partiql_refusal(unvalidated_client.execute_statement,
                               Statement=f'DELETE FROM "{table.name}" WHERE PK = ?', Parameters=[item["PK"]])
    with tracing(False):
        kept = unvalidated_client.get_item(TableName=table.name, Key=item, ConsistentRead=True)
    assert response["Error"] == {"Code": "ValidationException",
                                 "Message": "Where clause does not contain a mandatory equality on all key attributes"}
    assert kept["Item"] == item


@pytest.mark.parametrize("value, matches", [({"N": "1"}, False), ({"N": "2"}, True), ({"S": "1"}, True)])
def test_not_equal_is_the_complement_of_equal(unvalidated_client, table, key, value, matches):
    item = typed_key(key, "not-equal")
    with tracing(False):
        unvalidated_client.put_item(TableName=table.name, Item={**item, "v": {"N": "1"}})
        selected = unvalidated_client.execute_statement(
            Statement=f'SELECT PK FROM "{table.name}" WHERE PK = ? AND SK = ? AND v <> ?',
            Parameters=[item["PK"], item["SK"], value])["Items"]
        other_sort_keys = unvalidated_client.execute_statement(
            Statement=f'SELECT PK FROM "{table.name}" WHERE PK = ? AND SK <> ?', Parameters=[item["PK"], item["SK"]])
    assert selected == ([{"PK": item["PK"]}] if matches else [])
    assert other_sort_keys["Items"] == []


def test_a_transaction_with_a_refused_statement_is_cancelled_whole(unvalidated_client, table, key):
    held, new, missing = typed_key(key, "held"), typed_key(key, "new"), typed_key(key, "missing")
    with tracing(False):
        unvalidated_client.put_item(TableName=table.name, Item=held)
    statements = [dict(zip(("Statement", "Parameters"), insert(table, new))),
                  dict(zip(("Statement", "Parameters"), insert(table, held))),
                  {"Statement": f'UPDATE "{table.name}" SET v = ? WHERE PK = ? AND SK = ?',
                   "Parameters": [{"N": "1"}, missing["PK"], missing["SK"]]}]
    response = partiql_refusal(unvalidated_client.execute_transaction, TransactStatements=statements)
    with tracing(False):
        left = unvalidated_client.get_item(TableName=table.name, Key=new, ConsistentRead=True)
    assert response["Error"]["Code"] == "TransactionCanceledException"
    assert response["CancellationReasons"] == [
        {"Code": "None"}, {"Code": "ValidationError", "Message": "Duplicate primary key exists in table"},
        {"Code": "ConditionalCheckFailed", "Message": "The conditional request failed"}]
    assert "Item" not in left


def test_a_batch_answers_each_refused_statement_with_its_error(unvalidated_client, table, key):
    held, missing = typed_key(key, "held"), typed_key(key, "missing")
    with tracing(False):
        unvalidated_client.put_item(TableName=table.name, Item=held)
        responses = unvalidated_client.batch_execute_statement(Statements=[
            dict(zip(("Statement", "Parameters"), insert(table, held))),
            {"Statement": f'UPDATE "{table.name}" SET v = ? WHERE PK = ? AND SK = ?',
             "Parameters": [{"N": "1"}, missing["PK"], missing["SK"]]}])["Responses"]
    assert [response.get("Error") for response in responses] == [
        {"Code": "DuplicateItem", "Message": "Duplicate primary key exists in table"},
        {"Code": "ConditionalCheckFailed", "Message": "The conditional request failed"}]


def test_number_literals_are_numbers_in_update_select_delete_and_insert(unvalidated_client, table, key):
    """Unquoted numbers (1, -1.5, 1e0: the Developer Guide's 'PartiQL data types for DynamoDB') are Number values
    wherever a statement takes a value; a list index (a[0]) stays an index."""
    client, item = unvalidated_client, typed_key(key, "numbers")
    where = f"WHERE PK = '{item['PK']['S']}' AND SK = 'META'"
    with tracing(False):
        client.execute_statement(Statement=f"INSERT INTO \"{table.name}\" VALUE {{'PK': '{item['PK']['S']}', "
                                           f"'SK': 'META', 'v': 100, 'm': {{'l': [1, -2.5]}}}}")
        inserted = client.get_item(TableName=table.name, Key=item, ConsistentRead=True)["Item"]
        client.execute_statement(Statement=f'UPDATE "{table.name}" SET v = 5 {where} AND v = 100')
        selected = [client.execute_statement(Statement=f'SELECT v FROM "{table.name}" {where} AND {test}')["Items"]
                    for test in ("v = 5.0", "v > 4.5", "v < -1", "m.l[0] = 1", "m.l[1] = -2.5")]
        client.execute_statement(Statement=f'DELETE FROM "{table.name}" {where} AND v = 5')
        left = client.get_item(TableName=table.name, Key=item, ConsistentRead=True)
    assert inserted == {**item, "v": {"N": "100"}, "m": {"M": {"l": {"L": [{"N": "1"}, {"N": "-2.5"}]}}}}
    assert selected == [[{"v": {"N": "5"}}], [{"v": {"N": "5"}}], [], [{"v": {"N": "5"}}], [{"v": {"N": "5"}}]]
    assert "Item" not in left


def test_true_false_and_null_literals_are_written_at_any_depth_and_matched(unvalidated_client, table, key):
    item = typed_key(key, "literals")
    pk, sk = item["PK"]["S"], item["SK"]["S"]
    with tracing(False):
        unvalidated_client.execute_statement(
            Statement=f"INSERT INTO \"{table.name}\" VALUE {{'PK': '{pk}', 'SK': '{sk}', 'yes': true, 'no': FALSE, "
                      f"'none': null, 'm': {{'x': true, 'l': [null, false, 1]}}}}")
        stored = unvalidated_client.get_item(TableName=table.name, Key=item, ConsistentRead=True)["Item"]
        unvalidated_client.execute_statement(
            Statement=f"UPDATE \"{table.name}\" SET yes = false, none = true WHERE PK = '{pk}' AND SK = '{sk}'")
        selected = unvalidated_client.execute_statement(
            Statement=f"SELECT yes, none FROM \"{table.name}\" WHERE PK = '{pk}' AND SK = '{sk}' AND yes = false")
    assert stored == {**item, "yes": {"BOOL": True}, "no": {"BOOL": False}, "none": {"NULL": True},
                      "m": {"M": {"x": {"BOOL": True}, "l": {"L": [{"NULL": True}, {"BOOL": False}, {"N": "1"}]}}}}
    assert selected["Items"] == [{"yes": {"BOOL": False}, "none": {"BOOL": True}}]


def test_an_update_sets_a_sum_or_difference_of_numbers_worked_out_against_the_item(unvalidated_client, table, key):
    item = typed_key(key, "sum")
    where = f"WHERE PK = '{item['PK']['S']}' AND SK = 'META'"
    with tracing(False):
        unvalidated_client.put_item(TableName=table.name, Item={**item, "v": {"N": "1.5"}})
        unvalidated_client.execute_statement(Statement=f'UPDATE "{table.name}" SET v = v + 1 {where}')
        unvalidated_client.execute_statement(
            Statement=f'UPDATE "{table.name}" SET w = v + v, x = ? - 0.5, "y" = v - ? {where}',
            Parameters=[{"N": "2"}, {"N": "10"}])
        stored = unvalidated_client.get_item(TableName=table.name, Key=item, ConsistentRead=True)["Item"]
    assert stored == {**item, "v": {"N": "2.5"}, "w": {"N": "5"}, "x": {"N": "1.5"}, "y": {"N": "-7.5"}}


@pytest.mark.parametrize("expression, message", [
    ("missing + 1", "The provided expression refers to an attribute that does not exist in the item"),
    ("PK + 1", "An operand in the update expression has an incorrect data type"),
])
def test_an_update_sum_of_no_number_is_refused_as_update_item_refuses_it(unvalidated_client, table, key, expression,
                                                                          message):
    item = typed_key(key, "bad-sum")
    with tracing(False):
        unvalidated_client.put_item(TableName=table.name, Item=item)
        with pytest.raises(ClientError) as refused:
            unvalidated_client.execute_statement(
                Statement=f"UPDATE \"{table.name}\" SET v = {expression} WHERE PK = '{item['PK']['S']}' AND SK = 'META'")
    assert refused.value.response["Error"] == {"Code": "ValidationException", "Message": message}


def test_an_update_of_several_set_clauses_applies_each(unvalidated_client, table, key):
    item = typed_key(key, "set-clauses")
    with tracing(False):
        unvalidated_client.put_item(TableName=table.name, Item={**item, "n": {"N": "1"}})
        unvalidated_client.execute_statement(
            Statement=f"UPDATE \"{table.name}\" SET n=n + 100 SET s = 'x' SET b = true "
                      f"WHERE PK = '{item['PK']['S']}' AND SK = 'META'")
        stored = unvalidated_client.get_item(TableName=table.name, Key=item, ConsistentRead=True)["Item"]
    assert stored == {**item, "n": {"N": "101"}, "s": {"S": "x"}, "b": {"BOOL": True}}


@pytest.mark.parametrize("returning, answer", [
    ("ALL OLD *", [{"n": {"N": "1"}, "s": {"S": "x"}}]),
    ("ALL NEW *", [{"n": {"N": "2"}, "s": {"S": "x"}, "t": {"S": "y"}}]),
    ("MODIFIED OLD *", [{"n": {"N": "1"}}]),
    ("MODIFIED NEW *", [{"n": {"N": "2"}, "t": {"S": "y"}}]),
])
def test_an_update_returning_answers_the_item_before_or_after_whole_or_only_what_changed(
        unvalidated_client, table, key, returning, answer):
    item = typed_key(key, "returning")
    with tracing(False):
        unvalidated_client.put_item(TableName=table.name, Item={**item, "n": {"N": "1"}, "s": {"S": "x"}})
        items = unvalidated_client.execute_statement(
            Statement=f"UPDATE \"{table.name}\" SET n = 2, t = 'y' WHERE PK = '{item['PK']['S']}' AND SK = 'META' "
                      f"RETURNING {returning}")["Items"]
    keys = item if returning.startswith("ALL") else {}
    assert items == [{**keys, **attributes} for attributes in answer]


def test_a_delete_returning_answers_the_old_item_and_refuses_any_other_image(unvalidated_client, table, key):
    item = typed_key(key, "delete-returning")
    where = f"WHERE PK = '{item['PK']['S']}' AND SK = 'META'"
    with tracing(False):
        unvalidated_client.put_item(TableName=table.name, Item={**item, "n": {"N": "1"}})
        with pytest.raises(ClientError) as refused:
            unvalidated_client.execute_statement(Statement=f'DELETE FROM "{table.name}" {where} RETURNING ALL NEW *')
        deleted = unvalidated_client.execute_statement(
            Statement=f'DELETE FROM "{table.name}" {where} RETURNING ALL OLD *')["Items"]
    assert refused.value.response["Error"] == {
        "Code": "ValidationException",
        "Message": "Invalid returning clause: RETURNING ALL NEW *. Only RETURNING ALL OLD * is allowed in DELETE "
                   "statements."}
    assert deleted == [{**item, "n": {"N": "1"}}]


def test_a_transaction_statement_with_returning_is_refused(unvalidated_client, table, key):
    item = typed_key(key, "transaction-returning")
    statement = f"UPDATE \"{table.name}\" SET n = 1 WHERE PK = '{item['PK']['S']}' AND SK = 'META'"
    with pytest.raises(ClientError) as refused:
        unvalidated_client.execute_transaction(TransactStatements=[
            {"Statement": statement}, {"Statement": statement + " RETURNING ALL NEW *"}])
    assert refused.value.response["Error"] == {
        "Code": "ValidationException",
        "Message": "Validation failed in TransactStatements[1]: RETURNING clause is not supported in "
                   "ExecuteTransaction."}


@pytest.mark.parametrize("statement", [
    "UPDATE \"p90-contract-missing\" SET n = 1 WHERE PK = 'a' AND SK = 'b'",
    "DELETE FROM \"p90-contract-missing\" WHERE PK = 'a' AND SK = 'b'",
    "INSERT INTO \"p90-contract-missing\" VALUE {'PK': 'a', 'SK': 'b'}",
])
def test_a_write_to_a_table_that_does_not_exist_is_resource_not_found(unvalidated_client, statement):
    for send in (lambda: unvalidated_client.execute_statement(Statement=statement),
                 lambda: unvalidated_client.execute_transaction(TransactStatements=[{"Statement": statement}])):
        with pytest.raises(ClientError) as refused:
            send()
        assert refused.value.response["Error"]["Code"] == "ResourceNotFoundException"
        assert refused.value.response["Error"]["Message"].startswith("Requested resource not found")


def test_string_and_number_set_literals_are_written_and_matched(unvalidated_client, table, key):
    item = typed_key(key, "set-literals")
    pk = item["PK"]["S"]
    with tracing(False):
        unvalidated_client.execute_statement(
            Statement=f"INSERT INTO \"{table.name}\" VALUE {{'PK': '{pk}', 'SK': 'META', 'ss': <<'a', 'it''s'>>, "
                      f"'ns': <<1, 2.5>>, 'm': {{'s': <<'x'>>}}}}")
        stored = unvalidated_client.get_item(TableName=table.name, Key=item, ConsistentRead=True)["Item"]
        unvalidated_client.execute_statement(
            Statement=f"UPDATE \"{table.name}\" SET ss = <<'q'>> WHERE PK = '{pk}' AND SK = 'META'")
        selected = unvalidated_client.execute_statement(
            Statement=f"SELECT ss FROM \"{table.name}\" WHERE PK = '{pk}' AND SK = 'META' AND ns = <<2.5, 1>>")
    assert stored == {**item, "ss": {"SS": ["a", "it's"]}, "ns": {"NS": ["1", "2.5"]}, "m": {"M": {"s": {"SS": ["x"]}}}}
    assert selected["Items"] == [{"ss": {"SS": ["q"]}}]


def test_an_empty_statement_is_refused_by_its_length_constraint(unvalidated_client):
    with pytest.raises(ClientError) as refused:
        unvalidated_client.execute_statement(Statement="")
    assert refused.value.response["Error"] == {
        "Code": "ValidationException",
        "Message": "1 validation error detected: Value '' at 'statement' failed to satisfy constraint: "
                   "Member must have length greater than or equal to 1"}


def test_a_malformed_statement_in_a_batch_fails_its_own_entry_only(call, table, key):
    item = typed_key(key, "batch")
    call("PutItem", {"TableName": table.name, "Item": item})
    where = f"WHERE PK = '{item['PK']['S']}' AND SK = 'META'"
    answer = call("BatchExecuteStatement", {"Statements": [{"Statement": f'SLECT * FROM "{table.name}" {where}'},
                                                           {"Statement": f'SELECT * FROM "{table.name}" {where}'}]})
    assert answer == {"Responses": [
        {"Error": {"Code": "ValidationError",
                   "Message": "Statement wasn't well formed, can't be processed: Expected data manipulation"}},
        {"TableName": table.name, "Item": item}]}


def test_a_statement_cut_short_is_refused_as_not_well_formed(call, table):
    statement = {"Statement": f'SELECT * FROM "{table.name}" WHERE PK ='}
    alone = call("ExecuteStatement", statement)
    in_a_transaction = call("ExecuteTransaction", {"TransactStatements": [statement]})
    in_a_batch = call("BatchExecuteStatement", {"Statements": [statement]})["Responses"][0]["Error"]
    assert alone[0] == in_a_transaction[0] == "ValidationException" and in_a_batch["Code"] == "ValidationError"
    messages = (alone[1], in_a_transaction[1], in_a_batch["Message"])
    assert all(message.startswith(NOT_WELL_FORMED) for message in messages)


def test_a_batch_of_selects_on_a_quoted_table_name_answers_each_item(call, table, key):
    items = [typed_key(key, f"selected{n}") for n in range(2)]
    for item in items:
        call("PutItem", {"TableName": table.name, "Item": item})
    statements = [{"Statement": f'SELECT * FROM "{table.name}" WHERE PK = ? AND SK = ?',
                   "Parameters": [item["PK"], item["SK"]]} for item in items]
    answer = call("BatchExecuteStatement", {"Statements": statements})
    assert answer == {"Responses": [{"TableName": table.name, "Item": item} for item in items]}


@pytest.mark.parametrize("where, found", [("PK = ? AND begins_with(s, 'ab')", True),
                                          ("PK = ? AND begins_with(s, 'zz')", False),
                                          ("begins_with(s, 'ab') AND PK = ?", True)],
                         ids=["a prefix", "another prefix", "the function first"])
def test_begins_with_in_a_where_matches_a_prefix(call, table, key, where, found):
    item = {**typed_key(key, "prefixed"), "s": {"S": "abc"}}
    call("PutItem", {"TableName": table.name, "Item": item})
    answer = call("ExecuteStatement", {"Statement": f'SELECT SK FROM "{table.name}" WHERE {where}',
                                       "Parameters": [item["PK"]]})
    assert answer == {"Items": [{"SK": item["SK"]}] if found else []}


SORT_KEYS = ["Z", "a", "b", "c", "é"]  # in the order of their UTF-8 bytes: Z (0x5A) < a (0x61) < é (0xC3A9)


def sorted_items(call, table, key):
    """Put one item under a partition key no other test uses for each of SORT_KEYS; answer that partition key."""
    pk = key("sorted")["PK"].replace("'", "")
    for sk in SORT_KEYS:
        call("PutItem", {"TableName": table.name, "Item": {"PK": {"S": pk}, "SK": {"S": sk}}})
    return pk


def quoteless_key(key, name):
    """typed_key without the quotes a test's parameters put in its name, so that a statement can quote it."""
    return {name: {"S": value["S"].replace("'", "")} for name, value in typed_key(key, name).items()}


def sort_keys_selected(call, table, where, parameters=()):
    """The SK of each item `SELECT SK FROM table WHERE {where}` answers, or (code, message) when it is refused."""
    body = {"Statement": f'SELECT SK FROM "{table.name}" WHERE {where}'}
    if parameters:
        body["Parameters"] = list(parameters)
    answer = call("ExecuteStatement", body)
    return [item["SK"]["S"] for item in answer["Items"]] if isinstance(answer, dict) else answer


@pytest.mark.parametrize("test, found", [("SK='b'", ["b"]), ("SK<>'b'", ["Z", "a", "c", "é"]),
                                         ("SK!='b'", ["Z", "a", "c", "é"]), ("SK>='b'", ["b", "c", "é"]),
                                         ("SK<='b'", ["Z", "a", "b"]), ("SK>'b'", ["c", "é"]), ("SK<'b'", ["Z", "a"])])
def test_an_operator_written_without_spaces_compares_as_with_them(call, table, key, test, found):
    pk = sorted_items(call, table, key)
    assert sort_keys_selected(call, table, f"PK='{pk}' AND {test}") == found


@pytest.mark.parametrize("test, found", [("SK > 'a'", ["b", "c", "é"]), ("SK < 'a'", ["Z"]),
                                         ("SK >= 'z'", ["é"]), ("SK <= 'Z'", ["Z"])])
def test_a_string_comparison_orders_strings_by_their_utf8_bytes(call, table, key, test, found):
    pk = sorted_items(call, table, key)
    assert sort_keys_selected(call, table, f"PK = '{pk}' AND {test}") == found


def test_between_holds_for_both_bounds_and_what_lies_between(call, table, key):
    pk = sorted_items(call, table, key)
    assert sort_keys_selected(call, table, f"PK = '{pk}' AND SK BETWEEN 'a' AND 'c'") == ["a", "b", "c"]


def test_a_string_parameter_compares_as_a_string(call, table, key):
    pk = sorted_items(call, table, key)
    assert sort_keys_selected(call, table, "PK = ? AND SK > ?", [{"S": pk}, {"S": "b"}]) == ["c", "é"]


def test_lowercase_keywords_read_as_capitals(call, table, key):
    pk = sorted_items(call, table, key)
    assert sort_keys_selected(call, table, f"PK = '{pk}' and (SK between 'a' and 'b' or SK in ['é'])") == [
        "a", "b", "é"]


def test_in_holds_for_each_value_of_its_list(call, table, key):
    pk = sorted_items(call, table, key)
    assert sort_keys_selected(call, table, f"PK IN ['{pk}'] AND SK IN ['a', 'c', 'x']") == ["a", "c"]


def test_begins_with_on_the_sort_key_matches_its_prefix(call, table, key):
    pk = sorted_items(call, table, key)
    call("PutItem", {"TableName": table.name, "Item": {"PK": {"S": pk}, "SK": {"S": "bb"}}})
    assert sort_keys_selected(call, table, f"PK = '{pk}' AND begins_with(SK, 'b')") == ["b", "bb"]


@pytest.mark.parametrize("test", ["v > '5'", "s > 5", "b > 'a'", "s < ?"])
def test_a_comparison_of_values_of_different_types_is_false(call, table, key, test):
    item = {**quoteless_key(key, "types"), "v": {"N": "10"}, "s": {"S": "10"}, "b": {"B": b"\x01"}}
    call("PutItem", {"TableName": table.name, "Item": item})
    where = f"PK = '{item['PK']['S']}' AND SK = 'META' AND {test}"
    assert sort_keys_selected(call, table, where, [{"B": b"\xff"}] if "?" in test else ()) == []


@pytest.mark.parametrize("test, found", [("b > ?", True), ("b < ?", False), ("m.s > 'p'", True),
                                         ("m.s >= 'r'", False), ("v > 9.5", True)])
def test_binary_nested_and_number_values_compare_by_their_type(call, table, key, test, found):
    item = {**quoteless_key(key, "ordered"), "v": {"N": "10"}, "b": {"B": b"\x80"}, "m": {"M": {"s": {"S": "q"}}}}
    call("PutItem", {"TableName": table.name, "Item": item})
    where = f"PK = '{item['PK']['S']}' AND SK = 'META' AND {test}"
    assert sort_keys_selected(call, table, where, [{"B": b"\x7f"}] if "?" in test else ()) == (
        ["META"] if found else [])


@pytest.mark.parametrize("test, found", [("x is missing", False), ("zz IS MISSING", True),
                                         ("x IS NOT MISSING", True), ("zz is not missing", False)])
def test_is_missing_and_is_not_missing_test_whether_an_attribute_exists(call, table, key, test, found):
    item = {**quoteless_key(key, "missing"), "x": {"S": "x"}}
    call("PutItem", {"TableName": table.name, "Item": item})
    where = f"PK = '{item['PK']['S']}' AND SK = 'META' AND {test}"
    assert sort_keys_selected(call, table, where) == (["META"] if found else [])


def test_a_batch_reads_and_a_transaction_writes_statements_without_spaces(call, table, key):
    items = [{**typed_key(key, f"unspaced{n}"), "n": {"N": str(n)}} for n in range(2)]
    for item in items:
        call("PutItem", {"TableName": table.name, "Item": item})
    wheres = [f"WHERE PK='{item['PK']['S']}' AND SK='META'" for item in items]
    batch = call("BatchExecuteStatement", {"Statements": [{"Statement": f'SELECT * FROM "{table.name}" {where}'}
                                                          for where in wheres]})
    transaction = call("ExecuteTransaction", {"TransactStatements": [
        {"Statement": f'UPDATE "{table.name}" SET n=5 {where}'} for where in wheres]})
    stored = [call("GetItem", {"TableName": table.name, "Key": typed_key(key, f"unspaced{n}"),
                               "ConsistentRead": True})["Item"] for n in range(2)]
    assert batch == {"Responses": [{"TableName": table.name, "Item": item} for item in items]}
    assert isinstance(transaction, dict)  # not an error's (code, message)
    assert stored == [{**item, "n": {"N": "5"}} for item in items]


PROJECTED = "p90-contract-projections"


@pytest.fixture(scope="module")
def projected_table(lab, unvalidated_client):
    """A table keyed by PK and SK with a KEYS_ONLY, an INCLUDE (of x) and an ALL global secondary index on G."""
    client = unvalidated_client
    recreate_table(lab, PROJECTED, {
        "KeySchema": [{"AttributeName": "PK", "KeyType": "HASH"}, {"AttributeName": "SK", "KeyType": "RANGE"}],
        "AttributeDefinitions": [{"AttributeName": name, "AttributeType": "S"} for name in ("PK", "SK", "G")],
        "GlobalSecondaryIndexes": [
            {"IndexName": name, "KeySchema": [{"AttributeName": "G", "KeyType": "HASH"}], "Projection": projection}
            for name, projection in (("keys", {"ProjectionType": "KEYS_ONLY"}),
                                     ("include", {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["x"]}),
                                     ("all", {"ProjectionType": "ALL"}))]})
    with tracing(False):
        client.put_item(TableName=PROJECTED, Item={"PK": {"S": "p"}, "SK": {"S": "s"}, "G": {"S": "g"},
                                                   "x": {"S": "x"}, "y": {"S": "y"}})
    yield PROJECTED
    with tracing(False):
        client.delete_table(TableName=PROJECTED)


@pytest.mark.parametrize("index, attributes", [("keys", {}), ("include", {"x": {"S": "x"}}),
                                               ("all", {"x": {"S": "x"}, "y": {"S": "y"}})])
def test_a_select_from_a_global_secondary_index_answers_only_what_it_projects(call, projected_table, index,
                                                                                attributes):
    answer = call("ExecuteStatement", {"Statement": f'SELECT * FROM "{projected_table}"."{index}" WHERE G = \'g\''})
    assert answer == {"Items": [{"PK": {"S": "p"}, "SK": {"S": "s"}, "G": {"S": "g"}, **attributes}]}
