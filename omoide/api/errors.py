"""The one place where errors become HTTP responses.

Every error, whatever raised it, has one JSON shape::

    {"detail": "memory 'x' not found",
     "error": {"code": "not_found", "message": "memory 'x' not found"},
     "request_id": "5f0c..."}

``detail`` repeats the message for clients written against FastAPI's error body
(``{"detail": "Unauthorized: invalid or missing API key"}`` for a 401). Routes raise
``omoide`` errors and never ``HTTPException``; the status codes live in ``STATUS`` below.
"""

from __future__ import annotations

import logging
from typing import Any

from fastapi import FastAPI, Request
from fastapi.exceptions import RequestValidationError
from fastapi.responses import JSONResponse
from starlette.exceptions import HTTPException as StarletteHTTPException

from omoide.errors import (
    BackendError,
    Busy,
    Conflict,
    FeatureDisabled,
    Forbidden,
    InvalidInput,
    MigrationError,
    NotFound,
    OmoideError,
    StoreError,
    Unauthorized,
)

log = logging.getLogger("omoide.api")

UNAUTHORIZED = "Unauthorized: invalid or missing API key"

STATUS: dict[type[OmoideError], int] = {
    InvalidInput: 422,
    NotFound: 404,
    Conflict: 409,
    Unauthorized: 401,
    Forbidden: 403,
    Busy: 429,
    FeatureDisabled: 501,
    MigrationError: 500,
    BackendError: 503,
}

# Codes for errors raised by the HTTP layer itself rather than by omoide.
HTTP_CODES = {
    400: "bad_request",
    401: "unauthorized",
    403: "forbidden",
    404: "not_found",
    405: "method_not_allowed",
    413: "payload_too_large",
    415: "unsupported_media_type",
    507: "insufficient_storage",
    422: "invalid_input",
    500: "internal_error",
}


def request_id_of(scope_state: dict[str, Any] | Any) -> str | None:
    if isinstance(scope_state, dict):
        return scope_state.get("request_id")
    return getattr(scope_state, "request_id", None)


def error_response(
    status: int,
    code: str,
    message: str,
    request_id: str | None,
    *,
    details: list[dict[str, Any]] | None = None,
    headers: dict[str, str] | None = None,
) -> JSONResponse:
    """The single error body; used by the exception handlers and by the middlewares."""
    error: dict[str, Any] = {"code": code, "message": message}
    if details:
        error["details"] = details
    body = {"detail": message, "error": error, "request_id": request_id}
    return JSONResponse(body, status_code=status, headers=headers)


def status_for(exc: OmoideError) -> int:
    if exc.fields.get("disk_full"):
        return 507  # Insufficient Storage: the client may retry once space is freed
    for cls in type(exc).__mro__:
        if cls in STATUS:
            if cls is BackendError and not getattr(exc, "retryable", True):
                return 500
            return STATUS[cls]
    return 500


def client_message(exc: OmoideError, status: int, request_id: str | None) -> str:
    """What the caller is told. A store or migration failure's own text carries the driver's
    message, file paths and SQL (and on PostgreSQL a constraint's key values), so the caller
    gets what happened and whether to retry; the text itself goes to the server log."""
    if not isinstance(exc, StoreError | MigrationError) or status < 500:
        return exc.message
    if status == 507:
        return (
            "the disk (or the database's size limit) is full; free space and retry,"
            " nothing of this request was stored"
        )
    where = f"the server log (request id {request_id})" if request_id else "the server log"
    if isinstance(exc, MigrationError):
        return f"the database schema cannot be used by this server; the cause is in {where}"
    retry = "retry later" if getattr(exc, "retryable", False) else "retrying will not help"
    return f"the store failed ({retry}); the cause is in {where}"


def _omoide_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, OmoideError)
    status = status_for(exc)
    rid = request_id_of(request.state)
    if status >= 500:
        log.error("request %s: %s: %s", rid, type(exc).__name__, exc.message)
    headers = {"WWW-Authenticate": "Bearer"} if status == 401 else None
    if isinstance(exc, Busy):
        headers = {"Retry-After": str(exc.retry_after)}
    message = client_message(exc, status, rid)
    return error_response(status, exc.code, message, rid, headers=headers)


def _location(loc: tuple[Any, ...] | list[Any]) -> str:
    return ".".join(str(part) for part in loc) or "request"


def describe_validation(errors: list[dict[str, Any]]) -> tuple[str, list[dict[str, Any]]]:
    """A one-line message naming each bad field, plus JSON-safe details."""
    details = [
        {"loc": [str(p) for p in e.get("loc", ())], "msg": str(e.get("msg")), "type": e["type"]}
        for e in errors
    ]
    for error, detail in zip(errors, details, strict=True):
        if error["type"] == "json_invalid" and detail["loc"][:1] == ["body"]:
            reason = (error.get("ctx") or {}).get("error", "syntax error")
            at = f" at character {detail['loc'][1]}" if len(detail["loc"]) > 1 else ""
            detail["loc"], detail["msg"] = ["body"], f"not valid JSON: {reason}{at}"
    message = "; ".join(f"{_location(d['loc'])}: {d['msg']}" for d in details)
    return message or "invalid request", details


def _validation_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, RequestValidationError)
    message, details = describe_validation(list(exc.errors()))
    return error_response(
        422, "invalid_input", message, request_id_of(request.state), details=details
    )


def _http_error(request: Request, exc: Exception) -> JSONResponse:
    assert isinstance(exc, StarletteHTTPException)
    code = HTTP_CODES.get(exc.status_code, "http_error")
    message = exc.detail if isinstance(exc.detail, str) else str(exc.detail)
    if exc.status_code == 404 and message == "Not Found":
        message = f"no route {request.method} {request.url.path}"
    elif exc.status_code == 405:
        message = f"method {request.method} is not allowed on {request.url.path}"
    return error_response(
        exc.status_code,
        code,
        message,
        request_id_of(request.state),
        headers=dict(exc.headers) if exc.headers else None,
    )


def install(app: FastAPI) -> None:
    """Register the handlers. Unexpected exceptions are handled by ``RequestContext``."""
    app.add_exception_handler(OmoideError, _omoide_error)
    app.add_exception_handler(RequestValidationError, _validation_error)
    app.add_exception_handler(StarletteHTTPException, _http_error)
