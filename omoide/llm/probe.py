"""``probe(base_url, model)``: is an OpenAI-compatible server really there? (``omoide doctor``)

Asks ``GET {base}/models`` (cheap, no tokens). A server without that route (404/405) gets one
tiny completion (``max_tokens=1``) instead. Whatever fails is ``down`` with the reason: nothing
listening, a timeout, the key refused, any other HTTP error.
"""

from __future__ import annotations

from typing import Any

import httpx

from omoide.redact import redact

TIMEOUT_S = 10.0


def probe(
    base_url: str, model: str | None, api_key: str | None = None, timeout: float = TIMEOUT_S
) -> dict[str, Any]:
    """``{"status": "ok" | "down", "base_url", "model", ...}``, secrets redacted; never
    raises."""
    found = _probe(base_url.rstrip("/"), model, api_key, timeout)
    return {k: redact(v) if isinstance(v, str) else v for k, v in found.items()}


def _probe(base: str, model: str | None, api_key: str | None, timeout: float) -> dict[str, Any]:
    out: dict[str, Any] = {"base_url": base, "model": model}
    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    try:
        with httpx.Client(timeout=timeout, headers=headers) as http:
            response = http.get(f"{base}/models")
            if response.status_code in (404, 405):
                return out | _complete(http, base, model)
            return out | _models(response, model)
    except httpx.TimeoutException:
        return out | {"status": "down", "error": f"no answer from {base} within {timeout:g} s"}
    except httpx.HTTPError as exc:
        return out | {"status": "down", "error": f"cannot reach {base}: {exc}"}


def _models(response: httpx.Response, model: str | None) -> dict[str, Any]:
    if response.status_code >= 400:
        return _refused(response, "GET /models")
    try:
        names = [str(m.get("id")) for m in response.json().get("data", [])]
    except (ValueError, AttributeError):
        return {"status": "down", "error": "GET /models did not answer an OpenAI model list"}
    found: dict[str, Any] = {"status": "ok", "checked": "GET /models", "models": len(names)}
    if model and model not in names:
        found["warning"] = f"model {model!r} is not in the server's list of {len(names)} models"
    return found


def _complete(http: httpx.Client, base: str, model: str | None) -> dict[str, Any]:
    body = {"model": model or "", "messages": [{"role": "user", "content": "ping"}]}
    response = http.post(f"{base}/chat/completions", json=body | {"max_tokens": 1})
    if response.status_code >= 400:
        return _refused(response, "a one-token completion")
    return {"status": "ok", "checked": "a one-token completion"}


def _refused(response: httpx.Response, what: str) -> dict[str, Any]:
    reason = "the key was refused" if response.status_code in (401, 403) else "it failed"
    detail = response.text.strip().replace("\n", " ")[:200]
    return {"status": "down", "error": f"{what}: {reason} (HTTP {response.status_code}) {detail}"}
