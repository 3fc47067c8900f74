"""ReturnConsumedCapacity of PartiQL's ExecuteStatement, BatchExecuteStatement and ExecuteTransaction, billed as the
operations DynamoDB runs for each statement (a SELECT by whole key a GetItem, by partition key a Query, else a Scan;
INSERT, UPDATE, DELETE single-item writes; a transaction twice), and the lab server's meter to the same figures. Each
test has a table of its own, so that a Scan reads only the items the test wrote; item sizes are built byte by byte
(test_contract_capacity.item_of), each on or just past a 1 KB or 4 KB boundary."""
import copy

import pytest
from botocore.exceptions import ClientError

from helpers import tracing
from helpers.meter import metered
from helpers.tables import recreate_table, table_definitions

from .conftest import TABLE
from .test_contract_capacity import KB, embedded, item_of

NAME = "p90-partiql-capacity"


@pytest.fixture
def own(lab):
    """A fresh table of the contract table's shape (PK, SK and GSI1) for this test alone."""
    recreate_table(lab, NAME, table_definitions()[TABLE])
    return NAME


def insert(item):
    """An INSERT of `item`, its values as parameters: {"Statement", "Parameters"}."""
    names = ", ".join(f"'{name}': ?" for name in item)
    return {"Statement": f'INSERT INTO "{NAME}" VALUE {{{names}}}', "Parameters": list(item.values())}


def by_key(verb, key, tail=""):
    """A statement `verb` (SELECT * FROM, UPDATE ... SET ..., DELETE FROM) on the item at `key`, with more WHERE
    conditions in `tail` and its parameters after the key's: {"Statement", "Parameters"}."""
    table = f'"{NAME}"'
    return {"Statement": f"{verb.format(table)} WHERE PK = ? AND SK = ?{tail}", "Parameters": [key["PK"], key["SK"]]}


def execute(lab, statement, level="TOTAL", **extra):
    """ExecuteStatement asking for `level`; its ConsumedCapacity (None when the answer has none)."""
    parameters = statement["Parameters"] + extra.pop("more", [])
    if parameters:
        extra["Parameters"] = parameters
    answer = lab.client.execute_statement(Statement=statement["Statement"], ReturnConsumedCapacity=level, **extra)
    return answer.get("ConsumedCapacity")


def write(lab, *items):
    """Put the items (setup, not measured)."""
    with tracing(False):
        for item in items:
            lab.client.put_item(TableName=NAME, Item=item)


def total(units):
    """ExecuteStatement's answer to TOTAL."""
    return {"TableName": NAME, "CapacityUnits": units}


@pytest.mark.parametrize("size, consistent, expected", [
    (4 * KB, True, 1.0), (4 * KB, False, 0.5), (4 * KB + 1, True, 2.0), (4 * KB + 1, False, 1.0)])
def test_a_select_by_the_whole_key_is_a_get_item(lab, own, key, size, consistent, expected):
    write(lab, item_of(key("r"), size))
    assert execute(lab, by_key("SELECT * FROM {}", key("r")), ConsistentRead=consistent) == total(expected)


@pytest.mark.parametrize("consistent, expected", [(True, 1.0), (False, 0.5)])
def test_a_select_of_an_item_that_does_not_exist_still_costs_a_read(lab, own, key, consistent, expected):
    assert execute(lab, by_key("SELECT * FROM {}", key("none")), ConsistentRead=consistent) == total(expected)


def partition(lab, key):
    """Three items of 1,500 bytes in key("q")'s partition (4,500 bytes: two 4 KB blocks) and one of 4 KB in another."""
    write(lab, *(item_of(key("q", sort), 1500) for sort in ("a", "b", "c")), item_of(key("other"), 4 * KB))


def query(lab, key, tail="", more=(), **extra):
    """A SELECT of key("q")'s partition (more WHERE conditions in `tail`, their parameters `more`); its
    ConsumedCapacity."""
    statement = {"Statement": f'SELECT * FROM "{NAME}" WHERE PK = ?{tail}', "Parameters": [key("q")["PK"]]}
    return execute(lab, statement, more=list(more), **extra)


def test_a_select_by_partition_key_is_a_query_of_what_its_sort_key_condition_reads(lab, own, key):
    partition(lab, key)
    assert query(lab, key, ConsistentRead=True) == total(2.0)
    assert query(lab, key) == total(1.0)
    assert query(lab, key, " AND pad = ?", ["-"], ConsistentRead=True) == total(2.0)  # a filter reads them all
    assert query(lab, key, " AND begins_with(SK, ?)", ["b"], ConsistentRead=True) == total(1.0)  # 1,500 bytes


@pytest.mark.parametrize("where", ["PK IN [?, ?]", "PK = ? OR PK = ?"])
def test_a_select_of_partition_keys_in_a_list_is_a_query_of_each_partition(lab, own, key, where):
    partition(lab, key)
    write(lab, item_of(key("r"), 1500), item_of(key("far"), 4 * KB))
    listed = {"Statement": f'SELECT * FROM "{NAME}" WHERE {where}', "Parameters": [key("q")["PK"], key("r")["PK"]]}
    with metered(lab, NAME) as cost:
        assert execute(lab, listed, ConsistentRead=True) == total(2.0 + 1.0)  # 4,500 bytes in q, 1,500 in r
    assert execute(lab, listed) == total(1.5)  # a Scan of all 14,192 bytes would be 4.0, one Query of both 2.0
    if lab.kind == "embedded":
        assert cost["ConsumedReadCapacityUnits"] == 3.0


def test_a_select_without_the_partition_key_is_a_scan_of_the_whole_table(lab, own, key):
    partition(lab, key)  # 3 x 1,500 + 4,096 = 8,596 bytes: three 4 KB blocks
    scan = {"Statement": f'SELECT * FROM "{NAME}"', "Parameters": []}
    assert execute(lab, scan, ConsistentRead=True) == total(3.0)
    assert execute(lab, scan) == total(1.5)
    by_value = {"Statement": f'SELECT * FROM "{NAME}" WHERE pad = ?', "Parameters": ["-"]}
    assert execute(lab, by_value, ConsistentRead=True) == total(3.0)


@pytest.mark.parametrize("size, expected", [(KB, 1.0), (KB + 1, 2.0), (3 * KB, 3.0), (3 * KB + 1, 4.0)])
def test_an_insert_is_a_put_item_in_1_kb_units(lab, own, key, size, expected):
    assert execute(lab, insert(item_of(key("w"), size))) == total(expected)


def test_an_update_is_billed_by_the_larger_of_before_and_after(lab, own, key):
    write(lab, item_of(key("grow"), KB))
    assert execute(lab, by_key("UPDATE {} SET more = 'y'", key("grow"))) == total(2.0)  # 1,029 bytes after
    write(lab, item_of(key("shrink"), 3 * KB))
    assert execute(lab, by_key("UPDATE {} REMOVE pad", key("shrink"))) == total(3.0)


def test_a_delete_is_billed_by_the_item_deleted_and_one_unit_when_there_is_none(lab, own, key):
    write(lab, item_of(key("d"), 2 * KB + 1))
    assert execute(lab, by_key("DELETE FROM {}", key("d"))) == total(3.0)
    assert execute(lab, by_key("DELETE FROM {}", key("d"))) == total(1.0)


def test_return_consumed_capacity_none_or_absent_answers_none(lab, own, key):
    write(lab, item_of(key("n"), 100))
    assert execute(lab, by_key("SELECT * FROM {}", key("n")), level="NONE") is None
    assert "ConsumedCapacity" not in lab.client.execute_statement(**by_key("SELECT * FROM {}", key("n")))
    batch = lab.client.batch_execute_statement(Statements=[by_key("SELECT * FROM {}", key("n"))],
                                               ReturnConsumedCapacity="NONE")
    transaction = lab.client.execute_transaction(TransactStatements=[by_key("SELECT * FROM {}", key("n"))],
                                                 ReturnConsumedCapacity="NONE")
    assert "ConsumedCapacity" not in batch and "ConsumedCapacity" not in transaction


def refused(lab, statement, code):
    """Run a statement DynamoDB refuses with `code`."""
    with pytest.raises(ClientError) as refusal:
        lab.client.execute_statement(**statement)
    assert refusal.value.response["Error"]["Code"] == code


def test_the_meter_bills_refused_writes_as_refused_put_and_update_items(lab, own, key):
    embedded(lab)
    write(lab, item_of(key("held"), 2 * KB + 1))
    with metered(lab, NAME) as cost:
        refused(lab, insert(item_of(key("held"), 100)), "DuplicateItemException")
        condition = by_key("UPDATE {} SET n = 1", key("held"), " AND pad = ?")
        refused(lab, {**condition, "Parameters": condition["Parameters"] + ["-"]}, "ConditionalCheckFailedException")
        refused(lab, by_key("UPDATE {} SET n = 1", key("absent")), "ConditionalCheckFailedException")
    assert cost["ConsumedWriteCapacityUnits"] == 3.0 + 3.0 + 1.0  # the existing 2 KB item twice; none: one unit
    assert cost["WriteUnitsOnRefusedWrites"] == 3.0 + 3.0 + 1.0
    assert cost["ConditionalCheckFailedRequests"] == 3 and cost["Requests"] == 3


def test_the_meter_counts_what_execute_statement_answers(lab, own, key):
    embedded(lab)
    partition(lab, key)
    with metered(lab, NAME) as cost:
        answered = [execute(lab, insert(item_of(key("m"), KB + 1)))["CapacityUnits"],
                    execute(lab, by_key("SELECT * FROM {}", key("m")), ConsistentRead=True)["CapacityUnits"],
                    query(lab, key)["CapacityUnits"],
                    execute(lab, by_key("DELETE FROM {}", key("m")))["CapacityUnits"]]
    assert answered == [2.0, 1.0, 1.0, 2.0]
    assert (cost["ConsumedWriteCapacityUnits"], cost["ConsumedReadCapacityUnits"]) == (4.0, 2.0)
    assert (cost["WriteUnitsOnRefusedWrites"], cost["ConditionalCheckFailedRequests"], cost["Requests"]) == (0, 0, 4)


def indexed(key, name, size, partition_value, sort):
    """An item of `size` bytes in GSI1's partition `partition_value` (GSI1 projects every attribute)."""
    return item_of(key(name), size, GSI1PK=(partition_value, len(partition_value)), GSI1SK=(sort, len(sort)))


def test_indexes_gives_each_index_its_units(lab, own, key):
    added = execute(lab, insert({**key("g"), "GSI1PK": "A", "GSI1SK": "1"}), level="INDEXES")
    assert added == {"TableName": NAME, "CapacityUnits": 2.0, "Table": {"CapacityUnits": 1.0},
                     "GlobalSecondaryIndexes": {"GSI1": {"CapacityUnits": 1.0}}}
    moved = execute(lab, by_key("UPDATE {} SET GSI1PK = 'B'", key("g")), level="INDEXES")
    assert moved == {"TableName": NAME, "CapacityUnits": 3.0, "Table": {"CapacityUnits": 1.0},
                     "GlobalSecondaryIndexes": {"GSI1": {"CapacityUnits": 2.0}}}
    projected = execute(lab, by_key("UPDATE {} SET note = 'n'", key("g")), level="INDEXES")
    assert projected == {"TableName": NAME, "CapacityUnits": 2.0, "Table": {"CapacityUnits": 1.0},
                         "GlobalSecondaryIndexes": {"GSI1": {"CapacityUnits": 1.0}}}


def test_a_select_of_an_index_reads_its_entries(lab, own, key):
    write(lab, indexed(key, "i1", 3000, "P", "a"), indexed(key, "i2", 3000, "P", "b"), item_of(key("bare"), 4 * KB))
    on_index = f'SELECT * FROM "{NAME}"."GSI1"'
    queried = execute(lab, {"Statement": on_index + " WHERE GSI1PK = ?", "Parameters": ["P"]}, level="INDEXES")
    assert queried == {"TableName": NAME, "CapacityUnits": 1.0, "Table": {"CapacityUnits": 0.0},
                       "GlobalSecondaryIndexes": {"GSI1": {"CapacityUnits": 1.0}}}  # 6,000 bytes: two blocks, halved
    scanned = execute(lab, {"Statement": on_index, "Parameters": []}, level="INDEXES")
    assert scanned == queried  # the item without GSI1's keys has no entry to read


@pytest.fixture
def keys_only(lab):
    """A fresh table of the contract table's shape whose GSI1 projects only the keys, for this test alone."""
    spec = copy.deepcopy(table_definitions()[TABLE])
    for index in spec["GlobalSecondaryIndexes"]:
        index["Projection"] = {"ProjectionType": "KEYS_ONLY"}
    recreate_table(lab, NAME, spec)


def test_a_select_of_a_keys_only_index_reads_its_entries_not_the_items(lab, keys_only, key):
    write(lab, indexed(key, "k1", 5 * KB, "P", "a"), indexed(key, "k2", 5 * KB, "P", "b"))
    on_index = f'SELECT * FROM "{NAME}"."GSI1"'
    queried = execute(lab, {"Statement": on_index + " WHERE GSI1PK = ?", "Parameters": ["P"]}, level="INDEXES")
    assert queried == {"TableName": NAME, "CapacityUnits": 0.5, "Table": {"CapacityUnits": 0.0},
                       "GlobalSecondaryIndexes": {"GSI1": {"CapacityUnits": 0.5}}}  # whole items: 10 KB, 1.5
    scanned = execute(lab, {"Statement": on_index, "Parameters": []}, level="INDEXES")
    assert scanned == queried


def batch(lab, statements, level="TOTAL"):
    """BatchExecuteStatement asking for `level`: (its Responses, its ConsumedCapacity)."""
    answer = lab.client.batch_execute_statement(Statements=statements, ReturnConsumedCapacity=level)
    return answer["Responses"], answer.get("ConsumedCapacity")


def test_a_batch_bills_each_select_as_a_get_item_by_its_own_consistency(lab, own, key):
    write(lab, item_of(key("b1"), 4 * KB + 1), item_of(key("b2"), 4 * KB + 1))
    statements = [{**by_key("SELECT * FROM {}", key("b1")), "ConsistentRead": True},
                  by_key("SELECT * FROM {}", key("b2")),
                  {"Statement": f'SELECT * FROM "{NAME}" WHERE pad = ?', "Parameters": ["-"]}]
    responses, consumed = batch(lab, statements)
    assert [response.get("Error", {}).get("Code") for response in responses] == [None, None, "ValidationError"]
    assert consumed == [{"TableName": NAME, "CapacityUnits": 2.0 + 1.0}]  # the refused SELECT never ran


def test_a_batch_bills_each_write_and_its_refused_ones(lab, own, key):
    write(lab, item_of(key("held"), 2 * KB + 1), item_of(key("gone"), 100))
    condition = by_key("UPDATE {} SET n = 1", key("held"), " AND pad = ?")
    statements = [insert(item_of(key("new"), 1500)), insert(item_of(key("held"), 100)),
                  {**condition, "Parameters": condition["Parameters"] + ["-"]},
                  by_key("DELETE FROM {}", key("gone")), by_key("DELETE FROM {}", key("never"))]
    with metered(lab, NAME) as cost:
        responses, consumed = batch(lab, statements)
    assert [response.get("Error", {}).get("Code") for response in responses] == [
        None, "DuplicateItem", "ConditionalCheckFailed", None, None]
    assert consumed == [{"TableName": NAME, "CapacityUnits": 2.0 + 3.0 + 3.0 + 1.0 + 1.0}]
    if lab.kind == "embedded":
        assert (cost["ConsumedWriteCapacityUnits"], cost["WriteUnitsOnRefusedWrites"]) == (10.0, 6.0)
        assert (cost["ConditionalCheckFailedRequests"], cost["Requests"]) == (2, 1)


def test_a_batch_with_indexes_gives_each_index_its_units(lab, own, key):
    _, consumed = batch(lab, [insert({**key("bg"), "GSI1PK": "A", "GSI1SK": "1"})], level="INDEXES")
    assert consumed == [{"TableName": NAME, "CapacityUnits": 2.0, "Table": {"CapacityUnits": 1.0},
                         "GlobalSecondaryIndexes": {"GSI1": {"CapacityUnits": 1.0}}}]


def transaction(lab, statements, level="TOTAL"):
    """ExecuteTransaction asking for `level`; its ConsumedCapacity."""
    return lab.client.execute_transaction(TransactStatements=statements, ReturnConsumedCapacity=level)[
        "ConsumedCapacity"]


def test_a_transaction_costs_twice_and_answers_only_the_kind_it_used(lab, own, key):
    small, large = item_of(key("t1"), 100), item_of(key("t2"), KB + 1)
    assert transaction(lab, [insert(small), insert(large)]) == [
        {"TableName": NAME, "CapacityUnits": 6.0, "WriteCapacityUnits": 6.0}]
    write(lab, item_of(key("t3"), 4 * KB + 1))
    read = [by_key("SELECT * FROM {}", key("t1")), by_key("SELECT * FROM {}", key("t3"))]
    assert transaction(lab, read) == [{"TableName": NAME, "CapacityUnits": 6.0, "ReadCapacityUnits": 6.0}]


def test_exists_is_a_condition_check_read_twice(lab, own, key):
    write(lab, item_of(key("c"), 100), item_of(key("u"), KB))
    check = by_key("SELECT * FROM {}", key("c"))
    statements = [{**check, "Statement": f"EXISTS({check['Statement']})"}, by_key("UPDATE {} SET more = 'y'", key("u"))]
    assert transaction(lab, statements) == [
        {"TableName": NAME, "CapacityUnits": 6.0, "ReadCapacityUnits": 2.0, "WriteCapacityUnits": 4.0}]


def test_a_transaction_with_indexes_gives_the_table_and_each_index_their_units(lab, own, key):
    consumed = transaction(lab, [insert({**key("tg"), "GSI1PK": "A", "GSI1SK": "1"})], level="INDEXES")
    assert consumed == [{"TableName": NAME, "CapacityUnits": 3.0, "WriteCapacityUnits": 3.0,
                         "Table": {"CapacityUnits": 2.0, "ReadCapacityUnits": 0.0, "WriteCapacityUnits": 2.0},
                         "GlobalSecondaryIndexes": {"GSI1": {"CapacityUnits": 1.0, "ReadCapacityUnits": 0.0,
                                                             "WriteCapacityUnits": 1.0}}}]


def test_the_meter_bills_a_cancelled_transaction_as_refused_transactional_writes(lab, own, key):
    embedded(lab)
    write(lab, item_of(key("held"), 2 * KB + 1))
    with metered(lab, NAME) as cost:
        transaction(lab, [insert(item_of(key("ok"), 100))])
        with pytest.raises(ClientError, match="TransactionCanceledException"):
            transaction(lab, [insert(item_of(key("held"), 100)), insert(item_of(key("new"), 100))])
    assert cost["ConsumedWriteCapacityUnits"] == 2.0 + 6.0 + 2.0  # the insert; the existing 2 KB item, the new one
    assert cost["WriteUnitsOnRefusedWrites"] == 6.0 + 2.0
    assert (cost["ConditionalCheckFailedRequests"], cost["Requests"]) == (0, 2)
