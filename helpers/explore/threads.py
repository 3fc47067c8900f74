"""The client threads an exploration runs on, kept from order to order (Workers), one exploration at a time in a
kernel (exclusive), and the CPU they share (one_cpu)."""
import ctypes
import os
import queue
import threading
import time
from contextlib import contextmanager

from .hold import steps_take_no_time
from .settings import STOP_WITHIN

EXPLORING = threading.Lock()  # held while an exploration runs in this kernel


class Workers:
    """One thread per client, kept from schedule to schedule: a new thread per schedule costs more than a request."""

    def __init__(self, names):
        steps_take_no_time()
        self.jobs = {name: queue.SimpleQueue() for name in names}
        self.threads = [threading.Thread(target=self.work, args=(name,), name=f"explore-{name}", daemon=True)
                        for name in names]
        for thread in self.threads:
            thread.start()

    def work(self, name):
        """Serve `name` in each run handed over, until close()."""
        while (run := self.jobs[name].get()) is not None:
            run.serve(name)

    def begin(self, run):
        """Start every client of `run` on its thread."""
        for name in run.clients:
            self.start(run, name)

    def start(self, run, name):
        """Start `run`'s client `name` on its thread."""
        self.jobs[name].put(run)

    def close(self):
        """Let the threads end once their current client returns, and wait up to a second for them."""
        for jobs in self.jobs.values():
            jobs.put(None)
        deadline = time.monotonic() + STOP_WITHIN
        for thread in self.threads:
            thread.join(max(deadline - time.monotonic(), 0))


@contextmanager
def exclusive():
    """One exploration at a time in a kernel: a second one started while one runs is refused."""
    if not EXPLORING.acquire(blocking=False):
        raise RuntimeError("Another exploration is running in this kernel; wait for it to finish (or interrupt "
                           "it) before starting the next one.")
    try:
        yield
    finally:
        EXPLORING.release()


@contextmanager
def working(clients):
    """Worker threads for the clients, closed when the block ends however it ends; while it runs, this thread and
    theirs share one CPU (one_cpu)."""
    with one_cpu():
        workers = Workers(clients)
        try:
            yield workers
        finally:
            workers.close()


@contextmanager
def one_cpu():
    """Keep this thread, and the threads it starts, on the CPU it runs on now, for the block (where the platform
    lets a thread be pinned: Linux). The explorer's threads take turns and never run at once, and a turn passed to a
    thread waiting on another CPU wakes that CPU (a slow wake-up in a virtual machine), while on one CPU it is a
    context switch (measured on a two-CPU machine: an exploration of 3 racy clients took about a tenth less time).
    The lab server's process is left where the system puts it: on the other CPUs while this one is busy."""
    allowed = os.sched_getaffinity(0) if hasattr(os, "sched_setaffinity") else None
    cpu = this_cpu() if allowed and len(allowed) > 1 else None
    if cpu is None:
        yield
        return
    os.sched_setaffinity(0, {cpu})
    try:
        yield
    finally:
        os.sched_setaffinity(0, allowed)


def this_cpu():
    """The CPU this thread runs on (glibc's sched_getcpu), or None where it cannot be asked."""
    try:
        cpu = ctypes.CDLL(None).sched_getcpu()
    except (OSError, AttributeError):
        return None
    return cpu if cpu >= 0 else None
