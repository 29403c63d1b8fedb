"""tap_provider: write a TAP Provider Interface v2 provider in a few lines.

    from tap_provider import Provider
    provider = Provider("greeter")

    @provider.tool
    async def greet(name: str) -> str:
        "Greet someone by name."
        return f"Hello, {name}!"

    provider.run_forever()
"""

from ._dispatch import add_context, allow, deny
from ._events import PROTOCOL_VERSION, SessionInfo, default_chooser
from .discovery import find_token, find_url
from .errors import ConfigError, NotBound, RateLimited, TapError, ToolError
from .provider import Provider
from .schema import SchemaError, schema_for, validate
from .tools import CallContext, FileResult, Progress, Tool

__version__ = "2.0.0"

__all__ = [
    "Provider", "Tool", "CallContext", "Progress", "FileResult", "SessionInfo",
    "TapError", "ToolError", "RateLimited", "NotBound", "ConfigError", "SchemaError",
    "allow", "deny", "add_context", "default_chooser", "find_url", "find_token",
    "schema_for", "validate", "PROTOCOL_VERSION", "__version__",
]
