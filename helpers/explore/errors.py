"""What an exploration raises: a scenario it cannot explore, one with too many orders, a stopped or crashed client."""





class ExplorationError(RuntimeError):
    """The scenario cannot be explored as written; the message names the client and what to change."""


class TooManyOrders(ValueError):
    """A scenario with more possible orders than the exploration may run; the message says how to shrink it."""


class Stopped(BaseException):
    """Raised in a held client when its run is stopped; not an Exception, so `except Exception` cannot keep it."""


class Crashed(BaseException):
    """A client's process died right after a request was applied: the rest of its function never ran (its result)."""

    def __str__(self):
        return f"crashed after its {self.args[0]}"
