"""Requests let in together: the checkers' "released together" made exact at the server.

Threads on one machine cannot send many requests at the same instant: after the client-side gate
(helpers/lab/gate.py) opens, each thread still prepares and writes its request in turn, so 50 first requests leave
over longer than one request takes. A request carrying `X-Lab-Together: <group> <count>` is therefore held here
until `count` requests of its group have arrived (or WAIT_AT_MOST seconds have passed), and all are then let in
at once, to meet DynamoDB's item in whatever order the server's threads reach it, as concurrent requests do.
Each answer says when it was let in (`X-Lab-Let-In`, in seconds of the server's monotonic clock), so the spread
of the moments they met DynamoDB can be measured. DynamoDB's protocol never sends the header; the gate sends it
only to the lab server.
"""
import threading
import time

TOGETHER_HEADER = "X-Lab-Together"
LET_IN_HEADER = "X-Lab-Let-In"
WAIT_AT_MOST = 2.0
MAX_GROUP = 1000


class Doors:
    """Groups of requests held until the whole group has arrived."""

    def __init__(self):
        self.changed = threading.Condition()
        self.arrived, self.left, self.complete = {}, {}, {}

    def let_in(self, value):
        """Hold a request of the group `value` names ("<group> <count>") until its group is complete, or at most
        WAIT_AT_MOST s; return the moment it was let in: when the group's last request arrived, or when this one
        stopped waiting for it. A malformed value holds nothing."""
        group, _, count = value.strip().rpartition(" ")
        if not group or not count.isdigit() or not 1 <= int(count) <= MAX_GROUP:
            return time.monotonic()
        count = int(count)
        with self.changed:
            self.arrived[group] = self.arrived.get(group, 0) + 1
            if self.arrived[group] == count:
                self.complete[group] = time.monotonic()
                self.changed.notify_all()
            elif not self.changed.wait_for(lambda: group in self.complete, WAIT_AT_MOST):
                self.complete[group] = None  # the rest never came: let every member in now, each at its own moment
                self.changed.notify_all()
            moment = self.complete[group] or time.monotonic()
            self.left[group] = self.left.get(group, 0) + 1
            if self.left[group] == self.arrived[group]:
                del self.arrived[group], self.left[group], self.complete[group]
        return moment
