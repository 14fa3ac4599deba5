"""Deterministic, extractive text writers for consolidation: fact terms, narratives, summaries.

Nothing here imports the clock, randomness, logging or I/O: like the rest of the engine, the
same inputs always give the same text, so a consolidated memory can be recomputed and compared.
"""
