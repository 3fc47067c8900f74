"""The moves of an order, as a schedule names them, and how a move is read (parse_move). On the lab server the
explorer makes every choice DynamoDB's consistency leaves open (helpers/labserver/model/consistency.py), so a
move is one of:
- "alice": release alice's held request (a read gets the newest answer the model allows);
- "alice~2": release alice's held read with its 2nd other answer (an older version of some item);
- "alice@1": read item 1 of alice's held BatchGetItem now ("alice@1~2": with its 2nd other answer). A BatchGetItem is
  read-committed: DynamoDB reads its items one at a time, so each is a move of its own, and another client's request
  may come between them; the request itself is released with the last item read. Items read back to back are
  counted once (in ascending order), as items made visible back to back are;
- "alice+1": make item 1 of alice's ongoing transaction visible; the last one ends it and her call returns. A
  BatchWriteItem's items become visible the same way, one at a time, though nothing conflicts with them: each put
  or delete takes effect then, so another request's write to its item may land before it. Items made visible back
  to back leave the same state in any order, so the explorer counts such a run once (in ascending order): what it
  counts is when each item becomes visible relative to the other clients' requests.
  DynamoDB publishes no bound on how long a transaction stays ongoing, but it is short, and with no bound at
  all any retry loop could be starved: here each other client sends at most WINDOW (3) requests naming one of its
  items meanwhile, and its next one waits until the transaction has ended (a scenario whose clients make at most
  three requests each never meets the bound; requests on other items do not count, reduction.py says why);
- "stream#1": stream record 1 enters its table's stream (helpers/labserver/replication/streamlog.py). Each record of a write to a
  table with a stream enabled is on its way until this move, which the explorer may make at any point after the write
  (a transaction's after it ends, a batch's put or delete after it lands), but after the records of the same item
  made before it: so records of different items, and a transaction's records, reach the stream in any order and
  between other writes' records, while each item's stay in order. The consumer's DynamoDB Streams requests
  (ListStreams, DescribeStream, GetShardIterator, GetRecords) are steps like any other, so the explorer knows what
  each one read. DynamoDB publishes no bound on how long a record takes to reach its stream, but with none a
  consumer that polls for one could poll forever: here a client reads a stream at most WINDOW (3) times since a
  record last entered it while records are on their way to it, and its next read waits until one enters. The
  records still on their way when every client has finished are moves too, so `check` reads the streams as they
  ended. Where nobody reads a stream (a replica of a global table has one, which DynamoDB keeps on), the order of its
  records can be seen by no client, so an exploration starts with every record entering its stream at once, as no
  move; once a client sends a DynamoDB Streams request, it starts over (before any check) with the records' arrivals
  as moves. A check that alone reads a stream sees its records as they entered it at once. A schedule replayed, or a
  step-through panel given an exploration's orders, watches the streams as that exploration did (a panel given none
  watches them);
- "eu-west-1#2": write 2 on its way to eu-west-1 arrives there (helpers/labserver/replication/globaltables.py): on a global table
  whose Regions are eventually consistent (MREC), each item a write changes reaches each other Region as a move of
  its own, at any point after the write (a transaction's once it has ended), in any order; last writer wins on arrival;
- "alice+0" after alice's PutItem, UpdateItem or DeleteItem on a global table whose Regions are strongly consistent
  (MRSC): her write, applied in her Region, is replicated and acknowledged, and her call returns. Until then it is in
  flight: no Region's read sees it, a write to its item from another Region meets ReplicatedWriteConflictException
  (botocore retries it, each attempt a step, counted in the WINDOW above), one from her own Region waits;
- "alice?1": alice's function left a choice to the explorer (`choice_point`, as helpers/runs/consumer.py's Kinesis mode
  does) and gets its option 1 (counted from 0): a choice only her own code sees, so it commutes with every other
  client's move;
- with faults=("lost_response", "crash"), a write may also be released as "alice!lost" (applied, then its
  response lost on the way back: the SDK retries it, a step of its own) or "alice!crash" (applied, then alice's
  process dies: the rest of her function never runs, and her result is a Crashed). Each fault happens at most
  once per order; a crash after a read leaves the state a crash after the request before it leaves, so it is
  offered after writes only.
"""





FAULTS = ("lost_response", "crash")
FAULT_MOVES = {"lost_response": "lost", "crash": "crash"}
FAULT_WORDS = {"lost": "response lost, the SDK retries", "crash": "then the client crashes"}


def parse_move(move):
    """(client, kind, place) of a move: ("alice", "", 0), ("alice", "~", 2), ("alice", "+", 1), ("alice", "!", "lost"),
    ("alice", "@", 1) for reading item 1 of her BatchGetItem (and "alice@1~2", its 2nd other answer: ("alice", "~", 2)),
    ("stream", "#", 1) for stream record 1 entering its stream, ("alice", "?", 1) for option 1 of her choice."""
    for kind in ("~", "+", "@", "#", "?"):
        name, sign, place = move.rpartition(kind)
        if sign and place.isdigit():
            return (name.rpartition("@")[0] if batch_item(name) is not None else name), kind, int(place)
    name, sign, fault = move.rpartition("!")
    if sign and fault in FAULT_MOVES.values():
        return name, "!", fault
    return move, "", 0


def batch_item(move):
    """The place of the BatchGetItem item a move reads ("alice@1" and "alice@1~2": 1), or None."""
    name, sign, place = move.rpartition("~")
    base = name if sign and place.isdigit() else move
    _, sign, item = base.rpartition("@")
    return int(item) if sign and item.isdigit() else None


def worth_trying(moves):
    """The moves the explorer tries now, of those possible: when they are all items of one client's transaction (or
    batch) to make visible, or of its BatchGetItem to read, they commute and nothing else can happen until one is
    made, so only the lowest is tried (the sleep sets see to the rest: reduction.py)."""
    parsed = [item_move(move) for move in moves]
    if len({(name, kind) for name, kind, _ in parsed}) == 1 and parsed[0][1] in ("+", "@"):
        return [moves[min(range(len(moves)), key=lambda place: parsed[place][2])]]
    return list(moves)


def transition(move):
    """The request or item a move makes: ("alice", "", 0) for any answer or fault of her held request, ("alice", "+", 1)
    for item 1 of her transaction made visible, ("alice", "@", 1) for item 1 of her BatchGetItem read."""
    name, kind, place = item_move(move)
    return (name, kind, place) if kind in ("+", "@", "#") else (name, "", 0)


def item_move(move):
    """(client, kind, place) of a move as parse_move has it, but ("alice", "@", 1) for any answer to item 1 of her
    BatchGetItem: which item a move reads, not which answer it gets."""
    item = batch_item(move)
    return (parse_move(move)[0], "@", item) if item is not None else parse_move(move)
