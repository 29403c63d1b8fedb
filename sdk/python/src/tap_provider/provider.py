"""`Provider`: declare tools with decorators, then `await provider.run()`.

One `Provider` owns at most one socket at a time. `run()` connects, authenticates, binds to
a session (the chooser decides which), dispatches calls, and reconnects when the socket
drops: within the gateway's 30 s token window with the `reconnectToken` (same providerId,
binding restored), later with a fresh `hello`.
"""

from __future__ import annotations

import asyncio
import collections
import itertools
import json
import signal
import time
from typing import Any, Callable, Iterable, Sequence

import websockets
from websockets.asyncio.client import connect

from . import _events as ev
from ._dispatch import Dispatcher
from ._events import SessionInfo, log
from .discovery import find_token, find_url
from .errors import ConfigError, NotBound, RateLimited, TapError
from .tools import Tool

# Codes after which the gateway closes the socket: retrying the same thing cannot help.
FATAL_CODES = {"AUTH_FAILED", "UNSUPPORTED_VERSION"}
# `hello` refusals that are the provider's own mistake (a name clash, a bad schema, another
# copy running): `run()` raises them instead of retrying forever.
FATAL_HELLO_CODES = {"DUPLICATE_INSTANCE", "TOOL_CONFLICT", "INVALID_JSON", "PAYLOAD_TOO_LARGE",
                     "UNAUTHORIZED", "UNSUPPORTED_VERSION"}


class _Stop(Exception):
    """Ends `run()`; carries the exception to raise, if any."""

    def __init__(self, error: BaseException | None = None) -> None:
        self.error = error


class Provider(Dispatcher):
    def __init__(self, name: str, *, instance: str | None = None, metadata: dict[str, Any] | None = None,
                 session: str | ev.Chooser | None = None, url: str | None = None, token: str | None = None,
                 hooks: Sequence[dict[str, Any]] | None = None, transforms: dict[str, Any] | None = None,
                 context: str | None = None, startup_context: str | None = None,
                 subscribe: Iterable[str] | None = None, concurrency: dict[str, Any] | None = None,
                 on_session_end: str = "rebind", reconnect: bool = True) -> None:
        if not isinstance(name, str) or not name.strip():
            raise ConfigError("Provider name must be a non-empty string")
        if on_session_end not in ("rebind", "exit"):
            raise ConfigError("on_session_end must be 'rebind' or 'exit'")
        super().__init__()
        self.name = name
        self.instance = instance
        self.metadata = metadata
        self._session_choice = session
        self._url, self._token = url, token
        self.hooks = list(hooks or [])
        self.transforms = dict(transforms or {})
        self.context = context
        self.startup_context = startup_context
        self.subscribe = list(subscribe or [])
        self.concurrency = concurrency
        self.on_session_end = on_session_end
        self.reconnect = reconnect
        self.sessions: list[SessionInfo] = []
        self.provider_id: str | None = None
        self.session_id: str | None = None
        self.url: str | None = None  # the address of the current connection
        # Python >= 3.10 binds these to a loop on first use, so they can be made here.
        self._bound = asyncio.Event()
        self._hello_out = False
        self._rtk: str | None = None  # reconnectToken of the last hello.ack
        self._rtk_session: str | None = None
        self._dropped_at: float | None = None
        self._ws: Any = None
        self._outbox: asyncio.Queue[str | None] | None = None
        self._pending: dict[str, asyncio.Future[Any]] = {}
        self._ids = itertools.count(1)
        self._update_lock = asyncio.Lock()
        # Pushes awaiting their verdict, in send order: (barrier queryId, [error or None]).
        self._push_slots: collections.deque[tuple[str, list[TapError | None]]] = collections.deque()
        self._stopped = asyncio.Event()
        self._stopping = False
        self._fatal: BaseException | None = None
        self._loop: asyncio.AbstractEventLoop | None = None

    # --- declarations -------------------------------------------------------------------

    def on(self, event: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Register a callback (sync or async). Events: ``sessions`` (list of SessionInfo),
        ``bound`` (the hello.ack), ``lifecycle`` (each session.lifecycle), ``idle``,
        ``shutdown`` (session.lifecycle shutdown.pending; awaited before shutdown.ready),
        ``session.event`` (subscribed events), ``error`` (TapError), ``disconnected``."""
        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            self._listeners.setdefault(event, []).append(fn)
            return fn
        return register

    # --- running ------------------------------------------------------------------------

    async def run(self) -> None:
        """Connect and serve until `stop()` (or the session ends with
        ``on_session_end="exit"``). Raises ConfigError / TapError for what retrying cannot
        fix: no token on the first try, AUTH_FAILED on the first try, a refused `hello`."""
        self._loop = asyncio.get_running_loop()
        delay = ev.RECONNECT_INITIAL_DELAY
        first = True
        while not self._stopping:
            try:
                url = find_url(self._url)
                token = find_token(self._token, url.source)
                self.url = url.value
                async with connect(url.value, open_timeout=ev.CONNECT_TIMEOUT, compression=None,
                                   max_size=ev.MAX_FRAME_BYTES) as ws:
                    delay = ev.RECONNECT_INITIAL_DELAY
                    await self._serve(ws, token.value, first)
            except _Stop as stop:
                if stop.error:
                    raise stop.error
                return
            except LookupError as e:
                if first or not self.reconnect:
                    raise ConfigError(str(e)) from None
                log.info("tap_provider: %s; retrying", e)
            except (OSError, websockets.InvalidHandshake, websockets.ConnectionClosed, asyncio.TimeoutError) as e:
                if first and not self.reconnect:
                    raise ConfigError(f"Cannot reach the gateway at {self.url}: {e}") from e
                log.info("tap_provider: connection to %s lost or refused: %s", self.url, e)
            finally:
                await self._on_disconnect()
            if self._stopping:
                return
            if not self.reconnect:
                raise TapError("DISCONNECTED", "The gateway closed the connection")
            first = False
            try:  # back off, but let stop() end the wait at once
                await asyncio.wait_for(self._stopped.wait(), delay)
            except asyncio.TimeoutError:
                pass
            delay = min(delay * 2, ev.RECONNECT_MAX_DELAY)

    def run_forever(self) -> None:
        """`asyncio.run(provider.run())`, with SIGINT/SIGTERM sending `goodbye` first."""
        async def main() -> None:
            loop = asyncio.get_running_loop()
            for sig in (signal.SIGINT, signal.SIGTERM):
                try:
                    loop.add_signal_handler(sig, lambda: asyncio.ensure_future(self.stop()))
                except (NotImplementedError, RuntimeError):  # Windows, or not the main thread
                    pass
            await self.run()
        asyncio.run(main())

    async def stop(self, reason: str = "provider stopping") -> None:
        """Send `goodbye` and close; `run()` returns."""
        self._stopping = True
        self._stopped.set()
        if self._ws is not None:
            self._send({"type": "goodbye", "reason": reason})
            self._send_close()

    async def wait_bound(self, timeout: float | None = None) -> str:
        """Wait until bound to a session; returns its id."""
        await asyncio.wait_for(self._bound.wait(), timeout)
        assert self.session_id is not None
        return self.session_id

    @property
    def bound(self) -> bool:
        return self.session_id is not None

    async def _serve(self, ws: Any, token: str, first: bool) -> None:
        self._ws = ws
        self._outbox = asyncio.Queue()
        writer = asyncio.ensure_future(self._write(ws, self._outbox))
        try:
            self._send({"type": "auth", "token": token})
            async for raw in ws:
                try:
                    msg = json.loads(raw)
                except ValueError:
                    log.warning("tap_provider: gateway sent a frame that is not JSON; ignored")
                    continue
                if isinstance(msg, dict) and isinstance(msg.get("type"), str):
                    await self._handle(msg, first)
                if self._fatal is not None:
                    raise _Stop(self._fatal)
            if self._fatal is not None:  # set by a task (a refused hello) before the close
                raise _Stop(self._fatal)
            if self._stopping:
                raise _Stop()
        finally:
            writer.cancel()

    async def _write(self, ws: Any, outbox: asyncio.Queue[str | None]) -> None:
        # One writer per socket keeps every frame in the order it was queued: progress
        # before its result, a push before the query that confirms it.
        try:
            while True:
                frame = await outbox.get()
                if frame is None:
                    await ws.close()
                    return
                await ws.send(frame)
        except websockets.ConnectionClosed:
            pass

    def _send(self, msg: dict[str, Any]) -> None:
        """Queue a frame on the current socket (no-op when disconnected). Thread-safe."""
        outbox = self._outbox
        if outbox is None:
            return
        frame = json.dumps(msg)
        if self._loop is not None and not _in_loop(self._loop):
            # from a sync handler's thread (progress): hand it to the loop, in order
            self._loop.call_soon_threadsafe(outbox.put_nowait, frame)
        else:
            outbox.put_nowait(frame)

    def _send_close(self) -> None:
        if self._outbox is not None:
            self._outbox.put_nowait(None)

    async def _on_disconnect(self) -> None:
        was_bound = self.session_id is not None
        if was_bound and self._rtk:
            self._dropped_at = time.monotonic()
            self._rtk_session = self.session_id
        self._ws, self._outbox = None, None
        self.session_id = None
        self._hello_out = False
        self._bound.clear()
        self._cancel_all_calls()
        for fut in self._pending.values():
            if not fut.done():
                fut.set_exception(TapError("DISCONNECTED", "The connection to the gateway closed"))
        self._pending.clear()
        self._push_slots.clear()
        if was_bound or not self._stopping:
            await ev.emit(self._listeners, "disconnected")

    # --- binding ------------------------------------------------------------------------

    def hello_message(self, session: str | None, reconnect_token: str | None = None) -> dict[str, Any]:
        msg: dict[str, Any] = {"type": "hello", "name": self.name, "protocolVersion": ev.PROTOCOL_VERSION,
                               "tools": [t.to_wire() for t in self.tools.values()]}
        if session is not None:
            msg["session"] = session
        if reconnect_token:
            msg["reconnectToken"] = reconnect_token
        for key, value in (("instance", self.instance), ("metadata", self.metadata),
                           ("context", self.context), ("startup_context", self.startup_context),
                           ("concurrency", self.concurrency)):
            if value is not None:
                msg[key] = value
        if self.subscribe:
            msg["subscribe"] = self.subscribe
        hooks: dict[str, Any] = {}
        if self.hooks:
            hooks["onPreToolUse"] = self.hooks
        transforms = dict(self.transforms)
        for section in self._transform_handlers:
            transforms.setdefault(section, {"action": "callback"})
        if transforms:
            hooks["transforms"] = transforms
        if hooks:
            msg["hooks"] = hooks
        return msg

    async def _maybe_bind(self) -> None:
        if self._hello_out or self.session_id is not None or self._stopping:
            return
        token_fresh = (self._rtk and self._dropped_at is not None
                       and time.monotonic() - self._dropped_at < ev.RECONNECT_TOKEN_TTL)
        if token_fresh and self._rtk_session:
            # Within the window: take our identity back; the gateway restores the binding.
            self._hello_out = True
            self._send(self.hello_message(self._rtk_session, self._rtk))
            return
        self._rtk = self._rtk_session = self._dropped_at = None
        choice = self._session_choice
        if isinstance(choice, str):
            chosen: Any = choice if any(s.id == choice for s in self.sessions) else None
        else:
            chosen = await ev.call_maybe_async(choice or ev.default_chooser, list(self.sessions))
        if isinstance(chosen, SessionInfo):
            chosen = chosen.id
        if chosen is None or self._hello_out or self.session_id is not None:
            return  # no session yet: wait for sessions.updated
        self._hello_out = True
        self._send(self.hello_message(chosen))

    async def _on_hello_error(self, code: str, message: str) -> None:
        self._hello_out = False
        if self._rtk:  # the token was refused or its session is gone: start fresh
            self._rtk = self._rtk_session = self._dropped_at = None
        if code in FATAL_HELLO_CODES:
            self._fatal = TapError(code, message, reply_to="hello")
            self._send({"type": "goodbye", "reason": f"hello refused: {code}"})
            return
        if code == "RATE_LIMITED":
            await asyncio.sleep(ev.HELLO_RETRY_DELAY)
        if code in ("RATE_LIMITED",) or (code == "INVALID_SESSION" and self.sessions):
            # INVALID_SESSION: the session ended meanwhile; the next sessions.updated
            # (usually already here) shows what is left.
            await self._maybe_bind()

    # --- incoming -----------------------------------------------------------------------

    async def _handle(self, msg: dict[str, Any], first: bool) -> None:
        kind = msg["type"]
        if kind in ("sessions", "sessions.updated"):
            self.sessions = [s for s in map(SessionInfo.from_wire, msg.get("active") or []) if s]
            await ev.emit(self._listeners, "sessions", list(self.sessions))
            await self._maybe_bind()
        elif kind == "hello.ack":
            self._hello_out = False
            self.provider_id = msg.get("providerId")
            self.session_id = msg.get("sessionId")
            self.persist_dir = msg.get("persistDir")
            self._rtk = msg.get("reconnectToken")
            self._rtk_session = self._dropped_at = None
            self._bound.set()
            await ev.emit(self._listeners, "bound", msg)
        elif kind == "error":
            await self._on_error(msg, first)
        elif kind == "session.lifecycle":
            # Its own task: shutdown callbacks may take up to the deadline, and calls and
            # acks must keep flowing meanwhile.
            ev.spawn(self._on_lifecycle(msg), self._tasks)
        elif kind in ("ack", "stream.history"):
            key = str(msg.get("requestId") or msg.get("queryId"))
            self._close_push_slots(key)
            fut = self._pending.pop(key, None)
            if fut is not None and not fut.done():
                fut.set_result(msg)
        elif kind == "session.event":
            await ev.emit(self._listeners, "session.event", msg)
        else:
            self.dispatch(msg)  # tool.call, tool.cancel, gate.check, transform.request

    async def _on_error(self, msg: dict[str, Any], first: bool) -> None:
        code, text = str(msg.get("code")), str(msg.get("message", ""))
        reply_to = msg.get("replyTo")
        err: TapError = (RateLimited(text, reply_to) if code == "RATE_LIMITED"
                         else NotBound(text) if code == "INVALID_SESSION" and reply_to != "hello"
                         else TapError(code, text, reply_to=reply_to))
        await ev.emit(self._listeners, "error", err)
        request_id = msg.get("requestId")
        if code in FATAL_CODES:
            # AUTH_FAILED on a reconnect may be a restarted gateway whose new token we read
            # too early: retry. On the first connection it is a wrong token: give up.
            if first or code == "UNSUPPORTED_VERSION" or not self.reconnect:
                self._fatal = err
            return
        if reply_to == "hello":
            ev.spawn(self._on_hello_error(code, text), self._tasks)  # may wait HELLO_RETRY_DELAY
        elif request_id is not None and str(request_id) in self._pending:
            fut = self._pending.pop(str(request_id))
            if not fut.done():
                fut.set_exception(err)
        elif reply_to == "push":
            # The gateway handles a connection's frames in order: this refusal is for the
            # oldest push whose barrier query has not been answered yet.
            if self._push_slots:
                self._push_slots[0][1][0] = err
        elif reply_to == "stream.query":
            for key, fut in list(self._pending.items()):  # answered in order: the oldest query
                if key.startswith(("q-", "b-")) and not fut.done():
                    self._pending.pop(key)
                    self._close_push_slots(key)
                    fut.set_exception(err)
                    break
        else:
            log.warning("tap_provider: gateway error %s (%s): %s", code, reply_to or "-", text)

    async def _on_lifecycle(self, msg: dict[str, Any]) -> None:
        await ev.emit(self._listeners, "lifecycle", msg)
        state = msg.get("state")
        if state == "idle":
            await ev.emit(self._listeners, "idle", msg)
        elif state == "shutdown.pending" and msg.get("sessionId") == self.session_id:
            deadline = (msg.get("deadline") or 10_000) / 1000
            try:  # clean up in the listeners, but never past the gateway's deadline
                await asyncio.wait_for(ev.emit(self._listeners, "shutdown", msg), deadline)
            except asyncio.TimeoutError:
                log.warning("tap_provider: shutdown listeners overran the %.1f s deadline", deadline)
            self.session_id = None
            self._rtk = None  # its session is gone: nothing to restore on a reconnect
            self._bound.clear()
            if self.on_session_end == "exit":
                self._stopping = True
                self._send({"type": "goodbye", "reason": "session ending"})
                self._send_close()
            else:
                self._send({"type": "shutdown.ready", "sessionId": msg.get("sessionId")})
                await self._maybe_bind()

    # --- requests with an answer ----------------------------------------------------------

    async def _request(self, msg: dict[str, Any], key_field: str, prefix: str) -> dict[str, Any]:
        if self._outbox is None or self.session_id is None:
            raise NotBound()
        key = prefix if prefix.startswith("b-") else f"{prefix}-{next(self._ids)}"
        msg[key_field] = key
        fut: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[key] = fut
        self._send(msg)
        try:
            return await asyncio.wait_for(fut, ev.REPLY_TIMEOUT)
        finally:
            self._pending.pop(key, None)

    async def set_tools(self, tools: Iterable[Tool | Callable[..., Any]] | None = None, *,
                        remove: Iterable[str] | None = None) -> int | None:
        """Replace the tool list (or, with ``remove``, add/replace ``tools`` and drop the
        named ones). Returns the binding's revision from the gateway's `ack`, or None when
        not bound (the next `hello` carries the new list). On an error the old list stays
        in the gateway and here, and the TapError is raised."""
        new = [t if isinstance(t, Tool) else Tool.from_function(t) for t in (tools or [])]
        before = dict(self.tools)
        if remove is None:
            self.tools = {t.name: t for t in new}
        else:
            for gone in remove:
                self.tools.pop(gone, None)
            self.tools.update({t.name: t for t in new})
        if self.session_id is None:
            return None
        wire: dict[str, Any] = {"type": "tools.update", "tools": [t.to_wire() for t in new]}
        if remove is not None:
            wire["remove"] = list(remove)
        try:
            async with self._update_lock:  # one tools.update in flight (else RATE_LIMITED)
                ack = await self._request(wire, "requestId", "u")
        except BaseException:
            self.tools = before
            raise
        return ack.get("revision")

    async def set_hooks(self, rules: Sequence[dict[str, Any]] | None = None,
                        transforms: dict[str, Any] | None = None) -> int | None:
        """`hooks.update`: replace the onPreToolUse rules (and/or change transforms)."""
        if rules is not None:
            self.hooks = list(rules)
        if transforms is not None:
            self.transforms.update(transforms)
        if self.session_id is None:
            return None
        wire: dict[str, Any] = {"type": "hooks.update"}
        if rules is not None:
            wire["onPreToolUse"] = list(rules)
        if transforms is not None:
            wire["transforms"] = transforms
        return (await self._request(wire, "requestId", "h")).get("revision")

    async def set_context(self, context: str | None) -> int | None:
        """`context.update`: the ambient context returned with every prompt (None clears)."""
        self.context = context
        if self.session_id is None:
            return None
        wire: dict[str, Any] = {"type": "context.update"}
        if context is not None:
            wire["context"] = context
        return (await self._request(wire, "requestId", "c")).get("revision")

    async def set_filter(self, stream: str, rules: Sequence[dict[str, Any]]) -> int | None:
        """`filter.set` on one of this provider's streams (empty ``rules`` removes it)."""
        ack = await self._request({"type": "filter.set", "stream": stream, "rules": list(rules)}, "requestId", "f")
        return ack.get("revision")

    async def query_streams(self, streams: Sequence[str] | None = None, last: int | None = None) -> dict[str, Any]:
        """`stream.query`: this provider's stored events, newest first, by stream."""
        wire: dict[str, Any] = {"type": "stream.query"}
        if streams is not None:
            wire["streams"] = list(streams)
        if last is not None:
            wire["last"] = last
        return (await self._request(wire, "queryId", "q")).get("streams", {})

    async def push(self, level: str, event: str, *, stream: str | None = None,
                   metadata: dict[str, Any] | None = None, prompt: str | None = None,
                   retry_for: float = 0.0) -> None:
        """Push an event (``keep``, ``surface`` or ``inject``) and wait for the gateway's
        verdict. The gateway answers a push only when refusing it, so the SDK follows it
        with an empty `stream.query` and waits for that answer: an `error` for the push
        arrives before it, or the push was accepted. Raises RateLimited (or TapError)
        when refused; with ``retry_for`` > 0, RATE_LIMITED is retried with backoff for
        that many seconds before raising."""
        if level not in ("keep", "surface", "inject"):
            raise ValueError("level must be 'keep', 'surface' or 'inject'")
        wire: dict[str, Any] = {"type": "push", "level": level, "event": event}
        for key, value in (("stream", stream), ("metadata", metadata), ("prompt", prompt)):
            if value is not None:
                wire[key] = value
        give_up = time.monotonic() + retry_for
        delay = ev.PUSH_RETRY_FIRST_DELAY
        while True:
            try:
                return await self._push_once(wire)
            except RateLimited:
                if time.monotonic() + delay > give_up:
                    raise
                await asyncio.sleep(delay)
                delay = min(delay * 2, ev.PUSH_RETRY_MAX_DELAY)

    async def _push_once(self, wire: dict[str, Any]) -> None:
        if self.session_id is None:
            raise NotBound()
        # The barrier's key is made here so the slot is queued before either frame is sent.
        key = f"b-{next(self._ids)}"
        slot: list[TapError | None] = [None]
        self._push_slots.append((key, slot))
        self._send(dict(wire))
        await self._request({"type": "stream.query", "streams": [], "last": 1}, "queryId", key)
        if slot[0] is not None:
            raise slot[0]

    def _close_push_slots(self, key: str) -> None:
        """A barrier was answered: its push (and any older one) has its verdict."""
        if not key.startswith("b-") or not any(k == key for k, _ in self._push_slots):
            return
        while self._push_slots:
            if self._push_slots.popleft()[0] == key:
                return


def _in_loop(loop: asyncio.AbstractEventLoop) -> bool:
    try:
        return asyncio.get_running_loop() is loop
    except RuntimeError:
        return False
