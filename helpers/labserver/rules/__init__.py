"""DynamoDB's answers where moto's differ, by what they check (keys, values, expressions, batches, transactions, ...).

helpers.labserver.fidelity says which rule applies to which operation and when. May import: model (find_table).
"""
