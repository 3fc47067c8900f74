"""Races run real threads against the lab server: knobs are checked, results tell the truth, an interrupt stops them."""
import _thread
import re
import threading
import time

import pytest

from helpers import fresh_table
from helpers.races import COUNTER, LIMITS, RaceInterrupted, clobbers, race, sweep

TABLE = "p24-atomic-counters"


@pytest.fixture
def table(lab):
    return fresh_table(TABLE, lab)


def race_threads():
    """Worker threads of a race still alive."""
    return [t for t in threading.enumerate() if t.name.startswith("race-worker-")]


@pytest.mark.parametrize("knobs, named", [
    ({"threads": 0}, "threads must be a number from 1 to 64"),
    ({"threads": 65}, "threads must be a number from 1 to 64"),
    ({"operations": 100_000}, "operations must be a number from 1 to 10,000"),
    ({"operations": 0}, "operations must be a number from 1 to 10,000"),
    ({"think_ms": -1}, "think_ms must be a number from 0 to 50"),
    ({"think_ms": 51}, "think_ms must be a number from 0 to 50"),
    ({"threads": 2.5}, "threads must be a whole number from 1 to 64"),
    ({"threads": "10"}, "threads must be a number from 1 to 64"),
])
def test_a_knob_out_of_range_is_refused_with_the_allowed_range(table, knobs, named):
    with pytest.raises(ValueError, match=named):
        race("racy", **knobs, table=table)


def test_an_unknown_strategy_lists_the_strategies(table):
    with pytest.raises(ValueError, match="'racy', 'add', 'optimistic', 'conditional floor'"):
        race("pessimistic", table=table)


def test_the_limits_are_the_documented_ones():
    assert LIMITS == {"threads": (1, 64), "operations": (1, 10_000), "think_ms": (0, 50)}


@pytest.mark.stress
def test_racy_loses_and_add_is_exact_with_default_knobs(table, run):
    racy, add = race("racy", table=table), race("add", table=table)
    assert (racy.threads, racy.operations, racy.think_ms) == (10, 50, 0)
    assert racy.final < racy.expected == 50 and racy.lost == 50 - racy.final > 0
    assert add.final == add.expected == 50 and add.lost == 0
    assert table.get_item(Key={"PK": "POST#hello-world", "SK": "STATS"}, ConsistentRead=True)["Item"]["views"] == 50


@pytest.mark.stress
def test_optimistic_lands_every_update_and_counts_its_retries(table, run):
    result = race("optimistic", threads=8, operations=40, think_ms=1, table=table)
    assert result.final == 40 and result.lost == 0
    assert result.retries == (result.log["outcome"] == "conflict, retried").sum() > 0
    assert (result.log.groupby("operation")["outcome"].last() == "written").all()


@pytest.mark.stress
def test_the_floor_sells_exactly_the_stock_and_refuses_the_rest(table, run):
    result = race("conditional floor", threads=20, operations=60, stock=25, table=table)
    assert (result.final, result.written, result.refused, result.lost) == (0, 25, 35, 0)


def test_the_event_log_has_one_row_per_attempt_with_times_and_values(table):
    result = race("racy", threads=4, operations=20, think_ms=2, table=table)
    log = result.log
    assert list(log.columns[:11]) == ["thread", "operation", "attempt", "start_ms", "read_ms", "write_ms", "end_ms",
                                      "read", "wrote", "conditional", "outcome"]
    assert sorted(log["operation"]) == list(range(20)) and set(log["thread"]) <= set(range(4))
    assert (log["start_ms"] <= log["read_ms"]).all() and (log["read_ms"] < log["write_ms"]).all()
    assert (log["write_ms"] - log["read_ms"] >= 2).all(), "think time sits between the read and the write"
    assert (log["wrote"] == log["read"] + 1).all() and (log["outcome"] == "written").all()


def test_your_own_function_is_raced_and_logged(table):
    def racy_increment(_):
        current = table.get_item(Key={"PK": "POST#hello-world", "SK": "STATS"})["Item"]["views"]
        table.put_item(Item={"PK": "POST#hello-world", "SK": "STATS", "views": current + 1})

    result = race(racy_increment, threads=10, operations=50, table=table)
    assert result.strategy == "racy_increment" and len(result.log) == 50
    assert result.final in set(result.log["wrote"]) and result.lost == 50 - result.final > 0


@pytest.mark.stress
def test_overwritten_writes_count_the_lost_updates_exactly(table, run):
    result = race("racy", threads=10, operations=60, think_ms=1, table=table)
    marked = clobbers(result.log, result.final)
    assert marked["overwritten"].sum() == result.lost > 0
    erasers = marked.loc[marked.loc[marked["erased_by"] >= 0, "erased_by"]]
    assert not erasers["conditional"].any() and erasers["read"].notna().all()


def test_a_write_with_a_condition_never_counts_as_clobbering(table):
    for strategy in ("add", "optimistic", "conditional floor"):
        result = race(strategy, threads=6, operations=30, table=table)
        marked = clobbers(result.log, result.final)
        assert not marked["overwritten"].any() and (marked["erased_by"] == -1).all()


def test_setting_stop_ends_the_race_and_keeps_what_ran(table):
    stop = threading.Event()
    threading.Timer(0.3, stop.set).start()
    began = time.monotonic()
    result = race("racy", threads=8, operations=10_000, think_ms=20, table=table, stop=stop)
    assert time.monotonic() - began < 0.3 + 1.0
    assert not race_threads()
    done = int(result.note.split()[2].replace(",", ""))
    assert re.fullmatch(r"stopped after [\d,]+ of 10,000 operations", result.note)
    assert 0 < done < 10_000 and result.expected == done and len(result.log) == done
    assert result.final == table.get_item(Key=COUNTER, ConsistentRead=True)["Item"]["views"] <= done


def test_a_keyboard_interrupt_stops_the_race_within_a_second_leaves_no_thread_and_keeps_what_ran(table, ctrl_c_raises):
    interrupted = []

    def interrupt():
        interrupted.append(time.monotonic())
        _thread.interrupt_main()

    threading.Timer(0.5, interrupt).start()
    with pytest.raises(RaceInterrupted, match=r"interrupted after [\d,]+ of 10,000 operations") as caught:
        race("racy", threads=32, operations=10_000, think_ms=50, table=table)
    assert time.monotonic() - interrupted[0] < 1.0
    assert not race_threads()
    assert 0 < caught.value.race.expected == len(caught.value.race.log) < 10_000


def test_progress_is_reported_up_to_every_operation(table):
    seen = []
    race("add", threads=4, operations=200, table=table, on_progress=lambda done, total: seen.append((done, total)))
    assert seen[-1] == (200, 200)
    assert [done for done, _ in seen] == sorted(done for done, _ in seen)


def test_a_sweep_loses_nothing_with_one_thread_and_more_with_many(table):
    runs = sweep(threads=(1, 12), think_ms=(0, 10), fixed_threads=3, operations=24, repeats=1, pause_ms=5,
                 table=table)
    lost = runs.set_index(["varied", "value"])["lost"]
    assert lost["threads", 1] == 0 and lost["threads", 12] > 0
    assert list(runs.columns) == ["varied", "value", "run", "lost", "lost %"]
