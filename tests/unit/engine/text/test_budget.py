"""A consolidated memory holds at most the contract's content limit, so that its ledger record
fits a Kafka record: a summary, narrative or profile written from more than fits is split or
written from fewer sources, and nothing it leaves out is forgotten (pure: the engine over a
list of events; ``streams.engine.text.budget``)."""

from __future__ import annotations

import numpy as np

from streams.engine import ledger
from streams.engine.model import MemoryEvent
from streams.engine.oracle import OracleRun, replay
from streams.engine.policy import builtin_profile, policy_from_toml
from streams.engine.step import EngineConfig
from streams.engine.text.budget import (
    LISTED_IDS_BYTES,
    UNION_BYTES,
    bounded_union,
    content_bytes,
    fitting_groups,
    largest_fitting,
    listed_bytes,
    listed_prefix,
)
from streams.engine.text.facts import missing_terms
from streams.engine.validation import (
    DEFAULT_MAX_CONTENT_BYTES,
    MAX_EVENT_BYTES,
    MAX_ID_CHARS,
    Limits,
)
from streams.ingest_processor import Emission, IngestProcessor
from streams.kafka import codec
from streams.kafka.deadletter import source_headers
from streams.state.hot_users import UserStates
from tests.scenarios import MINUTE, NOW, Scenario, fifty_message_session

FULL_NARRATIVES = policy_from_toml(
    "max_memory_chars = 1000000\n[observations]\nenabled = false\n", builtin_profile("default")
)
"""``default`` as it was before observations: narratives that retell every fact, bounded
only by the contract's content limit (what these tests are about)."""


def payloads(run: OracleRun, kind: type) -> list:
    return [d.payload for d in run.decisions if isinstance(d.payload, kind)]


def fact_laden(n: int, sentences: int = 1) -> str:
    """An episode whose every sentence carries names, numbers and dates of its own."""
    return " ".join(
        f"On day {n}-{q} Dana met client C-{n * 7 + q} in Lisbon about invoice {n * 13 + q} "
        f"worth {n * 3 + q} euros."
        for q in range(sentences)
    )


def episodes(user: str, count: int, sentences: int = 1) -> Scenario:
    s = Scenario(user)
    for n in range(count):
        s.write(f"ep-{n:03d}", fact_laden(n, sentences), layer="episodic", at=NOW + n * MINUTE)
    s.consolidate(at=NOW + count * MINUTE)
    return s


def test_fitting_groups_splits_in_order_only_what_does_not_fit() -> None:
    def write(group: object) -> str:
        return "x" * (10 * len(group))  # type: ignore[arg-type]

    assert fitting_groups(list(range(8)), write, 80) == [(list(range(8)), "x" * 80)]
    groups = fitting_groups(list(range(8)), write, 25)
    assert [list(g) for g, _ in groups] == [[0, 1], [2, 3], [4, 5], [6, 7]]
    assert fitting_groups([0], write, 5) == [([0], "x" * 10)]  # one source: taken as it is


def test_largest_fitting_finds_the_most_sources_that_fit() -> None:
    written: list[int] = []

    def write(n: int) -> str:
        written.append(n)
        return "x" * (7 * n)

    assert largest_fitting(100, write, 700) == (100, "x" * 700)
    assert written == [100]  # what fits is written once
    assert largest_fitting(100, write, 350) == (50, "x" * 350)
    assert largest_fitting(100, write, 3) == (1, "x" * 7)


def test_largest_fitting_agrees_with_every_count_and_writes_near_what_fits() -> None:
    """The most sources that fit, for every limit over texts of uneven growth; once all do
    not fit, no text is written from more than twice the sources that do (a profile that
    outgrew the limit costs what fits, not what the user holds)."""
    sizes = [0]
    for n in range(1, 301):
        sizes.append(sizes[-1] + 1 + n % 7)  # each source adds 1-7 bytes
    for limit in (1, 5, 40, 333, 1_000, sizes[300] - 1, sizes[300]):
        written: list[int] = []

        def write(n: int, written: list[int] = written) -> str:
            written.append(n)
            return "x" * sizes[n]

        count, text = largest_fitting(300, write, limit)
        fitting = max((n for n in range(1, 301) if sizes[n] <= limit), default=1)
        assert (count, text) == (fitting, "x" * sizes[fitting])
        if count < 300:
            assert max(written[1:]) <= 2 * count  # after the whole text, nothing near it


def test_episodes_too_many_for_one_summary_become_several_that_keep_every_fact() -> None:
    """Given 60 fact-laden episodes and a 2 KB content limit, a manual cycle writes several
    summaries, each within the limit and holding every fact term of the episodes it carries;
    every episode is archived into exactly one of them."""
    scenario = episodes("budget-1", 60)
    texts = {e.payload.memory.memory_id: e.payload.memory.content for e in scenario.events[:-1]}
    run = replay(scenario.events, EngineConfig(FULL_NARRATIVES, Limits(max_content_bytes=2048)))

    summaries = payloads(run, ledger.EpisodesSummarized)
    assert len(summaries) > 1
    carried = [i for s in summaries for i in s.episode_ids]
    assert sorted(carried) == sorted(texts)  # each episode in exactly one summary
    state = run.users["budget-1"]
    for summary in summaries:
        content = summary.summary.content
        assert content_bytes(content) <= 2048
        assert missing_terms([texts[i] for i in summary.episode_ids], content) == frozenset()
        for episode_id in summary.episode_ids:
            memory = state.memories[episode_id].memory
            assert memory.status == "archived"
            assert memory.metadata["summarized_into"] == summary.summary.memory_id

    # under the default limits, what the embedder reads (max_memory_chars) bounds them
    bounded = payloads(replay(scenario.events, Limits()), ledger.EpisodesSummarized)
    assert len(bounded) > len(summaries)
    assert sorted(i for s in bounded for i in s.episode_ids) == sorted(texts)
    assert all(len(s.summary.content) <= 1000 or len(s.episode_ids) == 1 for s in bounded)


def test_a_session_too_large_for_one_narrative_narrates_what_fits_and_keeps_the_rest() -> None:
    scenario = fifty_message_session("budget-2")
    turns = {e.payload.memory.memory_id: e.payload.memory for e in scenario.events[:-1]}
    config = EngineConfig(FULL_NARRATIVES, Limits(max_content_bytes=DEFAULT_MAX_CONTENT_BYTES))
    [whole] = payloads(replay(scenario.events, config), ledger.SessionConsolidated)
    limit = content_bytes(whole.narrative.content) // 2

    run = replay(scenario.events, EngineConfig(FULL_NARRATIVES, Limits(max_content_bytes=limit)))

    [consolidated] = payloads(run, ledger.SessionConsolidated)
    narrated = set(consolidated.source_ids)
    assert 1 <= len(narrated) < len(turns)
    assert content_bytes(consolidated.narrative.content) <= limit
    contents = [turns[i].content for i in sorted(narrated)]
    assert missing_terms(contents, consolidated.narrative.content) == frozenset()
    state = run.users["budget-2"]
    for memory_id in turns:
        record = state.memories[memory_id]
        if memory_id in narrated:
            assert record.memory.status == "archived"
        else:  # left out of the narrative: not archived into it, not forgotten
            assert record.memory.status != "archived" and not record.forgotten
    assert any(state.memories[i].is_live for i in turns if i not in narrated)


def test_a_profile_too_large_for_one_memory_is_written_from_the_newest_sources() -> None:
    s = Scenario("budget-3")
    for i in range(40):
        s.write(
            f"pref-{i:02d}",
            f"The user prefers tool T{i} for task K{i} every morning.",
            layer="semantic",
            kind="preference",
            at=NOW + i * MINUTE,
        )
    s.synthesize(at=NOW + 60 * MINUTE)
    [whole] = payloads(
        replay(s.events, EngineConfig(FULL_NARRATIVES)), ledger.ProceduralSynthesized
    )
    limit = content_bytes(whole.profile.content) // 2

    [half] = payloads(
        replay(s.events, EngineConfig(FULL_NARRATIVES, Limits(max_content_bytes=limit))),
        ledger.ProceduralSynthesized,
    )

    assert content_bytes(half.profile.content) <= limit < content_bytes(whole.profile.content)
    assert 1 <= half.source_count < whole.source_count == 40
    assert "T39" in half.profile.content and "T0 " not in half.profile.content


def test_no_ledger_or_state_record_grows_with_the_episodes_a_cycle_summarizes() -> None:
    """Through the worker's processor under the default limit: 160 episodes of ~1 KB, whose
    one summary would hold ~140 KB, make no record over the limit and the ids it carries.
    Summaries of 1,000 such episodes went past Kafka's 1 MB record limit: the broker refused
    the record and the worker stopped on the same input at every restart."""
    largest, last = through_the_processor(episodes("budget-4", 160, sentences=12).events)
    summaries = [d for d in last.ledger_events if d.event_type == "EpisodesSummarized"]
    assert len(summaries) > 1
    assert largest <= DEFAULT_MAX_CONTENT_BYTES + 16 * 1024


def through_the_processor(events: list[MemoryEvent]) -> tuple[int, Emission]:
    """The largest ledger record or state entry the worker's processor sends for ``events``,
    and the last input's emission."""
    registry = codec.default_registry()
    processor = IngestProcessor(EngineConfig(), UserStates(), partitions=1)
    largest = 0
    for offset, event in enumerate(events):
        emission = processor.process(
            event.user_id.encode(),
            codec.encode_event(event, registry),
            source_headers("events", 0, offset),
            0,
        )
        assert emission.rejection is None
        largest = max(
            [largest, *(len(r.value or b"") for r in [*emission.ledger, *emission.state])]
        )
    return largest, emission


# --- what a consolidated memory lists ----------------------------------------------------------

LONG = 240  # characters of each id below: within the contract's MAX_ID_CHARS


def long_id(prefix: str, n: int) -> str:
    return f"{prefix}-{n:06d}-".ljust(LONG, "x")


def write_long_ids(
    s: Scenario, prefix: str, content: str, vectors: np.ndarray, **fields: object
) -> list[str]:
    """One memory per row of ``vectors`` (its embedding), with long ids, a second apart;
    ``content`` is formatted with the memory's number ``n``."""
    ids = [long_id(prefix, n) for n in range(len(vectors))]
    for n, memory_id in enumerate(ids):
        embedding = (vectors[n] / np.linalg.norm(vectors[n])).astype("<f4").tobytes()
        s.write(memory_id, content.format(n=n), embedding=embedding, at=NOW + n * 1000, **fields)
    return ids


def unrelated_vectors(count: int) -> np.ndarray:
    """Random directions: no two memories alike, so none is merged as a duplicate first."""
    return np.random.default_rng(7).standard_normal((count, 384))


def largest_ledger_record(run: OracleRun) -> int:
    registry = codec.default_registry()
    return max(len(codec.encode_ledger(d, registry)) for d in run.decisions)


def test_listed_prefix_and_bounded_union_keep_lists_within_their_bytes() -> None:
    assert listed_bytes(["ab", "c"]) == 4  # "ab,c"
    assert listed_bytes(['a"b']) == 4  # escaped as JSON holds it: a\"b
    assert listed_prefix(["aaaa"] * 10, 14) == 3  # "aaaa,aaaa,aaaa" is 14 bytes
    assert listed_prefix(["a" * 50], 10) == 1  # one is always listed
    assert bounded_union([["b", "a"], ["a"]], 100) == ("a", "b")
    # over the bytes: the values most groups hold, sorted
    groups = [["common", f"rare{i}"] for i in range(20)]
    assert bounded_union(groups, 30) == ("common", "rare0", "rare1", "rare10")


def test_groups_also_split_where_their_listed_ids_would_not_fit() -> None:
    big_ids = {n: f"{n}".ljust(30_000, "i") for n in range(4)}  # two fit LISTED_IDS_BYTES

    groups = fitting_groups(
        list(range(4)), lambda g: "short", 10_000, lambda g: (big_ids[n] for n in g)
    )
    assert [list(g) for g, _ in groups] == [[0, 1], [2, 3]]
    count, _ = largest_fitting(4, lambda n: "x" * n, 10_000, [big_ids[n] for n in range(4)])
    assert count == 2


def test_a_pattern_over_thousands_of_alike_facts_lists_what_fits_in_one_record() -> None:
    """4,000 alike facts with 240-character ids: the one pattern that grouped them all listed
    1.9 MB of ids (metadata and payload), a record the broker refuses, so the worker stopped
    on the same input at every restart. Its clique now stops where its list would not fit;
    the merged survivor's tags stop growing the same way; no fact is forgotten."""
    s = Scenario("dense-user")
    rng = np.random.default_rng(1)
    direction = rng.standard_normal(384)
    for n in range(4000):
        vector = direction / np.linalg.norm(direction) + 0.12 * rng.standard_normal(384) / 20
        s.write(
            long_id("fact", n),
            f"Deploy note {n}: the pipeline ran step {n}",
            layer="semantic",
            tags=[f"source-{n:05d}"],
            embedding=(vector / np.linalg.norm(vector)).astype("<f4").tobytes(),
            at=NOW + n * 1000,
        )
    s.consolidate(at=NOW + 4001 * 1000)

    run = replay(s.events, EngineConfig())

    patterns = payloads(run, ledger.PatternDetected)
    assert patterns
    for found in patterns:
        assert listed_bytes(found.evidence_ids) <= LISTED_IDS_BYTES
        assert len(found.evidence_ids) > 200  # still a pattern over many
        assert listed_bytes(found.pattern.tags) <= UNION_BYTES
    for merged in payloads(run, ledger.MemoryMerged):
        assert listed_bytes(merged.survivor.tags) <= UNION_BYTES
    assert largest_ledger_record(run) <= MAX_EVENT_BYTES
    state = run.users["dense-user"]
    assert all(not state.memories[long_id("fact", n)].forgotten for n in range(4000))


def test_a_procedure_of_thousands_of_occurrences_lists_the_newest_that_fit() -> None:
    """4,000 'deploy' episodes in the window, ids of 240 characters: the procedure listed them
    all as its evidence, 964 KB in one record. It is learned from the newest that fit."""
    s = Scenario("budget-5")
    for i in range(4000):
        s.write(
            long_id("deploy", i),
            f"Deployed build {i} with blue/green",
            layer="episodic",
            kind="deploy",
            success=1.0,
            trigger_conditions=[f"release-{i:05d}"],
            at=NOW + i * 1000,
        )
    s.consolidate(at=NOW + 4001 * 1000)

    run = replay(s.events, EngineConfig(policy=builtin_profile("memorykit")))

    (procedure,) = [
        r.memory for r in run.users["budget-5"].memories.values() if r.memory.layer == "procedural"
    ]
    evidence = procedure.metadata["evidence"].split(",")
    # learned from the newest occurrences that fit, and only from them: what it counts, its
    # triggers and its evidence agree, so forgetting any of them finds it
    assert 200 < len(evidence) < 4000
    newest = range(4000 - len(evidence), 4000)
    assert sorted(evidence) == sorted(long_id("deploy", i) for i in newest)
    assert procedure.metadata["occurrence_count"] == str(len(evidence))
    assert set(procedure.trigger_conditions) <= {f"release-{i:05d}" for i in newest}
    assert listed_bytes(evidence) <= LISTED_IDS_BYTES
    assert listed_bytes(procedure.trigger_conditions) <= UNION_BYTES
    assert largest_ledger_record(run) <= MAX_EVENT_BYTES


def test_written_ids_longer_than_the_contract_allows_are_refused() -> None:
    s = Scenario("budget-6")
    s.write("m" * MAX_ID_CHARS, "the longest id allowed")
    s.write("m" * (MAX_ID_CHARS + 1), "too long an id")
    s.write("s1", "too long a session id", session_id="s" * (MAX_ID_CHARS + 1))
    s.forget("f" * (MAX_ID_CHARS + 1))  # not a write: unknown here, but not refused for length
    long_user = Scenario("u" * (MAX_ID_CHARS + 1))
    long_user.write("m1", "too long a user id")

    run = replay([*s.events, *long_user.events], Limits())

    reasons = [(rejection.reason, rejection.detail[:20]) for _, rejection in run.rejections]
    assert reasons == [
        ("out_of_range", "memory.memory_id is "),
        ("out_of_range", "memory.session_id is"),
        ("unknown_memory", reasons[2][1]),
        ("out_of_range", "user_id is 257 chara"),
    ]
    assert "m" * MAX_ID_CHARS in run.users["budget-6"].memories


def test_a_procedure_marks_its_occurrences_oldest_first_whether_or_not_it_lists_all() -> None:
    """The ledger order the rule had before its evidence was bounded (c597fdd reversed it)."""
    s = Scenario("budget-7")
    for i in range(3):
        s.write(f"d{i}", f"Deployed attempt {i}", layer="episodic", kind="deploy", success=1.0)
    s.consolidate()

    run = replay(s.events, EngineConfig(policy=builtin_profile("memorykit")))

    marked = [
        d.payload.memory.memory_id
        for d in run.decisions
        if isinstance(d.payload, ledger.MemoryStored)
        and "consolidated_to_procedural" in d.payload.memory.metadata
    ]
    assert marked == ["d0", "d1", "d2"]


def test_episodes_whose_ids_would_not_fit_one_summary_are_summarized_in_groups() -> None:
    """1,000 short episodes with 240-character ids: one summary would list 241 KB of ids
    (payload and metadata), past what one record may list. The episodes are summarized in
    consecutive groups, each listing at most LISTED_IDS_BYTES; each episode is carried by
    exactly one summary and archived into it."""
    s = Scenario("ids-summary")
    ids = write_long_ids(
        s, "episode", "Shipped build {n}.", unrelated_vectors(1000), layer="episodic"
    )
    s.consolidate(at=NOW + 1001 * 1000)

    run = replay(s.events, EngineConfig())

    summaries = payloads(run, ledger.EpisodesSummarized)
    assert len(summaries) >= 4  # 241 KB of ids in groups of at most 64 KiB
    for summary in summaries:
        assert listed_bytes(summary.episode_ids) <= LISTED_IDS_BYTES
    carried = [i for summary in summaries for i in summary.episode_ids]
    assert sorted(carried) == sorted(ids)
    state = run.users["ids-summary"]
    assert all(state.memories[i].memory.status == "archived" for i in ids)
    # ledger records and state entries alike: a summary lists its ids twice (the payload's
    # episode_ids and its metadata's source_episode_ids)
    largest, _ = through_the_processor(s.events)
    assert largest <= 2 * LISTED_IDS_BYTES + 16 * 1024


def test_a_narrative_lists_the_members_whose_ids_fit_and_keeps_the_rest_live() -> None:
    """A policy that lets a narrative take 1,000 members, and a session of 400 turns with
    240-character ids (94 KB of ids): the narrative narrates and lists the members whose ids
    fit; the others stay live, neither archived nor forgotten."""
    policy = policy_from_toml("[sessions]\nmax_per_narrative = 1000\n", FULL_NARRATIVES)
    s = Scenario("ids-narrative")
    ids = write_long_ids(
        s,
        "turn",
        "Turn {n}: checked the deploy.",
        unrelated_vectors(400),
        layer="working",
        kind="message",
        conversation_id="chat",
        session_id="long-session",
    )
    s.end_session("long-session", at=NOW + 401 * 1000)

    run = replay(s.events, EngineConfig(policy=policy))

    [consolidated] = payloads(run, ledger.SessionConsolidated)
    narrated = set(consolidated.source_ids)
    assert 100 < len(narrated) < len(ids)
    assert listed_bytes(consolidated.source_ids) <= LISTED_IDS_BYTES
    state = run.users["ids-narrative"]
    for memory_id in ids:
        record = state.memories[memory_id]
        assert not record.forgotten
        assert (record.memory.status == "archived") == (memory_id in narrated)
    assert largest_ledger_record(run) <= MAX_EVENT_BYTES


def test_an_insight_over_hundreds_of_alike_narratives_lists_the_newest_that_fit() -> None:
    """400 narratives of one week, alike (pairwise cosine ~0.7: one cluster, no duplicates),
    with 240-character ids (94 KB): the insight a maintenance pass writes lists the newest
    narratives whose ids fit, as its evidence and its metadata."""
    rng = np.random.default_rng(1)
    direction = rng.standard_normal(384)
    vectors = direction / np.linalg.norm(direction) + 0.65 * rng.standard_normal(
        (400, 384)
    ) / np.sqrt(384)
    s = Scenario("ids-insight")
    ids = write_long_ids(
        s,
        "narrative",
        "Session {n}: Dana reviewed the Lisbon invoices.",
        vectors,
        layer="episodic",
        kind="narrative",
    )
    s.consolidate(at=NOW + 401 * 1000, force=True)  # forced: a maintenance pass

    run = replay(s.events, EngineConfig())

    found = payloads(run, ledger.PatternDetected)
    [insight] = [p for p in found if p.pattern.kind == "learning_pattern"]
    evidence = list(insight.evidence_ids)
    assert 200 < len(evidence) < len(ids)
    assert listed_bytes(evidence) <= LISTED_IDS_BYTES
    assert evidence == ids[-len(evidence) :]  # the newest, in age order
    assert insight.pattern.metadata["evidence"] == ",".join(evidence)
    assert largest_ledger_record(run) <= MAX_EVENT_BYTES
