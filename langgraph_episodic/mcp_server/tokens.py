"""Bearer tokens of the HTTP transport: which token belongs to which user.

Tokens come from the environment variable :data:`TOKENS_ENV` (``"token-a:alice,token-b:bob"``,
the format of the LangGraph server example) or from a file of ``token:user`` lines (``#``
starts a comment), never from the command line, where other local users could read them.
A request's token is compared with every known token in constant time, and no token is
ever logged.
"""

from __future__ import annotations

import hmac
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from mcp.server.auth.provider import AccessToken

from ..errors import Error

TOKENS_ENV = "EPISODIC_MCP_TOKENS"
"""Environment variable with the tokens: ``"token-a:alice,token-b:bob"``."""

MIN_TOKEN_CHARS = 16
"""Shorter tokens are refused: they can be guessed."""

TOKEN_HINT = 'python -c "import secrets; print(secrets.token_urlsafe(32))"'
"""How to make a good token, for the error messages."""


class TokenConfigError(Error, ValueError):
    """The token configuration cannot be used; the message says what to change."""


def parse_tokens(entries: Iterable[str], *, source: str) -> dict[str, str]:
    """``["token:user", ...]`` -> ``{token: user}``; blank entries and ``#`` comments skipped.

    Raises :class:`TokenConfigError` for an entry without a user, a short token, or one token
    given twice; the message names ``source`` and the entry's position, never the token.
    """
    tokens: dict[str, str] = {}
    for number, raw in enumerate(entries, start=1):
        entry = raw.split("#", 1)[0].strip()
        if not entry:
            continue
        token, sep, user = entry.rpartition(":")
        token, user = token.strip(), user.strip()
        if not sep or not token or not user:
            raise TokenConfigError(
                f"{source}, entry {number}: expected TOKEN:USER (the user id after the last ':')."
            )
        if len(token) < MIN_TOKEN_CHARS:
            raise TokenConfigError(
                f"{source}, entry {number} (user {user!r}): the token has fewer than "
                f"{MIN_TOKEN_CHARS} characters. Make one with {TOKEN_HINT}"
            )
        if token in tokens:
            raise TokenConfigError(f"{source}, entry {number}: this token is given twice.")
        tokens[token] = user
    return tokens


def load_tokens(*, file: Path | None, environ: Mapping[str, str]) -> dict[str, str]:
    """The tokens from ``file`` (when given) or else from ``environ[TOKENS_ENV]``; at least one."""
    if file is not None:
        try:
            lines = file.read_text(encoding="utf-8").splitlines()
        except OSError as exc:
            raise TokenConfigError(f"Cannot read the token file {file}: {exc.strerror}.") from None
        tokens = parse_tokens(lines, source=str(file))
    else:
        tokens = parse_tokens(environ.get(TOKENS_ENV, "").split(","), source=TOKENS_ENV)
    if not tokens:
        raise TokenConfigError(
            f"No bearer tokens for --http: set {TOKENS_ENV}='TOKEN:alice,TOKEN2:bob' or pass "
            f"--tokens-file with one TOKEN:USER per line (make tokens with {TOKEN_HINT})."
        )
    return tokens


@dataclass(frozen=True)
class TokenTable:
    """An MCP ``TokenVerifier``: the token's user becomes the access token's ``client_id``."""

    tokens: Mapping[str, str]

    def user_for(self, token: str) -> str | None:
        """The user of ``token``, or None; compared with every known token in constant time."""
        given = token.encode("utf-8", "surrogateescape")
        found = None
        for known, user in self.tokens.items():
            if hmac.compare_digest(given, known.encode("utf-8")):
                found = user
        return found

    async def verify_token(self, token: str) -> AccessToken | None:
        """The access token of a known bearer token (no scopes, no expiry), else None (401)."""
        user = self.user_for(token.strip())
        if user is None:
            return None
        return AccessToken(token="", client_id=user, scopes=[])  # the token itself is not kept
