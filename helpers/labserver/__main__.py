"""Run the lab server on its own, for the AWS CLI, another SDK or NoSQL Workbench."""
import argparse
import gc
import os
import sys
import threading

from . import fidelity
from .protocol.server import make_server


def exit_when_parent_leaves():
    """With --until-stdin-closes: stop when the parent (a notebook kernel) goes away."""
    sys.stdin.read()
    os._exit(0)


YOUNG_GENERATION_THRESHOLD = 10_000


def freeze_startup_objects():
    """Load DynamoDB's API model, then keep all that startup built out of the garbage collector's scans.

    The collector otherwise walks moto's and botocore's hundred thousand long-lived objects again
    and again, as each request allocates and frees its own: several percent of every request. A
    request that leaves cyclic garbage (a PutItem leaves 6 objects, a closure moto makes; an UpdateItem
    none, since handler.unlink_parents) fills the youngest generation, collected at 10,000 objects
    rather than 700 (measured in-process, before the unlinking: 240 to 219 microseconds per UpdateItem).
    """
    fidelity.operation_names()
    gc.freeze()
    gc.set_threshold(YOUNG_GENERATION_THRESHOLD, *gc.get_threshold()[1:])


def main():
    """Parse the command line and serve until interrupted."""
    parser = argparse.ArgumentParser(prog="python -m helpers.labserver", description=__doc__)
    parser.add_argument("--port", type=int, default=8000, help="TCP port (0 picks a free one)")
    parser.add_argument("--host", default="127.0.0.1", help="address to bind (default: loopback only)")
    parser.add_argument("--until-stdin-closes", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    try:
        server = make_server(args.port, args.host)
    except OSError as error:
        parser.exit(1, f"Cannot listen on {args.host}:{args.port}: {error.strerror}. Pick another --port.\n")
    freeze_startup_objects()
    if args.until_stdin_closes:
        threading.Thread(target=exit_when_parent_leaves, daemon=True).start()
    print(f"DynamoDB lab server listening on http://{args.host}:{server.server_address[1]}", flush=True)
    try:
        server.serve_forever()
    except KeyboardInterrupt:
        pass


if __name__ == "__main__":
    main()
