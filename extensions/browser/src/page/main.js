// Injected into a shared tab's MAIN world (the page's own JavaScript world), last of the
// worker's MAIN file list: `executeScript({files: ["src/limits.js", "src/page/values.js",
// "src/page/react.js", "src/page/main.js"], world: "MAIN"})`. values.js and react.js leave
// their parts in `globalThis.__tapMainParts`, which this file deletes once it is done.
//
// Console capture: wraps console.error/warn/log/info/debug and listens to `error` and
// `unhandledrejection`, handing each entry to isolated.js's console ring as a CustomEvent
// `__tap_console__` on `document` (detail: a JSON string `{level, text, source?, time}`;
// strings are what crosses worlds). Entries raised before the isolated world listens are kept
// (MAX_EARLY_CONSOLE_ENTRIES) and replayed once when it asks with `__tap_console_replay__`.
//
// `globalThis.__tapMain = {reactTree(args), evaluate(args)}` (non-enumerable, frozen) is
// called by the worker with `executeScript({world: "MAIN", func: (m, a) =>
// globalThis.__tapMain?.[m]?.(a), args})`. Each returns an envelope, because a thrown error
// loses its `.code` on the way to the worker: `{ok: value}` or `{error: {code, message}}`
// (`evaluate` returns a Promise of one; executeScript awaits it). Codes: INVALID_JSON,
// NOT_FOUND, NOT_REACT (no React on the page), EVAL_ERROR (the code threw or its promise
// rejected), EVAL_BLOCKED (the page's CSP forbids eval), TIMEOUT, INTERNAL.
//
// Trust: this world is the page's. The page can see and replace everything here, forge the
// events, or define `__tapMain`/`__tapLimits` before us; what comes out of this world is page
// data, never authority. Its bounds are a courtesy: isolated.js and the worker bound again.
// Idempotent: a second injection finds `__tapMain` and does nothing.
(() => {
  "use strict";
  if (Object.prototype.hasOwnProperty.call(globalThis, "__tapMain")) return; // already injected (main.js defines it last)
  const parts = globalThis.__tapMainParts;
  if (!parts?.values || !parts.react) return;
  const { L, stringify, dispatch, PageError, envelope, serialize, formatValue, cut } = parts.values;
  const indirectEval = globalThis.eval;

  // ---- console capture ---------------------------------------------------------------

  const early = [];
  let isolatedListening = false;
  let reporting = false;

  function report(entry) {
    // A page listener of our event that logs would call back into us: drop that echo.
    if (reporting) return;
    reporting = true;
    try {
      entry.text = cut(entry.text, L("MAX_CONSOLE_TEXT_CHARS"));
      if (entry.source) entry.source = cut(entry.source, L("MAX_CONSOLE_SOURCE_CHARS"));
      entry.time = Date.now();
      if (!isolatedListening) {
        early.push(entry);
        if (early.length > L("MAX_EARLY_CONSOLE_ENTRIES")) early.shift();
      }
      dispatch.call(document, new CustomEvent("__tap_console__", { detail: stringify(entry) }));
    } catch {
      // Never let capture break the page's own console call.
    } finally {
      reporting = false;
    }
  }

  /** console's own `%s %d %i %f %o %O %c` substitutions, then the remaining arguments. */
  function formatArgs(args) {
    const max = L("MAX_CONSOLE_TEXT_CHARS");
    const parts = [];
    let rest = 0;
    if (typeof args[0] === "string" && args[0].includes("%")) {
      rest = 1;
      parts.push(
        args[0].replace(/%([sdifoOc%])/g, (m, f) => {
          if (f === "%") return "%";
          if (rest >= args.length) return m;
          const a = args[rest++];
          if (f === "c") return "";
          if (f === "d" || f === "i") return String(parseInt(a, 10));
          if (f === "f") return String(parseFloat(a));
          return formatValue(a);
        }),
      );
    }
    let length = parts[0]?.length ?? 0;
    for (let i = rest; i < args.length && length <= max; i++) {
      const s = formatValue(args[i]);
      parts.push(s);
      length += s.length + 1;
    }
    return parts.join(" ");
  }

  /** "url:line:col" of the frame that called console.x (the wrapper is frame 1). */
  function callerSource(stack) {
    const line = String(stack || "").split("\n")[2] || "";
    const m = line.match(/\((.*)\)\s*$/) || line.match(/at (.*)$/);
    return m ? m[1].trim() : undefined;
  }

  for (const level of ["error", "warn", "log", "info", "debug"]) {
    const original = console[level];
    if (typeof original !== "function") continue;
    console[level] = function (...args) {
      try {
        report({ level, text: formatArgs(args), source: callerSource(new Error().stack) });
      } catch {
        // a page value that throws on every access still gets logged below
      }
      return original.apply(this, args);
    };
  }

  globalThis.addEventListener("error", (e) => {
    if (!(e instanceof ErrorEvent)) return;
    const text = e.error instanceof Error ? formatValue(e.error) : String(e.message);
    const source = e.filename ? `${e.filename}:${e.lineno}:${e.colno}` : undefined;
    report({ level: "error", text: `Uncaught ${text}`, source });
  });
  globalThis.addEventListener("unhandledrejection", (e) => {
    report({ level: "error", text: `Unhandled rejection: ${formatValue(e.reason)}` });
  });
  document.addEventListener("__tap_console_replay__", () => {
    isolatedListening = true;
    const pending = early.splice(0);
    for (const entry of pending) {
      dispatch.call(document, new CustomEvent("__tap_console__", { detail: stringify(entry) }));
    }
  });

  // ---- evaluate ----------------------------------------------------------------------

  async function evaluate(args) {
    const expr = args.expression;
    if (typeof expr !== "string" || !expr.trim()) throw new PageError("INVALID_JSON", "expression must be a non-empty string");
    if (expr.length > L("MAX_EVALUATE_EXPRESSION_CHARS")) throw new PageError("INVALID_JSON", "expression is too long");
    let value;
    try {
      // As an expression first (so `{a: 1}` is an object), else as statements (completion value).
      try {
        value = indirectEval(`(${expr}\n)`);
      } catch (e) {
        if (!(e instanceof SyntaxError)) throw e;
        value = indirectEval(expr);
      }
    } catch (e) {
      if (e instanceof EvalError) throw new PageError("EVAL_BLOCKED", `The page's Content-Security-Policy forbids evaluating code: ${e.message}`);
      throw new PageError("EVAL_ERROR", formatValue(e));
    }
    if (value && typeof value.then === "function") {
      let timer;
      const timeout = new Promise((_, reject) => {
        timer = setTimeout(() => reject(new PageError("TIMEOUT", `The promise did not settle within ${L("EVALUATE_TIMEOUT_MS")} ms`)), L("EVALUATE_TIMEOUT_MS"));
      });
      try {
        value = await Promise.race([value, timeout]);
      } catch (e) {
        if (e instanceof PageError) throw e;
        throw new PageError("EVAL_ERROR", `Rejected: ${formatValue(e)}`);
      } finally {
        clearTimeout(timer);
      }
    }
    return { value: serialize(value) };
  }

  Object.defineProperty(globalThis, "__tapMain", {
    value: Object.freeze({ reactTree: envelope(parts.react.reactTree), evaluate: envelope(evaluate) }),
    enumerable: false,
    configurable: false,
    writable: false,
  });
  delete globalThis.__tapMainParts;
})();
