"""Against the real gateway: sessions, pushes and budgets, hooks, shutdown, reconnect,
DUPLICATE_INSTANCE."""

from __future__ import annotations

import asyncio
import json
import time

from conftest import aio
from harness import EXPECT_TIMEOUT, Host, TcpProxy
from test_gateway_calls import make_provider, running

from tap_provider import Provider, RateLimited, TapError, add_context, deny

# The gateway forgets a reconnectToken 30 s after the socket closed (provider-protocol.md).
TOKEN_WINDOW = 30.0


@aio
async def test_push_and_rate_limited(gateway) -> None:
    async with Host(gateway) as host:
        await host.register("push")
        p, _ = make_provider("push-py")
        async with running(p):
            await p.push("surface", "build finished", stream="ci", metadata={"ok": True})
            delivery = await host.expect(lambda m: m["type"] == "delivery" and m["event"] == "build finished")
            assert (delivery["stream"], delivery["metadata"]) == ("ci", {"ok": True})
            # The budget: at most 10 surface/inject pushes per second per (provider, session).
            # Sent concurrently: each push's verdict must still be its own.
            outcomes = await asyncio.gather(*(p.push("surface", f"burst {i}") for i in range(15)),
                                            return_exceptions=True)
            accepted = {f"burst {i}" for i, o in enumerate(outcomes) if o is None}
            refused = [o for o in outcomes if o is not None]
            assert all(isinstance(o, RateLimited) and o.reply_to == "push" for o in refused), refused
            assert refused and len(accepted) <= 10, outcomes
            # `keep` is not budgeted; a retry policy waits the window out.
            await p.push("keep", "stored only")
            await p.push("surface", "after the burst", retry_for=3.0)
            await host.expect(lambda m: m["type"] == "delivery" and m["event"] == "after the burst")
            delivered = {m["event"] for m in host.messages if m["type"] == "delivery" and m["event"].startswith("burst")}
            assert delivered == accepted  # exactly the pushes the SDK reported accepted
            history = await p.query_streams(["ci"])
            assert history["ci"][0]["event"] == "build finished"
            # A filter on an own stream: "noise" is dropped silently, the rest is kept.
            assert await p.set_filter("ci", [{"match": "noise", "outcome": "drop"}]) == 1
            await p.push("keep", "noise 1", stream="ci")
            await p.push("keep", "signal 1", stream="ci")
            assert [e["event"] for e in (await p.query_streams(["ci"], last=2))["ci"]] == ["signal 1", "build finished"]


@aio
async def test_hooks_deny_gate_and_context(gateway) -> None:
    async with Host(gateway) as host:
        s = await host.register("hooks")
        p, _ = make_provider("hooks-py", hooks=[
            {"match": {"tool": "greet", "args": "Mallory"}, "action": "deny", "reason": "not Mallory"},
            {"match": {"tool": "shell", "args": "git push"}, "action": "gate", "gateId": "ci"},
        ], context="CI is green.")

        @p.gate("ci")
        async def ci_gate(tool: str, args: dict) -> dict:
            return deny("CI is red") if "main" in args.get("command", "") else add_context("CI is green")

        @p.transform("code_change_rules")
        async def rules(current: str) -> str:
            return current + " Run the tests."

        async with running(p):
            await host.wait_tool(s, "greet")
            # context (hello, then context.update) and a callback transform, as a host sees them
            async def apply() -> dict:
                rid = host.next_id("pa")
                await host.send({"type": "prompt.apply", "requestId": rid, "sessionId": s, "prompt": "go",
                                 "sections": {"code_change_rules": "Be careful."}})
                return await host.expect(lambda m: m.get("requestId") == rid)
            applied = await apply()
            assert applied["context"] == ["CI is green."]
            assert applied["sections"]["code_change_rules"] == "Be careful. Run the tests."
            assert await p.set_context("CI is red.") == 1
            assert (await apply())["context"] == ["CI is red."]
            code, out = await gateway.tap("call", "--session", s, "greet", '{"name":"Mallory"}')
            assert code == 1 and json.loads(out) == {"errorCode": "DENIED", "error": "not Mallory"}, out
            code, out = await gateway.tap("call", "--session", s, "greet", '{"name":"Ada"}')
            assert (code, json.loads(out)) == (0, "Hello, Ada!")

            async def precheck(args: dict) -> dict:
                rid = host.next_id("pre")
                await host.send({"type": "tool.precheck", "requestId": rid, "sessionId": s,
                                 "tool": "shell", "args": args})
                return await host.expect(lambda m: m.get("requestId") == rid)
            assert (await precheck({"command": "git push origin main"}))["reason"] == "CI is red"
            assert (await precheck({"command": "git push origin dev"}))["context"] == "CI is green"
            # hooks.update replaces the rules: Mallory may be greeted now.
            assert await p.set_hooks([]) == 2
            code, out = await gateway.tap("call", "--session", s, "greet", '{"name":"Mallory"}')
            assert (code, json.loads(out)) == (0, "Hello, Mallory!")


@aio
async def test_shutdown_pending_then_next_session(gateway) -> None:
    async with Host(gateway) as host:
        s1 = await host.register("first")
        p, _ = make_provider("shutdown-py", subscribe=["user.message"])
        shutdowns, events = [], []
        p.on("shutdown")(lambda msg: shutdowns.append(msg["sessionId"]))
        p.on("session.event")(lambda msg: events.append(msg["data"]))
        async with running(p):
            await host.wait_tool(s1, "greet")
            await host.send({"type": "session.event", "sessionId": s1, "event": "user.message",
                             "data": {"content": "hi"}})
            rid = host.next_id("end")
            started = time.monotonic()
            await host.send({"type": "session.end", "requestId": rid, "sessionId": s1})
            await host.expect(lambda m: m["type"] == "session.ended" and m.get("requestId") == rid)
            # shutdown.ready let the teardown happen long before the 10 s deadline.
            assert time.monotonic() - started < 5.0
            assert shutdowns == [s1] and events == [{"content": "hi"}]
            assert not p.bound
            s2 = await host.register("second")
            await host.wait_tool(s2, "greet")  # bound again, to the new foreground session
            assert p.session_id == s2


@aio
async def test_on_session_end_exit(gateway) -> None:
    async with Host(gateway) as host:
        s = await host.register("exit")
        p, _ = make_provider("exit-py", on_session_end="exit")
        task = asyncio.ensure_future(p.run())
        await p.wait_bound(EXPECT_TIMEOUT)
        await host.send({"type": "session.end", "requestId": "e", "sessionId": s})
        await asyncio.wait_for(task, EXPECT_TIMEOUT)  # run() returned after goodbye


@aio
async def test_chooser_and_waiting_for_a_session(gateway) -> None:
    async with Host(gateway) as host:
        p, _ = make_provider("chooser-py", session=lambda ss: next((x for x in ss if x.label == "pick me"), None))
        task = asyncio.ensure_future(p.run())
        await host.register("other", label="not me")
        await host.register("mine", label="pick me", foreground=False)
        assert await p.wait_bound(EXPECT_TIMEOUT) == "mine"
        await p.stop()
        await asyncio.wait_for(task, EXPECT_TIMEOUT)


@aio
async def test_duplicate_instance(gateway) -> None:
    async with Host(gateway) as host:
        await host.register("dup")
        first, _ = make_provider("dup-py")
        async with running(first):
            second, _ = make_provider("dup-py")
            try:
                await asyncio.wait_for(second.run(), EXPECT_TIMEOUT)
                raise AssertionError("a second copy must be refused")
            except TapError as e:
                assert e.code == "DUPLICATE_INSTANCE" and e.reply_to == "hello"
            assert first.bound


@aio
async def test_reconnect_with_token_restores_the_binding(gateway) -> None:
    async with Host(gateway) as host:
        s = await host.register("rc")
        proxy = TcpProxy(gateway.address)
        p, _ = make_provider("rc-py", url=await proxy.start())
        dropped, rebound = _flag(p, "disconnected"), _flag(p, "bound")
        async with running(p):
            await host.wait_tool(s, "greet")
            old_id = p.provider_id
            rebound.clear()
            proxy.cut()
            await asyncio.wait_for(dropped.wait(), EXPECT_TIMEOUT)
            await asyncio.wait_for(rebound.wait(), EXPECT_TIMEOUT)
            assert p.provider_id == old_id and p.session_id == s
            assert proxy.accepted == 2
            status = await host.status()
            mine = [x for x in status["providers"] if x.get("name") == "rc-py"]
            assert [(x["id"], x["state"], x["session"]) for x in mine] == [(old_id, "bound", s)]
            assert (await host.call(s, "greet", {"name": "again"}))["data"] == "Hello, again!"
        await proxy.close()


@aio
async def test_reconnect_after_the_window_is_fresh(gateway) -> None:
    async with Host(gateway) as host:
        s = await host.register("fresh")
        proxy = TcpProxy(gateway.address)
        p, _ = make_provider("fresh-py", url=await proxy.start())
        dropped, rebound = _flag(p, "disconnected"), _flag(p, "bound")
        async with running(p):
            await host.wait_tool(s, "greet")
            old_id = p.provider_id
            rebound.clear()
            proxy.refusing = True
            proxy.cut()
            await asyncio.wait_for(dropped.wait(), EXPECT_TIMEOUT)
            # Keep the provider out past the gateway's token lifetime.
            await asyncio.sleep(TOKEN_WINDOW + 1.0)
            status = await host.status()
            assert not [x for x in status["providers"] if x.get("name") == "fresh-py"]
            proxy.refusing = False
            await asyncio.wait_for(rebound.wait(), EXPECT_TIMEOUT)
            assert p.provider_id != old_id and p.session_id == s
            assert (await host.call(s, "greet", {"name": "new"}))["data"] == "Hello, new!"
        await proxy.close()


def _flag(p: Provider, event: str) -> asyncio.Event:
    """An asyncio.Event set each time the provider emits ``event``."""
    flag = asyncio.Event()
    p.on(event)(lambda *_: flag.set())
    return flag
