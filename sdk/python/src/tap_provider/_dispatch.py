"""Calls, gates and transform callbacks: each runs in its own task, and every outcome,
including a handler's exception, becomes exactly one answer. Nothing a handler does can end
the provider."""

from __future__ import annotations

import asyncio
import json
import threading
from typing import Any, Callable

from . import _events as ev
from ._events import log
from .errors import result_for_exception
from .schema import validate
from .tools import CallContext, FileResult, Tool


class Dispatcher:
    """The tool-side half of `Provider` (which supplies ``_send`` and the connection)."""

    def __init__(self) -> None:
        self.tools: dict[str, Tool] = {}
        self.persist_dir: str | None = None
        self.session_id: str | None = None
        self._gates: dict[str, Callable[..., Any]] = {}
        self._transform_handlers: dict[str, Callable[..., Any]] = {}
        self._listeners: dict[str, list[Callable[..., Any]]] = {}
        self._calls: dict[str, tuple[asyncio.Task[Any], threading.Event]] = {}
        self._tasks: set[asyncio.Task[Any]] = set()

    def _send(self, msg: dict[str, Any]) -> None:  # pragma: no cover - Provider's
        raise NotImplementedError

    # --- declarations -------------------------------------------------------------------

    def tool(self, fn: Callable[..., Any] | None = None, *, name: str | None = None,
             description: str | None = None, parameters: dict[str, Any] | None = None,
             timeout: float | None = None) -> Any:
        """Declare a tool: ``@provider.tool`` or ``@provider.tool(name=…, timeout=30)``.

        The schema comes from the type hints (or ``parameters=``), the description from the
        docstring's first paragraph (or ``description=``); ``timeout`` is in seconds. The
        function is returned unchanged, so it can still be called directly."""
        def register(f: Callable[..., Any]) -> Callable[..., Any]:
            t = Tool.from_function(f, name=name, description=description, parameters=parameters, timeout=timeout)
            self.tools[t.name] = t
            return f
        return register(fn) if fn is not None else register

    def gate(self, gate_id: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """Answer `gate.check`s for ``gate_id`` (declare the rule in ``hooks=``). The handler
        gets ``(tool, args)`` and returns ``allow()``, ``deny(reason)`` or
        ``add_context(text)``; raising denies with the exception's message (fail closed)."""
        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            self._gates[gate_id] = fn
            return fn
        return register

    def transform(self, section: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
        """A ``callback`` transform of a prompt section: the handler gets the current text
        and returns the new one (registered in `hello` automatically)."""
        def register(fn: Callable[..., Any]) -> Callable[..., Any]:
            self._transform_handlers[section] = fn
            return fn
        return register

    # --- incoming -------------------------------------------------------------------------

    def dispatch(self, msg: dict[str, Any]) -> None:
        kind = msg["type"]
        if kind == "tool.call" and isinstance(msg.get("id"), str):
            cancelled = threading.Event()
            task = ev.spawn(self._run_call(msg, cancelled), self._tasks)
            self._calls[msg["id"]] = (task, cancelled)
        elif kind == "tool.cancel":
            entry = self._calls.get(str(msg.get("id")))
            if entry is not None:
                log.info("tap_provider: call %s cancelled (%s)", msg.get("id"), msg.get("reason"))
                entry[1].set()
                entry[0].cancel()
        elif kind == "gate.check":
            ev.spawn(self._run_gate(msg), self._tasks)
        elif kind == "transform.request":
            ev.spawn(self._run_transform(msg), self._tasks)
        # anything else: ignored, for forward compatibility

    def _cancel_all_calls(self) -> None:
        """The socket is gone: the gateway has failed these calls DISCONNECTED already and
        never replays them, so their work is wasted."""
        for task, cancelled in list(self._calls.values()):
            cancelled.set()
            task.cancel()
        self._calls.clear()

    def _progress_for(self, call_id: str) -> Callable[[str], None]:
        def progress(message: str) -> None:
            self._send({"type": "tool.progress", "id": call_id, "message": str(message)})
        return progress

    async def _run_call(self, msg: dict[str, Any], cancelled: threading.Event) -> None:
        call_id = msg["id"]
        try:
            self._send(await self._call_result(msg, cancelled))
        except asyncio.CancelledError:
            # tool.cancel (or the gateway's timeout): the spec wants a CANCELLED answer even
            # though the gateway has already resolved the call.
            self._send({"type": "tool.result", "id": call_id, "error": "Cancelled", "errorCode": "CANCELLED"})
        finally:
            self._calls.pop(call_id, None)

    async def _call_result(self, msg: dict[str, Any], cancelled: threading.Event) -> dict[str, Any]:
        call_id, name = msg["id"], msg.get("tool")
        tool = self.tools.get(str(name))
        if tool is None:
            return {"type": "tool.result", "id": call_id, "errorCode": "NOT_FOUND",
                    "error": f"Provider has no tool {name!r}"}
        args = msg.get("args")
        args = {} if args is None else args
        problem = validate(tool.parameters, args) if isinstance(args, dict) else "at '/': arguments must be an object"
        if problem:
            # The same code and wording as the gateway's own check (provider-protocol.md).
            return {"type": "tool.result", "id": call_id, "errorCode": "INVALID_JSON",
                    "error": f"Invalid arguments for tool '{tool.name}' {problem}"}
        progress = self._progress_for(call_id)
        ctx = CallContext(call_id=call_id, session_id=str(msg.get("sessionId") or self.session_id),
                          tool=tool.name, progress=progress, cancelled=cancelled, persist_dir=self.persist_dir)
        # Our own timer, a little after the gateway's, in case its tool.cancel never arrives.
        limit = (tool.timeout_ms / 1000 if tool.timeout_ms else ev.DEFAULT_TOOL_TIMEOUT) + ev.LOCAL_TIMEOUT_GRACE
        try:
            data = await asyncio.wait_for(tool.invoke(args, {"progress": progress, "context": ctx}), limit)
        except asyncio.TimeoutError:
            cancelled.set()
            return {"type": "tool.result", "id": call_id, "errorCode": "TIMEOUT",
                    "error": f"Tool '{tool.name}' did not finish within {limit:.0f} s"}
        except asyncio.CancelledError:
            raise
        except Exception as e:  # noqa: BLE001 - every failure becomes a result
            log.warning("tap_provider: tool %r raised %s: %s", tool.name, type(e).__name__, e,
                        exc_info=not hasattr(e, "code"))
            return result_for_exception(call_id, e)
        if isinstance(data, FileResult):
            try:
                return {"type": "tool.result", "id": call_id, "file": data.to_wire()}
            except OSError as e:
                return result_for_exception(call_id, e)
        try:
            json.dumps(data)
        except (TypeError, ValueError) as e:
            return {"type": "tool.result", "id": call_id, "errorCode": "INTERNAL",
                    "error": f"Tool '{tool.name}' returned a value that is not JSON: {e}"}
        return {"type": "tool.result", "id": call_id, "data": data}

    async def _run_gate(self, msg: dict[str, Any]) -> None:
        answer: dict[str, Any] = {"type": "gate.result", "callId": msg.get("callId")}
        handler = self._gates.get(str(msg.get("gateId")))
        if handler is None:
            answer.update(decision="deny", reason=f"No handler for gate {msg.get('gateId')!r}")
        else:
            try:
                verdict = await ev.call_maybe_async(handler, msg.get("tool"), msg.get("args") or {})
                answer.update(_verdict(verdict))
            except Exception as e:  # noqa: BLE001 - a broken gate denies (fail closed)
                answer.update(decision="deny", reason=f"Gate {msg.get('gateId')!r} failed: {e}")
        self._send(answer)

    async def _run_transform(self, msg: dict[str, Any]) -> None:
        handler = self._transform_handlers.get(str(msg.get("section")))
        current = msg.get("current") or ""
        try:
            content = current if handler is None else await ev.call_maybe_async(handler, current)
        except Exception:  # noqa: BLE001 - leave the section as it was
            log.exception("tap_provider: transform for %r raised", msg.get("section"))
            content = current
        self._send({"type": "transform.result", "callId": msg.get("callId"), "content": str(content)})


def allow() -> dict[str, Any]:
    return {"decision": "allow"}


def deny(reason: str) -> dict[str, Any]:
    return {"decision": "deny", "reason": reason}


def add_context(text: str) -> dict[str, Any]:
    return {"decision": "context", "reason": text}


def _verdict(value: Any) -> dict[str, Any]:
    if value is None or value is True:
        return allow()
    if value is False:
        return deny("Denied by the gate")
    if isinstance(value, dict) and value.get("decision") in ("allow", "deny", "context"):
        return {k: v for k, v in value.items() if k in ("decision", "reason")}
    raise TypeError(f"a gate must return allow(), deny(reason) or add_context(text), not {value!r}")
