"""Small shared pieces: session info, listener calls, the constants every timeout comes from."""

from __future__ import annotations

import asyncio
import inspect
import logging
from dataclasses import dataclass
from typing import Any, Awaitable, Callable, Sequence

log = logging.getLogger("tap_provider")

PROTOCOL_VERSION = 2
# The gateway keeps a reconnectToken valid for 30 s after the socket closes
# (provider-protocol.md, Limits); we stop offering it a little earlier so a late offer is
# not silently treated as a fresh hello.
RECONNECT_TOKEN_TTL = 29.0
RECONNECT_INITIAL_DELAY = 0.1   # first retry after a dropped socket
RECONNECT_MAX_DELAY = 5.0       # backoff cap: several tries fit in the token's 30 s
CONNECT_TIMEOUT = 10.0          # TCP + WebSocket handshake
REPLY_TIMEOUT = 10.0            # ack / stream.history / push confirmation (ack waits ≤ 1 s debounce)
HELLO_RETRY_DELAY = 1.0         # after a RATE_LIMITED hello
DEFAULT_TOOL_TIMEOUT = 120.0    # the gateway's default tool timeout (seconds)
LOCAL_TIMEOUT_GRACE = 1.0       # our own timer fires this long after the gateway's
PUSH_RETRY_FIRST_DELAY = 0.1    # RATE_LIMITED push retry backoff (push(retry_for=…))
PUSH_RETRY_MAX_DELAY = 1.0
MAX_FRAME_BYTES = 16 * 1024 * 1024  # the gateway's hard frame cap


@dataclass(frozen=True)
class SessionInfo:
    """One entry of the gateway's `sessions` / `sessions.updated` lists."""

    id: str
    foreground: bool = False
    label: str | None = None
    cwd: str | None = None

    @classmethod
    def from_wire(cls, raw: Any) -> "SessionInfo | None":
        if not isinstance(raw, dict) or not isinstance(raw.get("id"), str):
            return None
        return cls(raw["id"], bool(raw.get("foreground")), raw.get("label"), raw.get("cwd"))


Chooser = Callable[[Sequence[SessionInfo]], "str | SessionInfo | None | Awaitable[str | SessionInfo | None]"]


def default_chooser(sessions: Sequence[SessionInfo]) -> str | None:
    """The foreground session, else the first listed (a project provider's token lists
    exactly its own session, which need not be in the foreground)."""
    for s in sessions:
        if s.foreground:
            return s.id
    return sessions[0].id if sessions else None


async def call_maybe_async(fn: Callable[..., Any], *args: Any) -> Any:
    result = fn(*args)
    if inspect.isawaitable(result):
        result = await result
    return result


async def emit(listeners: dict[str, list[Callable[..., Any]]], event: str, *args: Any) -> None:
    """Calls every listener of ``event``; a listener's exception is logged, never raised:
    user callbacks must not take the connection down."""
    for fn in list(listeners.get(event, ())):
        try:
            await call_maybe_async(fn, *args)
        except Exception:  # noqa: BLE001
            log.exception("tap_provider: listener for %r raised", event)


def spawn(coro: Awaitable[Any], tasks: set[asyncio.Task[Any]]) -> asyncio.Task[Any]:
    """create_task that keeps a reference (asyncio holds tasks weakly)."""
    task = asyncio.ensure_future(coro)
    tasks.add(task)
    task.add_done_callback(tasks.discard)
    return task
