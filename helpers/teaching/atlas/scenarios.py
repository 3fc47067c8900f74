"""The scenarios of the single-Region rows: two clients (sometimes one) reading and writing the pair of items x
and y, or the doctors on call, or the sign-ups, as each row reads and writes."""

from botocore.exceptions import ClientError

from ...lab.tables import fresh_table
from .catalogue import EMAIL, EXERCISE_ROW, TABLE, Scenario, X, Y


def setup(lab):
    """A fresh atlas table; returns it."""
    return fresh_table(TABLE, lab)


def code_of(call):
    """Run call(); 'OK' or the DynamoDB error code it raised."""
    try:
        call()
    except ClientError as error:
        return error.response["Error"]["Code"]
    return "OK"


def number(table, key, consistent=False):
    """Item key's attribute n as an int (None when the item is absent)."""
    item = table.get_item(Key=key, ConsistentRead=consistent).get("Item")
    return None if item is None else int(item["n"])


def put_numbers(table, extra=None, **numbers):
    """A reset(): items x and y (and only they, of the pair) hold these n, and the `extra` attributes if any."""
    def reset():
        for name, key in (("x", X), ("y", Y)):
            if name in numbers:
                table.put_item(Item={**key, "n": numbers[name], **(extra or {})})
            else:
                table.delete_item(Key=key)
    return reset


def step_of(row, client, nth=0):
    """The place of `client`'s nth request among the order's steps (reveals of a transaction not counted)."""
    places = [place for place, step in enumerate(row["steps"])
              if step.startswith(f"{client}: ") and " makes " not in step]
    return places[nth]


def readers(table, client):
    """The ways to read item x once: {row: function returning n, or 'cancelled'}."""
    def batch_get():
        found = client.batch_get_item(RequestItems={TABLE: {"Keys": [X]}})["Responses"][TABLE]
        return int(found[0]["n"]) if found else None

    def transact_get():
        try:
            found = client.transact_get_items(TransactItems=[{"Get": {"TableName": TABLE, "Key": X}}])
        except client.exceptions.TransactionCanceledException:
            return "cancelled"
        return int(found["Responses"][0]["Item"]["n"])
    return {"GetItem (default)": lambda: number(table, X),
            "GetItem, ConsistentRead": lambda: number(table, X, consistent=True),
            "BatchGetItem": batch_get, "TransactGetItems": transact_get,
            EXERCISE_ROW: lambda: query_pair(table).get(X["SK"])}


def write_x(table):
    """alice's write of x = 1, told 'OK' or DynamoDB's error code."""
    return lambda: code_of(lambda: table.put_item(Item={**X, "n": 1}))


def stale_read(table, client, row):
    """alice writes x = 1; bob reads x once: stale if bob's read came after alice's write and saw 0."""
    read = readers(table, client)[row]
    return Scenario({"alice": write_x(table), "bob": read}, put_numbers(table, x=0),
                    anomaly=lambda order: order["results"]["bob"] == 0 and step_of(order, "bob") > step_of(order, "alice"),
                    how="answered by the leader, which holds every completed write",
                    says=lambda order: "bob read 0 after alice's PutItem of 1 had returned")


def read_your_writes(table, client, row):
    """ana writes x = 1, then reads x: the anomaly is reading 0."""
    read = readers(table, client)[row]

    def ana():
        table.put_item(Item={**X, "n": 1})
        return read()
    return Scenario({"ana": ana}, put_numbers(table, x=0), holds=lambda results: results["ana"] != 0,
                    how="answered by the leader, which holds ana's write",
                    says=lambda order: "ana's PutItem of 1 returned, then her own read gave 0")


def monotonic(table, client, row):
    """alice writes x = 1; bob reads x twice: the anomaly is 1 then 0."""
    read = readers(table, client)[row]
    return Scenario({"alice": write_x(table), "bob": lambda: (read(), read())},
                    put_numbers(table, x=0), holds=lambda results: results["bob"] != (1, 0),
                    how="each read answered by the leader, which never goes back",
                    says=lambda order: "bob read 1, then 0: his second read went back in time")


def aborted_read(table, client, row):
    """alice's transaction sets x = 99 but its ConditionCheck on y fails; bob reads x: the anomaly is seeing 99."""
    read = readers(table, client)[row]

    def alice():
        return code_of(lambda: client.transact_write_items(TransactItems=[
            {"Update": {"TableName": TABLE, "Key": X, "UpdateExpression": "SET n = :n",
                        "ExpressionAttributeValues": {":n": 99}}},
            {"ConditionCheck": {"TableName": TABLE, "Key": Y, "ConditionExpression": "attribute_not_exists(PK)"}}]))
    return Scenario({"alice": alice, "bob": read}, put_numbers(table, x=0, y=0),
                    holds=lambda results: results["bob"] != 99,
                    how="the cancelled write is in no copy, so no read can show it",
                    says=lambda order: "bob read 99, which only alice's cancelled transaction wrote")


def transfer(client):
    """A client function: move 10 from x to y in one TransactWriteItems; 'OK' or the error code."""
    return lambda: code_of(lambda: client.transact_write_items(TransactItems=[
        {"Update": {"TableName": TABLE, "Key": key, "UpdateExpression": "SET n = n + :d",
                    "ExpressionAttributeValues": {":d": change}}} for key, change in ((X, -10), (Y, 10))]))


def skew_readers(table, client):
    """The ways to read x and y: {row: function returning (x, y), or 'cancelled'}."""
    def batch_get():
        found = client.batch_get_item(RequestItems={TABLE: {"Keys": [X, Y], "ConsistentRead": True}})
        by_key = {item["SK"]: int(item["n"]) for item in found["Responses"][TABLE]}
        return by_key[X["SK"]], by_key[Y["SK"]]

    def transact_get():
        try:
            found = client.transact_get_items(TransactItems=[{"Get": {"TableName": TABLE, "Key": key}} for key in (X, Y)])
        except client.exceptions.TransactionCanceledException:
            return "cancelled"
        return tuple(int(response["Item"]["n"]) for response in found["Responses"])
    def query():
        found = query_pair(table)
        return found[X["SK"]], found[Y["SK"]]
    return {"two GetItems": lambda: (number(table, X), number(table, Y)), "BatchGetItem": batch_get,
            "TransactGetItems": transact_get, EXERCISE_ROW: query}


def query_pair(table):
    """The exercise's access pattern: {SK: n} of the pair's items, by one strongly consistent Query."""
    found = table.query(KeyConditionExpression="PK = :p", ExpressionAttributeValues={":p": X["PK"]},
                        ConsistentRead=True)["Items"]
    return {item["SK"]: int(item["n"]) for item in found}


def read_skew(table, client, row):
    """A transfer of 10 from x to y (both at 100) by transaction; bob reads both: the anomaly is a sum not 200."""
    read = skew_readers(table, client)[row]
    return Scenario({"alice": transfer(client), "bob": read}, put_numbers(table, x=100, y=100),
                    holds=lambda results: results["bob"] == "cancelled" or sum(results["bob"]) == 200,
                    how="a read of an item the transfer is writing is cancelled",
                    says=lambda order: part_of(order["results"]["bob"], "alice's transfer"))


def batch_read_skew(table, client):
    """The same transfer as one BatchWriteItem (x = 90, y = 110); bob reads both with TransactGetItems."""
    def alice():
        client.batch_write_item(RequestItems={TABLE: [{"PutRequest": {"Item": {**key, "n": n}}}
                                                      for key, n in ((X, 90), (Y, 110))]})
    read = skew_readers(table, client)["TransactGetItems"]
    return Scenario({"alice": alice, "bob": read}, put_numbers(table, x=100, y=100),
                    holds=lambda results: results["bob"] == "cancelled" or sum(results["bob"]) == 200,
                    says=lambda order: part_of(order["results"]["bob"], "alice's BatchWriteItem"))


def part_of(read, write):
    """What a read of (x, y) that saw part of `write` shows, in words."""
    x, y = read
    return f"bob read x = {x} and y = {y}, {x + y} in all, not 200: part of {write}"


def final_n(table):
    """x's n as the leader holds it now."""
    return number(table, X, consistent=True)


def oks(results):
    """How many clients returned 'OK'."""
    return sum(result == "OK" for result in results.values())


def lost_update(table, client, row):
    """Two clients each add 1 to x (from 0), or spend 7 of 10, the way the row does: the anomaly is a change lost."""
    def read_put():
        seen = number(table, X)
        return code_of(lambda: table.put_item(Item={**X, "n": seen + 1}))

    def versioned():
        item = table.get_item(Key=X)["Item"]
        return code_of(lambda: table.put_item(Item={**item, "n": item["n"] + 1, "version": item["version"] + 1},
                                              ConditionExpression="version = :v",
                                              ExpressionAttributeValues={":v": item["version"]}))

    def add():
        return code_of(lambda: table.update_item(Key=X, UpdateExpression="ADD n :one",
                                                 ExpressionAttributeValues={":one": 1}))

    def spend():
        return code_of(lambda: table.update_item(Key=X, UpdateExpression="SET n = n - :a", ConditionExpression="n >= :a",
                                                 ExpressionAttributeValues={":a": 7}))

    def transact():
        return code_of(lambda: client.transact_write_items(TransactItems=[
            {"Update": {"TableName": TABLE, "Key": X, "UpdateExpression": "SET n = n + :one",
                        "ExpressionAttributeValues": {":one": 1}}},
            {"ConditionCheck": {"TableName": TABLE, "Key": Y, "ConditionExpression": "attribute_exists(PK)"}}]))

    def batch_write():
        seen = number(table, X)
        return code_of(lambda: client.batch_write_item(
            RequestItems={TABLE: [{"PutRequest": {"Item": {**X, "n": seen + 1}}}]}))
    kinds = {"read, then PutItem": (read_put, 0, 1, ""), "read, then version-checked write": (versioned, 0, 1, ""),
             "ADD / SET n = n + :one": (add, 0, 1, "each ADD is applied on the server, alone"),
             "check in the condition": (spend, 10, -7, "the check and the change are one step on the server"),
             "TransactWriteItems + ConditionCheck": (transact, 0, 1, "the transactions are serialized"),
             "BatchWriteItem": (batch_write, 0, 1, "")}
    function, start, step, how = kinds[row]
    versions = {"version": 1} if function is versioned else None
    return Scenario({"alice": function, "bob": function}, put_numbers(table, versions, x=start, y=0),
                    holds=lambda results: final_n(table) == start + step * oks(results), how=how,
                    says=lambda order: "alice and bob were both told OK, yet x holds only one of their changes")


def dirty_write(table, client, row):
    """alice and bob each write their name to x and y in one TransactWriteItems, or one BatchWriteItem: the anomaly
    is x and y differing."""
    def write(name):
        items = [{**key, "n": 0, "owner": name} for key in (X, Y)]
        if row == "BatchWriteItem":
            return lambda: code_of(lambda: client.batch_write_item(
                RequestItems={TABLE: [{"PutRequest": {"Item": item}} for item in items]}))
        return lambda: code_of(lambda: client.transact_write_items(TransactItems=[
            {"Put": {"TableName": TABLE, "Item": item}} for item in items]))

    def holds(_):
        owners = {table.get_item(Key=key, ConsistentRead=True)["Item"].get("owner") for key in (X, Y)}
        return len(owners) == 1
    return Scenario({"alice": write("alice"), "bob": write("bob")}, put_numbers(table, x=0, y=0), holds=holds,
                    how="a transaction that meets the other in flight is cancelled (TransactionConflict), never queued",
                    says=lambda order: "both were told OK, and x and y ended with different owners, one each")


DOCTORS = {"alice": {"PK": "DOCTOR#alice", "SK": "ON-CALL"}, "bob": {"PK": "DOCTOR#bob", "SK": "ON-CALL"}}


def doctors(table, client, row):
    """Two doctors on call; each goes off call only if the other is still on: the anomaly is nobody on call."""
    def other(name):
        return next(key for doctor, key in DOCTORS.items() if doctor != name)

    def read_put(name):
        def go_off():
            if not table.get_item(Key=other(name), ConsistentRead=True)["Item"]["on_call"]:
                return "stays"
            return code_of(lambda: table.put_item(Item={**DOCTORS[name], "on_call": False, "version": 2}))
        return go_off

    def versioned(name):
        def go_off():
            mine = table.get_item(Key=DOCTORS[name], ConsistentRead=True)["Item"]
            if not table.get_item(Key=other(name), ConsistentRead=True)["Item"]["on_call"]:
                return "stays"
            return code_of(lambda: table.put_item(Item={**mine, "on_call": False, "version": mine["version"] + 1},
                                                  ConditionExpression="version = :v",
                                                  ExpressionAttributeValues={":v": mine["version"]}))
        return go_off

    def transact(name):
        return lambda: code_of(lambda: client.transact_write_items(TransactItems=[
            {"Update": {"TableName": TABLE, "Key": DOCTORS[name], "UpdateExpression": "SET on_call = :f",
                        "ExpressionAttributeValues": {":f": False}}},
            {"ConditionCheck": {"TableName": TABLE, "Key": other(name), "ConditionExpression": "on_call = :t",
                                "ExpressionAttributeValues": {":t": True}}}]))

    def reset():
        for key in DOCTORS.values():
            table.put_item(Item={**key, "on_call": True, "version": 1})

    def holds(_):
        return any(table.get_item(Key=key, ConsistentRead=True)["Item"]["on_call"] for key in DOCTORS.values())
    make = {"read, then PutItem": read_put, "read, then version-checked write": versioned,
            "TransactWriteItems + ConditionCheck": transact}[row]
    return Scenario({name: make(name) for name in DOCTORS}, reset, holds=holds,
                    how="the ConditionCheck on the other doctor is part of the write",
                    says=lambda order: "each doctor saw the other on call and went off: nobody is on call")


def sign_ups(table, client, row):
    """ana and bob sign up with the same email, the way the row checks it: the anomaly is two users with it."""
    def user(name):
        return {"PK": f"USER#{name}", "SK": "PROFILE", "GSI1PK": EMAIL, "GSI1SK": f"USER#{name}"}

    def query_then_put(name):
        def sign_up():
            taken = table.query(IndexName="GSI1", KeyConditionExpression="GSI1PK = :e",
                                ExpressionAttributeValues={":e": EMAIL})["Items"]
            if taken:
                return "taken"
            table.put_item(Item=user(name))
            return "OK"
        return sign_up

    def sentinel(name):
        return lambda: code_of(lambda: client.transact_write_items(TransactItems=[
            {"Put": {"TableName": TABLE, "Item": user(name)}},
            {"Put": {"TableName": TABLE, "Item": {"PK": EMAIL, "SK": "EMAIL", "user": name},
                     "ConditionExpression": "attribute_not_exists(PK)"}}]))

    def reset():
        for key in ({"PK": "USER#ana", "SK": "PROFILE"}, {"PK": "USER#bob", "SK": "PROFILE"},
                    {"PK": EMAIL, "SK": "EMAIL"}):
            table.delete_item(Key=key)

    def holds(_):
        found = table.scan(ConsistentRead=True, FilterExpression="GSI1PK = :e",
                           ExpressionAttributeValues={":e": EMAIL})["Items"]
        return len(found) <= 1

    def after_the_first(frame):
        """How many duplicate orders had the second Query sent after the first sign-up was written."""
        stale = 0
        for _, order in frame[~frame["ok"]].iterrows():
            writes = [place for place, step in enumerate(order["steps"]) if step.endswith(": PutItem")]
            queries = [place for place, step in enumerate(order["steps"]) if ": Query" in step]
            stale += max(queries) > min(writes)
        return f"{stale} of them only because the index trailed: the second Query came after the first sign-up"
    make = {"Query the GSI, then write": query_then_put, "sentinel item in a transaction": sentinel}[row]
    return Scenario({name: make(name) for name in ("ana", "bob")}, reset, holds=holds,
                    how="the sentinel's attribute_not_exists(PK) refuses the second",
                    note=after_the_first if make is query_then_put else None,
                    says=lambda order: f"ana and bob both signed up: two users with {EMAIL.split('#')[1]}")
