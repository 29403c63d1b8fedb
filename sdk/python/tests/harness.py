"""The real parts the integration tests drive: a `tap gateway` child process with its own
TAP_HOME, a session host speaking the session-host protocol over a real socket, and a TCP
proxy whose connections a test can cut."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
from pathlib import Path
from typing import Any, Callable

import websockets
from websockets.asyncio.client import connect

GATEWAY_START_TIMEOUT = 10.0  # until gateway.json names the listening gateway
GATEWAY_STOP_TIMEOUT = 15.0   # a graceful stop gives bound providers up to 10 s
EXPECT_TIMEOUT = 10.0         # default deadline for any awaited event
FILE_POLL_INTERVAL = 0.02     # how often gateway.json is looked for (with the deadline above)


def tap_bin() -> str:
    path = os.environ.get("TAP_BIN") or shutil.which("tap") or "/work/tap-bin/tap"
    if not os.access(path, os.X_OK):
        raise RuntimeError(f"tap binary not found at {path}; set TAP_BIN")
    return path


class Gateway:
    """`tap gateway --listen 127.0.0.1:0` in a temp TAP_HOME; stopped with SIGTERM."""

    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="tap-sdk-py-"))
        self.home = self.dir / "home"
        self.env = {**os.environ, "TAP_HOME": str(self.home), "COPILOT_HOME": str(self.dir / "copilot"),
                    "TAP_LOG": os.environ.get("TAP_LOG", "warn")}
        for key in ("TAP_GATEWAY_URL", "TAP_PROVIDER_TOKEN", "TAP_PROVIDER_TOKEN_FILE", "TAP_LISTEN"):
            self.env.pop(key, None)
        self.log = open(self.dir / "gateway.log", "wb")
        self.proc = subprocess.Popen([tap_bin(), "gateway", "--listen", "127.0.0.1:0"], env=self.env,
                                     stdin=subprocess.DEVNULL, stdout=self.log, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + GATEWAY_START_TIMEOUT
        state = self.home / "gateway.json"
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"tap gateway exited {self.proc.returncode}: {self.log_text()}")
            try:
                info = json.loads(state.read_text())
                if info.get("pid") == self.proc.pid:
                    break
            except (OSError, ValueError):
                pass
            if time.monotonic() > deadline:
                raise RuntimeError(f"no gateway.json within {GATEWAY_START_TIMEOUT} s: {self.log_text()}")
            time.sleep(FILE_POLL_INTERVAL)
        self.address: str = info["address"]
        self.provider_token = (self.home / "provider-token").read_text().strip()
        self.host_token = (self.home / "host-token").read_text().strip()

    def log_text(self) -> str:
        self.log.flush()
        return (self.dir / "gateway.log").read_text(errors="replace")[-4000:]

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(GATEWAY_STOP_TIMEOUT)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)

    async def tap(self, *args: str, timeout: float = EXPECT_TIMEOUT) -> tuple[int, str]:
        """Run a `tap` command against this gateway without blocking the event loop (the
        provider under test answers on the same loop); returns (exit code, stdout)."""
        proc = await asyncio.create_subprocess_exec(tap_bin(), *args, env=self.env, stdout=subprocess.PIPE,
                                                    stderr=subprocess.DEVNULL)
        try:
            out, _ = await asyncio.wait_for(proc.communicate(), timeout)
        except asyncio.TimeoutError:
            proc.kill()
            raise
        return proc.returncode or 0, out.decode()


class Host:
    """A session host on `/session`: registers sessions, invokes tools, collects events."""

    def __init__(self, gateway: Gateway) -> None:
        self.gateway = gateway
        self.messages: list[dict[str, Any]] = []
        self._changed = asyncio.Condition()
        self._ids = 0

    async def __aenter__(self) -> "Host":
        self.ws = await connect(self.gateway.address + "/session")
        self._reader = asyncio.ensure_future(self._read())
        await self.send({"type": "auth", "token": self.gateway.host_token, "protocolVersion": 1,
                         "hostName": "sdk-test"})
        await self.expect(lambda m: m["type"] == "auth.ok")
        return self

    async def __aexit__(self, *exc: Any) -> None:
        self._reader.cancel()
        await self.ws.close()

    async def _read(self) -> None:
        try:
            async for raw in self.ws:
                msg = json.loads(raw)
                async with self._changed:
                    self.messages.append(msg)
                    self._changed.notify_all()
        except websockets.ConnectionClosed:
            pass

    def next_id(self, prefix: str) -> str:
        self._ids += 1
        return f"{prefix}-{self._ids}"

    async def send(self, msg: dict[str, Any]) -> None:
        await self.ws.send(json.dumps(msg))

    async def expect(self, pred: Callable[[dict[str, Any]], bool], timeout: float = EXPECT_TIMEOUT,
                     after: int = 0) -> dict[str, Any]:
        """The first message (from index ``after``) matching ``pred``, waiting up to ``timeout``."""
        async def find() -> dict[str, Any]:
            async with self._changed:
                while True:
                    for m in self.messages[after:]:
                        if pred(m):
                            return m
                    await self._changed.wait()
        try:
            return await asyncio.wait_for(find(), timeout)
        except asyncio.TimeoutError:
            raise AssertionError(f"no matching message within {timeout} s; got {self.messages[after:][-10:]}") from None

    async def register(self, session_id: str, label: str = "test", foreground: bool = True) -> str:
        rid = self.next_id("r")
        await self.send({"type": "session.register", "requestId": rid, "sessionId": session_id,
                         "label": label, "foreground": foreground})
        await self.expect(lambda m: m.get("requestId") == rid)
        return session_id

    async def wait_tool(self, session_id: str, tool: str, present: bool = True) -> dict[str, Any]:
        """The first `session.tools` of the session that has (or lacks) ``tool``."""
        return await self.expect(lambda m: m["type"] == "session.tools" and m["sessionId"] == session_id
                                 and (tool in [t["name"] for t in m["tools"]]) == present)

    async def invoke(self, session_id: str, tool: str, args: dict[str, Any] | None = None) -> str:
        call_id = self.next_id("call")
        await self.send({"type": "tool.invoke", "callId": call_id, "sessionId": session_id,
                         "tool": tool, "args": args or {}})
        return call_id

    async def result(self, call_id: str, timeout: float = EXPECT_TIMEOUT) -> dict[str, Any]:
        return await self.expect(lambda m: m["type"] == "tool.result" and m.get("callId") == call_id, timeout)

    async def call(self, session_id: str, tool: str, args: dict[str, Any] | None = None) -> dict[str, Any]:
        return await self.result(await self.invoke(session_id, tool, args))

    async def status(self) -> dict[str, Any]:
        rid = self.next_id("st")
        await self.send({"type": "status.get", "requestId": rid})
        return (await self.expect(lambda m: m["type"] == "status" and m.get("requestId") == rid))["status"]


class TcpProxy:
    """127.0.0.1:random → the gateway. ``cut()`` drops every connection (both sides see a
    closed TCP socket, as when a network or the provider's machine goes away);
    ``refusing`` makes new connections close at once."""

    def __init__(self, target: str) -> None:
        host_port = target.split("://", 1)[1].rstrip("/")
        self.host, port = host_port.rsplit(":", 1)
        self.port = int(port)
        self.refusing = False
        self.accepted = 0
        self._writers: list[asyncio.StreamWriter] = []

    async def start(self) -> str:
        self.server = await asyncio.start_server(self._accept, "127.0.0.1", 0)
        return f"ws://127.0.0.1:{self.server.sockets[0].getsockname()[1]}"

    async def _accept(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if self.refusing:
            writer.close()
            return
        self.accepted += 1
        up_reader, up_writer = await asyncio.open_connection(self.host, self.port)
        self._writers += [writer, up_writer]

        async def pipe(src: asyncio.StreamReader, dst: asyncio.StreamWriter) -> None:
            try:
                while data := await src.read(65536):
                    dst.write(data)
                    await dst.drain()
            except (ConnectionError, OSError):
                pass
            finally:
                dst.close()
        await asyncio.gather(pipe(reader, up_writer), pipe(up_reader, writer))

    def cut(self) -> None:
        for w in self._writers:
            w.transport.abort()
        self._writers.clear()

    async def close(self) -> None:
        self.cut()
        self.server.close()
