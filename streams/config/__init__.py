"""The configuration every process shares, as values: :class:`Settings` and the Kafka clients'
security built from it.

The bottom of the project: it imports nothing else of it, so the worker (``streams``), the
projector (``projections``) and the shell on top (``memstream``: CLI, HTTP API, stack, demo)
all may import it. Settings are read from the environment at a process's edge (its entry
point) and passed down as values.
"""
