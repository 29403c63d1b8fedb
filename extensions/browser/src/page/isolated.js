// Injected into a shared tab's ISOLATED world (the extension's content-script world: same DOM,
// its own globals, invisible to the page), after src/limits.js:
// `executeScript({files: ["src/limits.js", "src/page/isolated.js"], world: "ISOLATED"})`.
//
// Defines `globalThis.__tapPage` with outline, query, picked, styles, consoleEntries, click,
// type, pickStart, pickStop, unshare. Each takes one JSON object and RETURNS AN ENVELOPE,
// never throws: `{ok: value}` or `{error: {code, message}}` (executeScript passes return values
// through structured cloning, and a thrown Error would lose its `.code` on the way).
// Codes: INVALID_JSON (bad arguments), NOT_FOUND (no such element / nothing picked),
// NOT_VISIBLE (click/type on an element that is not rendered), DISABLED.
//
// Also here:
// - the inspector (pickStart): an overlay in a closed Shadow DOM on a plain <div> (not a
//   custom element the page could define), `all: initial`, max z-index. While picking, a
//   transparent shield covers the page: the hovered element (found under it with
//   elementsFromPoint) is outlined with its selector; a click picks it and never reaches the
//   page's elements; Escape cancels. Only trusted (user) events count: the page cannot fake a
//   pick. After a pick, the "Ask the agent" box (its field has focus: type and press Enter)
//   sends `chrome.runtime.sendMessage({type: "tap.ask", question, element})`, element being
//   what picked() returns. The host carries `data-tap-state` = picking | asking | idle (page
//   code can see the overlay exists anyway; tests wait on it).
// - the console ring: main.js (MAIN world) hands entries over as CustomEvent `__tap_console__`
//   (detail: JSON string). Kept in a ring of MAX_CONSOLE_ENTRIES (older ones counted in
//   `dropped`), time stamped here (the page's clock is the page's), errors forwarded with
//   `chrome.runtime.sendMessage({type: "tap.console", entry})` at most
//   MAX_CONSOLE_FORWARDS_PER_SECOND (the rest only kept in the ring, counted in
//   `forwardsDropped`). The page can dispatch that event too: that only adds console entries,
//   exactly like calling console.error itself.
// - React: the fiber expandos live in the MAIN world; for a picked element this asks main.js
//   with a CustomEvent `__tap_react__` on the element and reads the synchronous
//   `__tap_react_reply__` (page data: the page could answer instead).
//
// Idempotent: a second injection finds `__tapPage` and does nothing; unshare() removes the
// overlay and listeners and deletes `__tapPage`, so sharing again starts afresh.
(() => {
  "use strict";
  if (globalThis.__tapPage) return;
  const L = globalThis.__tapLimits;
  if (!L) return; // src/limits.js must be injected first

  class PageError extends Error {
    constructor(code, message) {
      super(message);
      this.code = code;
    }
  }
  const invalid = (message) => new PageError("INVALID_JSON", message);

  function cut(s, max) {
    s = String(s);
    return s.length <= max ? s : `${s.slice(0, max)}… [+${s.length - max} chars]`;
  }
  const squash = (s) => String(s ?? "").replace(/\s+/g, " ").trim();

  // ---- describing elements -----------------------------------------------------------

  let host = null; // the overlay's host element: never reported, never matched

  function isUniqueId(el) {
    try {
      return document.getElementById(el.id) === el && document.querySelectorAll(`#${CSS.escape(el.id)}`).length === 1;
    } catch {
      return false;
    }
  }

  /** A selector that matches only `el`: `#id` when unique, else a child path from the nearest unique id (or body). */
  function selectorOf(el, cache) {
    if (cache?.has(el)) return cache.get(el);
    let sel;
    const parent = el.parentElement;
    const tag = CSS.escape(el.localName);
    if (el.id && isUniqueId(el)) sel = `#${CSS.escape(el.id)}`;
    else if (!parent || el === document.body) sel = tag;
    else {
      let index = 0;
      let count = 0;
      for (let s = parent.firstElementChild; s; s = s.nextElementSibling) {
        if (s.localName === el.localName) {
          count++;
          if (s === el) index = count;
        }
      }
      sel = `${selectorOf(parent, cache)} > ${count > 1 ? `${tag}:nth-of-type(${index})` : tag}`;
    }
    sel = cut(sel, L.MAX_SELECTOR_CHARS);
    cache?.set(el, sel);
    return sel;
  }

  function textOf(el) {
    if (el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement) {
      // A password's characters are not the agent's to read.
      if (el.type === "password") return el.value ? "••••" : "";
      return cut(el.value, L.MAX_NODE_TEXT_CHARS);
    }
    if (el instanceof HTMLSelectElement) return cut(squash(el.selectedOptions[0]?.textContent), L.MAX_NODE_TEXT_CHARS);
    return cut(squash(el.textContent), L.MAX_NODE_TEXT_CHARS);
  }

  function attributesOf(el) {
    const out = {};
    const attrs = el.attributes;
    const n = Math.min(attrs.length, L.MAX_ATTRIBUTES);
    for (let i = 0; i < n; i++) out[attrs[i].name] = cut(attrs[i].value, L.MAX_ATTRIBUTE_VALUE_CHARS);
    if (attrs.length > n) out["…"] = `${attrs.length - n} more attributes`;
    return out;
  }

  function boxOf(el) {
    const r = el.getBoundingClientRect();
    return { x: Math.round(r.x), y: Math.round(r.y), width: Math.round(r.width), height: Math.round(r.height) };
  }

  const describe = (el) => ({ selector: selectorOf(el), tag: el.localName, text: textOf(el), attributes: attributesOf(el), box: boxOf(el) });

  const visible = (el) => el.checkVisibility({ checkOpacity: true, checkVisibilityCSS: true });

  function find(selector) {
    if (typeof selector !== "string" || !selector || selector.length > L.MAX_SELECTOR_CHARS) {
      throw invalid("selector must be a non-empty CSS selector string");
    }
    let el;
    try {
      el = document.querySelector(selector);
    } catch {
      throw invalid(`Not a valid CSS selector: ${cut(selector, 200)}`);
    }
    if (!el || el === host) throw new PageError("NOT_FOUND", `No element matches ${cut(selector, 200)}`);
    return el;
  }

  function count(value, name, dflt, max) {
    if (value === undefined) return dflt;
    if (!Number.isInteger(value) || value < 1) throw invalid(`${name} must be a positive integer`);
    return Math.min(value, max);
  }

  // ---- outline -----------------------------------------------------------------------

  const SKIP = new Set(["script", "style", "noscript", "template", "head", "meta", "link", "title", "base"]);
  const INPUT_ROLES = {
    button: "button", submit: "button", reset: "button", image: "button", checkbox: "checkbox", radio: "radio",
    range: "slider", number: "spinbutton", search: "searchbox", email: "textbox", tel: "textbox", text: "textbox",
    url: "textbox", password: "textbox",
  };
  const TAG_ROLES = {
    button: "button", nav: "navigation", main: "main", header: "banner", footer: "contentinfo", aside: "complementary",
    form: "form", ul: "list", ol: "list", li: "listitem", img: "img", table: "table", tr: "row", td: "cell",
    th: "columnheader", dialog: "dialog", textarea: "textbox", select: "combobox", option: "option", p: "paragraph",
    h1: "heading", h2: "heading", h3: "heading", h4: "heading", h5: "heading", h6: "heading", progress: "progressbar",
    summary: "button", details: "group", fieldset: "group", hr: "separator", article: "article", svg: "img",
  };
  const NAME_FROM_CONTENT = new Set([
    "button", "link", "heading", "tab", "menuitem", "option", "cell", "columnheader", "rowheader", "treeitem",
    "checkbox", "radio", "switch", "tooltip",
  ]);

  function roleOf(el) {
    const explicit = el.getAttribute("role");
    if (explicit) return explicit.trim().split(/\s+/)[0];
    const tag = el.localName;
    if (tag === "a" || tag === "area") return el.hasAttribute("href") ? "link" : undefined;
    if (tag === "input") return INPUT_ROLES[el.type] ?? (el.type === "hidden" ? undefined : "textbox");
    if (tag === "section" && (el.hasAttribute("aria-label") || el.hasAttribute("aria-labelledby"))) return "region";
    return TAG_ROLES[tag];
  }

  function nameOf(el, role) {
    const max = L.MAX_NODE_TEXT_CHARS;
    const labelledby = el.getAttribute("aria-labelledby");
    if (labelledby) {
      const text = labelledby.split(/\s+/).slice(0, 10).map((id) => document.getElementById(id)?.textContent ?? "").join(" ");
      if (squash(text)) return cut(squash(text), max);
    }
    const label = el.getAttribute("aria-label");
    if (label && squash(label)) return cut(squash(label), max);
    if (el.labels?.length) return cut(squash(el.labels[0].textContent), max);
    if (el.localName === "img" && el.hasAttribute("alt")) return cut(squash(el.alt), max);
    if (NAME_FROM_CONTENT.has(role)) {
      const text = squash(el.textContent);
      if (text) return cut(text, max);
    }
    const fallback = el.getAttribute("placeholder") || el.getAttribute("title");
    return fallback ? cut(squash(fallback), max) : undefined;
  }

  /** The element's own text (its text-node children), not its descendants'. */
  function ownText(el) {
    let text = "";
    for (let c = el.firstChild; c && text.length <= L.MAX_NODE_TEXT_CHARS; c = c.nextSibling) {
      if (c.nodeType === Node.TEXT_NODE) text += c.data;
    }
    return cut(squash(text), L.MAX_NODE_TEXT_CHARS);
  }

  function outline(args) {
    const maxNodes = count(args.maxNodes, "maxNodes", L.OUTLINE_DEFAULT_NODES, L.OUTLINE_MAX_NODES);
    const maxDepth = count(args.maxDepth, "maxDepth", L.OUTLINE_DEFAULT_DEPTH, L.OUTLINE_MAX_DEPTH);
    const root = args.selector === undefined ? document.body ?? document.documentElement : find(args.selector);
    const nodes = [];
    const cache = new Map();
    let truncated = false;
    let visited = 0;
    const stack = [[root, 0]];
    while (stack.length) {
      const [el, depth] = stack.pop();
      if (++visited > L.MAX_OUTLINE_VISITED || nodes.length >= maxNodes) {
        truncated = true;
        break;
      }
      if (el === host || SKIP.has(el.localName)) continue;
      let childDepth = depth;
      if (!visible(el)) {
        // display: contents has no box of its own but its children may be visible.
        if (getComputedStyle(el).display !== "contents") continue;
      } else {
        const role = roleOf(el);
        const name = role ? nameOf(el, role) : undefined;
        let text = el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement ? textOf(el) : ownText(el);
        if (text === name) text = "";
        if (role || text || el === root) {
          if (depth >= maxDepth) {
            truncated = true;
            continue;
          }
          const node = { depth, tag: el.localName, selector: selectorOf(el, cache) };
          if (role) node.role = role;
          if (name) node.name = name;
          if (text) node.text = text;
          nodes.push(node);
          childDepth = depth + 1;
          if (el.localName === "svg") continue; // an icon: its paths are not an outline
        }
      }
      for (let c = el.lastElementChild; c; c = c.previousElementSibling) stack.push([c, childDepth]);
    }
    return {
      url: cut(location.href, L.MAX_URL_CHARS),
      title: cut(document.title, L.MAX_TITLE_CHARS),
      nodes,
      truncated,
    };
  }

  // ---- query -------------------------------------------------------------------------

  function query(args) {
    const hasSelector = args.selector !== undefined;
    const hasText = args.text !== undefined;
    if (hasSelector === hasText) throw invalid("give exactly one of selector or text");
    const limit = count(args.limit, "limit", L.QUERY_DEFAULT_LIMIT, L.QUERY_MAX_LIMIT);
    let found;
    if (hasSelector) {
      find(args.selector); // validates; NOT_FOUND when nothing matches
      found = [...document.querySelectorAll(args.selector)].filter((el) => el !== host);
    } else {
      if (typeof args.text !== "string" || !args.text.trim() || args.text.length > L.MAX_QUERY_TEXT_CHARS) {
        throw invalid("text must be a non-empty string");
      }
      found = byText(args.text);
    }
    return { matches: found.slice(0, limit).map(describe), total: found.length };
  }

  /**
   * The innermost elements whose own text, label, placeholder, title or value contains
   * `needle` (case-insensitive), in document order; at most MAX_QUERY_VISITED nodes are read.
   */
  function byText(needle) {
    const lower = squash(needle).toLowerCase();
    const out = new Set();
    const root = document.body ?? document.documentElement;
    const walker = document.createTreeWalker(root, NodeFilter.SHOW_ELEMENT | NodeFilter.SHOW_TEXT, {
      acceptNode: (n) => (n === host || SKIP.has(n.localName) ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT),
    });
    for (let n = walker.currentNode, i = 0; n && i < L.MAX_QUERY_VISITED; n = walker.nextNode(), i++) {
      if (n.nodeType === Node.TEXT_NODE) {
        if (n.parentElement && squash(n.data).toLowerCase().includes(lower)) out.add(n.parentElement);
      } else {
        const own = [n.getAttribute("aria-label"), n.getAttribute("placeholder"), n.getAttribute("title"), n.getAttribute("alt")];
        if ((n instanceof HTMLInputElement && n.type !== "password") || n instanceof HTMLTextAreaElement) own.push(n.value);
        if (own.some((s) => s && s.toLowerCase().includes(lower))) out.add(n);
      }
    }
    return [...out];
  }

  // ---- styles ------------------------------------------------------------------------

  const DEFAULT_STYLES = [
    "display", "position", "top", "right", "bottom", "left", "width", "height", "margin", "padding", "border",
    "box-sizing", "overflow", "z-index", "flex-direction", "justify-content", "align-items", "gap",
    "grid-template-columns", "color", "background-color", "font-family", "font-size", "font-weight", "line-height",
    "text-align", "opacity", "visibility", "transform", "cursor", "pointer-events",
  ];

  function styles(args) {
    const el = find(args.selector);
    let props = DEFAULT_STYLES;
    if (args.properties !== undefined) {
      const p = args.properties;
      if (!Array.isArray(p) || p.length > L.MAX_STYLE_PROPERTIES || !p.every((s) => typeof s === "string" && s && s.length <= 100)) {
        throw invalid(`properties must be a list of at most ${L.MAX_STYLE_PROPERTIES} CSS property names`);
      }
      props = p;
    }
    const computed = getComputedStyle(el);
    const out = {};
    for (const p of props) out[p] = cut(computed.getPropertyValue(p), L.MAX_STYLE_VALUE_CHARS);
    return { selector: selectorOf(el), box: boxOf(el), styles: out };
  }

  // ---- console ring ------------------------------------------------------------------

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

  // ---- actions -----------------------------------------------------------------------

  function actionable(el, selector) {
    if (!visible(el)) throw new PageError("NOT_VISIBLE", `${cut(selector, 200)} is not visible`);
    if (el.matches(":disabled")) throw new PageError("DISABLED", `${cut(selector, 200)} is disabled`);
  }

  function click(args) {
    const el = find(args.selector);
    actionable(el, args.selector);
    el.scrollIntoView({ block: "center", inline: "center" });
    const r = el.getBoundingClientRect();
    const at = { bubbles: true, cancelable: true, composed: true, view: window, clientX: r.x + r.width / 2, clientY: r.y + r.height / 2, button: 0 };
    el.dispatchEvent(new PointerEvent("pointerdown", { ...at, pointerType: "mouse", isPrimary: true }));
    el.dispatchEvent(new MouseEvent("mousedown", { ...at, buttons: 1 }));
    if (el instanceof HTMLElement) el.focus({ preventScroll: true });
    el.dispatchEvent(new PointerEvent("pointerup", { ...at, pointerType: "mouse", isPrimary: true }));
    el.dispatchEvent(new MouseEvent("mouseup", at));
    // click() runs the element's activation (links follow, checkboxes toggle, forms submit).
    if (el instanceof HTMLElement) el.click();
    else el.dispatchEvent(new MouseEvent("click", at));
    return { clicked: args.selector };
  }

  /**
   * Replaces the field's content with `text`, as a user selecting all and typing would. The
   * value goes through the prototype's setter: React's value tracker lives in the MAIN world,
   * so it still sees a change and its onChange runs on the input event.
   */
  function type(args) {
    if (typeof args.text !== "string" || args.text.length > L.MAX_TYPE_TEXT_CHARS) {
      throw invalid(`text must be a string of at most ${L.MAX_TYPE_TEXT_CHARS} characters`);
    }
    const el = find(args.selector);
    actionable(el, args.selector);
    el.focus?.({ preventScroll: false });
    if (el instanceof HTMLInputElement || el instanceof HTMLTextAreaElement) {
      const setter = Object.getOwnPropertyDescriptor(Object.getPrototypeOf(el), "value").set;
      setter.call(el, args.text);
      el.dispatchEvent(new InputEvent("input", { bubbles: true, composed: true, inputType: "insertText", data: args.text }));
      el.dispatchEvent(new Event("change", { bubbles: true }));
    } else if (el.isContentEditable) {
      document.getSelection()?.selectAllChildren(el);
      document.execCommand("insertText", false, args.text);
    } else {
      throw invalid(`${cut(args.selector, 200)} is not a text field`);
    }
    if (args.submit === true) {
      const key = { key: "Enter", code: "Enter", keyCode: 13, which: 13, bubbles: true, cancelable: true, composed: true };
      const proceed = el.dispatchEvent(new KeyboardEvent("keydown", key));
      el.dispatchEvent(new KeyboardEvent("keyup", key));
      if (proceed && el.form && el instanceof HTMLInputElement) el.form.requestSubmit();
    }
    return { typed: [...args.text].length };
  }

  // ---- React (through main.js) -------------------------------------------------------

  const replies = new Map();
  function onReactReply(e) {
    try {
      const r = JSON.parse(String(e.detail));
      if (typeof r?.id === "string" && replies.has(r.id)) replies.set(r.id, r);
    } catch {
      // not ours
    }
  }

  /** main.js's summary of the component rendering `el`, or undefined (no React, or no main.js). */
  function reactOf(el) {
    const id = crypto.randomUUID();
    replies.set(id, null);
    try {
      el.dispatchEvent(new CustomEvent("__tap_react__", { detail: JSON.stringify({ id }), bubbles: true, composed: true }));
      const r = replies.get(id);
      return r?.react && typeof r.react === "object" ? r.react : undefined;
    } finally {
      replies.delete(id);
    }
  }

  // ---- picking and the inspector overlay ---------------------------------------------

  let picked = null; // {el, pickedAt, snapshot}
  let ui = null; // the overlay's parts while it exists
  let hovered = null;
  let frame = 0;

  const STYLE = `
    :host { all: initial; }
    .shield { position: fixed; inset: 0; pointer-events: auto; cursor: crosshair; background: transparent; }
    .box { position: fixed; pointer-events: none; border: 2px solid #4f46e5; background: rgba(79, 70, 229, 0.15);
      border-radius: 2px; box-sizing: border-box; display: none; }
    .label { position: fixed; pointer-events: none; display: none; max-width: 60vw; overflow: hidden; white-space: nowrap;
      text-overflow: ellipsis; font: 12px/1.4 ui-monospace, monospace; color: #fff; background: #312e81;
      padding: 2px 6px; border-radius: 3px; }
    .ask { position: fixed; pointer-events: auto; display: none; width: 320px; box-sizing: border-box; padding: 10px;
      font: 13px/1.4 system-ui, sans-serif; color: #111827; background: #fff; border: 1px solid #c7d2fe;
      border-radius: 6px; box-shadow: 0 8px 24px rgba(0, 0, 0, 0.2); }
    .ask .title { font-weight: 600; margin: 0 0 6px; display: flex; justify-content: space-between; }
    .ask .sel { font: 11px ui-monospace, monospace; color: #4b5563; margin: 0 0 6px; overflow: hidden;
      white-space: nowrap; text-overflow: ellipsis; }
    .ask input { width: 100%; box-sizing: border-box; padding: 5px 6px; border: 1px solid #9ca3af; border-radius: 4px;
      font: inherit; color: inherit; background: #fff; }
    .ask .row { display: flex; gap: 6px; margin-top: 6px; align-items: center; }
    .ask button { font: inherit; padding: 4px 10px; border-radius: 4px; border: 1px solid #4f46e5; background: #4f46e5;
      color: #fff; cursor: pointer; }
    .ask button.close { background: transparent; color: #4b5563; border: none; padding: 0 4px; font-size: 16px; }
    .ask .status { font-size: 12px; color: #4b5563; }
  `;

  function buildOverlay() {
    host = document.createElement("div");
    host.setAttribute("data-tap-inspector", "");
    host.style.setProperty("all", "initial", "important");
    host.style.setProperty("position", "fixed", "important");
    host.style.setProperty("inset", "0", "important");
    host.style.setProperty("z-index", "2147483647", "important");
    host.style.setProperty("pointer-events", "none", "important");
    const shadow = host.attachShadow({ mode: "closed" });
    shadow.innerHTML = `<style>${STYLE}</style>
      <div class="box"></div><div class="label"></div>
      <form class="ask" autocomplete="off">
        <div class="title"><span>Ask the agent</span><button type="button" class="close" aria-label="Close">×</button></div>
        <div class="sel"></div>
        <input type="text" name="question" placeholder="What should the agent do with this element?">
        <div class="row"><button type="submit">Ask the agent</button><span class="status" role="status"></span></div>
      </form>`;
    const $ = (s) => shadow.querySelector(s);
    ui = { shadow, box: $(".box"), label: $(".label"), ask: $(".ask"), sel: $(".ask .sel"), input: $(".ask input"), status: $(".ask .status"), shield: null };
    ui.input.maxLength = L.MAX_ASK_QUESTION_CHARS;
    ui.ask.addEventListener("submit", onAskSubmit);
    $(".ask .close").addEventListener("click", (e) => e.isTrusted && closeAsk());
    // Keys typed into the question (and the click Enter makes on the submit button) stay in
    // the overlay: the page's shortcuts and click handlers must not fire.
    for (const t of ["keydown", "keyup", "keypress", "input", "beforeinput", "click", "mousedown", "mouseup", "pointerdown", "pointerup"]) {
      ui.ask.addEventListener(t, (e) => {
        if (e.type === "keydown" && e.key === "Escape" && e.isTrusted) closeAsk();
        e.stopPropagation();
      });
    }
    document.documentElement.append(host);
  }

  function setState(s) {
    host?.setAttribute("data-tap-state", s);
  }

  function showBox(el) {
    if (!ui) return;
    if (!el?.isConnected) {
      ui.box.style.display = ui.label.style.display = "none";
      return;
    }
    const r = el.getBoundingClientRect();
    Object.assign(ui.box.style, { display: "block", left: `${r.x}px`, top: `${r.y}px`, width: `${r.width}px`, height: `${r.height}px` });
    ui.label.textContent = `${cut(selectorOf(el), L.MAX_LABEL_CHARS)}  ${Math.round(r.width)}×${Math.round(r.height)}`;
    ui.label.style.display = "block";
    ui.label.style.left = `${Math.max(0, r.x)}px`;
    ui.label.style.top = `${r.y >= 22 ? r.y - 22 : Math.min(r.bottom + 2, innerHeight - 22)}px`;
  }

  function elementAt(x, y) {
    for (const el of document.elementsFromPoint(x, y)) if (el !== host && el !== document.documentElement) return el;
    return null;
  }

  function onShieldMove(e) {
    if (!e.isTrusted) return;
    const { clientX: x, clientY: y } = e;
    if (frame) return;
    frame = requestAnimationFrame(() => {
      frame = 0;
      hovered = elementAt(x, y);
      showBox(hovered);
    });
  }

  // Swallowed in the shadow tree, so nothing bubbles to the page's elements or its root
  // listeners (React's). Only window/document capture listeners see them, on the host.
  function swallow(e) {
    e.preventDefault();
    e.stopPropagation();
  }

  function onShieldClick(e) {
    swallow(e);
    if (!e.isTrusted || e.button !== 0) return;
    const el = elementAt(e.clientX, e.clientY);
    if (!el) return;
    pick(el);
  }

  function onKeyDown(e) {
    if (!e.isTrusted || e.key !== "Escape" || !ui) return;
    if (host.getAttribute("data-tap-state") === "picking") {
      swallow(e);
      e.stopImmediatePropagation();
      stopPicking();
    }
  }

  function reposition() {
    if (!ui) return;
    const state = host.getAttribute("data-tap-state");
    if (state === "picking") showBox(hovered);
    else if (state === "asking") placeAsk();
  }

  function pickStart() {
    if (!ui || !host.isConnected) {
      host?.remove();
      buildOverlay();
    }
    closeAsk();
    if (!ui.shield) {
      ui.shield = document.createElement("div");
      ui.shield.className = "shield";
      ui.shield.addEventListener("mousemove", onShieldMove);
      for (const t of ["pointerdown", "mousedown", "pointerup", "mouseup", "dblclick", "contextmenu", "auxclick"]) {
        ui.shield.addEventListener(t, swallow);
      }
      ui.shield.addEventListener("click", onShieldClick);
      ui.shadow.append(ui.shield);
    }
    setState("picking");
    return { picking: true };
  }

  function stopPicking() {
    ui?.shield?.remove();
    if (ui) ui.shield = null;
    hovered = null;
    showBox(null);
    setState("idle");
  }

  function pickStop() {
    stopPicking();
    closeAsk();
    return { picking: false };
  }

  function pick(el) {
    stopPicking();
    const snapshot = { ...describe(el), pickedAt: Date.now() };
    const react = reactOf(el);
    if (react) snapshot.react = react;
    picked = { el, snapshot };
    openAsk(snapshot);
  }

  function placeAsk() {
    const el = picked?.el;
    showBox(el);
    const r = el?.isConnected ? el.getBoundingClientRect() : { left: 8, bottom: 8 };
    const w = 320;
    const h = ui.ask.offsetHeight || 130;
    const below = r.bottom + 8 + h <= innerHeight;
    ui.ask.style.left = `${Math.max(8, Math.min(r.left, innerWidth - w - 8))}px`;
    ui.ask.style.top = `${below ? r.bottom + 8 : Math.max(8, (r.top ?? 8) - h - 8)}px`;
  }

  function openAsk(snapshot) {
    ui.sel.textContent = cut(snapshot.react ? `${snapshot.react.component} · ${snapshot.selector}` : snapshot.selector, L.MAX_LABEL_CHARS);
    ui.status.textContent = "";
    ui.input.value = "";
    ui.ask.style.display = "block";
    setState("asking");
    placeAsk();
    ui.input.focus();
  }

  function closeAsk() {
    if (!ui) return;
    ui.ask.style.display = "none";
    showBox(null);
    if (host.getAttribute("data-tap-state") === "asking") setState("idle");
  }

  async function onAskSubmit(e) {
    e.preventDefault();
    e.stopPropagation();
    if (!e.isTrusted || !picked) return;
    const question = ui.input.value.trim().slice(0, L.MAX_ASK_QUESTION_CHARS);
    if (!question) {
      ui.status.textContent = "Type a question first";
      return;
    }
    const element = currentPicked();
    ui.status.textContent = "Sending…";
    const answer = await send({ type: "tap.ask", question, element });
    if (!ui) return;
    if (answer?.error) ui.status.textContent = cut(answer.error.message || answer.error.code, 200);
    else if (answer === undefined) ui.status.textContent = "Could not reach the Tap extension";
    else {
      ui.status.textContent = "Sent to the agent";
      ui.input.value = "";
    }
  }

  /** What was picked, refreshed while the element is still in the page (props and boxes change). */
  function currentPicked() {
    const { el, snapshot } = picked;
    if (!el.isConnected) return { ...snapshot };
    const fresh = { ...describe(el), pickedAt: snapshot.pickedAt };
    const react = reactOf(el);
    if (react) fresh.react = react;
    return fresh;
  }

  function pickedElement() {
    if (!picked) throw new PageError("NOT_FOUND", "Nothing picked yet: click Pick element in the Tap extension's popup");
    return currentPicked();
  }

  // ---- wiring ------------------------------------------------------------------------

  const listeners = [
    [document, "__tap_console__", onConsole, false],
    [document, "__tap_react_reply__", onReactReply, true],
    [window, "keydown", onKeyDown, true],
    [window, "scroll", reposition, { capture: true, passive: true }],
    [window, "resize", reposition, { passive: true }],
  ];
  for (const [target, name, fn, opts] of listeners) target.addEventListener(name, fn, opts);
  // Entries main.js kept from before we listened (its replay is synchronous).
  document.dispatchEvent(new CustomEvent("__tap_console_replay__"));

  function unshare() {
    for (const [target, name, fn, opts] of listeners) target.removeEventListener(name, fn, opts);
    if (frame) cancelAnimationFrame(frame);
    host?.remove();
    host = ui = picked = hovered = null;
    ring.length = 0;
    delete globalThis.__tapPage;
    return { unshared: true };
  }

  function envelope(fn) {
    return (args) => {
      try {
        return { ok: fn(args && typeof args === "object" && !Array.isArray(args) ? args : {}) };
      } catch (e) {
        const code = e instanceof PageError ? e.code : "INTERNAL";
        return { error: { code, message: cut(e?.message ?? String(e), L.MAX_ERROR_MESSAGE_CHARS) } };
      }
    };
  }

  const api = { outline, query, picked: pickedElement, styles, consoleEntries, click, type, pickStart, pickStop, unshare };
  for (const k of Object.keys(api)) api[k] = envelope(api[k]);
  Object.defineProperty(globalThis, "__tapPage", { value: Object.freeze(api), configurable: true, enumerable: false, writable: false });
})();
