"""Privacy: forget a user everywhere, and redact personal data before it is stored or embedded.

The names below are also exported from ``langgraph_episodic`` itself.
"""

from __future__ import annotations

from .forget import (
    PROTECTED_LABELS,
    ForgetListener,
    ForgetReport,
    aforget_user,
    forget_user,
    on_forget,
)
from .redaction import (
    DEFAULT_REDACTOR,
    DEFAULT_RULES,
    RedactingStore,
    RedactionRule,
    Redactor,
    luhn_valid,
    redact_text,
    redact_value,
)

__all__ = [
    "DEFAULT_REDACTOR",
    "DEFAULT_RULES",
    "PROTECTED_LABELS",
    "ForgetListener",
    "ForgetReport",
    "RedactingStore",
    "RedactionRule",
    "Redactor",
    "aforget_user",
    "forget_user",
    "luhn_valid",
    "on_forget",
    "redact_text",
    "redact_value",
]
