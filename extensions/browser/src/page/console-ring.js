// ISOLATED world, after dom.js. The console ring: main.js (MAIN world) hands each entry over
// as a CustomEvent `__tap_console__` on document (detail: a JSON string). Entries are kept in
// a ring of MAX_CONSOLE_ENTRIES (older ones counted in `dropped`) and time-stamped here (the
// page's clock is the page's); errors are forwarded to the worker with
// `chrome.runtime.sendMessage({type: "tap.console", entry})`, at most
// MAX_CONSOLE_FORWARDS_PER_SECOND (the rest stay in the ring only, counted in
// `forwardsDropped`). The page can dispatch that event too: that only adds console entries,
// exactly as calling console.error would. `__tap_console_replay__` asks main.js for the
// entries it kept from before this world listened.
(() => {
  "use strict";
  if (globalThis.__tapPage) return; // already injected (isolated.js defines __tapPage last)
  const L = globalThis.__tapLimits;
  if (!L) return; // src/limits.js must be injected first
  const parts = (globalThis.__tapPageParts ??= {});
  const { invalid, cut, count } = parts.dom;

  const LEVELS = ["error", "warn", "log", "info", "debug"];
  const ring = [];
  let dropped = 0;
  let forwardsDropped = 0;
  let windowStart = 0;
  let windowForwards = 0;

  function send(message) {
    try {
      return Promise.resolve(chrome.runtime.sendMessage(message)).catch(() => undefined);
    } catch {
      return Promise.resolve(undefined); // the extension was reloaded: this script is orphaned
    }
  }

  function onConsole(e) {
    const detail = e.detail;
    if (typeof detail !== "string" || detail.length > L.MAX_CONSOLE_DETAIL_CHARS) {
      dropped++;
      return;
    }
    let raw;
    try {
      raw = JSON.parse(detail);
    } catch {
      dropped++;
      return;
    }
    if (!raw || typeof raw !== "object") return;
    const now = Date.now();
    const entry = {
      // main.js's early entries (raised before we listened) keep their own, slightly older time.
      time: Number.isFinite(raw.time) && raw.time <= now && raw.time >= now - 60_000 ? raw.time : now,
      level: LEVELS.includes(raw.level) ? raw.level : "log",
      // A forged detail's text may be any JSON: String() of {toString: 1} would throw.
      text: cut(typeof raw.text === "string" ? raw.text : JSON.stringify(raw.text) ?? "", L.MAX_CONSOLE_TEXT_CHARS),
    };
    if (typeof raw.source === "string" && raw.source) entry.source = cut(raw.source, L.MAX_CONSOLE_SOURCE_CHARS);
    ring.push(entry);
    if (ring.length > L.MAX_CONSOLE_ENTRIES) {
      ring.shift();
      dropped++;
    }
    if (entry.level !== "error") return;
    if (now - windowStart >= 1000) {
      windowStart = now;
      windowForwards = 0;
    }
    if (windowForwards >= L.MAX_CONSOLE_FORWARDS_PER_SECOND) {
      forwardsDropped++;
      return;
    }
    windowForwards++;
    send({ type: "tap.console", entry });
  }

  function sinceOf(since) {
    if (since === undefined) return 0;
    const t = typeof since === "number" ? since : typeof since === "string" ? Date.parse(since) : NaN;
    if (!Number.isFinite(t)) throw invalid("since must be a time in ms since the epoch or an ISO date");
    return t;
  }

  function consoleEntries(args) {
    const since = sinceOf(args.since);
    let levels = LEVELS;
    if (args.levels !== undefined) {
      if (!Array.isArray(args.levels) || !args.levels.every((l) => LEVELS.includes(l))) {
        throw invalid(`levels must be a list of ${LEVELS.join(", ")}`);
      }
      levels = args.levels;
    }
    const limit = count(args.limit, "limit", L.CONSOLE_DEFAULT_LIMIT, L.LOG_MAX_LIMIT);
    const all = ring.filter((e) => e.time >= since && levels.includes(e.level));
    // The newest `limit`, oldest first; the older matches left out are counted too.
    const entries = all.slice(-limit).map((e) => ({ ...e }));
    return { entries, dropped: dropped + (all.length - entries.length), forwardsDropped };
  }

  function start() {
    document.addEventListener("__tap_console__", onConsole);
    // main.js answers synchronously with the entries it kept (MAX_EARLY_CONSOLE_ENTRIES).
    document.dispatchEvent(new CustomEvent("__tap_console_replay__"));
  }
  function stop() {
    document.removeEventListener("__tap_console__", onConsole);
    ring.length = 0;
  }

  parts.consoleRing = { send, consoleEntries, start, stop };
})();
