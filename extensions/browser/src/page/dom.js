// ISOLATED world, injected after src/limits.js and before console-ring.js, inspector.js and
// isolated.js (the order of the worker's ISOLATED file list). Reading the page: how an element
// is described (a unique selector, its text, attributes and box), and the outline, query and
// styles tools. Shares its functions with the later files through
// `globalThis.__tapPageParts.dom` (the isolated world's global: the page cannot see it).
(() => {
  "use strict";
  if (globalThis.__tapPage) return; // already injected (isolated.js defines __tapPage last)
  const L = globalThis.__tapLimits;
  if (!L) return; // src/limits.js must be injected first
  const parts = (globalThis.__tapPageParts ??= {});

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

  /** Elements of ours (the inspector's overlay): never reported, never matched. */
  const ours = new WeakSet();

  function isUniqueId(el) {
    try {
      return document.getElementById(el.id) === el && document.querySelectorAll(`#${CSS.escape(el.id)}`).length === 1;
    } catch {
      return false;
    }
  }

  /**
   * `tag`, or `tag:nth-of-type(i)` when the parent has other children of that tag. With a
   * cache, each parent's children are counted once: an outline of a list of 60,000 rows
   * would otherwise count all of them for every row it shows.
   */
  function segment(el, cache) {
    const parent = el.parentElement;
    let index = cache?.index.get(parent);
    if (!index) {
      index = { position: new Map(), count: new Map() };
      for (let s = parent.firstElementChild; s; s = s.nextElementSibling) {
        const n = (index.count.get(s.localName) ?? 0) + 1;
        index.count.set(s.localName, n);
        if (cache || s === el) index.position.set(s, n);
        if (!cache && s === el && n > 1) break; // already known to need nth-of-type
      }
      cache?.index.set(parent, index);
    }
    const tag = CSS.escape(el.localName);
    return index.count.get(el.localName) > 1 ? `${tag}:nth-of-type(${index.position.get(el)})` : tag;
  }

  /**
   * A selector that matches only `el`: `#id` when unique, else a child path from the nearest
   * unique id (or body). Climbs without recursion and stops once the path is longer than
   * MAX_SELECTOR_CHARS (a hostile page nests 100,000 divs): such a path starts with "…" and
   * is no longer usable, but its answer stays bounded. `cache` (`newCache()`) spares an outline
   * from climbing the same ancestors and counting the same siblings again.
   */
  const newCache = () => ({ selector: new Map(), index: new Map() });

  function selectorOf(el, cache) {
    const chain = [];
    let length = 0;
    let base = "";
    for (let n = el; n; n = n.parentElement) {
      if (cache?.selector.has(n)) {
        base = cache.selector.get(n);
        break;
      }
      if ((n.id && isUniqueId(n)) || !n.parentElement || n === document.body) {
        base = n.id && isUniqueId(n) ? `#${CSS.escape(n.id)}` : CSS.escape(n.localName);
        cache?.selector.set(n, base);
        break;
      }
      const seg = segment(n, cache);
      chain.push([n, seg]);
      length += seg.length + 3;
      if (length > L.MAX_SELECTOR_CHARS) {
        base = "…";
        break;
      }
    }
    let sel = base;
    for (let i = chain.length - 1; i >= 0; i--) {
      sel = cut(`${sel} > ${chain[i][1]}`, L.MAX_SELECTOR_CHARS);
      cache?.selector.set(chain[i][0], sel);
    }
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

  const describe = (el, cache) => ({ selector: selectorOf(el, cache), tag: el.localName, text: textOf(el), attributes: attributesOf(el), box: boxOf(el) });

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
    if (!el || ours.has(el)) throw new PageError("NOT_FOUND", `No element matches ${cut(selector, 200)}`);
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
    const cache = newCache();
    let truncated = false;
    let visited = 0;
    const stack = [[root, 0]];
    while (stack.length) {
      const [el, depth] = stack.pop();
      if (++visited > L.MAX_OUTLINE_VISITED || nodes.length >= maxNodes) {
        truncated = true;
        break;
      }
      if (ours.has(el) || SKIP.has(el.localName)) continue;
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
      found = [...document.querySelectorAll(args.selector)].filter((el) => !ours.has(el));
    } else {
      if (typeof args.text !== "string" || !args.text.trim() || args.text.length > L.MAX_QUERY_TEXT_CHARS) {
        throw invalid("text must be a non-empty string");
      }
      found = byText(args.text);
    }
    const cache = newCache();
    return { matches: found.slice(0, limit).map((el) => describe(el, cache)), total: found.length };
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
      acceptNode: (n) => (ours.has(n) || SKIP.has(n.localName) ? NodeFilter.FILTER_REJECT : NodeFilter.FILTER_ACCEPT),
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

  parts.dom = { PageError, invalid, cut, ours, selectorOf, describe, boxOf, visible, find, count, outline, query, styles };
})();
