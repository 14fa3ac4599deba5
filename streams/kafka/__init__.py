"""Kafka I/O of the worker: the records' Avro encoding, the Faust application and its consumer
tuning, the batch's output sent inside one transaction, and dead letters."""
