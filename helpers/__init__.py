"""Plumbing for the DynamoDB concurrency lab: backend, transcript, tables."""
from .backend import BackendError, Lab, connect
from .knobs import as_weak_as_dynamodb
from .tables import fresh_table, scan_frame
from .trace import outcome, show, tracing

__all__ = ["BackendError", "Lab", "as_weak_as_dynamodb", "connect", "fresh_table", "outcome", "scan_frame", "show", "tracing"]
