"""The two rankings a question's memories are taken in.

``cosine``: the user's active memories that have an embedding, by cosine similarity to the
question's embedding (ties by memory id): consolidation alone, no ranking tricks.

``recall``: what a service gets, ``projections.reader.MemoryReader.recall`` against real
PostgreSQL. The system's ledger is projected into a fresh database by the projector's own row
code (``projections.rows.RowBatch`` and ``projections.writer.write_batch``, in batches of the
projector's default size), recall is asked with the question's embedding (the same MiniLM
vector the cosine ranking uses), and the database is dropped afterwards. Its databases are
named ``bench<run id>_rq_<system>``, so ``memstream bench --clean`` removes any that a killed
run left behind.
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import psycopg
from psycopg import sql

from bench.recall_quality.scoring import Ranked
from bench.recall_quality.systems import System, row_batch
from projections.queries import Ranking
from projections.reader import MemoryReader
from projections.recall_order import DEFAULT_DIVERSITY
from projections.schema import migrated_database
from projections.writer import prepare_connection, write_batch
from streams.engine import ledger

EMBEDDING_DIM = 384
RECALL_K = 150  # enough memories to fill the largest context budget
PROJECTOR_BATCH = 2_000  # the projector's default batch size (MEMSTREAM_PROJECTOR_BATCH_SIZE)
PROJECTOR_NAME = "bench-recall-quality"


def unit(vector: bytes) -> np.ndarray:
    array = np.frombuffer(vector, dtype="<f4").astype(np.float64)
    norm = float(np.linalg.norm(array))
    return array / norm if norm else array


@dataclass
class _UserIndex:
    ids: list[str]
    contents: list[str]
    matrix: np.ndarray  # rows: unit vectors


class CosineRanking:
    """Plain cosine over a system's active memories (those without an embedding cannot be
    found, as in the pipeline, where recall filters ``embedding IS NOT NULL``)."""

    def __init__(self, system: System) -> None:
        self.users: dict[str, _UserIndex] = {}
        for user, memories in system.memories.items():
            embedded = sorted((m for m in memories if m.embedding), key=lambda m: m.memory_id)
            matrix = (
                np.vstack([unit(m.embedding) for m in embedded if m.embedding])
                if embedded
                else np.zeros((0, EMBEDDING_DIM))
            )
            self.users[user] = _UserIndex(
                [m.memory_id for m in embedded], [m.content for m in embedded], matrix
            )

    def rank(self, user_id: str, question: str, vector: bytes) -> list[Ranked]:
        index = self.users.get(user_id)
        if index is None or not index.ids:
            return []
        scores = index.matrix @ unit(vector)
        order = np.argsort(-scores, kind="stable")  # ids are sorted: ties go by memory id
        return [Ranked(index.ids[i], index.contents[i]) for i in order]


@dataclass
class QuestionVectors:
    """An embedder that answers with the question vectors computed once for every ranking,
    so recall embeds nothing again (same model, same vectors)."""

    vectors: dict[str, bytes]
    name: str = "minilm"
    dim: int = EMBEDDING_DIM

    def embed(self, texts: Sequence[str]) -> list[bytes]:
        return [self.vectors[t] for t in texts]


def server_problem(server_url: str) -> str | None:
    """Why the PostgreSQL server cannot be used, or None when it answers."""
    try:
        with psycopg.connect(server_url, connect_timeout=5, autocommit=True) as conn:
            conn.execute("SELECT 1")
    except psycopg.Error as exc:
        return str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return None


@dataclass
class RecallDatabase:
    """A fresh read-model database holding one system's projected ledger. Each thread that
    ranks gets its own reader (connection), so questions can be asked in parallel: the work
    is PostgreSQL's, in its own processes."""

    server_url: str
    run_id: str
    system: str
    vectors: QuestionVectors  # every question's vector, by its text
    url: str = ""
    ranking: Ranking = "hybrid"  # MemoryReader.recall's: hybrid (meaning and words) or vector
    diversity: float = DEFAULT_DIVERSITY  # MemoryReader.recall's: 0 is none
    _readers: list[MemoryReader] = field(default_factory=list)
    _local: threading.local = field(default_factory=threading.local)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    @property
    def dbname(self) -> str:
        return f"bench{self.run_id}_rq_{self.system}_{self.ranking}"

    def create(self, decisions: list[ledger.ConsolidationEvent]) -> None:
        self.url = migrated_database(self.server_url, self.dbname, EMBEDDING_DIM)
        with psycopg.connect(self.url) as conn:
            prepare_connection(conn)
            for start in range(0, len(decisions), PROJECTOR_BATCH):
                chunk = decisions[start : start + PROJECTOR_BATCH]
                write_batch(conn, row_batch(chunk, start), PROJECTOR_NAME)

    def rank(self, user_id: str, question: str, vector: bytes) -> list[Ranked]:
        assert self.url, "create() the database first"
        reader: MemoryReader | None = getattr(self._local, "reader", None)
        if reader is None:
            reader = self._local.reader = MemoryReader.connect(self.url)
            with self._lock:
                self._readers.append(reader)
        found = reader.recall(
            user_id,
            question,
            self.vectors,
            k=RECALL_K,
            ranking=self.ranking,
            diversity=self.diversity,
        )
        return [Ranked(r.memory_id, r.content) for r in found]

    def drop(self) -> None:
        for reader in self._readers:
            reader.close()
        self._readers.clear()
        with psycopg.connect(self.server_url, autocommit=True) as conn:
            conn.execute(
                sql.SQL("DROP DATABASE IF EXISTS {} WITH (FORCE)").format(
                    sql.Identifier(self.dbname)
                )
            )


def new_run_id() -> str:
    return uuid.uuid4().hex[:8]
