"""The engine's name-based ids are exactly the standard library's uuid5 (the ledger's ids
must not change with how they are computed: a replay compares them)."""

from __future__ import annotations

import uuid

from hypothesis import given
from hypothesis import strategies as st

from streams.engine.ids import uuid5_text


@given(st.uuids(), st.text())
def test_given_any_namespace_and_name_then_the_id_is_the_standard_uuid5(
    namespace: uuid.UUID, name: str
) -> None:
    assert uuid5_text(namespace, name) == str(uuid.uuid5(namespace, name))
