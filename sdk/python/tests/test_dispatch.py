"""Unit: what a call turns into, without a gateway (the handler side of Provider)."""

from __future__ import annotations

import asyncio
from typing import Any

from conftest import aio

from tap_provider import Provider, TapError, ToolError, allow, deny
from tap_provider.errors import result_for_exception


class Recording(Provider):
    def __init__(self) -> None:
        super().__init__("unit")
        self.sent: list[dict[str, Any]] = []

    def _send(self, msg: dict[str, Any]) -> None:
        self.sent.append(msg)


async def call(p: Recording, tool: str, args: Any) -> dict[str, Any]:
    p.sent.clear()
    p.dispatch({"type": "tool.call", "id": "c-1", "sessionId": "s", "tool": tool, "args": args})
    await asyncio.gather(*p._tasks)
    return [m for m in p.sent if m["type"] == "tool.result"][-1]


def provider() -> Recording:
    p = Recording()

    @p.tool
    async def add(a: int, b: int = 1) -> int:
        return a + b

    @p.tool
    def weird() -> object:
        return object()

    class Coded(Exception):
        code = "MY_CODE"
        retryable = True

    @p.tool
    async def fail(kind: str) -> None:
        if kind == "coded":
            raise Coded("with a code")
        if kind == "empty":
            raise RuntimeError()
        if kind == "numeric":
            raise SystemExit(3)  # a non-string `code` attribute is not an error code
        raise KeyError("k")

    @p.gate("g")
    def gate(tool: str, args: dict) -> Any:
        if args.get("raise"):
            raise RuntimeError("gate broke")
        return deny("no") if args.get("no") else allow()
    return p


@aio
async def test_validation_refuses_before_the_handler() -> None:
    p = provider()
    assert (await call(p, "add", {"a": 1}))["data"] == 2
    bad = await call(p, "add", {"a": "1"})
    assert bad == {"type": "tool.result", "id": "c-1", "errorCode": "INVALID_JSON",
                   "error": "Invalid arguments for tool 'add' at '/a': \"1\" is not of type \"integer\""}
    assert (await call(p, "add", {}))["error"].endswith("\"a\" is a required property")
    assert (await call(p, "add", {"a": 1, "c": 2}))["errorCode"] == "INVALID_JSON"
    assert (await call(p, "add", None))["errorCode"] == "INVALID_JSON"  # no args: a is missing
    assert (await call(p, "nope", {}))["errorCode"] == "NOT_FOUND"


@aio
async def test_exceptions_become_results() -> None:
    p = provider()
    coded = await call(p, "fail", {"kind": "coded"})
    assert (coded["errorCode"], coded["error"], coded["retryable"]) == ("MY_CODE", "with a code", True)
    assert (await call(p, "fail", {"kind": "empty"}))["error"] == "RuntimeError"
    exited = await call(p, "fail", {"kind": "numeric"})
    assert exited == {"type": "tool.result", "id": "c-1", "errorCode": "INTERNAL",
                      "error": "Tool 'fail' called sys.exit(3)"}
    assert (await call(p, "fail", {"kind": "other"}))["errorCode"] == "INTERNAL"
    weird = await call(p, "weird", {})
    assert weird["errorCode"] == "INTERNAL" and "not JSON" in weird["error"]


def test_result_for_exception_shapes() -> None:
    assert result_for_exception("x", ToolError("nope", code="BUSY")) == {
        "type": "tool.result", "id": "x", "error": "nope", "errorCode": "BUSY"}
    assert result_for_exception("x", TapError("NOT_FOUND", "gone"))["error"] == "gone"
    assert result_for_exception("x", ValueError("v")) == {
        "type": "tool.result", "id": "x", "error": "v", "errorCode": "INTERNAL"}


@aio
async def test_gates_fail_closed() -> None:
    p = provider()
    for args, decision in (({}, "allow"), ({"no": 1}, "deny"), ({"raise": 1}, "deny")):
        p.sent.clear()
        p.dispatch({"type": "gate.check", "gateId": "g", "callId": "g-1", "tool": "shell", "args": args})
        await asyncio.gather(*p._tasks)
        assert p.sent[-1]["decision"] == decision and p.sent[-1]["callId"] == "g-1"
    p.dispatch({"type": "gate.check", "gateId": "unknown", "callId": "g-2", "tool": "t", "args": {}})
    await asyncio.gather(*p._tasks)
    assert p.sent[-1]["decision"] == "deny"


def test_hello_message_carries_the_declarations() -> None:
    p = Provider("decl", instance="tab-1", metadata={"title": "T"}, context="ctx", startup_context="start",
                 subscribe=["user.message"], hooks=[{"match": {"tool": "x"}, "action": "deny", "reason": "r"}],
                 transforms={"custom_instructions": {"action": "append", "content": "c"}})

    @p.transform("code_change_rules")
    def rules(current: str) -> str:
        return current + "!"
    hello = p.hello_message("s1", "rtk-x")
    assert hello["session"] == "s1" and hello["reconnectToken"] == "rtk-x" and hello["protocolVersion"] == 2
    assert hello["hooks"]["transforms"]["code_change_rules"] == {"action": "callback"}
    assert hello["hooks"]["onPreToolUse"][0]["action"] == "deny"
    assert (hello["instance"], hello["context"], hello["startup_context"]) == ("tab-1", "ctx", "start")
    assert hello["subscribe"] == ["user.message"]


def test_a_non_string_code_attribute_is_not_an_error_code() -> None:
    class HttpError(Exception):
        code = 404
    assert result_for_exception("x", HttpError("gone"))["errorCode"] == "INTERNAL"
