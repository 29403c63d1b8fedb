"""Tool definitions: a Python function plus the JSON Schema of its arguments."""

from __future__ import annotations

import asyncio
import dataclasses
import enum
import inspect
import os
import re
import threading
import types
import typing
from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, get_args, get_origin

from .schema import SchemaError, schema_for

# The gateway's rules for a tool name and timeout (provider-protocol.md, hello checks 7, 10),
# checked here too so a bad definition fails at declaration, naming the function.
TOOL_NAME = re.compile(r"^[A-Za-z0-9_-]{1,64}$")
MAX_TOOL_TIMEOUT_MS = 3_600_000


@dataclass
class CallContext:
    """What a handler can ask for by declaring a parameter annotated ``CallContext``."""

    call_id: str
    session_id: str
    tool: str
    progress: Callable[[str], None]
    # Set when the call is cancelled (tool.cancel, timeout); sync handlers, which cannot be
    # interrupted, poll it.
    cancelled: threading.Event
    persist_dir: str | None = None


class Progress:
    """Annotate a parameter ``Progress`` (or name it ``progress``) to receive a callable
    ``progress("60%")`` that sends `tool.progress` for this call. Safe from threads."""


@dataclass(frozen=True)
class FileResult:
    """Return this from a handler to answer with a file (results over 5 MiB). ``path`` must
    be inside the provider's ``persist_dir`` (see ``Provider.persist_dir``); ``size`` is
    read from the file when not given; ``ttl`` is in seconds (1 … 3600)."""

    path: str
    mime_type: str = "application/octet-stream"
    ttl: int = 300
    size: int | None = None

    def to_wire(self) -> dict[str, Any]:
        size = self.size if self.size is not None else os.stat(self.path).st_size
        return {"path": os.path.abspath(self.path), "mimeType": self.mime_type,
                "size": size, "ttl": self.ttl}


def _doc_parts(fn: Callable[..., Any]) -> tuple[str | None, dict[str, str]]:
    """The docstring's first paragraph, and Google/NumPy-ish ``name: text`` lines under an
    ``Args:``/``Parameters:`` heading."""
    doc = inspect.getdoc(fn)
    if not doc:
        return None, {}
    paragraphs = doc.split("\n\n")
    summary = " ".join(paragraphs[0].split())
    params: dict[str, str] = {}
    in_args = False
    current: str | None = None
    for line in doc.splitlines():
        stripped = line.strip()
        if stripped.lower() in ("args:", "arguments:", "parameters:", "params:"):
            in_args = True
            continue
        if not in_args:
            continue
        if not stripped:
            current = None
            continue
        if stripped.endswith(":") and not line.startswith((" ", "\t")):
            in_args = False  # the next heading (Returns:, Raises:)
            continue
        m = re.match(r"^(\w+)\s*(\([^)]*\))?\s*:\s*(.*)$", stripped)
        if m and line.startswith((" ", "\t")) and (len(line) - len(line.lstrip())) <= 8:
            current = m.group(1)
            params[current] = m.group(3).strip()
        elif current:
            params[current] = (params[current] + " " + stripped).strip()
    return (summary or None), params


def _injected(param: inspect.Parameter, hint: Any) -> str | None:
    """'progress' or 'context' for parameters the SDK fills in itself, else None."""
    if hint is CallContext:
        return "context"
    if hint is Progress or (param.name == "progress" and hint in (inspect.Parameter.empty, Progress, Any)):
        return "progress"
    origin = get_origin(hint)
    if param.name == "progress" and origin is not None and "Callable" in repr(hint):
        return "progress"
    return None


@dataclass
class Tool:
    """One declared tool. Build it with ``@provider.tool`` or ``Tool.from_function``."""

    name: str
    handler: Callable[..., Any]
    description: str | None = None
    parameters: dict[str, Any] = field(default_factory=lambda: {"type": "object", "properties": {}})
    timeout_ms: int | None = None
    # param name → converter from JSON (dataclass params are built from their dicts)
    converters: dict[str, Callable[[Any], Any]] = field(default_factory=dict)
    injected: dict[str, str] = field(default_factory=dict)
    takes_args_dict: bool = False  # explicit schema + a single `args` parameter

    @property
    def is_async(self) -> bool:
        return inspect.iscoroutinefunction(self.handler)

    def to_wire(self) -> dict[str, Any]:
        out: dict[str, Any] = {"name": self.name, "parameters": self.parameters}
        if self.description:
            out["description"] = self.description
        if self.timeout_ms is not None:
            out["timeout"] = self.timeout_ms
        return out

    @classmethod
    def from_function(cls, fn: Callable[..., Any], *, name: str | None = None,
                      description: str | None = None, parameters: dict[str, Any] | None = None,
                      timeout: float | None = None) -> "Tool":
        """``timeout`` is in seconds (the wire's ``timeout`` is milliseconds)."""
        tool_name = name or fn.__name__
        if not TOOL_NAME.match(tool_name):
            raise SchemaError(f"Tool name {tool_name!r} must be 1-64 characters of A-Z a-z 0-9 _ -")
        timeout_ms = None
        if timeout is not None:
            timeout_ms = int(round(timeout * 1000))
            if not 1 <= timeout_ms <= MAX_TOOL_TIMEOUT_MS:
                raise SchemaError(f"Tool {tool_name!r}: timeout must be 0.001 … 3600 seconds")
        summary, param_docs = _doc_parts(fn)
        sig = inspect.signature(fn)
        try:
            hints = typing.get_type_hints(fn, include_extras=True)
        except Exception as e:  # an unresolvable forward reference
            raise SchemaError(f"Tool {tool_name!r}: cannot read the type hints of {fn.__qualname__}: {e}") from e
        tool = cls(name=tool_name, handler=fn, description=description or summary, timeout_ms=timeout_ms)
        props: dict[str, Any] = {}
        required: list[str] = []
        for p in sig.parameters.values():
            hint = hints.get(p.name, inspect.Parameter.empty)
            kind = _injected(p, hint)
            if kind:
                tool.injected[p.name] = kind
                continue
            if p.kind in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
                raise SchemaError(f"Tool {tool_name!r}: *args/**kwargs cannot be described; name each argument")
            if p.kind is p.POSITIONAL_ONLY:
                raise SchemaError(f"Tool {tool_name!r}: positional-only parameter {p.name!r} cannot be passed by name")
            if parameters is not None:
                continue  # explicit schema: the parameters are filled from args by name
            schema = {} if hint is inspect.Parameter.empty else schema_for(hint, f"{tool_name}({p.name})")
            if p.name in param_docs and "description" not in schema:
                schema["description"] = param_docs[p.name]
            if p.default is p.empty:
                required.append(p.name)
            else:
                default = p.default
                if default is None or isinstance(default, (str, int, float, bool)):
                    schema.setdefault("default", default)
            props[p.name] = schema
            conv = _converter(hint)
            if conv:
                tool.converters[p.name] = conv
        if parameters is not None:
            if not isinstance(parameters, dict):
                raise SchemaError(f"Tool {tool_name!r}: parameters must be a JSON Schema object (a dict)")
            tool.parameters = parameters
            names = [n for n in sig.parameters if n not in tool.injected]
            tool.takes_args_dict = names == ["args"]
        else:
            tool.parameters = {"type": "object", "properties": props, "additionalProperties": False}
            if required:
                tool.parameters["required"] = required
        return tool

    async def invoke(self, args: dict[str, Any], injected: dict[str, Any]) -> Any:
        """Calls the handler: coroutine functions on the loop, plain functions in a thread
        (so a slow sync tool does not stall the connection)."""
        if self.takes_args_dict:
            kwargs = {"args": args}
        else:
            kwargs = {k: self.converters[k](v) if k in self.converters else v for k, v in args.items()}
        for pname, kind in self.injected.items():
            kwargs[pname] = injected[kind]
        try:
            if self.is_async:
                return await self.handler(**kwargs)
            result = await asyncio.to_thread(self.handler, **kwargs)
            if inspect.isawaitable(result):  # a sync function returning a coroutine
                return await typing.cast(Awaitable[Any], result)
            return result
        except SystemExit as e:
            # argparse or sys.exit() inside a tool: asyncio would let SystemExit out of the
            # event loop and end the provider, so it becomes an ordinary failure here.
            raise RuntimeError(f"Tool '{self.name}' called sys.exit({e.code!r})") from None


def _converter(hint: Any) -> Callable[[Any], Any] | None:
    """How to turn a JSON value into the annotated type, where that differs from the value
    itself (dataclasses, enums, lists/optionals of them). None: pass through."""
    origin = get_origin(hint)
    args = get_args(hint)
    if origin is typing.Annotated:
        return _converter(args[0])
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        hints = typing.get_type_hints(hint)
        subs = {n: _converter(h) for n, h in hints.items()}

        def build(value: Any, cls: Any = hint, subs: Any = subs) -> Any:
            if not isinstance(value, dict):
                return value
            return cls(**{k: subs[k](v) if subs.get(k) else v for k, v in value.items()})
        return build
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        return hint
    if origin in (list, set, frozenset) and args:
        inner = _converter(args[0])
        if inner:
            return lambda v, inner=inner, origin=origin: origin(inner(x) for x in v) if isinstance(v, list) else v
        if origin in (set, frozenset):
            return lambda v, origin=origin: origin(v) if isinstance(v, list) else v
    if origin in (typing.Union, types.UnionType):
        subs = [(a, _converter(a)) for a in args if a is not type(None)]
        if len(subs) == 1 and subs[0][1]:
            conv = subs[0][1]
            return lambda v, conv=conv: None if v is None else conv(v)
    return None  # scalars, Literal, TypedDict (a dict), dict[str, X]: the JSON value as is
