"""Embedded DynamoDB-compatible server for the lab: `python -m helpers.labserver --port 8000`.

Its subsystems, each importing only those below it (but model, which uses replication's regions and streamlog):

    protocol/     the HTTP server, moto's request handler made cheaper, requests let in together
    fidelity.py   which rule applies to which operation, and when
    replication/  Regions, global tables, DynamoDB Streams
    accounting/   capacity units, the meter, partition throttling
    rules/        DynamoDB's answers where moto's differ, by what they check
    model/        the consistency model, the teaching knobs, fresh tables
"""
from .protocol.server import Engine, make_server

__all__ = ["Engine", "make_server"]
