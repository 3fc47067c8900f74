"""Explored, a global table whose Regions are eventually consistent (MREC) shows exactly what replication by last
writer wins allows, on random small scenarios.

Hypothesis draws two clients, one in us-east-1 and one in eu-west-1, each making 1-2 requests on items A and B of one
MREC global table: a PutItem of a value of its own, or a strongly consistent GetItem in its own Region. Both run for
real against the lab server under the explorer; each behaviour's outcome is what each read returned and each
Region's items at the end. A model written here from the documents alone enumerates the outcomes they allow:

- "When an application writes data to a replica in one Region, DynamoDB automatically replicates the write to all
  other replicas in the global table" (Developer Guide, "How DynamoDB global tables work"): a write is applied in its
  Region when it is made, and arrives in the other Region at any later moment, items and writes in any order;
- "Global tables that use MREC resolve such conflicts with a last-writer-wins mechanism based on the timestamp of the
  writes" (AWS Prescriptive Guidance, "Overview of global tables"): a write that arrives where a later one is stored
  changes nothing;
- a strongly consistent read is answered by its own Region's replica.

The two sets of outcomes must be equal.

The same for a global table whose Regions are strongly consistent (MRSC), clients in us-east-1 and us-west-2 (the
third Region a witness), whose writes may also be a PutItem only if the item does not exist yet. Its model: "Item
changes in an MRSC global table replica are synchronously replicated to at least one other Region before the write
operation returns a successful response" and a strongly consistent read "ensures you're always reading the latest
version of an item, irrespective of the Region" (Developer Guide, "Multi-Region strong consistency"): a write is
checked and sent when made, takes effect everywhere at one later moment before its answer, and a write of the same
item from the other Region meanwhile is refused (ReplicatedWriteConflictException) and sent again, which changes no
outcome.
"""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import tracing
from helpers.explore import explore
from helpers.tables import dissolve
from support import PROPERTY_SETTINGS

TABLE = "p34-global-property"
REGIONS = ("us-east-1", "eu-west-1")
KEY = {"KeySchema": [{"AttributeName": "PK", "KeyType": "HASH"}],
       "AttributeDefinitions": [{"AttributeName": "PK", "AttributeType": "S"}], "BillingMode": "PAY_PER_REQUEST"}
STRONG_TABLE = "p34-global-property-mrsc"
STRONG_REGIONS = ("us-east-1", "us-west-2")  # and a witness in us-east-2
STRONG_REQUESTS = st.lists(st.sampled_from([("put", "A"), ("create", "A"), ("put", "B"), ("read", "A"), ("read", "B")]),
                           min_size=1, max_size=2)
REQUESTS = st.lists(st.sampled_from([("put", "A"), ("put", "B"), ("read", "A"), ("read", "B")]), min_size=1, max_size=2)

pytestmark = pytest.mark.usefixtures("knobs_off")


def model_outcomes(scenario):
    """Every (what each client's reads returned, each Region's items at the end) replication by last writer wins
    allows, by trying every order of the clients' requests and each write's arrival in the other Region."""
    outcomes = set()
    clock = iter(range(1, 100))

    def step(places, stores, pending, reads):
        if all(place == len(requests) for place, requests in zip(places, scenario)) and not pending:
            ended = tuple(tuple(sorted((item, value) for item, (value, _) in store.items())) for store in stores)
            outcomes.add((tuple(map(tuple, reads)), ended))
            return
        for client, requests in enumerate(scenario):
            if places[client] == len(requests):
                continue
            kind, item = requests[places[client]]
            moved = places[:client] + (places[client] + 1,) + places[client + 1:]
            if kind == "read":
                shown = stores[client].get(item, (None,))[0]
                step(moved, stores, pending, [*reads[:client], [*reads[client], shown], *reads[client + 1:]])
            else:
                stamp, value = next(clock), f"{REGIONS[client]}-{places[client]}"
                written = [dict(store) for store in stores]
                written[client][item] = (value, stamp)
                step(moved, written, [*pending, (1 - client, item, value, stamp)], reads)
        for place, (region, item, value, stamp) in enumerate(pending):
            arrived = [dict(store) for store in stores]
            if arrived[region].get(item, (None, 0))[1] < stamp:
                arrived[region][item] = (value, stamp)
            step(places, arrived, pending[:place] + pending[place + 1:], reads)

    step((0, 0), [{}, {}], [], [[], []])
    return outcomes


def explored_outcomes(clients, scenario, table, regions):
    """Every (what each client's reads returned, each Region's items at the end) the explorer finds, client i signed
    for regions[i] making scenario[i]'s requests on `table`: strong reads, puts of a value of its own, and puts only if
    the item does not exist yet ("create")."""
    def reset():
        with tracing(False):
            for item in ("A", "B"):
                clients[0].delete_item(TableName=table, Key={"PK": item})

    def client_function(place):
        client, requests = clients[place], scenario[place]

        def run():
            shown = []
            for number, (kind, item) in enumerate(requests):
                if kind == "read":
                    found = client.get_item(TableName=table, Key={"PK": item}, ConsistentRead=True).get("Item")
                    shown.append(found and found["value"])
                    continue
                condition = {"ConditionExpression": "attribute_not_exists(PK)"} if kind == "create" else {}
                try:
                    client.put_item(TableName=table, Item={"PK": item, "value": f"{regions[place]}-{number}"},
                                    **condition)
                except client.exceptions.ConditionalCheckFailedException:
                    pass
            return tuple(shown)
        return run

    def items(client):
        found = client.scan(TableName=table, ConsistentRead=True)["Items"]
        return tuple(sorted((item["PK"], item["value"]) for item in found))

    found = set()

    def check(results):
        with tracing(False):
            found.add(((results["first"], results["second"]), tuple(items(client) for client in clients)))
        return True

    explore({"first": client_function(0), "second": client_function(1)}, reset, check)
    return found


def strong_model_outcomes(scenario):
    """Every (what each client's reads returned, the items at the end) MRSC allows: each write is checked when made and
    takes effect everywhere when acknowledged, while a write of its item from the other Region waits."""
    outcomes = set()

    def step(places, store, flying, reads):
        if all(place == len(requests) for place, requests in zip(places, scenario)):
            outcomes.add((tuple(map(tuple, reads)), tuple(sorted(store.items()))))
            return
        for client, requests in enumerate(scenario):
            if places[client] == len(requests):
                continue
            kind, item = requests[places[client]]
            moved = places[:client] + (places[client] + 1,) + places[client + 1:]
            value = f"{STRONG_REGIONS[client]}-{places[client]}"
            if kind == "read":
                step(moved, store, flying, [*reads[:client], [*reads[client], store.get(item)], *reads[client + 1:]])
            elif flying.get(item) == client:  # its write, in flight, is acknowledged: in effect everywhere
                step(moved, {**store, item: value}, {key: by for key, by in flying.items() if key != item}, reads)
            elif item in flying:
                continue  # the other Region's write of the item is in flight: this one is refused and sent again
            elif kind == "create" and item in store:
                step(moved, store, flying, reads)  # refused by its condition
            else:
                step(places, store, {**flying, item: client}, reads)  # checked and sent: in flight

    step((0, 0), {}, {}, [[], []])
    return outcomes


def strong_explored_outcomes(clients, scenario):
    """Every (what each client's reads returned, the items at the end, the same in both Regions) the explorer finds on
    the MRSC table."""
    found = explored_outcomes(clients, scenario, STRONG_TABLE, STRONG_REGIONS)
    assert all(len(set(ends)) == 1 for _, ends in found), f"the Regions disagree at the end: {found}"
    return {(reads, ends[0]) for reads, ends in found}


def made_global(lab, name, regions, **update):
    """The clients of `regions` (the first the table's own) with `name` made a global table there by UpdateTable's
    ReplicaUpdates and `update`, deleted again after the test (embedded server only)."""
    if lab.kind != "embedded":
        pytest.skip("global tables are modelled by the embedded lab server (DynamoDB Local has none)")
    clients = [lab.client_in(region) for region in regions]
    with tracing(False):
        dissolve(name, clients)
        clients[0].create_table(TableName=name, **KEY)
        clients[0].update_table(TableName=name, ReplicaUpdates=[{"Create": {"RegionName": regions[1]}}], **update)
        yield clients
        dissolve(name, clients)


@pytest.fixture
def global_table(lab):
    """(us-east-1's client, eu-west-1's) of an MREC global table TABLE in both Regions."""
    yield from made_global(lab, TABLE, REGIONS)


@settings(max_examples=10, **PROPERTY_SETTINGS)
@given(us=REQUESTS, eu=REQUESTS)
def test_an_explored_global_table_shows_exactly_what_last_writer_wins_allows(lab, global_table, us, eu):
    assert explored_outcomes(global_table, (us, eu), TABLE, REGIONS) == model_outcomes((us, eu))


def test_two_writes_of_one_item_in_two_regions_converge_on_either_and_a_read_may_miss_the_other(lab, global_table):
    outcomes = explored_outcomes(global_table, ([("put", "A"), ("read", "A")], [("put", "A")]), TABLE, REGIONS)
    ends = {ended for _, ended in outcomes}
    assert ends == {((("A", "us-east-1-0"),), (("A", "us-east-1-0"),)),
                    ((("A", "eu-west-1-0"),), (("A", "eu-west-1-0"),))}  # the Regions agree, on either write
    assert {reads[0] for reads, _ in outcomes} == {("us-east-1-0",), ("eu-west-1-0",)}


@pytest.fixture
def strong_table(lab):
    """(us-east-1's client, us-west-2's) of an MRSC global table STRONG_TABLE, its witness in us-east-2."""
    yield from made_global(lab, STRONG_TABLE, STRONG_REGIONS, MultiRegionConsistency="STRONG",
                           GlobalTableWitnessUpdates=[{"Create": {"RegionName": "us-east-2"}}])


@settings(max_examples=10, **PROPERTY_SETTINGS)
@given(us=STRONG_REQUESTS, west=STRONG_REQUESTS)
def test_an_explored_mrsc_table_shows_exactly_what_synchronous_replication_allows(strong_table, us, west):
    assert strong_explored_outcomes(strong_table, (us, west)) == strong_model_outcomes((us, west))


def test_on_mrsc_two_creates_of_one_item_in_two_regions_one_wins_and_a_read_never_sees_a_write_in_flight(strong_table):
    outcomes = strong_explored_outcomes(strong_table, ([("create", "A"), ("read", "A")], [("create", "A")]))
    assert outcomes == {((("us-east-1-0",), ()), (("A", "us-east-1-0"),)),
                        ((("us-west-2-0",), ()), (("A", "us-west-2-0"),))}  # on MREC both creates may succeed
