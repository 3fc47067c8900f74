"""Anomalies found outside the dependency graph, as Elle's rw-register finds them (internal, G1a, G1b, lost-update).

- internal: within an ok transaction, a read that disagrees with what the transaction itself last wrote or read
  of that key (Elle's op-internal-case; only the first such read of each transaction is reported, with the value
  expected).
- G1a, aborted read: an ok transaction read (by any read, internal or not) a value that a failed transaction
  wrote (by any write). Crashed (info) transactions may have committed, so reading them is no anomaly.
- G1b, intermediate read: an ok transaction read a value that another operation wrote and then overwrote within
  the same transaction. Elle scans every operation for such writes, invocations included, and names as writer
  the last operation of the history that made it (for a completed transaction, its completion).
- lost-update: two or more ok transactions first read the same value of a key and then both wrote that key.
  Elle counts a transaction's first read of a key and its first write after it (a write before any read of the
  key does not count); this is kept, quirks included.

Elle's rw-register has no dirty-update (that is its list-append's), so neither has this package.
"""


def internal_cases(ops):
    """(op, mop, expected) for the first read of each ok transaction that disagrees with its own earlier access."""
    cases = []
    for op in ops:
        if op.type != "ok":
            continue
        state = {}
        for mop in op.value:
            f, k, v = mop
            if f == "r" and k in state and state[k] != v:
                cases.append((op, mop, state[k]))
                break
            state[k] = v
    return cases


def g1a_cases(ops):
    """(op, mop, writer) for each read of an ok transaction that saw a value a failed transaction wrote."""
    failed = {}
    for op in ops:
        if op.type == "fail":
            for f, k, v in op.value:
                if f == "w":
                    failed[(k, v)] = op
    return [(op, mop, failed[mop[1:]]) for op in ops if op.type == "ok"
            for mop in op.value if mop[0] == "r" and mop[1:] in failed]


def g1b_cases(ops):
    """(op, mop, writer) for each read of an ok transaction that saw another transaction's overwritten write."""
    intermediate = {}
    for op in ops:
        final = {}
        for f, k, v in op.value:
            if f == "w":
                if k in final:
                    intermediate[(k, final[k])] = op
                final[k] = v
    return [(op, mop, intermediate[mop[1:]]) for op in ops if op.type == "ok" for mop in op.value
            if mop[0] == "r" and mop[1:] in intermediate and intermediate[mop[1:]].index != op.index]


def lost_update_cases(ops):
    """(key, value, txns) for each value of a key that two or more ok transactions read and then wrote over."""
    collisions = {}
    for op in ops:
        if op.type != "ok":
            continue
        reads, writes = {}, set()
        for f, k, v in op.value:
            if f == "w" and k not in writes:
                if k in reads:
                    collisions.setdefault((k, reads[k]), []).append(op)
                    writes.add(k)
            elif f == "r" and k not in reads:
                reads[k] = v
    return [(k, v, txns) for (k, v), txns in collisions.items() if len(txns) > 1]
