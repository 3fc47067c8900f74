"""The Region a request is in, and the tables of that Region only.

One lab server serves every Region, as one DynamoDB endpoint per Region would. A request's Region is the one its
SigV4 credential scope names (`.../20260101/eu-west-1/dynamodb/aws4_request`), exactly as moto reads it
(handler.request_identity), and moto keeps each account's and Region's tables in a backend of their own: a table
"belongs to a Region" ("DynamoDB is a Regional service", AWS Prescriptive Guidance, "Overview of global tables"; "All
requests are made to a Regional endpoint that accesses the global table instance that's local to that Region").

The lab's own checks look tables up by name (`find_table`). Once the same name exists in several Regions (the replicas
of a global table, or two tables a learner made), a lookup by name alone would be ambiguous, so it finds the table in
the account and Region of the request being applied: `entering` records them for the thread that applies it (each
request is applied by one thread of the HTTP server, from its first check to its answer). Code that works for a
request other than the one being applied (the consistency model landing an older request's write) names the account
and Region it wants.
"""
import threading

from moto.dynamodb.models import dynamodb_backends

WHERE = threading.local()


class NoRegion(LookupError):
    """A table was looked up by name outside any DynamoDB request, without saying in which Region."""


def entering(where):
    """Record (account, Region) of the DynamoDB request this thread applies now; None for a request to /lab/."""
    WHERE.here = where


def here():
    """(account, Region) of the DynamoDB request this thread applies, or None."""
    return getattr(WHERE, "here", None)


def find_table(name, where=None):
    """moto's table called `name` in `where` (account, Region), by default the request's own; None if it has none."""
    where = where or here()
    if where is None:
        raise NoRegion(f"table {name!r} was looked up outside a DynamoDB request without a Region")
    account, region = where
    backend = dict.get(dynamodb_backends.get(account) or {}, region)  # a Region moto made no backend for has no table
    return backend.tables.get(name) if backend is not None else None
