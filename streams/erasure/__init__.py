"""Crypto-shredding: personal fields sealed with a per-user data key, so erasing the key erases
every copy of them (topics, state, backups, analytics' copies) while the log stays replayable.

``cipher`` seals and opens a field; ``data_keys`` keeps each user's data key, wrapped by a master
key (a local one from a file or the environment; a KMS behind the same interface).
"""
