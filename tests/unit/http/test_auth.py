"""Bearer tokens (memstream/http/auth.py): which tokens are accepted, for whom, with what.

Real keys (HS256 secrets, RSA and EC key pairs made here) and, for JWKS, a real HTTP server
on a free port: nothing about PyJWT is replaced."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, HTTPServer
from pathlib import Path
from typing import Any

import jwt
import pytest
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from memstream.http.auth import Principal, TokenVerifier, authorize, tenant_of
from memstream.http.problems import ProblemError
from streams.config.settings import SettingsError

SECRET = "a" * 40


def claims(**overrides: Any) -> dict[str, Any]:
    base = {"tenant": "acme", "scope": "read write", "aud": "memstream", "sub": "svc"}
    return {**base, "exp": int(time.time()) + 60, **overrides}


def hs_verifier(tmp_path: Path, **kwargs: Any) -> TokenVerifier:
    key = tmp_path / "secret"
    key.write_text(SECRET + "\n")
    return TokenVerifier(audience="memstream", key_file=str(key), **kwargs)


def refusal(call: Any) -> ProblemError:
    with pytest.raises(ProblemError) as raised:
        call()
    return raised.value


def test_a_valid_service_token_gives_its_tenant_and_scopes(tmp_path: Path) -> None:
    token = jwt.encode(claims(), SECRET, "HS256")
    principal = hs_verifier(tmp_path).verify(f"Bearer {token}")
    assert principal == Principal("acme", "svc", frozenset({"read", "write"}), None)


@pytest.mark.parametrize(
    ("token_claims", "secret", "words"),
    [
        ({"exp": int(time.time()) - 60}, SECRET, "expired"),
        ({}, "b" * 40, "signature"),
        ({"aud": "billing"}, SECRET, "not for this API"),
        ({"tenant": None}, SECRET, "tenant"),
        ({"user_id": "globex:bob"}, SECRET, "user of its tenant"),
    ],
)
def test_expired_forged_foreign_or_incomplete_tokens_are_401(
    tmp_path: Path, token_claims: dict[str, Any], secret: str, words: str
) -> None:
    token = jwt.encode({k: v for k, v in claims(**token_claims).items() if v is not None}, secret)
    problem = refusal(lambda: hs_verifier(tmp_path).verify(f"Bearer {token}"))
    assert problem.status == 401
    assert words in problem.detail
    assert "Bearer" in problem.headers["WWW-Authenticate"]


def test_a_missing_or_non_bearer_header_is_401(tmp_path: Path) -> None:
    verifier = hs_verifier(tmp_path)
    assert refusal(lambda: verifier.verify(None)).status == 401
    assert refusal(lambda: verifier.verify("Basic dXNlcjpwdw==")).status == 401


def test_the_issuer_is_checked_when_configured(tmp_path: Path) -> None:
    verifier = hs_verifier(tmp_path, issuer="https://issuer.example")
    good = jwt.encode(claims(iss="https://issuer.example"), SECRET)
    assert verifier.verify(f"Bearer {good}").tenant == "acme"
    other = jwt.encode(claims(iss="https://evil.example"), SECRET)
    assert refusal(lambda: verifier.verify(f"Bearer {other}")).status == 401


def test_a_short_hs256_secret_is_a_configuration_error(tmp_path: Path) -> None:
    key = tmp_path / "secret"
    key.write_text("short")
    with pytest.raises(SettingsError, match="at least 32"):
        TokenVerifier(audience="memstream", key_file=str(key))


def test_exactly_one_key_source_is_required() -> None:
    with pytest.raises(SettingsError, match="exactly one"):
        TokenVerifier(audience="memstream")


def _public_pem(private: Any) -> bytes:
    return private.public_key().public_bytes(
        serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo
    )


@pytest.mark.parametrize(
    ("private", "algorithm"),
    [
        (rsa.generate_private_key(public_exponent=65537, key_size=2048), "RS256"),
        (ec.generate_private_key(ec.SECP256R1()), "ES256"),
    ],
)
def test_public_key_files_verify_their_algorithm_and_refuse_hs256(
    tmp_path: Path, private: Any, algorithm: str
) -> None:
    """Given a public key file, tokens signed by its private key verify; a token signed
    with HS256 using the public key's bytes as the secret (algorithm confusion) does not."""
    key = tmp_path / "key.pem"
    key.write_bytes(_public_pem(private))
    verifier = TokenVerifier(audience="memstream", key_file=str(key))
    assert verifier.verify(f"Bearer {jwt.encode(claims(), private, algorithm)}").tenant == "acme"
    confused = jwt.api_jws.PyJWS().encode(
        json.dumps(claims()).encode(), _public_pem(private)[:64], "HS256"
    )
    assert refusal(lambda: verifier.verify(f"Bearer {confused}")).status == 401


@pytest.fixture
def jwks_server() -> Iterator[tuple[str, Any]]:
    private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    jwk = json.loads(jwt.algorithms.RSAAlgorithm.to_jwk(private.public_key()))
    body = json.dumps({"keys": [{**jwk, "kid": "k1", "alg": "RS256", "use": "sig"}]}).encode()

    class Keys(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 - the http.server interface
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args: Any) -> None:
            pass

    server = HTTPServer(("127.0.0.1", 0), Keys)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/jwks.json", private
    finally:
        server.shutdown()


def test_a_jwks_url_verifies_tokens_by_their_key_id(jwks_server: tuple[str, Any]) -> None:
    url, private = jwks_server
    verifier = TokenVerifier(audience="memstream", jwks_url=url)
    token = jwt.encode(claims(), private, "RS256", headers={"kid": "k1"})
    assert verifier.verify(f"Bearer {token}").tenant == "acme"
    stranger = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    forged = jwt.encode(claims(), stranger, "RS256", headers={"kid": "k1"})
    assert refusal(lambda: verifier.verify(f"Bearer {forged}")).status == 401


def test_users_belong_to_the_tenant_named_before_the_colon() -> None:
    assert tenant_of("acme:user-42") == "acme"
    assert tenant_of("acme:team:7") == "acme"
    assert tenant_of("user-42") is None
    assert tenant_of("acme:") is None
    assert tenant_of(":user") is None


SERVICE = Principal("acme", "svc", frozenset({"read", "write"}), None)


def test_a_service_token_acts_for_its_tenants_users_within_its_scopes() -> None:
    authorize(SERVICE, "write", "acme:ana")
    assert refusal(lambda: authorize(SERVICE, "forget", "acme:ana")).status == 403
    assert refusal(lambda: authorize(SERVICE, "read", "globex:ana")).status == 403
    assert refusal(lambda: authorize(SERVICE, "read", "ana")).status == 403


def test_admin_implies_every_scope() -> None:
    admin = Principal("acme", "ops", frozenset({"admin"}), None)
    for scope in ("read", "write", "forget", "admin"):
        authorize(admin, scope, "acme:ana")


def test_an_end_user_token_acts_for_its_own_user_only() -> None:
    ana = Principal("acme", "ana-app", frozenset({"read", "write"}), "acme:ana")
    authorize(ana, "read", "acme:ana")
    problem = refusal(lambda: authorize(ana, "read", "acme:bob"))
    assert (problem.status, problem.kind) == (403, "other-user")
