"""Against the real gateway: calls, errors, cancel, timeout, progress, files, tools.update."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import subprocess
from dataclasses import dataclass
from pathlib import Path
from typing import Any, AsyncIterator, Literal

from conftest import aio
from harness import EXPECT_TIMEOUT, Host, tap_bin

from tap_provider import CallContext, FileResult, Provider, TapError, ToolError


@contextlib.asynccontextmanager
async def running(provider: Provider) -> AsyncIterator[asyncio.Task[None]]:
    task = asyncio.ensure_future(provider.run())
    try:
        done, _ = await asyncio.wait([task, asyncio.ensure_future(provider.wait_bound())],
                                     timeout=EXPECT_TIMEOUT, return_when=asyncio.FIRST_COMPLETED)
        if task in done:
            task.result()  # raise what ended run()
        assert provider.bound, "provider did not bind in time"
        yield task
    finally:
        await provider.stop()
        with contextlib.suppress(Exception):
            await asyncio.wait_for(task, EXPECT_TIMEOUT)


@dataclass
class Point:
    x: float
    y: float = 0.0


def make_provider(name: str, **kw: Any) -> tuple[Provider, dict[str, Any]]:
    p = Provider(name, **kw)
    seen: dict[str, Any] = {"started": asyncio.Event(), "cancelled": asyncio.Event()}

    @p.tool
    async def greet(name: str, mood: Literal["warm", "cold"] = "warm") -> str:
        """Greet someone by name."""
        return f"Hello, {name}!" if mood == "warm" else f"{name}."

    @p.tool
    def norm(p: Point) -> float:
        """Sync tool with a dataclass argument (runs in a thread)."""
        return (p.x ** 2 + p.y ** 2) ** 0.5

    @p.tool
    async def boom(kind: str) -> None:
        if kind == "coded":
            raise ToolError("quota exceeded", code="QUOTA")
        raise ValueError("bad thing happened")

    @p.tool(timeout=0.5)
    async def slow(ctx: CallContext) -> str:
        seen["started"].set()
        try:
            await asyncio.sleep(3600)
        except asyncio.CancelledError:
            seen["cancelled"].set()
            raise
        return "never"

    @p.tool
    async def chatty(progress) -> str:  # noqa: ANN001 - the injected progress callable
        progress("step 1 of 2")
        progress("step 2 of 2")
        return "done"

    @p.tool
    def sync_chatty(progress) -> str:  # noqa: ANN001
        progress("from a thread")
        return "ok"

    @p.tool
    async def photo(ctx: CallContext) -> FileResult:
        assert ctx.persist_dir, "a token provider gets a persistDir"
        path = Path(ctx.persist_dir) / "photo.bin"
        path.write_bytes(b"x" * 1234)
        return FileResult(str(path), mime_type="application/octet-stream", ttl=60)

    return p, seen


@aio
async def test_call_errors_and_sync_handlers(gateway) -> None:
    async with Host(gateway) as host:
        s = await host.register("calls")
        p, _ = make_provider("calls-py")
        async with running(p):
            await host.wait_tool(s, "greet")
            assert (await host.call(s, "greet", {"name": "Ada"}))["data"] == "Hello, Ada!"
            assert (await host.call(s, "greet", {"name": "Ada", "mood": "cold"}))["data"] == "Ada."
            assert (await host.call(s, "norm", {"p": {"x": 3, "y": 4}}))["data"] == 5.0
            coded = await host.call(s, "boom", {"kind": "coded"})
            assert (coded["errorCode"], coded["error"]) == ("QUOTA", "quota exceeded")
            internal = await host.call(s, "boom", {"kind": "other"})
            assert (internal["errorCode"], internal["error"]) == ("INTERNAL", "bad thing happened")
            # The gateway refuses a bad argument itself, before the SDK would.
            bad = await host.call(s, "greet", {"name": 42})
            assert bad["errorCode"] == "INVALID_JSON"
            # Still alive after every failure.
            assert (await host.call(s, "greet", {"name": "Bo"}))["data"] == "Hello, Bo!"


@aio
async def test_cancel_from_host_and_from_tap_call(gateway) -> None:
    async with Host(gateway) as host:
        s = await host.register("cancel")
        p, seen = make_provider("cancel-py")
        p.tools["slow"].timeout_ms = 60_000  # long enough that only the cancel ends it
        async with running(p):
            await host.wait_tool(s, "slow")
            call = await host.invoke(s, "slow")
            await asyncio.wait_for(seen["started"].wait(), EXPECT_TIMEOUT)
            await host.send({"type": "tool.cancel", "callId": call})
            assert (await host.result(call))["errorCode"] == "CANCELLED"
            await asyncio.wait_for(seen["cancelled"].wait(), EXPECT_TIMEOUT)

            # The CLI: SIGTERM during `tap call` cancels the call.
            seen["started"].clear()
            seen["cancelled"].clear()
            proc = await asyncio.create_subprocess_exec(
                tap_bin(), "call", "--session", s, "slow", env=gateway.env,
                stdout=subprocess.PIPE, stderr=subprocess.PIPE)
            await asyncio.wait_for(seen["started"].wait(), EXPECT_TIMEOUT)
            proc.send_signal(signal.SIGTERM)
            out, _ = await asyncio.wait_for(proc.communicate(), EXPECT_TIMEOUT)
            assert json.loads(out)["errorCode"] == "CANCELLED"
            await asyncio.wait_for(seen["cancelled"].wait(), EXPECT_TIMEOUT)


@aio
async def test_timeout_cancels_the_handler(gateway) -> None:
    async with Host(gateway) as host:
        s = await host.register("timeout")
        p, seen = make_provider("timeout-py")
        async with running(p):
            await host.wait_tool(s, "slow")
            tool = next(t for t in (await host.wait_tool(s, "slow"))["tools"] if t["name"] == "slow")
            assert tool["timeoutMs"] == 500
            result = await host.call(s, "slow")
            assert result["errorCode"] == "TIMEOUT"
            await asyncio.wait_for(seen["cancelled"].wait(), EXPECT_TIMEOUT)


@aio
async def test_progress_async_and_sync(gateway) -> None:
    async with Host(gateway) as host:
        s = await host.register("progress")
        p, _ = make_provider("progress-py")
        async with running(p):
            await host.wait_tool(s, "chatty")
            call = await host.invoke(s, "chatty")
            assert (await host.result(call))["data"] == "done"
            progress = [m["message"] for m in host.messages if m["type"] == "tool.progress" and m["callId"] == call]
            assert progress == ["step 1 of 2", "step 2 of 2"]
            call = await host.invoke(s, "sync_chatty")
            assert (await host.result(call))["data"] == "ok"
            assert [m["message"] for m in host.messages
                    if m["type"] == "tool.progress" and m["callId"] == call] == ["from a thread"]


@aio
async def test_file_result(gateway) -> None:
    async with Host(gateway) as host:
        s = await host.register("files")
        p, _ = make_provider("files-py")
        async with running(p):
            await host.wait_tool(s, "photo")
            data = (await host.call(s, "photo"))["data"]
            assert data["file"]["size"] == 1234
            assert os.path.getsize(data["file"]["path"]) == 1234  # the gateway's copy


@aio
async def test_tools_update(gateway) -> None:
    async with Host(gateway) as host:
        s = await host.register("update")
        p, _ = make_provider("update-py")
        async with running(p):
            await host.wait_tool(s, "greet")

            async def shout(text: str) -> str:
                """Upper-case a text."""
                return text.upper()

            revision = await p.set_tools([shout])  # the complete new list
            assert revision == 1
            # The ack comes after the host has the new tool set (the revision barrier).
            await host.wait_tool(s, "shout")
            assert (await host.call(s, "shout", {"text": "hi"}))["data"] == "HI"
            assert (await host.call(s, "greet", {"name": "x"}))["errorCode"] == "NOT_FOUND"
            assert await p.set_tools([p.tools["shout"]], remove=[]) == 2  # a delta
            try:
                await p.set_tools([_reserved_tool()])
                raise AssertionError("a reserved name must be refused")
            except TapError as e:
                assert e.code == "TOOL_CONFLICT"
            assert set(p.tools) == {"shout"}  # the old list stays on a refusal


def _reserved_tool() -> Any:
    from tap_provider import Tool

    def f() -> None:
        return None
    return Tool.from_function(f, name="list_things_instances")
