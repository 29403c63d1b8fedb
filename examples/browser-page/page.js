// The page's provider: pairs with the gateway (the user types the code from the tray into the
// form), then gives the agent `page_title` and `page_text`, and stores a `keep` event on stream
// `page` when the user clicks "Bookmark". The SDK keeps the paired token in localStorage, so a
// reload reconnects without a new code.
import { connectProvider } from "@tap-gateway/provider/browser";

/** Where the gateway listens unless the page's URL says `?gw=ws://127.0.0.1:PORT`. */
const DEFAULT_GATEWAY_URL = "ws://127.0.0.1:9400";
/** page_text's default bound, and the most a caller may ask for: a page can be huge. */
const DEFAULT_TEXT_CHARS = 4000;
const MAX_TEXT_CHARS = 20000;
/** The provider's name: what the tray shows next to the code. */
const NAME = "browser-page";
/** The stream the bookmark button writes to. */
const STREAM = "page";

const $ = (id) => document.getElementById(id);
const status = (text) => { $("status").textContent = text; };

const tools = {
  page_title: {
    description: "The title and address of the page the user has open",
    parameters: { type: "object", properties: {}, additionalProperties: false },
    handler: () => ({ title: document.title, url: location.href }),
  },
  page_text: {
    description: "The text the user selected on the page, or the page's main text when nothing is selected; cut to maxChars",
    parameters: {
      type: "object", additionalProperties: false,
      properties: { maxChars: { type: "integer", minimum: 1, maximum: MAX_TEXT_CHARS, description: `default ${DEFAULT_TEXT_CHARS}` } },
    },
    handler: ({ maxChars = DEFAULT_TEXT_CHARS } = {}) => {
      const selected = String(window.getSelection() ?? "").trim();
      const text = selected || (document.querySelector("main") ?? document.body).innerText.trim();
      return { source: selected ? "selection" : "page", text: text.slice(0, maxChars), truncated: text.length > maxChars, length: text.length };
    },
  },
};

/** The SDK's pairing callback: show the form, resolve with the six digits the user types. */
function askForCode({ message }) {
  $("pairing-message").textContent = message;
  $("pairing").hidden = false;
  status("Pair this page with your Tap gateway: the code is in the tray, the panel or `tap pairing list`.");
  $("code").focus();
  return new Promise((resolve) => {
    $("pairing").onsubmit = (e) => {
      e.preventDefault();
      const code = $("code").value.trim();
      if (!/^\d{6}$/.test(code)) { $("pairing-hint").textContent = "The code is 6 digits."; return; }
      $("pairing-hint").textContent = "";
      $("pairing").hidden = true;
      status("Checking the code…");
      resolve(code);
    };
  });
}

function gatewayUrl() {
  const url = new URLSearchParams(location.search).get("gw") || DEFAULT_GATEWAY_URL;
  if (!/^wss?:\/\/[^/]+/.test(url)) throw new Error(`'${url}' is not a ws:// address (the ?gw= parameter)`);
  return url;
}

let provider;

async function start() {
  $("retry").hidden = true;
  status("Connecting to the Tap gateway…");
  try {
    provider = await connectProvider({
      name: NAME, url: gatewayUrl(), tools,
      metadata: { title: document.title, url: location.href },
      onPairingCode: askForCode,
    });
  } catch (e) {
    $("pairing").hidden = true;
    status(`Could not connect: ${e.code ? `${e.code}: ` : ""}${e.message}`);
    $("retry").hidden = false;
    return;
  }
  const bound = (sessionId) => { status(`Connected to session ${sessionId}`); $("actions").hidden = false; };
  bound(provider.sessionId);
  provider.on("bound", ({ sessionId }) => bound(sessionId));
  provider.on("unbound", () => { status("The session ended; waiting for the next one…"); $("actions").hidden = true; });
  provider.on("disconnected", () => status("Lost the gateway; reconnecting…"));
}

$("bookmark").onclick = async () => {
  const selection = String(window.getSelection() ?? "").trim().slice(0, DEFAULT_TEXT_CHARS);
  try {
    // `keep`: stored on the session's stream for the agent to find, without interrupting it.
    await provider.push("keep", `bookmarked: ${document.title}`, { stream: STREAM, metadata: { url: location.href, title: document.title, selection: selection || undefined } });
    $("bookmark-status").textContent = "Saved to the session.";
  } catch (e) {
    $("bookmark-status").textContent = `Not saved: ${e.message}`;
  }
};
$("retry").onclick = start;

start();
