import { test } from "node:test";
import assert from "node:assert/strict";
import { validate } from "../../dist/index.js";

const person = {
  type: "object",
  properties: {
    name: { type: "string", minLength: 1, maxLength: 5, pattern: "^[A-Z]" },
    age: { type: "integer", minimum: 0, exclusiveMaximum: 150 },
    tags: { type: "array", items: { type: "string", enum: ["a", "b"] }, maxItems: 2 },
    mode: { anyOf: [{ const: "x" }, { type: "number" }] },
    nick: { type: ["string", "null"] },
  },
  required: ["name"],
  additionalProperties: false,
};

test("valid input passes", () => {
  assert.equal(validate(person, { name: "Ada", age: 36, tags: ["a"], mode: 3, nick: null }), null);
  assert.equal(validate({}, { anything: 1 }), null);
  assert.equal(validate(undefined, 42), null);
});

test("each keyword reports the path and the reason", () => {
  const cases = [
    [{ name: 42 }, "/name", /is not of type "string"/],
    [{}, "", /"name" is a required property/],
    [{ name: "" }, "/name", /shorter than 1/],
    [{ name: "Adaline" }, "/name", /longer than 5/],
    [{ name: "ada" }, "/name", /does not match/],
    [{ name: "Ada", age: 1.5 }, "/age", /not of type "integer"/],
    [{ name: "Ada", age: -1 }, "/age", /less than the minimum/],
    [{ name: "Ada", age: 150 }, "/age", /not less than 150/],
    [{ name: "Ada", tags: ["c"] }, "/tags/0", /is not one of/],
    [{ name: "Ada", tags: ["a", "a", "b"] }, "/tags", /more than 2 items/],
    [{ name: "Ada", mode: "y" }, "/mode", /any of the given schemas/],
    [{ name: "Ada", extra: 1 }, "", /additional property "extra"/],
    [{ name: "Ada", nick: 3 }, "/nick", /"string" or "null"/],
  ];
  for (const [value, path, re] of cases) {
    const err = validate(person, value);
    assert.ok(err, `expected a failure for ${JSON.stringify(value)}`);
    assert.equal(err.path, path, JSON.stringify(value));
    assert.match(err.message, re);
  }
});

test("oneOf, allOf, not, multipleOf, nested paths with escaping", () => {
  assert.match(validate({ oneOf: [{ type: "number" }, { type: "integer" }] }, 3).message, /2 of the given schemas/);
  assert.equal(validate({ allOf: [{ type: "number" }, { minimum: 2 }] }, 1).path, "");
  assert.ok(validate({ not: { type: "string" } }, "s"));
  assert.ok(validate({ multipleOf: 0.5 }, 0.7));
  assert.equal(validate({ multipleOf: 0.1 }, 0.3), null);
  const nested = { type: "object", properties: { "a/b": { type: "object", properties: { c: { type: "boolean" } } } } };
  assert.equal(validate(nested, { "a/b": { c: "no" } }).path, "/a~1b/c");
  assert.ok(validate(false, 1));
});
