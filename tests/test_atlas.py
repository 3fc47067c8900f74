"""The isolation atlas: its cells agree with the Developer Guide's isolation table, a cell's order replays, and the
exercise's checker catches plausible wrong predictions of the strongly consistent Query's row and passes the right one."""
import pytest

from helpers import atlas
from helpers.checks.p33 import check_query_row
from helpers.explore import why
from helpers.tables import REPLICA_REGIONS, dissolve

pytestmark = pytest.mark.usefixtures("knobs_off")

RIGHT = {"G1a aborted read": "prevented", "G-single read skew": "occurs", "stale read": "prevented",
         "no read-your-writes": "prevented", "non-monotonic reads": "prevented"}


def predicting(changes=None):
    """A predicted_row function: the right row with `changes` ({column: verdict})."""
    prediction = {**RIGHT, **(changes or {})}
    return lambda: prediction


@pytest.fixture(scope="module")
def cells(lab):
    """Every cell explored; the Region rows' global tables deleted once the module is done (while one exists, the lab
    server's banner names the replication it does before a write returns)."""
    yield atlas.build(lab)
    for name in (atlas.MREC_TABLE, atlas.MRSC_TABLE):
        dissolve(name, [lab.client_in(region) for region in REPLICA_REGIONS])


def test_the_region_rows_agree_with_the_developer_guide_s_page_on_global_tables(lab, cells):
    if lab.kind != "embedded":
        pytest.skip("global tables are modelled by the embedded lab server (DynamoDB Local has none)")
    assert atlas.agrees_with_global_tables(cells) == []


def test_the_atlas_agrees_with_the_developer_guide_s_isolation_table(cells):
    assert atlas.agrees_with_the_guide(cells) == []
    found = atlas.verdicts(cells)
    assert found[("BatchGetItem", "G-single read skew")] == "occurs"
    assert found[("TransactGetItems", "G-single read skew")] == "prevented"
    assert found[("read, then PutItem", "P4 lost update")] == "occurs"
    assert found[("read, then version-checked write", "P4 lost update")] == "prevented"
    assert found[("read, then version-checked write", "G2-item write skew")] == "occurs"
    assert found[("TransactWriteItems + ConditionCheck", "G2-item write skew")] == "prevented"
    assert found[("GetItem (default)", "stale read")] == "occurs"
    assert found[("GetItem, ConsistentRead", "stale read")] == "prevented"
    assert found[("Query the GSI, then write", "stale index read")] == "occurs"
    assert found[("sentinel item in a transaction", "stale index read")] == "prevented"
    assert found[("TransactWriteItems + ConditionCheck", "G0 dirty write")] == "prevented"
    assert found[("BatchWriteItem", "G0 dirty write")] == "occurs"


def test_the_anomaly_analyser_judges_every_cell_as_its_scenario_does_the_region_rows_too(lab, cells):
    if lab.kind != "embedded":
        pytest.skip("histories come from the embedded lab server's consistency model")
    judged = {key: (cell.verdict, atlas.elle_verdict(cell)) for key, cell in cells.items()}
    judged = {key: verdicts for key, verdicts in judged.items() if verdicts[1] is not None}
    region_rows = (atlas.MREC_LOST, atlas.MRSC_LOST, atlas.MREC_READ, atlas.MRSC_READ)
    regions = {key: verdicts for key, verdicts in judged.items() if key[0] in region_rows}
    assert len(judged) == 33 + 10 and len(regions) == 10
    assert {own for own, _ in judged.values()} == {own for own, _ in regions.values()} == {"occurs", "prevented"}
    assert {key: verdicts for key, verdicts in judged.items() if verdicts[0] != verdicts[1]} == {}
    assert atlas.NOT_JUDGED == {atlas.STREAM_ROW}
    assert all(cell.row in atlas.NOT_JUDGED for key, cell in cells.items()
               if cell.verdict != "n/a" and key not in judged)


def test_a_cross_region_lost_update_is_told_as_elle_s_lost_update_naming_both_regions(lab, cells):
    if lab.kind != "embedded":
        pytest.skip("histories come from the embedded lab server's consistency model")
    frame = cells[(atlas.MREC_LOST, "P4 lost update")].frame
    told = why(frame.loc[~frame["ok"], "history"].iloc[0])
    assert "lost-update" in told and "G-single-item" in told
    assert "alice's GetItem then PutItem in us-east-1" in told and "bob's GetItem then PutItem in eu-west-1" in told


def test_each_column_names_elle_s_anomaly_beside_its_own_in_the_figure_and_the_catalogue(cells):
    chart = atlas.figure(cells)
    assert "(G-single-item-<br>realtime)" in chart.layout.xaxis.ticktext[list(atlas.ANOMALIES).index("stale read")]
    hovers = [text for row in chart.data[0].hovertext for text in row]
    assert any("· stale read (G-single-item-realtime)</b>" in text for text in hovers)
    assert "Elle: lost-update (" in atlas.ANOMALIES["P4 lost update"][0]


def test_every_cell_that_runs_nothing_says_why(cells):
    quiet = [cell for cell in cells.values() if cell.verdict == "n/a"]
    assert quiet and all(len(cell.words) > 20 for cell in quiet)
    assert {cell.verdict for cell in cells.values()} == {"occurs", "prevented", "n/a"}


def test_the_replay_opens_the_chosen_cell_s_anomalous_order_in_a_step_through_panel_that_names_the_anomaly(cells):
    replayer = atlas.Replayer(cells)
    label = next(label for label in replayer.cells if label.startswith("BatchGetItem · G-single"))
    panel = replayer.replay(label)
    try:
        cell = replayer.cells[label]
        assert panel.history == list(cell.frame.loc[~cell.frame["ok"], "steps"].iloc[0])
        x, y = panel.stepper.results["bob"]
        assert x + y != 200
        assert panel.verdict.endswith(f" · G-single read skew: bob read x = {x} and y = {y}, {x + y} in all, not 200: "
                                      "part of alice's transfer")
        assert "color:#b00" in panel.verdict_view.value
        holding = next(schedule for text, schedule in panel.schedules.options if " · holds: " in text)
        panel.replay(holding)
        assert panel.verdict.endswith(" · no G-single read skew in this order")
        assert "color:#2e7d32" in panel.verdict_view.value
    finally:
        panel.stepper.close()


def test_a_replayed_stale_read_is_named_and_its_items_hold_only_what_the_scenario_wrote(cells):
    panel = atlas.replay_panel(cells[("GetItem (default)", "stale read")])
    try:
        assert panel.verdict == ("all done: alice → 'OK', bob → 0 · stale read: bob read 0 after alice's PutItem of 1 "
                                 "had returned")
        assert "→ {PK: &#x27;PAIR&#x27;, SK: &#x27;x&#x27;, n: 0}</b>" in panel.steps_view.value
    finally:
        panel.stepper.close()


def test_every_red_cell_says_what_an_order_in_which_it_occurs_shows(cells):
    occurring = [cell for cell in cells.values() if cell.verdict == "occurs"]
    assert occurring and all(cell.text.startswith(f"occurs: {cell.occurs} of {cell.orders} (for example, ")
                             for cell in occurring)
    hovers = [text for row in atlas.figure(cells).data[0].hovertext for text in row]
    assert sum("for example" in text for text in hovers) == len(occurring)


@pytest.mark.parametrize("wrong", [
    {"G-single read skew": "prevented"},  # a Query reads one partition, so it is a snapshot
    {"stale read": "occurs"},  # every Query may be stale
    {"no read-your-writes": "occurs", "non-monotonic reads": "occurs"},  # as a default read
    {"G1a aborted read": "occurs"},  # read-committed reads uncommitted data
])
def test_the_checker_catches_a_plausible_wrong_prediction_and_names_the_column(lab, wrong):
    report = check_query_row(predicting(wrong))
    assert not report.passed
    for column in wrong:
        assert f"{column}: you said {wrong[column]}" in report.message


def test_the_checker_passes_the_right_prediction(lab):
    report = check_query_row(predicting())
    assert report.passed, report.message


def test_a_prediction_of_the_wrong_form_is_refused_with_what_to_write(lab):
    with pytest.raises(ValueError, match="say 'occurs' or 'prevented'"):
        check_query_row(predicting({"stale read": "maybe"}))
    with pytest.raises(ValueError, match="no prediction for 'stale read'"):
        check_query_row(lambda: {column: verdict for column, verdict in RIGHT.items() if column != "stale read"})
