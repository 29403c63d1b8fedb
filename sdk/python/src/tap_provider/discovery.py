"""Where the gateway is and which token to show it.

The order (docs/sdk/python.md, "Discovery") follows docs/write-a-provider.md with one
refinement: when the address comes from ``$TAP_HOME/gateway.json``, the token is taken from
the same ``$TAP_HOME`` before the Copilot copy, because the Copilot file belongs to whichever
gateway wrote it first (configuration.md) and may be another gateway's.
"""

from __future__ import annotations

import json
import os
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping

DEFAULT_URL = "ws://127.0.0.1:9400"


@dataclass(frozen=True)
class Found:
    """A discovered value and where it came from (shown in error messages and logs)."""

    value: str
    source: str


def _env(env: Mapping[str, str], key: str) -> str | None:
    # The docs say "empty means unset" for every TAP_* variable.
    value = env.get(key)
    return value if value else None


def tap_home(env: Mapping[str, str] | None = None, platform: str | None = None) -> Path:
    """``$TAP_HOME``, else the platform data dir + ``tap`` (configuration.md)."""
    env = os.environ if env is None else env
    platform = sys.platform if platform is None else platform
    explicit = _env(env, "TAP_HOME")
    if explicit:
        return Path(explicit)
    home = Path(_env(env, "HOME") or Path.home())
    if platform == "darwin":
        return home / "Library" / "Application Support" / "tap"
    if platform.startswith("win"):
        return Path(_env(env, "APPDATA") or home / "AppData" / "Roaming") / "tap"
    return Path(_env(env, "XDG_DATA_HOME") or home / ".local" / "share") / "tap"


def copilot_token_file(env: Mapping[str, str] | None = None) -> Path:
    env = os.environ if env is None else env
    home = Path(_env(env, "HOME") or Path.home())
    copilot = Path(_env(env, "COPILOT_HOME") or home / ".copilot")
    return copilot / "extensions" / "tap" / ".provider-token"


def _gateway_json_address(home: Path) -> str | None:
    try:
        data = json.loads((home / "gateway.json").read_text())
    except (OSError, ValueError):
        return None
    address = data.get("address") if isinstance(data, dict) else None
    return address if isinstance(address, str) and address else None


def find_url(explicit: str | None = None, env: Mapping[str, str] | None = None) -> Found:
    """1. ``url=``; 2. ``TAP_GATEWAY_URL``; 3. ``address`` in ``$TAP_HOME/gateway.json``;
    4. ``ws://127.0.0.1:9400``."""
    env = os.environ if env is None else env
    if explicit:
        return Found(explicit, "url argument")
    if _env(env, "TAP_GATEWAY_URL"):
        return Found(env["TAP_GATEWAY_URL"], "TAP_GATEWAY_URL")
    home = tap_home(env)
    address = _gateway_json_address(home)
    if address:
        return Found(address, str(home / "gateway.json"))
    return Found(DEFAULT_URL, "default")


def _read_token(path: Path) -> str | None:
    try:
        token = path.read_text().strip()  # readers trim whitespace (configuration.md)
    except OSError:
        return None
    return token or None


def token_candidates(url_source: str, env: Mapping[str, str] | None = None) -> list[tuple[str, Path | None]]:
    """The places a token is looked for, in order (for tests and the error message)."""
    env = os.environ if env is None else env
    home_file = tap_home(env) / "provider-token"
    out: list[tuple[str, Path | None]] = [("TAP_PROVIDER_TOKEN", None)]
    if _env(env, "TAP_PROVIDER_TOKEN_FILE"):
        out.append(("TAP_PROVIDER_TOKEN_FILE", Path(env["TAP_PROVIDER_TOKEN_FILE"])))
    files = [copilot_token_file(env), home_file]
    if url_source.endswith("gateway.json"):
        files.reverse()  # the token written next to the gateway.json we connect to
    out.extend((str(f), f) for f in files)
    return out


def find_token(explicit: str | None = None, url_source: str = "default",
               env: Mapping[str, str] | None = None) -> Found:
    """1. ``token=``; 2. ``TAP_PROVIDER_TOKEN``; 3. the file named by
    ``TAP_PROVIDER_TOKEN_FILE``; 4. ``<COPILOT_HOME>/extensions/tap/.provider-token``;
    5. ``$TAP_HOME/provider-token`` (4 and 5 swapped when the URL came from gateway.json).

    Raises LookupError naming every place looked at when none has a token."""
    env = os.environ if env is None else env
    if explicit:
        return Found(explicit, "token argument")
    for source, path in token_candidates(url_source, env):
        if path is None:
            value = _env(env, source)
        else:
            value = _read_token(path)
        if value:
            return Found(value, source)
    places = ", ".join(s for s, _ in token_candidates(url_source, env))
    raise LookupError(
        f"No provider token found (looked at {places}). Start the gateway (`tap gateway`), "
        "or run `eval \"$(tap env)\"` in this shell, or pass token=.")
