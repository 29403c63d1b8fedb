"""JSON Schemas from Python type hints, and a small validator for the schemas tools use.

Derivation covers: ``str``, ``int``, ``float``, ``bool``, ``None``, ``Any``, ``Literal[...]``,
``Optional[X]`` / ``X | None``, ``list[X]`` / ``tuple[X, ...]`` / ``set[X]``, ``dict[str, X]``,
``TypedDict`` and ``@dataclass`` classes (nested), ``Enum`` subclasses, and
``Annotated[X, "description"]``. Anything else is refused when the tool is declared, so a
mistake shows at import time rather than at the first call.

The validator implements the keywords listed in ``SUPPORTED_KEYWORDS``; other keywords are
ignored (the gateway validates every call against the full schema first, so this check is
the SDK's own guard, e.g. for tools whose schema changed while a call was on its way).
"""

from __future__ import annotations

import dataclasses
import enum
import math
import re
import types
import typing
from typing import Any, Literal, Union, get_args, get_origin

try:  # Python 3.11+: typing.is_typeddict; typing_extensions TypedDicts are covered too
    from typing import is_typeddict
except ImportError:  # pragma: no cover
    from typing_extensions import is_typeddict  # type: ignore

SUPPORTED_KEYWORDS = (
    "type", "enum", "const", "properties", "required", "additionalProperties", "items",
    "minItems", "maxItems", "uniqueItems", "minLength", "maxLength", "pattern", "minimum",
    "maximum", "exclusiveMinimum", "exclusiveMaximum", "multipleOf", "minProperties",
    "maxProperties", "anyOf", "oneOf", "allOf", "not",
)

_SCALARS: dict[Any, dict[str, Any]] = {
    str: {"type": "string"},
    int: {"type": "integer"},
    float: {"type": "number"},
    bool: {"type": "boolean"},
    type(None): {"type": "null"},
}


class SchemaError(TypeError):
    """A type hint the SDK cannot turn into a JSON Schema."""


def _json_type(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int):
        return "integer"
    if isinstance(value, float):
        return "number"
    if isinstance(value, str):
        return "string"
    raise SchemaError(f"Literal value {value!r} is not a JSON scalar")


def schema_for(hint: Any, where: str = "value") -> dict[str, Any]:
    """The JSON Schema of one type hint; ``where`` names it in errors."""
    if hint is Any or hint is object:
        return {}
    for scalar, schema in _SCALARS.items():  # not `in`: some hints are unhashable
        if hint is scalar:
            return dict(schema)
    origin = get_origin(hint)
    args = get_args(hint)
    if origin is typing.Annotated:
        inner = schema_for(args[0], where)
        for extra in args[1:]:
            if isinstance(extra, str):
                inner["description"] = extra
            elif isinstance(extra, dict):
                inner.update(extra)  # explicit schema keywords, e.g. {"minimum": 0}
        return inner
    if origin is Literal:
        values = list(args)
        kinds = sorted({_json_type(v) for v in values})
        kind: Any = kinds[0] if len(kinds) == 1 else kinds
        return {"type": kind, "enum": values}
    if origin in (Union, types.UnionType):
        options = [a for a in args if a is not type(None)]
        nullable = len(options) < len(args)
        if len(options) == 1:
            inner = schema_for(options[0], where)
        else:
            inner = {"anyOf": [schema_for(a, where) for a in options]}
        return _nullable(inner) if nullable else inner
    if origin in (list, set, frozenset, typing.Sequence, typing.List) or hint in (list, set):
        item = schema_for(args[0], f"{where}[]") if args else {}
        out: dict[str, Any] = {"type": "array", "items": item}
        if origin in (set, frozenset):
            out["uniqueItems"] = True
        return out
    if origin is tuple:
        if len(args) == 2 and args[1] is Ellipsis:
            return {"type": "array", "items": schema_for(args[0], f"{where}[]")}
        raise SchemaError(f"{where}: fixed-length tuples are not supported; use list[X]")
    if origin in (dict, typing.Mapping) or hint is dict:
        if args and args[0] is not str:
            raise SchemaError(f"{where}: dict keys must be str (JSON object keys)")
        value = schema_for(args[1], f"{where}{{}}") if args else {}
        return {"type": "object", "additionalProperties": value}
    if isinstance(hint, type) and issubclass(hint, enum.Enum):
        values = [m.value for m in hint]
        kinds = sorted({_json_type(v) for v in values})
        return {"type": kinds[0] if len(kinds) == 1 else kinds, "enum": values}
    if isinstance(hint, type) and is_typeddict(hint):
        return _object_schema(hint, typing.get_type_hints(hint, include_extras=True),
                              set(hint.__required_keys__), where)
    if isinstance(hint, type) and dataclasses.is_dataclass(hint):
        hints = typing.get_type_hints(hint, include_extras=True)
        fields = [f for f in dataclasses.fields(hint) if f.init]
        required = {f.name for f in fields if f.default is dataclasses.MISSING
                    and f.default_factory is dataclasses.MISSING}
        return _object_schema(hint, {f.name: hints[f.name] for f in fields}, required, where)
    raise SchemaError(
        f"{where}: cannot derive a JSON Schema from {hint!r}; use str, int, float, bool, "
        "Literal, Optional, list, dict[str, X], a TypedDict or a dataclass, or pass parameters=")


def _nullable(inner: dict[str, Any]) -> dict[str, Any]:
    kind = inner.get("type")
    if isinstance(kind, str) and set(inner) <= {"type", "enum", "description"}:
        out = dict(inner, type=[kind, "null"])
        if "enum" in out:
            out["enum"] = [*out["enum"], None]
        return out
    return {"anyOf": [inner, {"type": "null"}]}


def _object_schema(cls: type, hints: dict[str, Any], required: set[str], where: str) -> dict[str, Any]:
    props = {name: schema_for(h, f"{where}.{name}") for name, h in hints.items()}
    out: dict[str, Any] = {"type": "object", "properties": props,
                           "required": [n for n in hints if n in required],
                           "additionalProperties": False}
    doc = (cls.__doc__ or "").strip()
    # dataclasses get a generated "Name(a: int, …)" docstring; it is no description
    if doc and not doc.startswith(cls.__name__ + "("):
        out["description"] = doc.split("\n\n")[0].strip()
    if not out["required"]:
        del out["required"]
    return out


# --- validation -------------------------------------------------------------------------

def _pointer(path: list[str | int]) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in path) or "/"


def _is_type(value: Any, kind: str) -> bool:
    if kind == "string":
        return isinstance(value, str)
    if kind == "integer":
        return (isinstance(value, int) and not isinstance(value, bool)) or (
            isinstance(value, float) and value.is_integer())
    if kind == "number":
        return isinstance(value, (int, float)) and not isinstance(value, bool)
    if kind == "boolean":
        return isinstance(value, bool)
    if kind == "null":
        return value is None
    if kind == "array":
        return isinstance(value, list)
    if kind == "object":
        return isinstance(value, dict)
    return True  # an unknown type name: not ours to refuse


def _short(value: Any) -> str:
    import json
    text = json.dumps(value, ensure_ascii=False)
    return text if len(text) <= 60 else text[:57] + "..."


def _equal(a: Any, b: Any) -> bool:
    # JSON equality: 1 == 1.0, but true != 1
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    return a == b


def validate(schema: Any, value: Any, path: list[str | int] | None = None) -> str | None:
    """The first violation as ``"at '/a/0': message"``, or None when ``value`` conforms."""
    path = [] if path is None else path
    if schema is True or schema is None or schema == {}:
        return None
    if schema is False:
        return f"at '{_pointer(path)}': no value is allowed here"
    if not isinstance(schema, dict):
        return None
    here = f"at '{_pointer(path)}'"
    kind = schema.get("type")
    if kind is not None:
        kinds = kind if isinstance(kind, list) else [kind]
        if not any(_is_type(value, k) for k in kinds):
            want = " or ".join(f'"{k}"' for k in kinds)
            return f"{here}: {_short(value)} is not of type {want}"
    if "enum" in schema and not any(_equal(value, v) for v in schema["enum"]):
        return f"{here}: {_short(value)} is not one of {_short(schema['enum'])}"
    if "const" in schema and not _equal(value, schema["const"]):
        return f"{here}: {_short(value)} is not {_short(schema['const'])}"
    if isinstance(value, str):
        if len(value) < schema.get("minLength", 0):
            return f"{here}: {_short(value)} is shorter than {schema['minLength']}"
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            return f"{here}: {_short(value)} is longer than {schema['maxLength']}"
        if "pattern" in schema and not re.search(schema["pattern"], value):
            return f"{here}: {_short(value)} does not match {_short(schema['pattern'])}"
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        bound = _check_number(schema, value)
        if bound:
            return f"{here}: {_short(value)} {bound}"
    if isinstance(value, list):
        problem = _check_array(schema, value, path)
        if problem:
            return problem
    if isinstance(value, dict):
        problem = _check_object(schema, value, path)
        if problem:
            return problem
    return _check_combinators(schema, value, path, here)


def _check_number(schema: dict[str, Any], value: float) -> str | None:
    if "minimum" in schema and value < schema["minimum"]:
        return f"is less than the minimum of {schema['minimum']}"
    if "maximum" in schema and value > schema["maximum"]:
        return f"is greater than the maximum of {schema['maximum']}"
    if "exclusiveMinimum" in schema and value <= schema["exclusiveMinimum"]:
        return f"is less than or equal to the exclusive minimum of {schema['exclusiveMinimum']}"
    if "exclusiveMaximum" in schema and value >= schema["exclusiveMaximum"]:
        return f"is greater than or equal to the exclusive maximum of {schema['exclusiveMaximum']}"
    step = schema.get("multipleOf")
    if isinstance(step, (int, float)) and step > 0:
        quotient = value / step
        if not math.isclose(quotient, round(quotient), abs_tol=1e-9):
            return f"is not a multiple of {step}"
    return None


def _check_array(schema: dict[str, Any], value: list[Any], path: list[str | int]) -> str | None:
    here = f"at '{_pointer(path)}'"
    if len(value) < schema.get("minItems", 0):
        return f"{here}: has fewer than {schema['minItems']} items"
    if "maxItems" in schema and len(value) > schema["maxItems"]:
        return f"{here}: has more than {schema['maxItems']} items"
    if schema.get("uniqueItems"):
        seen: list[Any] = []
        for item in value:
            if any(_equal(item, s) for s in seen):
                return f"{here}: has non-unique items"
            seen.append(item)
    items = schema.get("items")
    if isinstance(items, (dict, bool)):
        for i, item in enumerate(value):
            problem = validate(items, item, [*path, i])
            if problem:
                return problem
    return None


def _check_object(schema: dict[str, Any], value: dict[str, Any], path: list[str | int]) -> str | None:
    here = f"at '{_pointer(path)}'"
    for name in schema.get("required", []):
        if name not in value:
            return f"{here}: {_short(name)} is a required property"
    if len(value) < schema.get("minProperties", 0):
        return f"{here}: has fewer than {schema['minProperties']} properties"
    if "maxProperties" in schema and len(value) > schema["maxProperties"]:
        return f"{here}: has more than {schema['maxProperties']} properties"
    props = schema.get("properties") or {}
    extra = schema.get("additionalProperties", True)
    for key, item in value.items():
        if key in props:
            problem = validate(props[key], item, [*path, key])
        elif extra is False:
            problem = f"{here}: additional property {_short(key)} is not allowed"
        else:
            problem = validate(extra, item, [*path, key])
        if problem:
            return problem
    return None


def _check_combinators(schema: dict[str, Any], value: Any, path: list[str | int], here: str) -> str | None:
    for sub in schema.get("allOf", []):
        problem = validate(sub, value, path)
        if problem:
            return problem
    if "anyOf" in schema and all(validate(s, value, path) for s in schema["anyOf"]):
        return f"{here}: {_short(value)} matches none of the allowed schemas"
    if "oneOf" in schema:
        matches = sum(1 for s in schema["oneOf"] if validate(s, value, path) is None)
        if matches != 1:
            return f"{here}: {_short(value)} must match exactly one schema, matches {matches}"
    if "not" in schema and validate(schema["not"], value, path) is None:
        return f"{here}: {_short(value)} matches a schema it must not match"
    return None
