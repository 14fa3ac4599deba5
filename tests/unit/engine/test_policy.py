"""The consolidation policy (docs/consolidation.md, 'Profiles'): the built-in profiles carry their
seed's numbers, TOML documents override them, and every kind of mistake is a PolicyError naming the
key path."""

from __future__ import annotations

import dataclasses
import tomllib
from importlib import resources
from pathlib import Path

import pytest

from streams.engine.policy import (
    ArchivePolicy,
    ContradictionPolicy,
    Policy,
    PolicyError,
    PromotionPolicy,
    builtin_profile,
    load_policy,
    policy_from_toml,
    profile_names,
)


def policy_error(text: str, base: Policy | None = None) -> PolicyError:
    """The PolicyError that loading ``text`` raises."""
    with pytest.raises(PolicyError) as caught:
        policy_from_toml(text, base)
    return caught.value


# --- built-in profiles ------------------------------------------------------------------------


def test_the_built_in_profiles_are_default_and_one_per_seed() -> None:
    # Given / When
    names = profile_names()

    # Then
    assert names == ("default", "memorykit", "lexichord", "astra", "rulebook", "engram")


def test_every_built_in_profile_is_a_toml_file_in_the_profiles_directory() -> None:
    # Given
    directory = resources.files("streams.engine") / "profiles"

    # When
    files = sorted(entry.name for entry in directory.iterdir() if entry.is_file())

    # Then
    assert files == sorted(f"{name}.toml" for name in profile_names())


@pytest.mark.parametrize("name", profile_names())
def test_every_enabled_section_of_a_built_in_profile_states_every_key(name: str) -> None:
    # Given: a seed profile must read as the whole policy, not lean on code defaults
    path = resources.files("streams.engine") / "profiles" / f"{name}.toml"
    document = tomllib.loads(path.read_text(encoding="utf-8"))

    # When
    policy = builtin_profile(name)

    # Then: top-level keys and every section are present; enabled sections state every key
    assert {"name", "max_memories_per_cycle", "manual_only_users"} <= set(document)
    for spec in dataclasses.fields(policy):
        section = getattr(policy, spec.name)
        if not dataclasses.is_dataclass(section):
            continue
        table = document[spec.name]
        if table.get("enabled", True):
            assert set(table) == {key.name for key in dataclasses.fields(section)}, spec.name


def test_the_default_profile_is_the_spec_ladder() -> None:
    # Given / When
    policy = builtin_profile("default")

    # Then: the file agrees with the dataclass defaults, and they are the numbers of
    # docs/consolidation.md's decision ladder
    assert policy == Policy()
    assert policy.name == "default"
    assert policy.max_memories_per_cycle == 1000
    assert policy.triggers.messages_per_conversation == 20
    assert policy.triggers.max_working_items == 1000
    assert policy.triggers.index_overflow == 100
    assert policy.triggers.periodic_seconds == 300
    assert policy.triggers.session_inactivity_seconds == 1800
    assert policy.triggers.auto_consolidation is True
    assert policy.promotion.enabled is True
    assert policy.promotion.min_importance == 0.7
    assert policy.promotion.min_access_count == 3
    assert policy.promotion.max_age_seconds == 900
    assert policy.promotion.confidence_boost == 0.25
    assert policy.aging.enabled is False
    assert (policy.patterns.source_layer, policy.patterns.target_layer) == ("semantic", "semantic")
    assert policy.patterns.min_support == 3
    assert policy.patterns.min_similarity == 0.85
    assert policy.patterns.window_seconds == 7 * 24 * 3600
    assert policy.procedural.min_occurrences == 3
    assert policy.procedural.window_seconds == 30 * 24 * 3600
    assert policy.procedural.min_success == 0.6
    assert policy.duplicates.threshold == 0.95
    assert policy.contradictions.min_similarity == 0.7
    assert policy.contradictions.max_similarity == 0.95
    assert policy.contradictions.min_confidence == 0.7
    assert policy.archive.salience_threshold == 0.1
    assert policy.archive.max_age_seconds is None
    assert policy.manual_only_users == frozenset()


def test_the_memorykit_profile_has_seed_000s_values() -> None:
    # Given / When
    policy = builtin_profile("memorykit")

    # Then: triggers (on-demand 20 messages / 1000 items, every 5 minutes)
    assert policy.name == "memorykit"
    assert policy.triggers.messages_per_conversation == 20
    assert policy.triggers.max_working_items == 1000
    assert policy.triggers.periodic_seconds == 300
    # operation 1: working -> semantic
    assert policy.promotion.enabled is True
    assert policy.promotion.min_importance == 0.7
    assert policy.promotion.min_access_count == 3
    assert policy.promotion.max_age_seconds == 900
    assert policy.promotion.confidence_boost == 0.25
    assert policy.promotion.fact_type == "working_promotion"
    assert policy.promotion.remove_source is True
    # operation 2: semantic -> episodic aging and patterns
    assert policy.aging.enabled is True
    assert policy.aging.min_confidence == 0.8
    assert policy.aging.min_age_seconds == 7200
    assert policy.patterns.enabled is True
    assert policy.patterns.source_layer == "semantic"
    assert policy.patterns.target_layer == "episodic"
    assert policy.patterns.min_support == 3
    assert policy.patterns.min_similarity == 0.85
    assert policy.patterns.window_seconds == 604800
    # operation 3: episodic -> procedural
    assert policy.procedural.enabled is True
    assert policy.procedural.min_occurrences == 3
    assert policy.procedural.window_seconds == 2592000
    assert policy.procedural.min_success == 0.6
    # what MemoryKit does not have
    assert policy.decay.enabled is False
    assert policy.duplicates.enabled is False
    assert policy.contradictions.enabled is False
    assert policy.archive.enabled is False
    # ConsolidateWithRetryAsync
    assert (policy.retry.attempts, policy.retry.backoff_seconds) == (3, 5.0)


def test_the_lexichord_profile_has_seed_001s_consolidation_options() -> None:
    # Given / When
    policy = builtin_profile("lexichord")

    # Then
    assert policy.name == "lexichord"
    assert policy.max_memories_per_cycle == 1000
    assert policy.patterns.enabled is True
    assert policy.patterns.source_layer == "episodic"
    assert policy.patterns.target_layer == "semantic"
    assert policy.patterns.min_support == 3
    assert policy.patterns.window_seconds == 604800
    assert policy.decay.enabled is True
    assert policy.duplicates.enabled is True
    assert policy.duplicates.threshold == 0.95
    assert policy.duplicates.keep == "highest_salience"
    assert policy.contradictions.enabled is True
    assert policy.contradictions.min_similarity == 0.7
    assert policy.contradictions.max_similarity == 0.95
    assert policy.contradictions.min_confidence == 0.7
    assert policy.archive.enabled is True
    assert policy.archive.salience_threshold == 0.1
    assert policy.archive.max_age_seconds is None
    # what Lexichord does not have
    assert policy.promotion.enabled is False
    assert policy.procedural.enabled is False
    assert policy.aging.enabled is False


def test_an_unknown_profile_name_lists_the_known_ones() -> None:
    # Given / When
    with pytest.raises(PolicyError) as caught:
        builtin_profile("lexicord")

    # Then
    message = str(caught.value)
    assert "profile" in message and '"lexicord"' in message
    assert "did you mean 'lexichord'" in message
    for name in profile_names():
        assert repr(name) in message


# --- TOML documents ---------------------------------------------------------------------------


def test_an_empty_document_is_the_default_profile() -> None:
    # Given / When
    policy = policy_from_toml("")

    # Then
    assert policy == builtin_profile("default")


def test_overrides_replace_only_the_keys_they_set_on_the_base() -> None:
    # Given
    base = builtin_profile("memorykit")
    text = """
        max_memories_per_cycle = 50
        [promotion]
        min_importance = 0.5
        [triggers]
        periodic_seconds = 60
    """

    # When
    policy = policy_from_toml(text, base)

    # Then
    assert policy.max_memories_per_cycle == 50
    assert policy.promotion.min_importance == 0.5
    assert policy.triggers.periodic_seconds == 60
    assert policy.promotion.min_access_count == base.promotion.min_access_count
    assert policy.triggers.messages_per_conversation == 20
    assert policy.aging == base.aging and policy.patterns == base.patterns
    assert policy.name == "memorykit"


def test_a_document_can_start_from_a_named_profile_and_override_it() -> None:
    # Given
    text = """
        profile = "lexichord"
        name = "tenant-a"
        manual_only_users = ["u-1", "u-2"]
        [duplicates]
        threshold = 0.9
        keep = "newest"
    """

    # When
    policy = policy_from_toml(text)

    # Then
    lexichord = builtin_profile("lexichord")
    assert policy.name == "tenant-a"
    assert policy.duplicates.threshold == 0.9
    assert policy.duplicates.keep == "newest"
    assert policy.manual_only_users == frozenset({"u-1", "u-2"})
    assert policy.patterns == lexichord.patterns
    assert policy.promotion.enabled is False


def test_the_documents_profile_wins_over_the_base() -> None:
    # Given / When
    policy = policy_from_toml('profile = "lexichord"', base=builtin_profile("memorykit"))

    # Then
    assert policy == builtin_profile("lexichord")


def test_integers_are_accepted_where_a_float_is_expected() -> None:
    # Given / When
    policy = policy_from_toml(
        "[decay]\nhalf_life_seconds = 3600\n[archive]\nsalience_threshold = 0"
    )

    # Then
    assert policy.decay.half_life_seconds == 3600.0
    assert type(policy.decay.half_life_seconds) is float
    assert type(policy.archive.salience_threshold) is float


def test_an_archive_age_limit_is_set_in_seconds_and_cleared_with_none() -> None:
    # Given
    limited = policy_from_toml("[archive]\nmax_age_seconds = 2592000")

    # When
    cleared = policy_from_toml('[archive]\nmax_age_seconds = "none"', base=limited)

    # Then
    assert limited.archive.max_age_seconds == 2592000
    assert cleared.archive.max_age_seconds is None


# --- errors name the key path -----------------------------------------------------------------


def test_an_unknown_key_is_named_with_the_closest_known_one() -> None:
    # Given / When
    error = policy_error("[promotion]\nmin_importanc = 0.5")

    # Then
    assert error.key == "promotion.min_importanc"
    assert "promotion.min_importanc is not a known key of [promotion]" in str(error)
    assert "did you mean 'min_importance'" in str(error)


def test_an_unknown_section_is_named_with_the_closest_known_one() -> None:
    # Given / When
    error = policy_error("[promotoin]\nenabled = true")

    # Then
    assert error.key == "promotoin"
    assert "[promotoin] is not a known section" in str(error)
    assert "did you mean 'promotion'" in str(error)


def test_an_unknown_top_level_key_is_named_with_the_closest_known_one() -> None:
    # Given / When
    error = policy_error("max_memories_cycle = 10")

    # Then
    assert error.key == "max_memories_cycle"
    assert "did you mean 'max_memories_per_cycle'" in str(error)


@pytest.mark.parametrize(
    ("text", "key", "expected"),
    [
        ("[triggers]\nperiodic_seconds = true", "triggers.periodic_seconds", "an integer"),
        ('[promotion]\nmin_importance = "high"', "promotion.min_importance", "a number"),
        ("[decay]\nhalf_life_seconds = false", "decay.half_life_seconds", "a number"),
        ("[promotion]\nmin_access_count = 3.5", "promotion.min_access_count", "an integer"),
        ("[aging]\nenabled = 1", "aging.enabled", "true or false"),
        ('manual_only_users = "u-1"', "manual_only_users", "an array"),
        ("profile = 3", "profile", "a string"),
    ],
)
def test_a_value_of_the_wrong_type_is_named(text: str, key: str, expected: str) -> None:
    # Given / When
    error = policy_error(text)

    # Then
    assert error.key == key
    assert f"{key} = " in str(error)
    assert "has the wrong type" in str(error) and f"expected {expected}" in str(error)


def test_a_section_that_is_not_a_table_is_named() -> None:
    # Given / When
    error = policy_error("promotion = 3")

    # Then
    assert error.key == "promotion"
    assert "expected a table" in str(error)


def test_a_probability_out_of_range_is_named_with_its_range() -> None:
    # Given / When
    error = policy_error("[promotion]\nmin_importance = 1.5")

    # Then
    assert error.key == "promotion.min_importance"
    assert str(error).startswith("promotion.min_importance = 1.5 is out of range [0, 1]")


@pytest.mark.parametrize(
    ("text", "key"),
    [
        ("[duplicates]\nthreshold = -0.1", "duplicates.threshold"),
        ("[patterns]\nmin_support = 0", "patterns.min_support"),
        ("[triggers]\nperiodic_seconds = 0", "triggers.periodic_seconds"),
        ("[procedural]\nwindow_seconds = -1", "procedural.window_seconds"),
        ("[decay]\nhalf_life_seconds = 0.0", "decay.half_life_seconds"),
        ("[retry]\nbackoff_seconds = -5", "retry.backoff_seconds"),
        ("[archive]\nmax_age_seconds = 0", "archive.max_age_seconds"),
        ("max_memories_per_cycle = 0", "max_memories_per_cycle"),
    ],
)
def test_counts_seconds_and_thresholds_out_of_range_are_named(text: str, key: str) -> None:
    # Given / When
    error = policy_error(text)

    # Then
    assert error.key == key
    assert f"{key} = " in str(error) and "is out of range" in str(error)


def test_a_number_that_is_not_finite_is_named() -> None:
    # Given / When
    error = policy_error("[decay]\nhalf_life_seconds = inf")

    # Then
    assert error.key == "decay.half_life_seconds"
    assert "not a finite number" in str(error)


@pytest.mark.parametrize("bounds", ["min_similarity = 0.95", "min_similarity = 0.96"])
def test_a_contradiction_band_whose_minimum_is_not_below_its_maximum_is_named(
    bounds: str,
) -> None:
    # Given / When
    error = policy_error(f"[contradictions]\n{bounds}\nmax_similarity = 0.95")

    # Then
    assert error.key == "contradictions.min_similarity"
    assert "must be less than contradictions.max_similarity" in str(error)


def test_a_value_that_is_not_a_layer_is_named_with_the_layers() -> None:
    # Given / When
    error = policy_error('[patterns]\nsource_layer = "sematic"')

    # Then
    assert error.key == "patterns.source_layer"
    assert 'patterns.source_layer = "sematic" is not a layer' in str(error)
    assert "did you mean 'semantic'" in str(error)
    for layer in ("working", "episodic", "semantic", "procedural"):
        assert repr(layer) in str(error)


def test_an_unknown_duplicate_survivor_rule_is_named() -> None:
    # Given / When
    error = policy_error('[duplicates]\nkeep = "oldest"')

    # Then
    assert error.key == "duplicates.keep"
    assert "'highest_salience'" in str(error) and "'newest'" in str(error)


def test_an_unknown_profile_in_a_document_is_named() -> None:
    # Given / When
    error = policy_error('profile = "memorykitt"')

    # Then
    assert error.key == "profile"
    assert "not a built-in profile" in str(error)
    assert "did you mean 'memorykit'" in str(error)


def test_invalid_toml_is_a_policy_error() -> None:
    # Given / When
    error = policy_error("[promotion\nenabled = true")

    # Then
    assert str(error).startswith("invalid TOML:")


def test_a_policy_built_in_python_is_validated_too() -> None:
    # Given / When / Then
    with pytest.raises(PolicyError, match=r"promotion\.min_importance = 2 is out of range"):
        PromotionPolicy(min_importance=2)
    with pytest.raises(PolicyError, match=r"contradictions\.min_similarity"):
        ContradictionPolicy(min_similarity=0.9, max_similarity=0.8)
    assert type(PromotionPolicy(min_importance=1).min_importance) is float
    assert Policy(manual_only_users=["u-1"]).manual_only_users == frozenset({"u-1"})  # type: ignore[arg-type]


# --- files ------------------------------------------------------------------------------------


def test_load_policy_reads_a_toml_file(tmp_path: Path) -> None:
    # Given
    path = tmp_path / "policy.toml"
    path.write_text('profile = "memorykit"\n[aging]\nmin_age_seconds = 3600\n', encoding="utf-8")

    # When
    policy = load_policy(path)

    # Then
    assert policy.name == "memorykit"
    assert policy.aging.min_age_seconds == 3600
    assert policy.promotion == builtin_profile("memorykit").promotion


def test_a_missing_policy_file_is_named(tmp_path: Path) -> None:
    # Given
    path = tmp_path / "absent.toml"

    # When
    with pytest.raises(PolicyError) as caught:
        load_policy(path)

    # Then
    assert str(path) in str(caught.value)
    assert "not found" in str(caught.value)


def test_an_error_in_a_policy_file_names_the_file_and_the_key(tmp_path: Path) -> None:
    # Given
    path = tmp_path / "policy.toml"
    path.write_text("[archive]\nsalience_threshold = 3\n", encoding="utf-8")

    # When
    with pytest.raises(PolicyError) as caught:
        load_policy(path)

    # Then
    assert str(caught.value).startswith(f"{path}: archive.salience_threshold = 3")
    assert caught.value.key == "archive.salience_threshold"


# --- immutability -----------------------------------------------------------------------------


def test_a_policy_is_immutable() -> None:
    # Given
    policy = builtin_profile("default")

    # When / Then
    with pytest.raises(dataclasses.FrozenInstanceError):
        policy.name = "changed"  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        policy.archive.salience_threshold = 0.5  # type: ignore[misc]
    assert isinstance(policy.manual_only_users, frozenset)
    assert policy.archive == ArchivePolicy()
