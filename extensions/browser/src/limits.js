// Every limit of the browser extension, named once, each with why.
//
// One file for three places: the service worker imports it (`import "../limits.js"`, a module
// with no exports), and the worker injects it before the page scripts with
// `executeScript({files: ["src/limits.js", "src/page/isolated.js"]})` (ISOLATED world) and
// `["src/limits.js", "src/page/main.js"]` (MAIN world). So it has no import/export and no
// top-level `const` (a second injection into the same page must not throw): it sets
// `globalThis.__tapLimits` once. Readers take `globalThis.__tapLimits.NAME`.
// In the MAIN world the page can set `__tapLimits` first: main.js's bounds are only a
// courtesy there; the isolated world and the worker enforce the real ones.
globalThis.__tapLimits ??= Object.freeze({
  // ---- helper "ext": service worker, popup, tool schemas -------------------------------

  // Tool arguments (the worker's parameter schemas declare these; the page code may read
  // them too instead of naming its own).
  /** browser_outline: nodes when `maxNodes` is not given (a useful first look, ~30 KB). */
  OUTLINE_DEFAULT_NODES: 300,
  /** browser_outline: most nodes one call may ask for (the answer stays well under 1 MiB). */
  OUTLINE_MAX_NODES: 2000,
  /** browser_outline: depth when `maxDepth` is not given. */
  OUTLINE_DEFAULT_DEPTH: 12,
  /** browser_outline: deepest `maxDepth` accepted (deeper trees are wrappers of wrappers). */
  OUTLINE_MAX_DEPTH: 64,
  /** browser_query: matches when `limit` is not given. */
  QUERY_DEFAULT_LIMIT: 20,
  /** browser_query: most matches one call may ask for. */
  QUERY_MAX_LIMIT: 100,
  /** browser_console: entries when `limit` is not given. */
  CONSOLE_DEFAULT_LIMIT: 100,
  /** browser_console / browser_failed_requests: most entries one call may ask for. */
  LOG_MAX_LIMIT: 500,
  /** browser_failed_requests: entries when `limit` is not given. */
  FAILED_REQUESTS_DEFAULT_LIMIT: 100,
  /** A CSS selector argument: longer ones are refused by the schema (no real selector is this long). */
  MAX_SELECTOR_CHARS: 2000,
  /** browser_query's `text` argument. */
  MAX_QUERY_TEXT_CHARS: 1000,
  /** browser_styles: properties one call may name. */
  MAX_STYLE_PROPERTIES: 100,
  /** browser_styles: one property name (the longest standard ones are ~40). */
  MAX_STYLE_PROPERTY_CHARS: 100,
  /** browser_type: text typed in one call. */
  MAX_TYPE_TEXT_CHARS: 10000,
  /** browser_evaluate: the expression's length. */
  MAX_EVALUATE_EXPRESSION_CHARS: 20000,
  /** browser_navigate's URL, and any URL the worker keeps (failed requests, metadata). */
  MAX_URL_CHARS: 2048,
  /** How much of a refused argument an error message quotes back. */
  MAX_ECHO_CHARS: 100,
  /** Per-tool timeout declared to the gateway: page calls are DOM reads, a hung page must not hold a call for the gateway's 120 s default. */
  PAGE_TOOL_TIMEOUT_MS: 20000,

  // What the worker passes on from the page (the MAIN world is the page's: never trusted to be small).
  /** Longest string kept in any tool answer from the page; longer ones are cut with a marker. */
  MAX_RESULT_STRING_CHARS: 20000,
  /** Longest list kept in any tool answer from the page (cut; the object gets `truncated: true` where it has room). */
  MAX_RESULT_LIST_ITEMS: 2000,
  /** An object key in a tool answer from the page. */
  MAX_RESULT_KEY_CHARS: 200,
  /** Deepest nesting kept in any tool answer from the page. */
  MAX_RESULT_DEPTH: 32,
  /** A tool answer from the page over this many bytes of JSON is refused PAYLOAD_TOO_LARGE (the SDK's own cap is 5 MiB). */
  MAX_RESULT_BYTES: 2 * 1024 * 1024,
  /** browser_screenshot: base64 characters of the PNG; bigger ones (huge HiDPI windows) are refused PAYLOAD_TOO_LARGE under the SDK's 5 MiB. */
  MAX_SCREENSHOT_BASE64_CHARS: 4 * 1024 * 1024,

  // Connections and pushes.
  /** Tabs shared at once: each is one WebSocket and one gateway instance. */
  MAX_SHARED_TABS: 20,
  /** `metadata.title` sent in `hello` (the gateway's label in the `target` description). */
  MAX_TITLE_CHARS: 200,
  /** Failed requests remembered per shared tab (oldest dropped, counted in `dropped`). */
  MAX_FAILED_REQUESTS_PER_TAB: 300,
  /** Pushes to the `browser-errors` stream per tab per minute; the rest are dropped (counted). */
  MAX_ERROR_PUSHES_PER_MINUTE: 30,
  /** The event text of one push (a console error's text, a URL). */
  MAX_PUSH_EVENT_CHARS: 2000,
  /** "Ask the agent": the question the user typed. */
  MAX_ASK_QUESTION_CHARS: 4000,
  /** "Ask the agent": the element context added to the prompt (selector, text, component). */
  MAX_ASK_CONTEXT_CHARS: 2000,
  /** "Ask the agent": the picked element's text quoted in that context. */
  MAX_ASK_ELEMENT_TEXT_CHARS: 300,
  /** "Ask the agent": owner components named in that context. */
  MAX_ASK_OWNERS: 8,
  /** A push's short event text when its prompt carries the whole (the ask's question as the stream shows it). */
  MAX_PUSH_TITLE_CHARS: 200,
  /** A network error's name from chrome.webRequest (net::ERR_… names are short). */
  MAX_NET_ERROR_CHARS: 200,
  /** One message from a content script, as JSON: bigger ones are ignored (a page cannot make the worker parse megabytes). */
  MAX_CONTENT_MESSAGE_BYTES: 64 * 1024,
  /** With shared tabs, the worker does something this often (the focused tab's connection sends a message; an extension API call): an MV3 worker idles out after 30 s without events, traffic or API calls. */
  KEEPALIVE_INTERVAL_MS: 20000,
  /** How often an alarm wakes the worker while tabs are shared: Chrome may stop it anyway (an
   * update of the extension, memory pressure, DevTools' Stop), and a woken worker reconnects
   * its shared tabs. 0.5 min is the shortest period Chrome allows (from Chrome 120; older
   * versions round it up to 1 min). */
  WAKE_ALARM_MINUTES: 0.5,
  /** After a connection could not start (gateway down, DUPLICATE_INSTANCE of a dying old connection), wait this long before trying again; doubled on each failure in a row… */
  CONNECT_RETRY_MS: 3000,
  /** …up to this (a gateway started later is found within half a minute). */
  CONNECT_RETRY_MAX_MS: 30000,
  /** The popup's check that a gateway answers at the URL (GET /healthz on loopback: fast or not there). */
  HEALTH_CHECK_TIMEOUT_MS: 2000,
  /** The gateway URL typed in the popup. */
  MAX_GATEWAY_URL_CHARS: 200,
  /** A pairing code typed in the popup (the gateway's are 6 digits). */
  MAX_PAIRING_CODE_CHARS: 32,
  /** The popup lists at most this many tabs (the rest are counted). */
  MAX_POPUP_TABS: 200,
  /** The open popup asks the worker for its state this often (this also keeps the worker up while the user reads a code). */
  POPUP_POLL_MS: 1000,
  /** An error text shown in the popup (a pairing failure's message from the gateway). */
  MAX_POPUP_ERROR_CHARS: 300,

  // ---- helper "page": isolated.js, main.js ---------------------------------------------
  // (page code also reads the tool-argument limits above: OUTLINE_*, QUERY_*, CONSOLE_DEFAULT_LIMIT,
  // LOG_MAX_LIMIT, MAX_SELECTOR_CHARS, MAX_TYPE_TEXT_CHARS, MAX_ASK_QUESTION_CHARS, ...)
  /** Console entries kept per page (a ring: the oldest go first, counted in `dropped`). */
  MAX_CONSOLE_ENTRIES: 500,
  /** One console entry's text (arguments formatted and joined); longer text is cut with a marker. */
  MAX_CONSOLE_TEXT_CHARS: 2000,
  /** A console entry's source ("url:line:col"). */
  MAX_CONSOLE_SOURCE_CHARS: 500,
  /** One `__tap_console__` event's JSON detail: bigger ones (only a page forging them makes these) are dropped unparsed. */
  MAX_CONSOLE_DETAIL_CHARS: 16000,
  /** Console errors forwarded to the worker per second (the rest stay in the ring only): a flood costs the worker nothing. */
  MAX_CONSOLE_FORWARDS_PER_SECOND: 5,
  /** Entries main.js keeps from before isolated.js listens (a navigation's first scripts run between the two injections). */
  MAX_EARLY_CONSOLE_ENTRIES: 50,
  /** An element's text, accessible name or value in outline, query and picked answers. */
  MAX_NODE_TEXT_CHARS: 300,
  /** Attributes listed per element (the rest counted). */
  MAX_ATTRIBUTES: 30,
  /** One attribute's value (a data: URL in `src` is megabytes). */
  MAX_ATTRIBUTE_VALUE_CHARS: 300,
  /** Elements one outline walks: a page of a million nodes answers in bounded time, `truncated: true`. */
  MAX_OUTLINE_VISITED: 20000,
  /** Nodes one text query reads (same reason). */
  MAX_QUERY_VISITED: 50000,
  /** One computed style value (grid templates and font stacks can be long). */
  MAX_STYLE_VALUE_CHARS: 500,
  /** The selector shown in the inspector's label and Ask box (display only). */
  MAX_LABEL_CHARS: 120,
  /** An error message returned by a page method. */
  MAX_ERROR_MESSAGE_CHARS: 1000,
  /** Page values (React props and state, evaluate's result, logged objects): nesting kept. */
  MAX_VALUE_DEPTH: 5,
  /** Page values: values copied in one serialisation (the budget that bounds the whole answer). */
  MAX_VALUE_NODES: 400,
  /** Page values: one string. */
  MAX_VALUE_STRING_CHARS: 1000,
  /** Page values: entries of one object, array, Map or Set (the rest counted). */
  MAX_VALUE_ENTRIES: 50,
  /** React: values copied from each owner's props (owners are context, the component is the subject). */
  MAX_OWNER_VALUE_NODES: 40,
  /** React: hooks listed for one function component. */
  MAX_REACT_HOOKS: 50,
  /** React: owners (or enclosing components in production builds) listed. */
  MAX_REACT_OWNERS: 20,
  /** React: child components listed in a tree answer, all levels together. */
  MAX_REACT_CHILDREN: 50,
  /** React: levels of child components listed. */
  MAX_REACT_CHILD_DEPTH: 4,
  /** React: fibers or DOM parents stepped through in one walk (a cycle in page-forged fibers ends here). */
  MAX_REACT_FIBER_STEPS: 5000,
  /** React: elements scanned for a root container when no root was seen committing. */
  MAX_REACT_ROOT_SCAN: 5000,
  /** React: roots remembered from commits (our hook only; a page mounting roots in a loop stops here). */
  MAX_REACT_ROOTS: 32,
  /** browser_evaluate: how long a returned promise may take (under PAGE_TOOL_TIMEOUT_MS, so the answer says TIMEOUT). */
  EVALUATE_TIMEOUT_MS: 10000,
});
