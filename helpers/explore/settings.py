"""The explorer's bounds, the lab server's headers and paths it speaks, and DynamoDB's operations by kind."""
import re

CLIENT_TIMEOUT = 10
MAX_OPTIONS = 120  # of one choice a client leaves to the explorer
MAX_SCHEDULES = 1000
STOP_WITHIN = 1.0
SLICE = 0.1
ORDER_HEADER = "X-Lab-Order"  # read by helpers/labserver/protocol/server.py (not imported: it would load moto here)
ORDER_COST_HEADER = "X-Lab-Order-Cost"  # its answer: what the steps of the order have cost so far
HOLD_ID = "lab-explore-hold"
ANSWER_ID = "lab-explore-answer"
CONSISTENCIES = ("dynamodb", "strong")
WINDOW = 3  # requests naming an ongoing transaction's items another client may send; reads of a stream, records pending
DEFAULT_CONSISTENCY = "dynamodb"


READS = ("GetItem", "BatchGetItem", "Query", "Scan")
STREAM_READS = ("ListStreams", "DescribeStream", "GetShardIterator", "GetRecords")  # DynamoDB Streams' operations
VERSIONS_HEADER = "x-lab-versions"  # the lab server's, explored: the version of each item a request read and wrote
ARRIVALS_HEADER = "x-lab-arrivals"  # the lab server's: what may arrive now (stream records, replicated writes)
WRITES = ("PutItem", "UpdateItem", "DeleteItem", "BatchWriteItem", "TransactWriteItems")
SINGLE_ITEM_WRITES = ("PutItem", "UpdateItem", "DeleteItem")
CREDENTIAL_SCOPE = re.compile(r"Credential=[^/,]*/[0-9]{8}/([a-z0-9-]+)/")  # SigV4: key/date/Region/service/...


CONSISTENCY_PATH = "/lab/consistency"
ONLY_ORDERS = ("Exploring orders only: on {kind} the explorer cannot choose which copy answers a read or when a "
               "transaction's items become visible, so it counts only the orders of the requests.")
