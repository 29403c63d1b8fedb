"""Exceptions of the SDK and how a handler's exception becomes a `tool.result`."""

from __future__ import annotations

from typing import Any


class TapError(Exception):
    """An error with a protocol error code (`INVALID_JSON`, `RATE_LIMITED`, …).

    Raise it (or any exception with a string ``code`` attribute) from a tool handler to
    answer the call with that ``errorCode``; ``retryable=True`` lets the gateway retry the
    call on another instance of a multi-instance provider.
    """

    def __init__(self, code: str, message: str, *, retryable: bool = False,
                 reply_to: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.message = message
        self.retryable = retryable
        self.reply_to = reply_to

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"


class ToolError(TapError):
    """Raised by a handler to fail a call with a chosen code (default `TOOL_ERROR`)."""

    def __init__(self, message: str, code: str = "TOOL_ERROR", *, retryable: bool = False) -> None:
        super().__init__(code, message, retryable=retryable)


class RateLimited(TapError):
    """The gateway refused a message for a budget (`RATE_LIMITED`): a push over 10
    surface/inject pushes a second, an inject before the session went idle, a second
    `tools.update` before the first was acknowledged."""

    def __init__(self, message: str, reply_to: str | None = None) -> None:
        super().__init__("RATE_LIMITED", message, reply_to=reply_to)


class NotBound(TapError):
    """A session-scoped call (`push`, `set_tools`, …) while the provider is in no session."""

    def __init__(self, message: str = "The provider is not bound to a session") -> None:
        super().__init__("INVALID_SESSION", message)


class ConfigError(TapError):
    """The SDK cannot start: no token found, a bad tool definition, a refused `hello`."""

    def __init__(self, message: str, code: str = "CONFIG") -> None:
        super().__init__(code, message)


def result_for_exception(call_id: str, exc: BaseException) -> dict[str, Any]:
    """The `tool.result` for a handler that raised: its `code` attribute if it has a string
    one, else `INTERNAL`; the message is the exception's text (its class name when empty),
    so the caller learns what went wrong without a traceback."""
    code = getattr(exc, "code", None)
    if not isinstance(code, str) or not code:
        code = "INTERNAL"
    message = getattr(exc, "message", None)
    if not isinstance(message, str) or not message:
        message = str(exc) if not isinstance(exc, TapError) else exc.message
    if not message:
        message = type(exc).__name__
    out: dict[str, Any] = {"type": "tool.result", "id": call_id, "error": message, "errorCode": code}
    if getattr(exc, "retryable", False) is True:
        out["retryable"] = True
    return out
