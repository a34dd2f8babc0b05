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

# Linear in the text's length (they run on whatever a client sent, with the interpreter lock
# held). A scheme is tried only where a run of scheme characters starts, and taken whole (it
# starts at the run's first letter, as "[A-Za-z][A-Za-z0-9+.-]*" would); a URL's path stops
# at the next "://", so the attempts of a run of URLs never rescan each other's. Trying every
# position of a long run and scanning on from each was quadratic: most of an hour for a
# 900,000-character value.
_SCHEME = r"(?<![A-Za-z0-9+.-])[0-9+.-]*+[A-Za-z][A-Za-z0-9+.-]*+://"
_USERINFO = re.compile(rf"(?P<scheme>{_SCHEME})[^/\s@?#]*+@")
_QUERY = re.compile(rf"(?P<head>{_SCHEME}(?:[^\s?#:]|:(?!//))*+\?)(?P<query>[^\s#'\"]*+)")
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
    if "://" in text:
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
