"""Embedded DynamoDB-compatible server for the lab: `python -m helpers.labserver --port 8000`."""
from .server import Engine, make_server

__all__ = ["Engine", "make_server"]
