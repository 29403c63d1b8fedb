from __future__ import annotations

import asyncio
import functools
import os
import sys
from pathlib import Path
from typing import Any, Awaitable, Callable, Iterator

import pytest

sys.path.insert(0, str(Path(__file__).parent))  # harness.py
if not os.environ.get("TAP_SDK_INSTALLED"):
    # In-repo runs test the source tree; the packaging test runs against the wheel.
    sys.path.insert(0, str(Path(__file__).parent.parent / "src"))

from harness import Gateway  # noqa: E402

TEST_TIMEOUT = 90.0  # a whole test, including the 30 s reconnect window


def aio(fn: Callable[..., Awaitable[Any]]) -> Callable[..., Any]:
    """Run an async test in a fresh event loop, bounded by TEST_TIMEOUT."""
    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> Any:
        return asyncio.run(asyncio.wait_for(fn(*args, **kwargs), TEST_TIMEOUT))
    return wrapper


@pytest.fixture
def gateway(monkeypatch: pytest.MonkeyPatch) -> Iterator[Gateway]:
    """A real gateway; the process environment points the SDK's discovery at it (through
    TAP_HOME/gateway.json and its provider-token), as a user's shell would."""
    gw = Gateway()
    for key in ("TAP_GATEWAY_URL", "TAP_PROVIDER_TOKEN", "TAP_PROVIDER_TOKEN_FILE"):
        monkeypatch.delenv(key, raising=False)
    monkeypatch.setenv("TAP_HOME", gw.env["TAP_HOME"])
    monkeypatch.setenv("COPILOT_HOME", gw.env["COPILOT_HOME"])
    try:
        yield gw
    finally:
        gw.stop()
