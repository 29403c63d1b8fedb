// Pages for page.test.mjs (the page scripts without the extension): a plain page with
// something of every kind the tools read, a React app built from the registry's react and
// react-dom (this folder's node_modules, the versions the extension's e2e app uses), and a
// static server for them on 127.0.0.1:0.
//
// React 19 ships CommonJS only (no UMD build any more), so `reactBundle` wraps the CJS
// modules that `react` and `react-dom/client` require in a tiny module table, with
// `process.env.NODE_ENV` set to "development" or "production": the same files a bundler
// would take, loaded by a classic <script>.

import { existsSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import { once } from "node:events";
import path from "node:path";
import { fileURLToPath } from "node:url";

const HERE = path.dirname(fileURLToPath(import.meta.url));
// TAP_PAGE_REACT_NODE_MODULES: run the React cases against another install of react and
// react-dom (17 and 18 have been checked this way; 17 has no react-dom/client: legacy render).
export const NODE_MODULES = process.env.TAP_PAGE_REACT_NODE_MODULES || path.join(HERE, "node_modules");
// What users get when scripts/test-browser.sh built it (the zip, unzipped), else the sources.
export const EXTENSION = process.env.TAP_BROWSER_EXTENSION_DIR || path.resolve(HERE, "../../extensions/browser");
// The worker's file lists, in injection order (contract: "Worker ↔ page").
const file = (f) => path.join(EXTENSION, "src", f);
export const SCRIPTS = {
  main: ["limits.js", "page/values.js", "page/react.js", "page/main.js"].map(file),
  isolated: ["limits.js", "page/dom.js", "page/console-ring.js", "page/inspector.js", "page/isolated.js"].map(file),
};

export const reactInstalled = () => existsSync(path.join(NODE_MODULES, "react/package.json")) && existsSync(path.join(NODE_MODULES, "react-dom/package.json"));
export const reactVersion = () => JSON.parse(readFileSync(path.join(NODE_MODULES, "react/package.json"), "utf8")).version;

/** One classic script defining `window.React` and `window.ReactDOMClient` (17: `ReactDOM`) from the CJS builds. */
export function reactBundle(env) {
  const ids = new Map(); // absolute file -> module number
  const sources = [];
  const requires = [];
  const resolve = (from, req) => {
    if (req.startsWith(".")) {
      const p = path.resolve(path.dirname(from), req);
      return p.endsWith(".js") ? p : `${p}.js`;
    }
    const [pkg, ...sub] = req.split("/");
    return path.join(NODE_MODULES, pkg, sub.length ? `${sub.join("/")}.js` : "index.js");
  };
  const add = (file) => {
    if (ids.has(file)) return ids.get(file);
    const id = sources.length;
    ids.set(file, id);
    const src = readFileSync(file, "utf8");
    sources.push(src);
    requires.push({});
    for (const m of src.matchAll(/require\(["']([^"']+)["']\)/g)) requires[id][m[1]] = add(resolve(file, m[1]));
    return id;
  };
  const react = add(resolve(HERE, "react"));
  const hasClient = existsSync(resolve(HERE, "react-dom/client"));
  const dom = add(resolve(HERE, hasClient ? "react-dom/client" : "react-dom"));
  const table = sources.map((src, i) => `function (module, exports, require) {\n${src}\n}`).join(",\n");
  return `(function () {
  var process = { env: { NODE_ENV: ${JSON.stringify(env)} } };
  var defs = [${table}];
  var requires = ${JSON.stringify(requires)};
  var cache = [];
  function load(id) {
    if (cache[id]) return cache[id].exports;
    var module = (cache[id] = { exports: {} });
    defs[id].call(module.exports, module, module.exports, function (r) {
      if (!(r in requires[id])) throw new Error("not bundled: " + r);
      return load(requires[id][r]);
    });
    return module.exports;
  }
  window.React = load(${react});
  window.${hasClient ? "ReactDOMClient" : "ReactDOM"} = load(${dom});
})();`;
}

// The React app: a class component, function components with every common hook, forwardRef,
// memo, a controlled input, and props that are functions, elements, cycles, deep and long.
const APP = `
const { Component, createElement: h, forwardRef, memo, useEffect, useMemo, useReducer, useRef, useState } = React;
class Counter extends Component {
  constructor(props) { super(props); this.state = { count: 3, label: "clicks" }; }
  render() { return h("button", { id: "class-btn", onClick: () => this.setState({ count: this.state.count + 1 }) }, "Count " + this.state.count); }
}
function Badge({ tone }) { return h("span", { className: "badge" }, tone); }
const FancyInput = forwardRef(function FancyInput(props, ref) { return h("input", { ref, id: "fancy", placeholder: props.hint }); });
const PureLabel = memo(function PureLabel({ text }) { return h("em", { id: "pure" }, text); });
function TodoItem({ todo, onToggle, icon, config }) {
  const [done, setDone] = useState(todo.done);
  const [total, add] = useReducer((s, n) => s + n, 10);
  const ref = useRef(null);
  useEffect(() => {}, [done]);
  const doubled = useMemo(() => total * 2, [total]);
  return h("li", { id: "todo-" + todo.id, ref, onClick: () => { setDone(!done); add(1); } },
    h("span", { className: "title" }, todo.title + " " + doubled), h(Badge, { tone: done ? "done" : "open" }));
}
function Search() {
  const [q, setQ] = useState("");
  return h("label", null, "Search ", h("input", { id: "search", value: q, onChange: (e) => setQ(e.target.value) }), h("output", { id: "echo" }, q));
}
function App() {
  const cyclic = { name: "loop" };
  cyclic.self = cyclic;
  const config = { cyclic, deep: { a: { b: { c: { d: { e: { f: 1 } } } } } }, long: "x".repeat(5000), many: Array.from({ length: 500 }, (_, i) => i) };
  const [todos] = useState([{ id: 1, title: "Write tests", done: false }, { id: 2, title: "Ship", done: true }]);
  return h("main", null,
    h("h1", null, "Todos"),
    h("ul", { id: "list" }, todos.map((t) => h(TodoItem, { key: t.id, todo: t, onToggle: function toggleTodo() {}, icon: h(Badge, { tone: "x" }), config }))),
    h(Counter), h(FancyInput, { hint: "type here" }), h(PureLabel, { text: "pure" }), h(Search));
}
// A second root for the bounds: more hooks, children and owners than an answer lists.
function ManyHooks() {
  const values = [];
  for (let i = 0; i < 70; i++) values.push(useState(i)[0]); // a constant count: a legal loop of hooks
  return h("div", { id: "many" }, values.length);
}
function WideList() { return h("div", { id: "wide-list" }, Array.from({ length: 80 }, (_, i) => h(Badge, { key: i, tone: "w" + i }))); }
function Nest({ n }) { return n > 0 ? h(Nest, { n: n - 1 }) : h("i", { id: "deepest-nest" }, "deep"); }
function Bounds() { return h("div", null, h(ManyHooks), h(WideList), h(Nest, { n: 30 })); }
const render = (el, id) => window.ReactDOMClient ? ReactDOMClient.createRoot(document.getElementById(id)).render(el) : ReactDOM.render(el, document.getElementById(id)); // React 17: legacy render
render(h(App), "root");
render(h(Bounds), "bounds");
`;

// The plain page: landmarks, headings, a labelled input, a link, hidden things, a list long
// enough to cut, a button that counts the clicks and keys that reach the page.
const PLAIN = `<!doctype html><html><head><meta charset="utf-8"><title>Plain fixture</title>
<style>#save { color: rgb(200, 0, 0); padding: 4px 8px; display: inline-block } .gone { display: none } .ghost { visibility: hidden }</style>
</head><body>
<header><nav aria-label="Main"><a href="/plain.html#docs">Docs</a></nav></header>
<main>
  <h1>Settings</h1>
  <p>Change your <b>profile</b> here.</p>
  <label for="name">Name</label> <input id="name" value="Ada">
  <input id="pw" type="password" value="secret">
  <button id="save" data-testid="save-button" onclick="window.saveClicks = (window.saveClicks || 0) + 1">Save changes</button>
  <div class="gone"><button>Hidden button</button></div>
  <div class="ghost">Invisible text</div>
  <form id="search-form" onsubmit="event.preventDefault(); window.submitted = this.q.value"><input name="q" id="q"></form>
  <div id="notes" contenteditable="true">old note</div>
  <section aria-label="Items"><ul id="items"></ul></section>
</main>
<script>
  for (let i = 0; i < 100; i++) console.debug("early debug " + i);
  console.warn("early warning from the page");
  window.saveClicks = 0;
  window.pageClicks = 0;
  window.pageKeys = [];
  document.addEventListener("click", () => window.pageClicks++);
  document.addEventListener("keydown", (e) => window.pageKeys.push(e.key));
  const ul = document.getElementById("items");
  for (let i = 0; i < 400; i++) { const li = document.createElement("li"); li.textContent = "Item " + i; ul.append(li); }
</script>
</body></html>`;

// A hostile page for the bounds: 100 attributes of 10,000 characters, a million-character
// text, a long font stack, 1,000 nested divs (at 3,000 Chromium's renderer itself crashes), 60,000 rows, a text past the query's scan, and
// a button carrying a forged React fiber whose parent is itself.
const HUGE = `<!doctype html><html><head><meta charset="utf-8"><title>Huge fixture</title></head><body><script>
  const big = document.createElement("div");
  big.id = "attrs";
  for (let i = 0; i < 100; i++) big.setAttribute("data-a" + i, "v".repeat(10000));
  big.textContent = "T".repeat(1000000);
  big.style.fontFamily = Array.from({ length: 300 }, (_, i) => "Font" + i).join(", ");
  document.body.append(big);
  let deep = document.body;
  for (let i = 0; i < 1000; i++) { const d = document.createElement("div"); deep.append(d); deep = d; }
  deep.className = "deepest";
  deep.textContent = "deepest text";
  const wide = document.createElement("section");
  wide.id = "wide";
  for (let i = 0; i < 60000; i++) { const p = document.createElement("p"); p.textContent = "row " + i; wide.append(p); }
  document.body.append(wide);
  const needle = document.createElement("b");
  needle.textContent = "needle-after-the-limit";
  document.body.append(needle);
  const forged = document.createElement("button");
  forged.id = "forged";
  forged.textContent = "forged";
  const fiber = { tag: 5, type: { render: null } };
  fiber.return = fiber;
  fiber.type.type = fiber.type;
  forged.__reactFiber$evil = fiber;
  document.body.append(forged);
</script></body></html>`;

/** Chromium's flag that sends `page.test` to the fixture server's 127.0.0.1. */
export const HOST_RULE = "--host-resolver-rules=MAP page.test 127.0.0.1";

const REACT_PAGE = (env) => `<!doctype html><html><head><meta charset="utf-8"><title>React fixture</title></head>
<body><div id="root"></div><div id="bounds"></div><script src="/react.js?env=${env}"></script><script src="/app.js"></script></body></html>`;

/**
 * Serves the fixtures on 127.0.0.1:0; resolves with {url, close}. `url` is on the name
 * `page.test` (see HOST_RULE), so pages are not a secure context: most shared tabs are plain
 * http, where APIs like crypto.randomUUID do not exist.
 */
export async function serveFixtures() {
  const bundles = new Map();
  const server = createServer((req, res) => {
    const url = new URL(req.url, "http://x");
    const send = (type, body) => {
      res.writeHead(200, { "content-type": `${type}; charset=utf-8`, "cache-control": "no-store" });
      res.end(body);
    };
    if (url.pathname === "/plain.html") return send("text/html", PLAIN);
    if (url.pathname === "/csp.html") {
      // No 'unsafe-eval': evaluate must say the page forbids it.
      res.setHeader("content-security-policy", "script-src 'self' 'unsafe-inline'");
      return send("text/html", "<!doctype html><title>CSP fixture</title><p>strict</p>");
    }
    if (url.pathname === "/huge.html") return send("text/html", HUGE);
    if (url.pathname === "/react.html") return send("text/html", REACT_PAGE(url.searchParams.get("env") ?? "development"));
    if (url.pathname === "/app.js") return send("text/javascript", APP);
    if (url.pathname === "/react.js") {
      const env = url.searchParams.get("env") === "production" ? "production" : "development";
      if (!bundles.has(env)) bundles.set(env, reactBundle(env));
      return send("text/javascript", bundles.get(env));
    }
    res.writeHead(404).end();
  });
  server.listen(0, "127.0.0.1");
  await once(server, "listening");
  return { url: `http://page.test:${server.address().port}`, close: () => new Promise((r) => server.close(r)) };
}
