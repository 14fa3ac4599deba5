"""Bearer tokens: who is calling, for which tenant and user, with which scopes.

A token is a JWT verified with PyJWT against a key the operator gives (an HS256 secret or an
RS256/ES256 public key in a file, or a JWKS URL), for this API's audience and, if set, its
issuer. Its claims:

- ``tenant`` (required): the tenant it acts for. A tenant's users are the user ids that
  start with ``<tenant>:`` (``acme:user-42`` belongs to tenant ``acme``), so a user id says
  whose it is and no lookup table can drift from the ledger;
- ``scope``: space-separated scopes (or ``scp``, a list): ``read``, ``write``, ``forget``,
  ``admin`` (which implies the other three);
- ``user_id`` (optional): an end-user token, which acts for that one user only; without it
  the token is a service's, acting for any user of its tenant.

Refusals: a token that is missing, expired, forged, malformed or for another audience or
issuer is a 401; a valid token without the scope, or for a user outside its reach, is a 403.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jwt
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from memstream.http.problems import ProblemError
from streams.config.settings import Settings, SettingsError

SCOPES = ("read", "write", "forget", "admin")
TENANT_SEPARATOR = ":"
LEEWAY_SECONDS = 5  # clock skew between the token issuer and this host
MIN_SECRET_BYTES = 32  # RFC 7518 §3.2: an HS256 key at least as long as the hash
# Tokens already verified, kept until they expire: a client sends the same token with every
# request, and checking a signature costs more than the rest of a write's admission.
VERIFIED_CACHE_SIZE = 10_000


@dataclass(frozen=True)
class Principal:
    """The verified caller. ``key`` identifies it for rate limits (never logged)."""

    tenant: str
    subject: str
    scopes: frozenset[str]
    user_id: str | None  # set: an end-user token, for this user only

    @property
    def key(self) -> str:
        return f"{self.tenant}\x1f{self.subject}\x1f{self.user_id or ''}"


def tenant_of(user_id: str) -> str | None:
    """The tenant a user id belongs to (``acme:user-42`` → ``acme``), None without one."""
    tenant, separator, rest = user_id.partition(TENANT_SEPARATOR)
    return tenant if separator and tenant and rest else None


def authorize(principal: Principal, scope: str, user_id: str) -> None:
    """Refuse (403) unless ``principal`` holds ``scope`` and may act for ``user_id``."""
    if scope not in principal.scopes and "admin" not in principal.scopes:
        raise ProblemError(
            403,
            "insufficient-scope",
            "Insufficient scope",
            f"this call needs the '{scope}' scope (or 'admin'); the token has "
            f"{', '.join(sorted(principal.scopes)) or 'none'}: ask your token issuer for a "
            f"token with '{scope}'",
            headers={"WWW-Authenticate": f'Bearer error="insufficient_scope", scope="{scope}"'},
        )
    if tenant_of(user_id) != principal.tenant:
        raise ProblemError(
            403,
            "other-tenant",
            "User outside the token's tenant",
            f"this token acts for tenant '{principal.tenant}', whose user ids start with "
            f"'{principal.tenant}{TENANT_SEPARATOR}': use a token of the user's tenant",
        )
    if principal.user_id is not None and principal.user_id != user_id:
        raise ProblemError(
            403,
            "other-user",
            "User outside the token's reach",
            "this end-user token acts for its own user only: use that user's id, or a "
            "service token of the tenant",
        )


def unauthorized(detail: str) -> ProblemError:
    return ProblemError(
        401,
        "invalid-token",
        "Invalid or missing bearer token",
        detail,
        headers={"WWW-Authenticate": 'Bearer realm="memstream", error="invalid_token"'},
    )


class TokenVerifier:
    """Verifies bearer tokens against the configured key; see the module docstring."""

    def __init__(
        self,
        *,
        audience: str,
        issuer: str = "",
        key_file: str = "",
        jwks_url: str = "",
    ) -> None:
        if bool(key_file) == bool(jwks_url):
            raise SettingsError(
                "memstream serve needs exactly one of MEMSTREAM_HTTP_JWT_KEY_FILE (an HS256 "
                "secret or an RS256/ES256 public key in PEM) and MEMSTREAM_HTTP_JWKS_URL: "
                "set one of them"
            )
        self.audience = audience
        self.issuer = issuer
        self._jwks = jwt.PyJWKClient(jwks_url, lifespan=300, timeout=5) if jwks_url else None
        self._key: Any = None
        self._algorithms: list[str] = []
        self._verified: OrderedDict[str, tuple[Principal, float]] = OrderedDict()
        self._verified_lock = threading.Lock()
        if key_file:
            self._key, self._algorithms = load_key(Path(key_file))

    @classmethod
    def from_settings(cls, settings: Settings) -> TokenVerifier:
        return cls(
            audience=settings.http_jwt_audience,
            issuer=settings.http_jwt_issuer,
            key_file=settings.http_jwt_key_file,
            jwks_url=settings.http_jwks_url,
        )

    @property
    def uses_jwks(self) -> bool:
        return self._jwks is not None

    def verify(self, authorization: str | None) -> Principal:
        """The principal of an ``Authorization`` header's bearer token, or a 401."""
        if not authorization:
            raise unauthorized(
                "no bearer token: send 'Authorization: Bearer <JWT>' with a token your issuer "
                "signed for this API"
            )
        scheme, _, token = authorization.partition(" ")
        if scheme.lower() != "bearer" or not token.strip():
            raise unauthorized("the Authorization header must be 'Bearer <JWT>'")
        token = token.strip()
        with self._verified_lock:
            cached = self._verified.get(token)
        if cached is not None and cached[1] > time.time():
            return cached[0]
        claims = self._decode(token)
        principal = principal_from_claims(claims)
        with self._verified_lock:
            self._verified[token] = (principal, float(claims["exp"]))
            while len(self._verified) > VERIFIED_CACHE_SIZE:
                self._verified.popitem(last=False)
        return principal

    def _decode(self, token: str) -> dict[str, Any]:
        try:
            if self._jwks is not None:
                signing = self._jwks.get_signing_key_from_jwt(token)
                key, algorithms = signing.key, [signing.algorithm_name]
            else:
                key, algorithms = self._key, self._algorithms
            return jwt.decode(
                token,
                key,
                algorithms=algorithms,
                audience=self.audience,
                issuer=self.issuer or None,
                leeway=LEEWAY_SECONDS,
                options={"require": ["exp", "aud", "tenant"] + (["iss"] if self.issuer else [])},
            )
        except jwt.ExpiredSignatureError:
            raise unauthorized("the token has expired: get a new one from your issuer") from None
        except jwt.InvalidAudienceError:
            raise unauthorized(
                f"the token is not for this API: its 'aud' must include '{self.audience}'"
            ) from None
        except jwt.InvalidIssuerError:
            raise unauthorized(f"the token's issuer is not '{self.issuer}'") from None
        except jwt.MissingRequiredClaimError as exc:
            raise unauthorized(
                f"the token lacks the '{exc.claim}' claim: tokens need exp, aud and tenant"
            ) from None
        except jwt.InvalidSignatureError:
            raise unauthorized(
                "the token's signature does not verify with this API's key: it was signed by "
                "another key, or altered"
            ) from None
        except jwt.PyJWKClientConnectionError:
            raise ProblemError(
                503,
                "keys-unavailable",
                "Signing keys unavailable",
                "the JWKS URL could not be read to verify the token: retry later",
                headers={"Retry-After": "5"},
            ) from None
        except (jwt.PyJWTError, ValueError) as exc:
            raise unauthorized(f"the token is not a valid JWT for this API ({exc})") from None


def principal_from_claims(claims: dict[str, Any]) -> Principal:
    tenant = claims.get("tenant")
    if not isinstance(tenant, str) or not tenant or TENANT_SEPARATOR in tenant:
        raise unauthorized(f"the token's 'tenant' must be a non-empty name without '{':'}'")
    scopes = _scopes(claims)
    user_id = claims.get("user_id")
    if user_id is not None and (not isinstance(user_id, str) or tenant_of(user_id) != tenant):
        raise unauthorized(f"the token's 'user_id' must be a user of its tenant ('{tenant}:...')")
    subject = claims.get("sub")
    return Principal(
        tenant=tenant,
        subject=subject if isinstance(subject, str) else "",
        scopes=scopes,
        user_id=user_id,
    )


def _scopes(claims: dict[str, Any]) -> frozenset[str]:
    raw: Iterable[Any]
    if isinstance(claims.get("scope"), str):
        raw = claims["scope"].split()
    elif isinstance(claims.get("scp"), list):
        raw = claims["scp"]
    else:
        raw = ()
    return frozenset(s for s in raw if isinstance(s, str) and s in SCOPES)


def load_key(path: Path) -> tuple[Any, list[str]]:
    """The verification key in ``path`` and the one algorithm family it may verify: a PEM
    public key decides RS256 or ES256 by its type (so an HS256 token can never be checked
    against a public key used as a secret); anything else is an HS256 secret."""
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise SettingsError(
            f"MEMSTREAM_HTTP_JWT_KEY_FILE={str(path)!r} cannot be read ({exc.strerror}): "
            "mount the key file there or fix the path"
        ) from None
    if data.lstrip().startswith(b"-----BEGIN"):
        try:
            public = serialization.load_pem_public_key(data)
        except ValueError:
            raise SettingsError(
                f"{path} holds PEM that is not a public key: give the issuer's RSA or EC "
                "public key (never a private key)"
            ) from None
        if isinstance(public, rsa.RSAPublicKey):
            return public, ["RS256"]
        if isinstance(public, ec.EllipticCurvePublicKey):
            algorithm = {"secp256r1": "ES256", "secp384r1": "ES384", "secp521r1": "ES512"}
            if public.curve.name not in algorithm:
                raise SettingsError(f"{path}: EC curve {public.curve.name} is not supported")
            return public, [algorithm[public.curve.name]]
        raise SettingsError(f"{path}: only RSA and EC public keys are supported")
    secret = data.strip()
    if len(secret) < MIN_SECRET_BYTES:
        raise SettingsError(
            f"{path} holds a {len(secret)}-byte HS256 secret; use at least "
            f"{MIN_SECRET_BYTES} random bytes (e.g. `openssl rand -hex 32`)"
        )
    return secret, ["HS256"]
