"""The quick start in docs/sdk/python.md, run verbatim against the real gateway.

In-repo it imports the source tree; with TAP_SDK_INSTALLED=1 and TAP_QUICKSTART_PYTHON set
(scripts/test-sdk-python.sh, after installing the wheel in a clean venv) it runs on that
venv's Python and must import the installed package."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
import sys
from pathlib import Path

from conftest import aio
from harness import EXPECT_TIMEOUT, Host

DOC = Path(__file__).resolve().parents[3] / "docs" / "sdk" / "python.md"
QUICKSTART_LINES = 10  # the promise in the docs' heading: a provider in ten lines


def quickstart() -> str:
    text = DOC.read_text()
    section = text.split("## Quick start", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.S)
    assert match, "no python block under '## Quick start'"
    return match.group(1)


def test_quickstart_is_ten_lines() -> None:
    assert len(quickstart().splitlines()) <= QUICKSTART_LINES


@aio
async def test_quickstart_runs_against_the_gateway(gateway, tmp_path) -> None:
    script = tmp_path / "greeter.py"
    script.write_text(quickstart())
    python = os.environ.get("TAP_QUICKSTART_PYTHON") or sys.executable
    env = dict(gateway.env)
    if os.environ.get("TAP_SDK_INSTALLED"):
        env.pop("PYTHONPATH", None)
        where = subprocess.run([python, "-c", "import tap_provider; print(tap_provider.__file__)"],
                               env=env, capture_output=True, text=True, check=True).stdout
        assert "site-packages" in where and "/sdk/python/src/" not in where, where
    else:
        env["PYTHONPATH"] = str(Path(__file__).resolve().parents[1] / "src")
    async with Host(gateway) as host:
        await host.register("demo-1", label="demo")
        proc = await asyncio.create_subprocess_exec(python, str(script), env=env, cwd=tmp_path,
                                                    stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
        try:
            await host.wait_tool("demo-1", "greet")
            code, out = await gateway.tap("call", "--session", "demo-1", "greet", '{"name":"Ada"}')
            assert (code, json.loads(out)) == (0, "Hello, Ada!")
            proc.send_signal(signal.SIGTERM)  # run_forever: goodbye, then a clean exit
            output, _ = await asyncio.wait_for(proc.communicate(), EXPECT_TIMEOUT)
            assert proc.returncode == 0, output.decode()
            await host.wait_tool("demo-1", "greet", present=False)
        finally:
            if proc.returncode is None:
                proc.kill()
                await proc.wait()
