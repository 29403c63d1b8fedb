"""Unit: where the SDK looks for the gateway and its token, in which order."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tap_provider.discovery import DEFAULT_URL, find_token, find_url, tap_home


def setup_files(tmp: Path, *, gateway_json: bool = True) -> dict[str, str]:
    home, copilot = tmp / "home", tmp / "copilot"
    (copilot / "extensions" / "tap").mkdir(parents=True)
    home.mkdir()
    (home / "provider-token").write_text("ptk-home\n")
    (copilot / "extensions" / "tap" / ".provider-token").write_text("ptk-copilot")
    (tmp / "named").write_text("  ptk-named  ")
    if gateway_json:
        (home / "gateway.json").write_text(json.dumps({"address": "ws://127.0.0.1:9555", "pid": 1}))
    return {"TAP_HOME": str(home), "COPILOT_HOME": str(copilot), "HOME": str(tmp)}


def test_url_order(tmp_path: Path) -> None:
    env = setup_files(tmp_path)
    assert find_url("ws://x:1", {**env, "TAP_GATEWAY_URL": "ws://y:2"}).value == "ws://x:1"
    assert find_url(None, {**env, "TAP_GATEWAY_URL": "ws://y:2"}).value == "ws://y:2"
    found = find_url(None, env)
    assert found.value == "ws://127.0.0.1:9555" and found.source.endswith("gateway.json")
    assert find_url(None, {**env, "TAP_GATEWAY_URL": ""}).value == "ws://127.0.0.1:9555"  # empty = unset
    assert find_url(None, setup_files(tmp_path / "b", gateway_json=False)) .value == DEFAULT_URL


def test_token_order(tmp_path: Path) -> None:
    env = setup_files(tmp_path)
    named = str(tmp_path / "named")
    full = {**env, "TAP_PROVIDER_TOKEN": "ptk-env", "TAP_PROVIDER_TOKEN_FILE": named}
    assert find_token("ptk-arg", "default", full).value == "ptk-arg"
    assert find_token(None, "default", full).value == "ptk-env"
    assert find_token(None, "default", {**full, "TAP_PROVIDER_TOKEN": ""}).value == "ptk-named"
    # Address from the default: the spec's Copilot file first.
    assert find_token(None, "default", env).value == "ptk-copilot"
    # Address from $TAP_HOME/gateway.json: that gateway's own token file first.
    found = find_token(None, str(Path(env["TAP_HOME"]) / "gateway.json"), env)
    assert found.value == "ptk-home" and found.source.endswith("provider-token")
    (Path(env["COPILOT_HOME"]) / "extensions" / "tap" / ".provider-token").unlink()
    assert find_token(None, "default", env).value == "ptk-home"


def test_no_token_names_every_place(tmp_path: Path) -> None:
    env = {"TAP_HOME": str(tmp_path / "h"), "COPILOT_HOME": str(tmp_path / "c"), "HOME": str(tmp_path)}
    with pytest.raises(LookupError) as e:
        find_token(None, "default", env)
    text = str(e.value)
    assert "TAP_PROVIDER_TOKEN" in text and ".provider-token" in text and "provider-token" in text
    assert "tap env" in text


def test_tap_home_defaults() -> None:
    assert tap_home({"HOME": "/u"}, "linux") == Path("/u/.local/share/tap")
    assert tap_home({"HOME": "/u", "XDG_DATA_HOME": "/x"}, "linux") == Path("/x/tap")
    assert tap_home({"HOME": "/u", "TAP_HOME": ""}, "darwin") == Path("/u/Library/Application Support/tap")
    assert tap_home({"HOME": "/u", "APPDATA": "C:/A"}, "win32") == Path("C:/A/tap")
    assert tap_home({"TAP_HOME": "/t"}, "linux") == Path("/t")
