"""Process order and real-time order between operations, as Elle's elle.core builds them.

Both graphs relate completions (the ok, info or fail operation that ends a transaction), never invocations:

- Process order (`process_graph`): each ok operation of a process follows that process's previous ok operation.
  Invocations, failures and crashed (info) operations take no part.
- Real-time order (`realtime_graph`): a -> b when ok operation a completed before b was invoked. Like Elle, the
  graph is a transitive reduction kept while reading the history in order: each invocation is linked from every
  ok completion in a buffer, and an ok completion, when it comes, takes the place in the buffer of the operations
  already linked to it. The target may be ok, info or fail (a crashed operation may still have happened); a
  failed or crashed operation is never a source.

Edges carry a set of relations under "rels" ({"process"} or {"realtime"}).
"""
import networkx as nx

PROCESS = "process"
REALTIME = "realtime"


def link(graph, a, b, rel):
    """Adds relation `rel` to the edge a -> b of `graph`, creating the edge if needed."""
    if graph.has_edge(a, b):
        graph[a][b]["rels"].add(rel)
    else:
        graph.add_edge(a, b, rels={rel})


def process_graph(ops):
    """Each process's ok operations, each linked to the next one of the same process."""
    graph, last = nx.DiGraph(), {}
    for op in ops:
        if op.type == "ok":
            if op.process in last:
                link(graph, last[op.process], op, PROCESS)
            last[op.process] = op
    return graph


def realtime_graph(ops, completion):
    """Real time's transitive reduction: ok completion a -> completion b when a ended before b was invoked."""
    graph, buffer = nx.DiGraph(), []
    for op in ops:
        if op.type == "invoke":
            done = completion.get(op)
            if done is not None:
                for a in buffer:
                    link(graph, a, done, REALTIME)
        elif op.type == "ok":
            implied = set(graph.predecessors(op)) if op in graph else set()
            buffer = [a for a in buffer if a not in implied] + [op]
    return graph
