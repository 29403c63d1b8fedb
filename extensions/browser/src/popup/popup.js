// The popup: pairing status and code, the tabs to share, the gateway address. All state is
// the worker's; this page asks for it (`popup.state`) every second while open, which also
// keeps the worker awake while the user reads a pairing code.
import "../limits.js";

const L = globalThis.__tapLimits;
const $ = (id) => document.getElementById(id);
$("code").maxLength = L.MAX_PAIRING_CODE_CHARS;
$("gateway-url").maxLength = L.MAX_GATEWAY_URL_CHARS;

function send(msg) {
  return chrome.runtime.sendMessage(msg).catch((e) => ({ error: String(e?.message ?? e) }));
}

/** A shared tab's connection, in the user's words (the SDK's states, and the worker's own). */
const CONNECTION = {
  none: "Waiting for the pairing", retrying: "Gateway not reachable: retrying", connecting: "Connecting",
  authenticating: "Connecting", pairing: "Waiting for the code", unbound: "Waiting for a Tap session",
  binding: "Connecting", shuttingDown: "Session ending", closed: "Closed",
};

let urlEdited = false;
let shownTabs = "";

function tabItem(t) {
  const li = document.createElement("li");
  li.dataset.tabId = String(t.id);
  if (t.shared) li.classList.add("shared");
  const title = document.createElement("span");
  title.className = "title";
  title.textContent = t.title || t.origin || "(untitled)";
  title.title = t.title;
  const origin = document.createElement("span");
  origin.className = "origin";
  origin.textContent = t.origin ?? "";
  const note = document.createElement("span");
  note.className = "state";
  if (t.shared && t.onOrigin === false) note.textContent = "Left the origin it was shared on: its tools are refused";
  else if (t.shared && t.connection && t.connection !== "connected") note.textContent = CONNECTION[t.connection] ?? t.connection;
  const buttons = document.createElement("span");
  buttons.className = "buttons";
  const share = document.createElement("button");
  share.type = "button";
  share.className = "share";
  share.textContent = t.shared ? "Stop sharing" : "Share";
  share.setAttribute("aria-pressed", String(t.shared));
  share.addEventListener("click", () => act({ type: t.shared ? "popup.unshare" : "popup.share", tabId: t.id }));
  buttons.append(share);
  if (t.shared) {
    const pick = document.createElement("button");
    pick.type = "button";
    pick.className = "pick";
    pick.textContent = "Pick element";
    pick.addEventListener("click", async () => {
      const r = await act({ type: "popup.pick", tabId: t.id });
      // As the toolbar popup, get out of the way of the page being picked from.
      if (r && !r.error && !(await chrome.tabs.getCurrent())) window.close();
    });
    buttons.append(pick);
  }
  li.append(title, origin, buttons, note);
  return li;
}

function render(v) {
  if (!v || !v.status) {
    $("status").textContent = v?.error ? `Extension error: ${v.error}` : "…";
    return;
  }
  $("status").textContent = v.status;
  let hint = "";
  if (!v.paired && !v.wantCode && !v.status.startsWith("Gateway")) {
    hint = v.tabs.some((t) => t.shared)
      ? "Open this popup again to ask your Tap tray for a new code."
      : "Share a tab below: your Tap tray then shows a code to type here.";
  }
  $("hint").textContent = hint;
  const form = $("pair-form");
  const wasHidden = form.hidden;
  form.hidden = !v.wantCode;
  if (wasHidden && !form.hidden) $("code").focus();
  $("pair-error").textContent = v.pairError ?? "";
  if (!urlEdited) $("gateway-url").value = v.url;
  $("unpair").disabled = !v.paired && !v.wantCode;
  $("tabs-more").hidden = !v.moreTabs;
  $("tabs-more").textContent = v.moreTabs ? `and ${v.moreTabs} more tabs` : "";
  // Rebuilt only when something changed: a list replaced under the pointer loses the click.
  const key = JSON.stringify(v.tabs);
  if (key === shownTabs) return;
  shownTabs = key;
  const list = $("tabs");
  const focused = document.activeElement?.closest?.("li")?.dataset.tabId;
  list.replaceChildren(...v.tabs.map(tabItem));
  if (focused) list.querySelector(`li[data-tab-id="${focused}"] button`)?.focus();
  if (v.tabs.length === 0) {
    const li = document.createElement("li");
    li.className = "hint";
    li.textContent = "No web pages open (only http and https pages can be shared).";
    list.append(li);
  }
}

async function act(msg) {
  const v = await send(msg);
  $("tab-error").textContent = msg.type.startsWith("popup.share") || msg.type === "popup.pick" ? (v?.error ?? "") : "";
  if (msg.type === "popup.url") $("url-error").textContent = v?.error ?? "";
  if (msg.type === "popup.code" && v?.error) $("pair-error").textContent = v.error;
  render(v);
  return v;
}

$("pair-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const code = $("code").value;
  $("code").value = "";
  await act({ type: "popup.code", code });
});

$("gateway-url").addEventListener("input", () => { urlEdited = true; });
$("url-form").addEventListener("submit", async (e) => {
  e.preventDefault();
  const v = await act({ type: "popup.url", url: $("gateway-url").value });
  if (!v?.error) urlEdited = false;
});

$("unpair").addEventListener("click", () => act({ type: "popup.unpair" }));

async function poll() {
  render(await send({ type: "popup.state" }));
}

render(await send({ type: "popup.state", opened: true }));
setInterval(poll, L.POPUP_POLL_MS);
