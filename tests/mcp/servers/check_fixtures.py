#!/usr/bin/env python3
"""check_fixtures.py: a developer self-test of the MCP server fixtures in this folder.

Not part of CI. Run it with the test venv's Python (it needs the PyPI `mcp` client from
tests/mcp/requirements.txt):

    /root/.cache/tap-gateway/venv/bin/python tests/mcp/servers/check_fixtures.py

Each fixture is driven by the real PyPI `mcp` client where that makes sense (in `legacy`
mode, the `initialize` handshake, and in `auto` mode for good.py, which must fall back from
`server/discover` to `initialize`), and by raw JSON-RPC lines over a pipe where the client
cannot show the point (silence, exit status, stderr, cancellation, garbage on stdout, the
leaked child). Prints one PASS/FAIL line per check and exits 1 if any failed.
"""

import asyncio
import json
import logging
import os
import select
import signal
import subprocess
import sys
import tempfile
import time
import warnings

from mcp import Client
from mcp.client.stdio import StdioServerParameters, stdio_client

HERE = os.path.dirname(os.path.abspath(__file__))
PY = sys.executable
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-11-25",
        "capabilities": {},
        "clientInfo": {"name": "check_fixtures", "version": "0"},
    },
}
INITIALIZED = {"jsonrpc": "2.0", "method": "notifications/initialized"}

results = []


def report(name, ok, detail=""):
    results.append(ok)
    print(f"{'PASS' if ok else 'FAIL'} {name}{(': ' + detail) if detail else ''}", flush=True)


def fixture(name):
    return os.path.join(HERE, name)


def client(script, *args, env=None, mode="legacy", errlog=None, **kw):
    params = StdioServerParameters(command=PY, args=[fixture(script), *args], env=env)
    transport = stdio_client(params, errlog=errlog or sys.stderr)
    return Client(transport, mode=mode, **kw)


def texts(res):
    return [b.text for b in res.content if getattr(b, "type", None) == "text"]


class Raw:
    """A fixture on a pipe, in its own process group, spoken to with raw JSON lines."""

    def __init__(self, script, *args, env=None):
        self.p = subprocess.Popen(
            [PY, fixture(script), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            env={**os.environ, **(env or {})},
            start_new_session=True,
        )
        self.buf = b""

    def send(self, msg):
        self.p.stdin.write((json.dumps(msg) + "\n").encode())
        self.p.stdin.flush()

    def line(self, timeout):
        """The next stdout line (bytes, without newline), or None on timeout or EOF."""
        deadline = time.monotonic() + timeout
        fd = self.p.stdout.fileno()
        while b"\n" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([fd], [], [], left)[0]:
                return None
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                return None
            self.buf += chunk
        line, self.buf = self.buf.split(b"\n", 1)
        return line

    def messages(self, timeout):
        """JSON messages until `timeout` passes with nothing new; (messages, garbage lines)."""
        msgs, junk = [], 0
        while (line := self.line(timeout)) is not None:
            try:
                msgs.append(json.loads(line))
            except ValueError:
                junk += 1
        return msgs, junk

    def until(self, pred, timeout):
        """Read until a JSON message satisfies pred; (message or None, messages seen, junk)."""
        seen, junk = [], 0
        deadline = time.monotonic() + timeout
        while (line := self.line(max(0.0, deadline - time.monotonic()))) is not None:
            try:
                m = json.loads(line)
            except ValueError:
                junk += 1
                continue
            seen.append(m)
            if pred(m):
                return m, seen, junk
        return None, seen, junk

    def close(self):
        try:
            os.killpg(self.p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.p.wait()
        for f in (self.p.stdin, self.p.stdout, self.p.stderr):
            try:
                f.close()
            except OSError:
                pass


def alive(pid):
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    # A zombie (exited, not yet reaped) counts as gone.
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().rsplit(")", 1)[1].split()[0] != "Z"
    except FileNotFoundError:
        return False


# --- good.py --------------------------------------------------------------------------


async def check_good():
    logs, progress = [], []

    async def on_log(params):
        logs.append(params)

    async def on_progress(p, total, message):
        progress.append((p, total, message))

    with tempfile.TemporaryFile("w+") as err:
        async with client("good.py", logging_callback=on_log, errlog=err) as c:
            caps = c.server_capabilities
            report(
                "good: initialize (tools.listChanged, logging, echoed version)",
                caps.tools is not None
                and caps.tools.list_changed is True
                and caps.logging is not None
                and c.protocol_version == "2025-11-25",
            )
            tools = await c.list_tools()
            names = [t.name for t in tools.tools]
            report("good: tools/list", names == ["echo", "slow", "image", "structured", "fails"], str(names))
            r = await c.call_tool("echo", {"message": "hello"})
            report("good: echo", texts(r) == ["hello"] and not r.is_error)
            r = await c.call_tool("image", {})
            kinds = [b.type for b in r.content]
            report(
                "good: image",
                kinds == ["image", "text"] and r.content[0].mime_type == "image/png" and len(r.content[0].data) > 40,
                str(kinds),
            )
            r = await c.call_tool("structured", {})
            report(
                "good: structured",
                r.structured_content == {"n": 42} and texts(r) == ['{"n": 42}'],
                str(r.structured_content),
            )
            r = await c.call_tool("fails", {})
            report("good: fails (isError)", r.is_error is True and texts(r) == ["it failed"])
            r = await c.call_tool("slow", {"seconds": 0.5}, progress_callback=on_progress)
            report(
                "good: slow with progress",
                texts(r) == ["slept 0.5"] and len(progress) == 5 and progress[-1][:2] == (5, 5),
                f"{len(progress)} progress notifications",
            )
            try:
                await c.call_tool("slow", {"seconds": 5}, read_timeout_seconds=0.3)
                report("good: slow abandoned by the client (timeout)", False, "no timeout")
            except Exception as e:  # the client times out and sends notifications/cancelled
                r = await c.call_tool("echo", {"message": "still here"})
                report("good: slow abandoned by the client (timeout)", texts(r) == ["still here"], type(e).__name__)
            with warnings.catch_warnings():  # ping is deprecated for 2026-07-28; this is legacy mode
                warnings.simplefilter("ignore")
                await c.send_ping()
            report("good: ping", True)
            await asyncio.sleep(0.1)
            report(
                "good: log notification after initialized",
                any(getattr(p, "data", None) == "good server ready" for p in logs),
                str(logs[:1]),
            )
        err.seek(0)
        report("good: stderr line", "good: ready" in err.read())

    async with client("good.py", mode="auto", errlog=subprocess.DEVNULL) as c:
        r = await c.call_tool("echo", {"message": "auto"})
        report("good: auto mode falls back to initialize", texts(r) == ["auto"], c.protocol_version)


def check_good_raw():
    s = Raw("good.py")
    try:
        s.send(INIT)
        init, _, _ = s.until(lambda m: m.get("id") == 1, 5)
        s.send(INITIALIZED)
        log, _, _ = s.until(lambda m: m.get("method") == "notifications/message", 5)
        report("good(raw): initialize + log message", init is not None and log is not None)
        s.send({"jsonrpc": "2.0", "id": "x", "method": "no/such"})
        m, _, _ = s.until(lambda m: m.get("id") == "x", 5)
        report("good(raw): unknown request -> -32601", m is not None and m.get("error", {}).get("code") == -32601)
        s.send({"jsonrpc": "2.0", "method": "notifications/whatever"})
        s.send({"jsonrpc": "2.0", "id": 2, "method": "ping"})
        m, _, _ = s.until(lambda m: m.get("id") == 2, 5)
        report("good(raw): unknown notification ignored, ping -> {}", m is not None and m.get("result") == {})
        s.send(
            {
                "jsonrpc": "2.0",
                "id": 3,
                "method": "tools/call",
                "params": {"name": "slow", "arguments": {"seconds": 5}, "_meta": {"progressToken": "tok"}},
            }
        )
        first, _, _ = s.until(lambda m: m.get("method") == "notifications/progress", 5)
        s.send({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 3, "reason": "test"}})
        time.sleep(0.05)  # a tick already under way may still land
        s.messages(0.1)
        after, _ = s.messages(0.5)
        report(
            "good(raw): cancelled slow sends nothing more",
            first is not None and first["params"]["progressToken"] == "tok" and after == [],
            f"{len(after)} messages after cancel",
        )
        s.send({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": {"name": "nope"}})
        m, _, _ = s.until(lambda m: m.get("id") == 4, 5)
        report("good(raw): unknown tool -> -32602", m is not None and m.get("error", {}).get("code") == -32602)
    finally:
        s.close()


# --- hostile fixtures ----------------------------------------------------------------


def check_silent():
    s = Raw("silent.py")
    try:
        s.send(INIT)
        msgs, junk = s.messages(1.0)
        running = s.p.poll() is None
        s.p.stdin.close()
        rc = s.p.wait(5)
        report("silent: no answer to initialize in 1 s, exits 0 on EOF", msgs == [] and junk == 0 and running and rc == 0)
    finally:
        s.close()


def check_exits():
    t = time.monotonic()
    p = subprocess.run([PY, fixture("exits.py")], input=b"", capture_output=True, timeout=10)
    report(
        "exits: status 3 at once, stderr line",
        p.returncode == 3 and p.stderr.decode().strip() == "exits: failing on purpose" and p.stdout == b"",
        f"rc={p.returncode} in {time.monotonic() - t:.2f}s",
    )


async def check_crash_mid_call():
    async with client("crash_mid_call.py", errlog=subprocess.DEVNULL) as c:
        names = [t.name for t in (await c.list_tools()).tools]
        r = await c.call_tool("ok", {})
        report("crash_mid_call: list + ok", names == ["ok", "boom"] and texts(r) == ["ok"], str(names))
    s = Raw("crash_mid_call.py")
    try:
        s.send(INIT)
        s.until(lambda m: m.get("id") == 1, 5)
        s.send(INITIALIZED)
        s.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "boom", "arguments": {}}})
        msgs, _ = s.messages(2.0)
        rc = s.p.wait(5)
        err = s.p.stderr.read().decode()
        report("crash_mid_call: boom exits 1 unanswered, 'crashing' on stderr", rc == 1 and msgs == [] and "crashing" in err, f"rc={rc}")
    finally:
        s.close()


def check_flood():
    s = Raw("flood.py")
    try:
        t = time.monotonic()
        s.send(INIT)
        init, _, junk1 = s.until(lambda m: m.get("id") == 1, 10)
        s.send(INITIALIZED)
        s.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {"name": "echo", "arguments": {"message": "hi"}}})
        m, _, junk2 = s.until(lambda m: m.get("id") == 2, 10)
        report(
            "flood: 11,000 garbage lines before initialize answer, 1,000 before echo",
            init is not None and junk1 == 11000 and junk2 == 1000 and m["result"]["content"][0]["text"] == "hi",
            f"{junk1}+{junk2} garbage lines, {time.monotonic() - t:.2f}s",
        )
    finally:
        s.close()


async def check_flood_client():
    logging.disable(logging.CRITICAL)  # the client logs a traceback for every garbage line
    try:
        async with client("flood.py", errlog=subprocess.DEVNULL, read_timeout_seconds=20) as c:
            r = await c.call_tool("echo", {"message": "through the flood"})
            report("flood: the mcp client gets through", texts(r) == ["through the flood"])
    except Exception as e:
        report("flood: the mcp client gets through", False, repr(e)[:200])
    finally:
        logging.disable(logging.NOTSET)


async def check_huge_result():
    async with client("huge_result.py", errlog=subprocess.DEVNULL, read_timeout_seconds=60) as c:
        t = time.monotonic()
        r = await c.call_tool("huge", {})
        n = len(texts(r)[0])
        took = time.monotonic() - t
        r2 = await c.call_tool("small", {})
        report(
            "huge_result: 50 MiB text, then small",
            n == 50 * 1024 * 1024 and texts(r2) == ["small"],
            f"{n} chars in {took:.2f}s",
        )


async def check_many_tools():
    async with client("many_tools.py", errlog=subprocess.DEVNULL) as c:
        names, pages, cursor = [], 0, None
        while True:
            page = await c.list_tools(cursor=cursor)
            pages += 1
            names += [t.name for t in page.tools]
            cursor = page.next_cursor
            if cursor is None:
                break
        r = await c.call_tool("t999", {})
        report(
            "many_tools: 1000 tools over 10 pages, t999 callable",
            names == [f"t{i}" for i in range(1000)] and pages == 10 and texts(r) == ["t999"],
            f"{len(names)} tools, {pages} pages",
        )


async def check_collide():
    async with client("collide.py", "--tools", "a,b,c", errlog=subprocess.DEVNULL) as c1, client(
        "collide.py", "--tools", "c,d", "--name", "collide2", errlog=subprocess.DEVNULL
    ) as c2:
        n1 = [t.name for t in (await c1.list_tools()).tools]
        n2 = [t.name for t in (await c2.list_tools()).tools]
        r1 = await c1.call_tool("c", {})
        r2 = await c2.call_tool("c", {})
        report(
            "collide: --tools a,b,c and c,d, both answer 'c'",
            n1 == ["a", "b", "c"] and n2 == ["c", "d"] and texts(r1) == texts(r2) == ["from collide: c"]
            and c2.server_info.name == "collide2",
            f"{n1} / {n2}",
        )


async def check_leaks_children():
    with tempfile.TemporaryDirectory() as d:
        pidfile = os.path.join(d, "pid")
        async with client("leaks_children.py", env={"LEAK_PID_FILE": pidfile}, errlog=subprocess.DEVNULL) as c:
            r = await c.call_tool("ping", {})
            pid = int(open(pidfile).read())
            report("leaks_children: ping -> pong, child alive", texts(r) == ["pong"] and alive(pid), f"pid {pid}")
        # The mcp client closes stdin and kills the process group only if the server does not
        # exit by itself; this one does, so the child is left behind (what the gateway must not do).
        time.sleep(0.2)
        left = alive(pid)
        print(f"INFO leaks_children: after the mcp client closed, the child is {'still alive' if left else 'gone'}")
        if left:
            os.killpg(os.getpgid(pid), signal.SIGKILL)
            time.sleep(0.1)
            report("leaks_children: child killed with its process group", not alive(pid))

        # Without a group kill the child outlives the server (and holds its stdout open).
        pidfile2 = os.path.join(d, "pid2")
        s = Raw("leaks_children.py", env={"LEAK_PID_FILE": pidfile2})
        try:
            s.send(INIT)
            s.until(lambda m: m.get("id") == 1, 5)
            s.p.stdin.close()
            rc = s.p.wait(5)
            pid2 = int(open(pidfile2).read())
            eof = s.line(0.5)  # None either way; the point is the child is still there
            report(
                "leaks_children: child outlives the server, in the server's process group",
                rc == 0 and alive(pid2) and os.getpgid(pid2) == s.p.pid and eof is None,
                f"server rc={rc}, child {pid2} alive={alive(pid2)}",
            )
        finally:
            s.close()  # killpg: the child goes too
            time.sleep(0.1)
            if alive(pid2):
                os.kill(pid2, signal.SIGKILL)


async def check_list_changed():
    notes = []

    async def on_message(msg):
        notes.append(msg)

    async with client("list_changed.py", errlog=subprocess.DEVNULL, message_handler=on_message) as c:
        caps = c.server_capabilities
        before = [t.name for t in (await c.list_tools(cache_mode="bypass")).tools]
        r = await c.call_tool("add_tool", {})
        await asyncio.sleep(0.1)
        after = [t.name for t in (await c.list_tools(cache_mode="bypass")).tools]
        r2 = await c.call_tool("extra_1", {})
        got_note = any("ToolListChanged" in type(getattr(n, "root", n)).__name__ or "list_changed" in repr(n) for n in notes)
        report(
            "list_changed: add_tool -> notification, extra_1 listed and callable",
            caps.tools.list_changed is True
            and before == ["add_tool", "remove_tool"]
            and after == ["add_tool", "remove_tool", "extra_1"]
            and texts(r) == ["added extra_1"]
            and texts(r2) == ["extra_1"]
            and got_note,
            f"{after}, {len(notes)} notifications",
        )
        r3 = await c.call_tool("remove_tool", {})
        final = [t.name for t in (await c.list_tools(cache_mode="bypass")).tools]
        report("list_changed: remove_tool", texts(r3) == ["removed extra_1"] and final == before)


async def main():
    await check_good()
    check_good_raw()
    check_silent()
    check_exits()
    await check_crash_mid_call()
    check_flood()
    await check_flood_client()
    await check_huge_result()
    await check_many_tools()
    await check_collide()
    await check_leaks_children()
    await check_list_changed()


if __name__ == "__main__":
    t = time.monotonic()
    try:
        asyncio.run(main())
    except Exception as e:  # a check that blew up counts as a failure
        import traceback

        traceback.print_exc()
        report("check_fixtures: unexpected exception", False, repr(e)[:200])
    failed = results.count(False)
    print(f"check_fixtures: {results.count(True)} passed, {failed} failed in {time.monotonic() - t:.1f}s")
    sys.exit(1 if failed else 0)
