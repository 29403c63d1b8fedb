// MAIN world (the page's own), injected after src/limits.js and before react.js and main.js
// (the order of the worker's MAIN file list). What the MAIN-world files share: limits, the
// envelope every answer travels in, and bounded JSON-safe copies of page values (React props
// and state, evaluate's result, logged objects). Handed to the later files through
// `globalThis.__tapMainParts` (non-enumerable; main.js deletes it once `__tapMain` exists).
// This world is the page's: it can see and change all of it, so what comes out is page data.
(() => {
  "use strict";
  if (Object.prototype.hasOwnProperty.call(globalThis, "__tapMain")) return; // already injected (main.js defines it last)
  const limits = globalThis.__tapLimits;
  if (!limits || typeof limits !== "object") return; // src/limits.js must be injected first
  // A page that planted a bogus `__tapLimits` only gets empty answers (0 for a non-number).
  const L = (name) => (Number.isFinite(limits[name]) && limits[name] >= 0 ? limits[name] : 0);

  const hasOwn = Object.prototype.hasOwnProperty;
  const stringify = JSON.stringify;
  const dispatch = EventTarget.prototype.dispatchEvent;

  class PageError extends Error {
    constructor(code, message) {
      super(message);
      this.code = code;
    }
  }

  function cut(s, max) {
    s = String(s);
    return s.length <= max ? s : `${s.slice(0, max)}… [+${s.length - max} chars]`;
  }

  /** Wraps an API function: `{ok: value}` or `{error: {code, message}}`, for sync and async ones. */
  function envelope(fn) {
    return (args) => {
      try {
        const value = fn(args && typeof args === "object" ? args : {});
        if (value && typeof value.then === "function") {
          return value.then((v) => ({ ok: v }), (e) => ({ error: errorOf(e) }));
        }
        return { ok: value };
      } catch (e) {
        return { error: errorOf(e) };
      }
    };
  }

  function errorOf(e) {
    const code = e instanceof PageError ? e.code : "INTERNAL";
    return { code, message: cut(e?.message ?? String(e), L("MAX_ERROR_MESSAGE_CHARS")) };
  }

  // ---- bounded, JSON-safe copies of page values --------------------------------------

  const REACT_ELEMENT_TYPES = new Set([Symbol.for("react.element"), Symbol.for("react.transitional.element")]);

  /** A component type's name; `depth` stops a page's self-wrapping type objects. */
  function typeName(type, depth = 0) {
    if (typeof type === "string") return type;
    if (typeof type === "function") return String(type.displayName || type.name || "Anonymous");
    if (type && typeof type === "object" && depth < 5) {
      if (typeof type.displayName === "string" && type.displayName) return type.displayName;
      if (type.render) return typeName(type.render, depth + 1); // forwardRef
      if (type.type) return typeName(type.type, depth + 1); // memo
      if (type._context) return `${typeName(type._context, depth + 1)}.Consumer`;
      if (type.Provider || type.$$typeof === Symbol.for("react.context")) return "Context";
    }
    return "Anonymous";
  }

  /** A bounded copy: depth, entries per object, total values (`nodes`) and string length all capped. */
  function serialize(value, nodes = L("MAX_VALUE_NODES")) {
    const path = new Set();
    const maxDepth = L("MAX_VALUE_DEPTH");
    const maxEntries = L("MAX_VALUE_ENTRIES");
    const maxChars = L("MAX_VALUE_STRING_CHARS");
    const walk = (v, depth) => {
      if (--nodes < 0) return "…";
      switch (typeof v) {
        case "string":
          return cut(v, maxChars);
        case "number":
          return Number.isFinite(v) ? v : String(v);
        case "boolean":
          return v;
        case "undefined":
          return "undefined";
        case "bigint":
          return `${v}n`;
        case "symbol":
          return cut(v.toString(), maxChars);
        case "function":
          return `ƒ ${cut(v.name || "anonymous", maxChars)}`;
      }
      if (v === null) return null;
      try {
        if (REACT_ELEMENT_TYPES.has(v.$$typeof)) return `<${cut(typeName(v.type), maxChars)}>`;
        if (typeof Node === "function" && v instanceof Node) {
          return `<${v.nodeName.toLowerCase()}${v.id ? `#${cut(v.id, maxChars)}` : ""}>`;
        }
        if (path.has(v)) return "[Circular]";
        if (v instanceof Date) return Number.isNaN(v.getTime()) ? "Invalid Date" : v.toISOString();
        if (v instanceof RegExp) return cut(String(v), maxChars);
        if (v instanceof Error) return cut(`${v.name}: ${v.message}`, maxChars);
        if (typeof v.then === "function") return "Promise";
        if (depth >= maxDepth) return Array.isArray(v) ? `Array(${v.length})` : "{…}";
        path.add(v);
        try {
          if (v instanceof Map || v instanceof Set) {
            const items = [];
            for (const item of v) {
              if (items.length >= maxEntries || nodes <= 0) break;
              items.push(v instanceof Map ? [walk(item[0], depth + 1), walk(item[1], depth + 1)] : walk(item, depth + 1));
            }
            return { [`${v instanceof Map ? "Map" : "Set"}(${v.size})`]: items };
          }
          if (Array.isArray(v)) {
            const out = [];
            const n = Math.min(v.length, maxEntries);
            for (let i = 0; i < n && nodes > 0; i++) out.push(walk(v[i], depth + 1));
            if (out.length < v.length) out.push(`… ${v.length - out.length} more`);
            return out;
          }
          const out = {};
          let seen = 0;
          let more = 0;
          // for…in with a break: a page object with a million keys is never listed whole.
          for (const k in v) {
            if (!hasOwn.call(v, k)) continue;
            if (seen >= maxEntries || nodes <= 0) {
              more++;
              if (more > maxEntries) break;
              continue;
            }
            seen++;
            let item;
            try {
              item = v[k];
            } catch {
              item = "[getter threw]";
            }
            out[cut(k, maxChars)] = walk(item, depth + 1);
          }
          if (more) out["…"] = more > maxEntries ? "more keys" : `${more} more keys`;
          return out;
        } finally {
          path.delete(v);
        }
      } catch {
        return "[unreadable]";
      }
    };
    return walk(value, 0);
  }
  function formatValue(v) {
    if (typeof v === "string") return v;
    if (v instanceof Error) return v.stack || `${v.name}: ${v.message}`;
    const s = serialize(v, L("MAX_VALUE_NODES"));
    return typeof s === "string" ? s : stringify(s);
  }

  try {
    Object.defineProperty(globalThis, "__tapMainParts", {
      value: { values: { L, stringify, dispatch, PageError, cut, envelope, errorOf, typeName, serialize, formatValue } },
      configurable: true,
      enumerable: false,
      writable: true,
    });
  } catch {
    // the page made the name its own: no __tapMain then (the worker reports the scripts missing)
  }
})();
