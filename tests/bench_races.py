"""Race benchmark (not collected by pytest): run with `.venv/bin/python tests/bench_races.py [repeats]`.

Measures what the race lab promises: with default knobs the racy increment loses at least one
update in 100 of 100 runs and ADD is exact in 100 of 100; a 50-thread, 10,000-operation race
(target: under 30 s on a 2-core machine) and its timeline figure (target: under 2 s), as the
median of several runs, since a shared machine is noisy; and how far apart the checkers' stress stage sends the
first requests of 50 calls released together, beside the median time one request takes (goal: the spread below it):
the threads cannot send at one instant, so the lab server holds the group until all of it has arrived and lets it
in at once (helpers/labserver/protocol/together.py).

Each big race also prints the CPU seconds its clients and the lab server used. Measured at load 8 to 16: the
clients' process (botocore in 50 threads under one GIL) is busy the whole racy race, about 1.5 ms of CPU a request
against the lab server's 0.4 ms, so the race's time is the clients' CPU time, not the server's.
"""
import os
import resource
import statistics
import sys
import time

from bench_throughput import cpu_seconds

from helpers import connect, fresh_table
from helpers.checks import first_request_spread, run_at_once
from helpers.plots import timeline
from helpers.races import race


def default_knob_runs(table, runs=100):
    """How many of `runs` default racy runs lost an update, and how many ADD runs were exact."""
    racy_lost = sum(race("racy", table=table).lost > 0 for _ in range(runs))
    add_exact = sum(race("add", table=table).lost == 0 for _ in range(runs))
    return racy_lost, add_exact


def client_cpu():
    """CPU seconds this process (the race's 50 client threads) has used so far, user and system."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def big_race(table, strategy, repeats, server):
    """Wall seconds of each 50-thread, 10,000-operation race and of building its timeline; each race's line also
    says the CPU seconds its clients (this process, one core at most under the GIL) and the lab server used, since
    the race is as slow as the busier of the two."""
    race_seconds, plot_seconds = [], []
    for _ in range(repeats):
        clients, served = client_cpu(), cpu_seconds(server) if server else None
        result = race(strategy, threads=50, operations=10_000, table=table)
        clients = client_cpu() - clients
        served = "-" if served is None else f"{cpu_seconds(server) - served:.1f} s"
        began = time.perf_counter()
        timeline(result)
        plot_seconds.append(time.perf_counter() - began)
        race_seconds.append(result.seconds)
        print(f"  {strategy}: race {result.seconds:.1f} s (lost {result.lost:,}; CPU: clients {clients:.1f} s, "
              f"lab server {served}; load {os.getloadavg()[0]:.1f}), timeline {plot_seconds[-1]:.2f} s", flush=True)
    return race_seconds, plot_seconds


def add_one(table):
    """One ADD to the counter, as a stress-stage call."""
    table.update_item(Key={"PK": "POST#hello-world", "SK": "STATS"}, UpdateExpression="ADD #v :one",
                      ExpressionAttributeNames={"#v": "views"}, ExpressionAttributeValues={":one": 1})


def main():
    """Print every measurement and its median."""
    repeats = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    lab = connect()
    table = fresh_table("p24-atomic-counters", lab)
    racy_lost, add_exact = default_knob_runs(table)
    print(f"default knobs (10 threads, 50 operations, 0 ms): racy lost updates in {racy_lost}/100 runs, "
          f"ADD exact in {add_exact}/100 runs", flush=True)
    for strategy in ("racy", "add"):
        race_seconds, plot_seconds = big_race(table, strategy, repeats, lab.server and lab.server.process)
        print(f"{strategy}, 50 threads x 10,000 operations: race median {statistics.median(race_seconds):.1f} s "
              f"(target < 30 s), timeline median {statistics.median(plot_seconds):.2f} s (target < 2 s), "
              f"{repeats} runs", flush=True)
    for _ in range(repeats):
        log = run_at_once(add_one, [(table,)] * 50)
        spread, request = first_request_spread(log)
        sent = log["sent_ms"].max() - log["sent_ms"].min()
        print(f"50 calls released together: first requests left the threads within {sent:.0f} ms, the lab server let "
              f"them in within {spread:.1f} ms, a request answered in {request:.0f} ms (median); spread/request "
              f"{spread / request:.2f} (goal: below 1)", flush=True)


if __name__ == "__main__":
    main()
