"""Run requests at once: real threads racing (races, contention), their log (recorder), a stream's consumer.

May import: helpers.lab, helpers.explore (a consumer's runs are explored steps), helpers.anomalies.
"""
