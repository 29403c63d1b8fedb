// The tools each shared tab declares (the gateway shows each once, with a `target` naming the
// tab). Reads run the page scripts through page-bridge.js; console errors come from the page,
// failed requests from chrome.webRequest, the screenshot from captureVisibleTab. Actions
// (click, type, navigate, evaluate) declare destructiveHint, so the gateway's default policy
// asks the user before each call. Every answer passes bounds.js.
import { TapError } from "../../vendor/tap-sdk/browser.js";
import { L, cut, pageOrigin } from "./state.js";
import { boundedAnswer, sinceMs } from "./bounds.js";
import { callPage, sharedTab } from "./page-bridge.js";
import { failedRequests } from "./network.js";
import { screenshot } from "./screenshot.js";

const READ = { readOnlyHint: true, openWorldHint: false };
const ACTION = { destructiveHint: true, readOnlyHint: false, openWorldHint: false };

const selector = { type: "string", minLength: 1, maxLength: L.MAX_SELECTOR_CHARS, description: "A CSS selector (document.querySelector syntax)" };
const since = { type: ["number", "string"], description: "Only entries at or after this time: ms since the epoch, or an ISO 8601 date" };
const LEVELS = ["error", "warn", "log", "info", "debug"];

function obj(properties, required = [], extra = {}) {
  return { type: "object", properties, required, additionalProperties: false, ...extra };
}

/** The tool list for one shared tab; handlers are bound to it. */
export function toolsFor(tabId) {
  const page = (method, world) => async (args) => boundedAnswer(await callPage(tabId, method, args, world), method);
  const t = (title, description, parameters, handler, annotations = READ, more = {}) =>
    ({ title, description, parameters, handler, annotations, timeout: L.PAGE_TOOL_TIMEOUT_MS, ...more });

  return {
    browser_outline: t("Page outline",
      "An outline of the visible page: elements in document order with depth, ARIA role and accessible name, tag, short text and a CSS selector for each. Start here to see what the page shows.",
      obj({
        selector: { ...selector, description: "Outline only this element's subtree" },
        maxNodes: { type: "integer", minimum: 1, maximum: L.OUTLINE_MAX_NODES, description: `Most nodes to list (default ${L.OUTLINE_DEFAULT_NODES})` },
        maxDepth: { type: "integer", minimum: 1, maximum: L.OUTLINE_MAX_DEPTH, description: `Deepest level to descend (default ${L.OUTLINE_DEFAULT_DEPTH})` },
      }),
      page("outline")),

    browser_query: t("Find elements",
      "Elements matching a CSS selector, or containing a text (give exactly one): selector, tag, text, attributes and box of each.",
      obj({
        selector,
        text: { type: "string", minLength: 1, maxLength: L.MAX_QUERY_TEXT_CHARS, description: "Visible text to look for (case-insensitive)" },
        limit: { type: "integer", minimum: 1, maximum: L.QUERY_MAX_LIMIT, description: `Most matches to return (default ${L.QUERY_DEFAULT_LIMIT})` },
      }, [], { oneOf: [{ required: ["selector"] }, { required: ["text"] }] }),
      page("query")),

    browser_picked_element: t("Picked element",
      "The element the user picked with the inspector (Pick element in the Tap extension's popup): selector, tag, text, attributes, box, and its React component with props and state when the page uses React.",
      obj({}),
      page("picked")),

    browser_styles: t("Computed styles",
      "Computed styles and box of one element: the properties named, or a default set of layout and typography properties.",
      obj({
        selector,
        properties: { type: "array", items: { type: "string", minLength: 1, maxLength: L.MAX_STYLE_PROPERTY_CHARS }, maxItems: L.MAX_STYLE_PROPERTIES, description: "CSS property names (default: ~30 layout and typography properties)" },
      }, ["selector"]),
      page("styles")),

    browser_console: t("Console messages",
      "Console messages the page logged since it was shared (uncaught errors and unhandled rejections are level error), oldest first.",
      obj({
        since,
        levels: { type: "array", items: { enum: LEVELS }, maxItems: LEVELS.length, description: "Only these levels (default all)" },
        limit: { type: "integer", minimum: 1, maximum: L.LOG_MAX_LIMIT, description: `Most entries, the newest kept (default ${L.CONSOLE_DEFAULT_LIMIT})` },
      }),
      async (args) => {
        sinceMs(args.since); // refuse a bad date here, with the tool's wording
        return boundedAnswer(await callPage(tabId, "consoleEntries", args), "consoleEntries");
      }),

    browser_failed_requests: t("Failed requests",
      "Network requests of the tab that failed (a network error, or HTTP status 400 or more) since it was shared, as the browser reported them; oldest first.",
      obj({
        since,
        limit: { type: "integer", minimum: 1, maximum: L.LOG_MAX_LIMIT, description: `Most entries, the newest kept (default ${L.FAILED_REQUESTS_DEFAULT_LIMIT})` },
      }),
      async (args) => {
        await sharedTab(tabId);
        return boundedAnswer(failedRequests(tabId, sinceMs(args.since), args.limit ?? L.FAILED_REQUESTS_DEFAULT_LIMIT), "failed requests");
      }),

    browser_screenshot: t("Screenshot",
      "A PNG of the visible part of the tab (it must be the tab its window shows).",
      obj({}),
      () => screenshot(tabId), READ, { resultFormat: "mcp" }),

    browser_react_tree: t("React component",
      "The React component behind an element (default: the picked one), with props, state, hooks and its owner components, when the page runs a React development build.",
      obj({ selector }),
      async (args) => {
        // Without a selector the page uses the element last picked with the inspector.
        const tree = await callPage(tabId, "reactTree", args, "MAIN");
        if (tree === null || tree === undefined) throw new TapError("NOT_REACT", "No React component found (the page has no React development build, or the element is not rendered by React)");
        return boundedAnswer(tree, "reactTree");
      }),

    browser_click: t("Click",
      "Clicks an element of the shared tab. Asked to the user first by default.",
      obj({ selector }, ["selector"]),
      page("click"), ACTION),

    browser_type: t("Type",
      "Types text into an input, textarea or editable element (replacing its value), and presses Enter after it when submit is true. Asked to the user first by default.",
      obj({
        selector,
        text: { type: "string", maxLength: L.MAX_TYPE_TEXT_CHARS },
        submit: { type: "boolean", description: "Press Enter afterwards (default false)" },
      }, ["selector", "text"]),
      page("type"), ACTION),

    browser_navigate: t("Navigate",
      "Loads a URL in the shared tab; only URLs of the origin the tab was shared on. Asked to the user first by default.",
      obj({ url: { type: "string", minLength: 1, maxLength: L.MAX_URL_CHARS, description: "An absolute URL, or a path on the shared origin" } }, ["url"]),
      async ({ url }) => {
        const { tab, shared } = await sharedTab(tabId);
        let target;
        try {
          target = new URL(url, tab.url).href;
        } catch {
          throw new TapError("INVALID_JSON", `Not a URL: ${cut(JSON.stringify(url), L.MAX_ECHO_CHARS)}`);
        }
        if (pageOrigin(target) !== shared.origin) {
          throw new TapError("FORBIDDEN", `Only URLs of ${shared.origin} (the origin this tab was shared on), not ${pageOrigin(target) ?? cut(target, L.MAX_ECHO_CHARS)}`);
        }
        await chrome.tabs.update(tabId, { url: target });
        return { url: target };
      }, ACTION),

    browser_evaluate: t("Evaluate JavaScript",
      "Evaluates a JavaScript expression in the page (its own world) and answers its JSON-safe value, bounded. Asked to the user first by default.",
      obj({ expression: { type: "string", minLength: 1, maxLength: L.MAX_EVALUATE_EXPRESSION_CHARS } }, ["expression"]),
      async (args) => {
        const r = await callPage(tabId, "evaluate", args, "MAIN");
        return boundedAnswer(r && typeof r === "object" && !Array.isArray(r) && "value" in r ? r : { value: r ?? null }, "evaluate");
      }, ACTION),
  };
}
