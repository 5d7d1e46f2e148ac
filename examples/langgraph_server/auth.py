"""Example auth: a bearer token per user, and every store call and run pinned to that user.

Replace ``authenticate`` with your real check (a JWT from your identity provider, an API-key
lookup, ...). Everything after it, ``isolate_users(auth)``, is what keeps users apart:

* the store API only reaches the caller's namespaces ``(label, <user>)``;
* a run's ``user_id`` is the caller, whatever the client sent, so the memory nodes only read
  and write the caller's memories;
* threads and runs belong to the user who created them;
* the assistant the server makes from ``langgraph.json`` is readable and runnable by every
  user, changeable by none; the assistants a user creates are that user's only.

Tokens come from ``EPISODIC_API_TOKENS="token-a:alice,token-b:bob"`` here so that the example
runs as it is; with no tokens configured every request is refused (401).
"""

from __future__ import annotations

import hmac
import os

from langgraph_sdk import Auth

from langgraph_episodic.server import isolate_users

auth = Auth()


def _tokens() -> dict[str, str]:
    pairs = (p.partition(":") for p in os.environ.get("EPISODIC_API_TOKENS", "").split(","))
    return {token.strip(): user.strip() for token, _, user in pairs if token.strip() and user.strip()}


TOKENS = _tokens()


@auth.authenticate
async def authenticate(authorization: str | None) -> str:
    """The user id for the request's ``Authorization: Bearer <token>`` header, else 401."""
    scheme, _, token = (authorization or "").partition(" ")
    if scheme.lower() == "bearer":
        for known, user in TOKENS.items():
            if hmac.compare_digest(token.strip(), known):
                return user
    raise Auth.exceptions.HTTPException(status_code=401, detail="Invalid or missing bearer token")


isolate_users(auth)
