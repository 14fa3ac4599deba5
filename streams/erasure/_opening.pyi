# streams/erasure/_opening.c: each returns None where the Python reference must judge.

def hmac_sha256(key: bytes, message: bytes, /) -> bytes: ...
def open_after(key: bytes, sealed: bytes, header: int, aad: bytes, /) -> bytes | None: ...
def open_envelope(
    key: bytes, text: str, skip: int, header: bytes, aad: bytes, /
) -> tuple[str, str | None, dict[str, str], tuple[str, ...]] | None: ...
def seal(key: bytes, nonce_key: bytes, header: bytes, plaintext: bytes, aad: bytes, /) -> bytes: ...
def seal_envelope(
    key: bytes,
    nonce_key: bytes,
    header: bytes,
    prefix: str,
    content: str,
    speaker: str | None,
    metadata: dict[str, str],
    triggers: tuple[str, ...],
    aad: bytes,
    /,
) -> str | None: ...
