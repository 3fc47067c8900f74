"""A learner cannot break the lab from JupyterLab: a real kernel driven through jupyter_client, as JupyterLab does.

Kernel -> Interrupt is KernelManager.interrupt_kernel(): SIGINT to the kernel's whole process group.
"""
import contextlib
import os
import signal
import textwrap
import threading
import time
from pathlib import Path

import nbformat
import psutil
import pytest
from jupyter_client.manager import start_new_kernel

from helpers import doctor
from helpers.kernel_hints import RUN_ALL_ABOVE

NOTEBOOK_25 = Path(__file__).parent.parent / "notebooks" / "25-transactions.ipynb"

SETUP = """
import threading
from helpers import connect, fresh_table, tracing
from helpers.races import race
lab = connect(quiet=True)
table = fresh_table("p24-atomic-counters")
with tracing(False):
    table.put_item(Item={"PK": "KEEP#me", "SK": "ITEM", "n": 7})
print(lab.server.process.pid)
"""
STILL_THERE = """
workers = [t.name for t in threading.enumerate() if t.name.startswith(("race-worker", "explore-"))]
with tracing(False):
    kept = table.get_item(Key={"PK": "KEEP#me", "SK": "ITEM"})["Item"]["n"]
print(lab.server.process.pid, lab.server.process.poll(), kept, workers)
"""


class Kernel:
    """One kernel started as JupyterLab starts it, and what its cells print."""

    def __init__(self, manager, client):
        self.manager, self.client = manager, client

    def run(self, code, timeout=60):
        """Execute a cell and wait for it; return (reply content, [its output messages])."""
        outputs = []
        reply = self.client.execute_interactive(textwrap.dedent(code), timeout=timeout,
                                                output_hook=lambda message: outputs.append(message))
        return reply["content"], outputs

    def start(self, code):
        """Send a cell without waiting for it; return its message id."""
        return self.client.execute(textwrap.dedent(code))

    def finish(self, msg_id, timeout=60):
        """Wait for the cell sent by start(); return (reply content, [output messages])."""
        outputs = []
        while True:
            message = self.client.get_iopub_msg(timeout=timeout)
            if message["parent_header"].get("msg_id") != msg_id:
                continue
            if message["msg_type"] == "status" and message["content"]["execution_state"] == "idle":
                break
            outputs.append(message)
        return self.client.get_shell_msg(timeout=timeout)["content"], outputs

    def printed(self, code):
        """What a cell printed on stdout, after checking it ran without an error."""
        reply, outputs = self.run(code)
        assert reply["status"] == "ok", reply
        return "".join(m["content"]["text"] for m in outputs if m["msg_type"] == "stream")

    def wait_for_file(self, path):
        """Block until a cell running in the kernel has created `path`."""
        while not path.exists():
            assert self.manager.is_alive(), "the kernel died"
            time.sleep(0.02)

    def servers(self):
        """The pids of the lab server processes this kernel started that are running now."""
        return {child.pid for child in psutil.Process(self.manager.provisioner.pid).children() if is_lab_server(child)}

    @contextlib.contextmanager
    def watching_servers(self):
        """Yield a set that collects the pid of every lab server process the kernel runs while the block runs."""
        seen, done = set(), threading.Event()

        def watch():
            while not done.wait(0.01):
                seen.update(self.servers())

        watcher = threading.Thread(target=watch)
        watcher.start()
        try:
            yield seen
        finally:
            done.set()
            watcher.join()


def is_lab_server(process):
    """True for a lab server process (one that has not exited yet)."""
    try:
        return "helpers.labserver" in " ".join(process.cmdline())
    except psutil.Error:
        return False


@pytest.fixture
def new_kernel(progress_file):
    """A new python3 kernel (the lab's Python, with the lab's kernel settings); shut down after the test."""
    yield from started_kernel({"DYNAMODB_LAB_PROGRESS": str(progress_file)})


@pytest.fixture
def kernel_of_25(progress_file):
    """A new kernel for notebook 25, told its notebook's path as JupyterLab tells it (JPY_SESSION_NAME)."""
    yield from started_kernel({"DYNAMODB_LAB_PROGRESS": str(progress_file), "JPY_SESSION_NAME": str(NOTEBOOK_25)})


def started_kernel(variables):
    """Start a kernel with these environment variables added; yield it, then shut it down."""
    manager, client = start_new_kernel(kernel_name="python3", env={**os.environ, **variables})
    yield Kernel(manager, client)
    client.stop_channels()
    manager.shutdown_kernel(now=True)


@pytest.fixture
def kernel(new_kernel):
    """A new kernel that has run the lab's Setup: a table with one item in it."""
    new_kernel.server_pid = int(new_kernel.printed(SETUP))
    return new_kernel


def server_survives(kernel):
    """The same server process still runs a second after the interrupt, with the table and its item."""
    with pytest.raises(psutil.TimeoutExpired):
        psutil.Process(kernel.server_pid).wait(timeout=1)
    assert kernel.printed(STILL_THERE).strip().split(maxsplit=3) == [str(kernel.server_pid), "None", "7", "[]"]


PANEL_RACING = """
        from helpers.widgets import race_panel
        panel = race_panel()
        panel.controls["operations"].value = 10_000
        panel.controls["think_ms"].value = 20
        panel.press()
        while panel.bar.value < 10:
            panel.wait(0.05)
"""  # a cell: the race lab's Run pressed for a 10,000-operation race, waiting until 10 have completed


def start_racing(kernel, tmp_path):
    """Start a 16-thread racy race in the kernel and wait until its first operation completed; return the cell."""
    started = tmp_path / "started"
    cell = kernel.start(f"""
        result = race("racy", threads=16, operations=10_000, think_ms=5,
                      on_progress=lambda done, total: done and open({str(started)!r}, "w").close())
    """)
    kernel.wait_for_file(started)
    return cell


def test_interrupting_an_idle_kernel_leaves_its_server_and_tables_alone(kernel):
    kernel.manager.interrupt_kernel()
    server_survives(kernel)


def test_interrupting_a_16_thread_race_stops_it_keeps_what_ran_and_leaves_the_server_alone(kernel, tmp_path):
    cell = start_racing(kernel, tmp_path)
    kernel.manager.interrupt_kernel()
    reply, _ = kernel.finish(cell)
    assert reply["status"] == "error" and reply["ename"] == "RaceInterrupted"
    assert reply["evalue"].startswith("interrupted after ") and reply["evalue"].endswith(" of 10,000 operations")
    server_survives(kernel)


def test_interrupting_an_exploration_releases_its_threads_and_leaves_the_server_alone(kernel, tmp_path):
    started = tmp_path / "started"
    cell = kernel.start(f"""
        from helpers.explore import explore
        KEY = {{"PK": "COUNTER#1", "SK": "VIEWS"}}

        def reset():
            table.put_item(Item={{**KEY, "views": 0}})
            open({str(started)!r}, "w").close()

        def six_racy_increments():
            for _ in range(6):
                views = table.get_item(Key=KEY)["Item"]["views"]
                table.put_item(Item={{**KEY, "views": views + 1}})

        explore({{"alice": six_racy_increments, "bob": six_racy_increments}}, reset, check=lambda results: True)
    """)
    kernel.wait_for_file(started)
    kernel.manager.interrupt_kernel()
    reply, _ = kernel.finish(cell)
    assert reply["status"] == "error" and reply["ename"] == "KeyboardInterrupt"
    server_survives(kernel)


def test_a_server_killed_during_a_16_thread_race_is_restarted_once_and_said_once(kernel, tmp_path):
    cell = start_racing(kernel, tmp_path)
    with kernel.watching_servers() as servers:
        os.kill(kernel.server_pid, signal.SIGKILL)
        reply, outputs = kernel.finish(cell)
    assert reply["status"] == "error" and reply["ename"] == "BackendError"
    assert "killed by SIGKILL" in reply["evalue"] and "Run the notebook again from the top" in reply["evalue"]
    errors = [m for m in outputs if m["msg_type"] == "error"]
    assert [m["content"]["ename"] for m in errors] == ["BackendError"]
    (fresh,) = kernel.servers()
    assert servers - {kernel.server_pid} == {fresh}
    assert kernel.printed("""
        table = fresh_table("p24-atomic-counters")
        with tracing(False):
            table.put_item(Item={"PK": "NEW#one", "SK": "ITEM", "n": 1})
            print(table.get_item(Key={"PK": "NEW#one", "SK": "ITEM"})["Item"]["n"], lab.server.process.pid)
    """).split() == ["1", str(fresh)]


def test_kernel_interrupt_during_a_run_button_race_stops_it_and_the_panel_draws_what_ran(kernel):
    kernel.printed(PANEL_RACING)
    kernel.manager.interrupt_kernel()
    shown = kernel.printed("""
        panel.wait(30)
        print(panel.status.value, "|", panel.last[0].layout.title.text, "|", panel.error)
    """)
    status, title, error = shown.split(" | ")
    assert status.startswith("interrupted, partial result") and error.strip() == "None"
    assert "interrupted after" in title and "of 10,000 operations: the operations that completed" in title
    server_survives(kernel)


def test_stop_keeps_a_partial_result(kernel):
    shown = kernel.printed(PANEL_RACING + """
        panel.stop_button.click()
        panel.wait(30)
        print(panel.status.value, "|", panel.last[0].layout.title.text, "|", panel.error)
    """)
    status, title, error = shown.split(" | ")
    assert status.startswith("stopped, partial result") and error.strip() == "None"
    assert "stopped after" in title and "of 10,000 operations: the operations that completed" in title


def test_the_server_still_exits_with_its_kernel_even_one_killed_with_sigkill(kernel):
    os.kill(kernel.manager.provisioner.pid, signal.SIGKILL)
    psutil.Process(kernel.server_pid).wait(timeout=10)


def name_error(kernel, code):
    """The last line of the NameError's traceback that running `code` in the kernel shows."""
    reply, outputs = kernel.run(code)
    assert reply["status"] == "error" and reply["ename"] == "NameError"
    (error,) = [m["content"] for m in outputs if m["msg_type"] == "error"]
    return error["traceback"][-1]


def test_a_cell_run_before_the_setup_cell_says_to_run_the_notebook_from_the_top(new_kernel):
    assert name_error(new_kernel, "panel = Panel('Race', run)").endswith(
        "name 'Panel' is not defined. This kernel has not run the notebook's cells above this one (it is new, or was "
        "restarted): run the notebook from the top (Run → Run All Above Selected Cell), then this cell again.")
    new_kernel.printed(SETUP)
    assert name_error(new_kernel, "panel = Panle('Race', run)").endswith("name 'Panle' is not defined")


def test_after_a_restart_25s_panel_cell_says_what_works_and_it_works(kernel_of_25):
    code = [cell.source for cell in nbformat.read(NOTEBOOK_25, as_version=4).cells if cell.cell_type == "code"]
    setup, panel = code[0], next(source for source in code if source.startswith("def balances():"))
    assert name_error(kernel_of_25, panel).endswith(RUN_ALL_ABOVE)
    kernel_of_25.printed(setup)  # Setup alone is not enough: the panel needs the cells between too, and says so
    assert name_error(kernel_of_25, panel).endswith(
        "Another cell of this notebook defines move_in_two_writes, and this kernel has not run it (a restarted kernel "
        f"forgets every cell it ran): {RUN_ALL_ABOVE}")
    assert name_error(kernel_of_25, "move_in_tow_writes()").endswith("name 'move_in_tow_writes' is not defined")
    for source in code[1:code.index(panel)]:  # Run -> Run All Above Selected Cell
        kernel_of_25.run(source, timeout=600)
    assert kernel_of_25.printed(panel + "\nprint(*panel.buttons)").split() == ["transfer", "reader"]


def test_an_open_notebook_costs_about_the_memory_the_doctor_and_00_say(kernel):
    kernel.printed("from helpers.widgets import race_panel\nrace_panel().click()")
    processes = [psutil.Process(kernel.manager.provisioner.pid), psutil.Process(kernel.server_pid)]
    used_mb = sum(process.memory_full_info().pss for process in processes) / 2**20
    assert 0.6 * doctor.NOTEBOOK_MEMORY_MB < used_mb < 1.4 * doctor.NOTEBOOK_MEMORY_MB


def test_a_server_killed_during_a_run_button_race_is_said_once_in_words_in_the_panel(kernel):
    kernel.printed("""
        from helpers.widgets import race_panel
        panel = race_panel()
        panel.controls["operations"].value = 10_000
        panel.controls["think_ms"].value = 5
        panel.controls["threads"].value = 16
        panel.press()
        while panel.bar.value < 10:
            panel.wait(0.05)
    """)
    os.kill(kernel.server_pid, signal.SIGKILL)
    shown = kernel.printed("""
        panel.wait(30)
        print(*(output["text"] for output in panel.output.outputs), sep="|")
    """)
    assert shown.startswith("The lab server stopped (exit status -9: killed by SIGKILL). A fresh lab server now runs")
    assert "|" not in shown and "botocore" not in shown and shown.count("The lab server stopped") == 1


LONG_EXPLORATION = """
    import time
    from helpers.explore import explore
    KEY = {"PK": "COUNTER#1", "SK": "VIEWS"}

    def once():
        views = table.get_item(Key=KEY)["Item"]["views"]
        table.put_item(Item={**KEY, "views": views + 1})

    orders = explore({"alice": once, "bob": once}, lambda: table.put_item(Item={**KEY, "views": 0}),
                     check=lambda results: time.sleep(0.6) or True)  # a slow check: the exploration takes 2 s or more
    print(len(orders))
"""


@pytest.fixture
def kernel_with_bar(progress_file):
    """A kernel as a learner's JupyterLab starts it (the progress bar on), that has run the lab's Setup."""
    for kernel in started_kernel({"DYNAMODB_LAB_PROGRESS": str(progress_file), "DYNAMODB_LAB_PROGRESS_BAR": ""}):
        kernel.printed(SETUP)
        yield kernel


def test_an_exploration_longer_than_two_seconds_shows_a_progress_bar_and_removes_it_when_done(kernel_with_bar):
    reply, outputs = kernel_with_bar.run(LONG_EXPLORATION)
    assert reply["status"] == "ok", reply
    shown = [m["content"]["data"]["application/vnd.jupyter.widget-view+json"]["model_id"] for m in outputs
             if m["msg_type"] == "display_data"]
    assert len(shown) == 1, "one bar, shown once the exploration had run two seconds"
    said = [m["content"]["data"]["state"].get("value") for m in outputs
            if m["msg_type"] == "comm_msg" and m["content"]["data"].get("method") == "update"]
    assert any(str(words).startswith("Exploring every order: ") and "Interrupt" in str(words) for words in said), said
    assert shown[0] in [m["content"]["comm_id"] for m in outputs if m["msg_type"] == "comm_close"], \
        "the bar is removed when the exploration ends"
    printed = "".join(m["content"]["text"] for m in outputs if m["msg_type"] == "stream")
    assert int(printed) >= 4


def test_no_progress_bar_is_shown_where_outputs_are_stored_or_compared(kernel):
    reply, outputs = kernel.run(LONG_EXPLORATION)
    assert reply["status"] == "ok", reply
    assert not [m for m in outputs if m["msg_type"] == "display_data"]
