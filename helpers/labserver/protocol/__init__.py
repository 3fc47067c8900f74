"""The HTTP side: the server (DynamoDB's protocol, DynamoDB Streams', /lab/*), moto's handler, requests let in together.

May import: helpers.labserver.fidelity and every subpackage below it (replication, accounting, rules, model).
"""
