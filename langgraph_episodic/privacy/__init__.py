"""Privacy: forget a user everywhere, and redact personal data before it is stored or embedded.

The most used of these are also exported from ``langgraph_episodic`` itself (see docs/api.md).
"""

from __future__ import annotations

from .forget import aforget_user, forget_user
from .purge import Purge, apurge_checkpoints, purge_checkpoints, purge_store
from .redacting_store import RedactingStore
from .redaction import (
    DEFAULT_REDACTOR,
    DEFAULT_RULES,
    RedactionRule,
    Redactor,
    SaveRedactor,
    iban_valid,
    luhn_valid,
    redact_saved,
    redact_text,
    redact_value,
)
from .report import ForgetListener, ForgetReport, on_forget
from .shapes import DEFAULT_SHAPES, PROTECTED_LABELS, USER

__all__ = [
    "DEFAULT_REDACTOR",
    "DEFAULT_RULES",
    "DEFAULT_SHAPES",
    "PROTECTED_LABELS",
    "USER",
    "ForgetListener",
    "ForgetReport",
    "Purge",
    "RedactingStore",
    "RedactionRule",
    "Redactor",
    "SaveRedactor",
    "aforget_user",
    "apurge_checkpoints",
    "forget_user",
    "iban_valid",
    "luhn_valid",
    "on_forget",
    "purge_checkpoints",
    "purge_store",
    "redact_saved",
    "redact_text",
    "redact_value",
]
