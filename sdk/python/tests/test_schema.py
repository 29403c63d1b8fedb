"""Unit: schemas derived from type hints, and the validator."""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Annotated, Any, Literal, Optional, TypedDict

import pytest

from tap_provider import SchemaError, Tool, schema_for, validate


class Opts(TypedDict, total=False):
    depth: int
    tags: list[str]


class Req(TypedDict):
    path: str


@dataclass
class Point:
    """A point in the plane."""

    x: float
    y: float = 0.0
    tags: list[str] = field(default_factory=list)


class Color(enum.Enum):
    RED = "red"
    BLUE = "blue"


@pytest.mark.parametrize("hint, schema", [
    (str, {"type": "string"}),
    (int, {"type": "integer"}),
    (float, {"type": "number"}),
    (bool, {"type": "boolean"}),
    (Any, {}),
    (Literal["a", "b"], {"type": "string", "enum": ["a", "b"]}),
    (Literal[1, 2], {"type": "integer", "enum": [1, 2]}),
    (Optional[str], {"type": ["string", "null"]}),
    (int | None, {"type": ["integer", "null"]}),
    (Literal["a"] | None, {"type": ["string", "null"], "enum": ["a", None]}),
    (list[int], {"type": "array", "items": {"type": "integer"}}),
    (set[str], {"type": "array", "items": {"type": "string"}, "uniqueItems": True}),
    (tuple[float, ...], {"type": "array", "items": {"type": "number"}}),
    (dict[str, bool], {"type": "object", "additionalProperties": {"type": "boolean"}}),
    (str | int, {"anyOf": [{"type": "string"}, {"type": "integer"}]}),
    (Annotated[int, "how many"], {"type": "integer", "description": "how many"}),
    (Annotated[int, {"minimum": 1}], {"type": "integer", "minimum": 1}),
    (Color, {"type": "string", "enum": ["red", "blue"]}),
    (Opts, {"type": "object", "additionalProperties": False, "properties": {
        "depth": {"type": "integer"}, "tags": {"type": "array", "items": {"type": "string"}}}}),
    (Req, {"type": "object", "additionalProperties": False, "required": ["path"],
           "properties": {"path": {"type": "string"}}}),
    (Point, {"type": "object", "additionalProperties": False, "required": ["x"],
             "description": "A point in the plane.",
             "properties": {"x": {"type": "number"}, "y": {"type": "number"},
                            "tags": {"type": "array", "items": {"type": "string"}}}}),
])
def test_schema_for(hint: Any, schema: dict[str, Any]) -> None:
    assert schema_for(hint) == schema


@pytest.mark.parametrize("hint", [bytes, tuple[int, str], dict[int, str], complex])
def test_unsupported_hints_are_refused_with_the_place(hint: Any) -> None:
    with pytest.raises(SchemaError, match=r"^f\(x\)"):
        schema_for(hint, "f(x)")


def test_function_schema_docstring_defaults_and_injection() -> None:
    async def search(query: str, limit: int = 10, mode: Literal["fast", "full"] = "fast",
                     opts: Opts | None = None, progress=None) -> list[str]:  # noqa: ANN001
        """Search the index.

        Longer text that is not the description.

        Args:
            query: what to look for
            limit: at most this many
                results (continued line)
        Returns:
            hits
        """
        return []

    t = Tool.from_function(search, timeout=2.5)
    wire = t.to_wire()
    assert wire["description"] == "Search the index."
    assert wire["timeout"] == 2500
    props = wire["parameters"]["properties"]
    assert list(props) == ["query", "limit", "mode", "opts"]  # progress is injected, not an argument
    assert props["query"] == {"type": "string", "description": "what to look for"}
    assert props["limit"] == {"type": "integer", "description": "at most this many results (continued line)",
                              "default": 10}
    assert wire["parameters"]["required"] == ["query"]
    assert wire["parameters"]["additionalProperties"] is False
    assert t.injected == {"progress": "progress"}


def test_explicit_schema_and_args_dict() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}}

    def f(args: dict) -> int:
        return args["n"]
    t = Tool.from_function(f, name="count", description="Count.", parameters=schema)
    assert t.to_wire() == {"name": "count", "description": "Count.", "parameters": schema}
    assert t.takes_args_dict


@pytest.mark.parametrize("kwargs, message", [
    ({"name": "bad name"}, "1-64 characters"),
    ({"timeout": 0}, "timeout"),
    ({"timeout": 4000}, "timeout"),
    ({"parameters": "nope"}, "JSON Schema object"),
])
def test_bad_tool_definitions(kwargs: dict[str, Any], message: str) -> None:
    def f(x: int) -> int:
        return x
    with pytest.raises(SchemaError, match=message):
        Tool.from_function(f, **kwargs)


def test_var_args_refused() -> None:
    def f(*items: int) -> None:
        return None
    with pytest.raises(SchemaError, match=r"\*args"):
        Tool.from_function(f)


OBJ = {"type": "object", "properties": {
    "name": {"type": "string", "minLength": 1, "maxLength": 5, "pattern": "^[a-z]+$"},
    "n": {"type": "integer", "minimum": 0, "exclusiveMaximum": 10, "multipleOf": 2},
    "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 2, "uniqueItems": True},
    "mode": {"enum": ["a", "b"]},
    "either": {"anyOf": [{"type": "string"}, {"type": "null"}]},
    "one": {"oneOf": [{"type": "integer"}, {"type": "number"}]},
}, "required": ["name"], "additionalProperties": False}


@pytest.mark.parametrize("value, error", [
    ({"name": "ada"}, None),
    ({"name": "ada", "n": 4.0, "tags": ["x"], "mode": "a", "either": None}, None),
    ({}, "at '/': \"name\" is a required property"),
    ({"name": 42}, "at '/name': 42 is not of type \"string\""),
    ({"name": ""}, "at '/name': \"\" is shorter than 1"),
    ({"name": "abcdef"}, "at '/name': \"abcdef\" is longer than 5"),
    ({"name": "AB"}, "does not match"),
    ({"name": "a", "n": True}, "at '/n': true is not of type \"integer\""),
    ({"name": "a", "n": -2}, "less than the minimum of 0"),
    ({"name": "a", "n": 10}, "exclusive maximum of 10"),
    ({"name": "a", "n": 3}, "not a multiple of 2"),
    ({"name": "a", "tags": ["x", 1]}, "at '/tags/1': 1 is not of type \"string\""),
    ({"name": "a", "tags": ["x", "x"]}, "non-unique"),
    ({"name": "a", "tags": ["x", "y", "z"]}, "more than 2 items"),
    ({"name": "a", "mode": "c"}, "is not one of [\"a\", \"b\"]"),
    ({"name": "a", "either": 1}, "matches none of the allowed schemas"),
    ({"name": "a", "one": 1}, "exactly one schema, matches 2"),
    ({"name": "a", "extra": 1}, "additional property \"extra\" is not allowed"),
    ([], "at '/': [] is not of type \"object\""),
])
def test_validate(value: Any, error: str | None) -> None:
    result = validate(OBJ, value)
    if error is None:
        assert result is None
    else:
        assert result is not None and error in result, result


def test_validate_ignores_unknown_keywords_and_empty_schemas() -> None:
    assert validate({}, {"anything": 1}) is None
    assert validate({"type": "object", "x-custom": 1, "$comment": "c"}, {}) is None
    assert validate({"type": "object", "properties": {"a": {"format": "email"}}}, {"a": "nope"}) is None
    assert validate({"type": "number"}, 1) is None and validate({"type": "integer"}, 1.0) is None
    assert validate({"const": 1}, True) is not None  # JSON: true is not 1


def test_pointer_escapes() -> None:
    assert validate({"properties": {"a/b": {"type": "string"}}}, {"a/b": 1}).startswith("at '/a~1b'")
