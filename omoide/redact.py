"""``redact(text)``: the text with every secret it may carry masked, for every string that
leaves the process as a status, a log line or an error: ``/health`` and MCP ``health_check``,
``omoide doctor``, log records, error messages (``OmoideError`` redacts its own message).

    >>> redact("cannot reach https://me:pw@llm.example/v1/models?api_key=sk-abc123456789")
    'cannot reach https://***@llm.example/v1/models?api_key=***'

Masked: the user-info of any URL (a DSN's ``user:password@`` included), every query value of
a URL, ``password=`` / ``api_key=`` / ``token=`` / ``secret=`` pairs (a key=value DSN, a
form), a bearer token, and OpenAI-style keys (``sk-...``). Hosts, ports and paths stay: they
are what an operator needs to find the fault.
"""

from __future__ import annotations

import logging
import re

MASK = "***"

_USERINFO = re.compile(r"(?P<scheme>[A-Za-z][A-Za-z0-9+.-]*://)[^/\s@?#]*@")
_QUERY = re.compile(r"(?P<head>[A-Za-z][A-Za-z0-9+.-]*://[^\s?#]*\?)(?P<query>[^\s#'\"]*)")
_PAIR = re.compile(
    r"(?P<key>\b(?:password|passwd|pwd|api[_-]?key|apikey|access[_-]?token|token|secret"
    r"|passphrase)\s*[=:]\s*)(?P<value>\"[^\"]*\"|'[^']*'|[^\s&;,'\")]+)",
    re.IGNORECASE,
)
_BEARER = re.compile(r"(?P<scheme>\bBearer\s+)[^\s'\",]+", re.IGNORECASE)
_OPENAI_KEY = re.compile(r"\bsk-[A-Za-z0-9_-]{6,}")


def redact(text: str) -> str:
    """``text`` with user-info, query values, password/key pairs and tokens replaced by
    ``***``."""
    text = _USERINFO.sub(lambda m: f"{m['scheme']}{MASK}@", text)
    text = _QUERY.sub(lambda m: m["head"] + _mask_query(m["query"]), text)
    text = _PAIR.sub(lambda m: f"{m['key']}{MASK}", text)
    text = _BEARER.sub(lambda m: f"{m['scheme']}{MASK}", text)
    return _OPENAI_KEY.sub(f"sk-{MASK}", text)


def _mask_query(query: str) -> str:
    parts = (p.partition("=") for p in query.split("&"))
    return "&".join(f"{name}={MASK}" if sep else MASK if name else "" for name, sep, _ in parts)


class RedactingFilter(logging.Filter):
    """A handler filter that redacts each record's formatted message (arguments included)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        cleaned = redact(message)
        if cleaned != message:
            record.msg, record.args = cleaned, None
        return True


def redact_logs(logger: logging.Logger | None = None) -> None:
    """Put a ``RedactingFilter`` on every handler of ``logger`` (the root logger by default)."""
    target = logger or logging.getLogger()
    for handler in target.handlers:
        if not any(isinstance(f, RedactingFilter) for f in handler.filters):
            handler.addFilter(RedactingFilter())
