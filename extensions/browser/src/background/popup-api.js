// What the popup asks the worker (popup.* messages), accepted only from this extension's own
// popup page (opened as the action's popup, or as a tab by the tests). Content scripts share
// the extension id, so the sender's URL is what tells the popup apart.
import { L, hasToken, loopbackUrl, pageOrigin, saveLocal, state, statusText } from "./state.js";
import { checkGateway, connectionState, reconnectAll, submitCode, unpair, userIsHere } from "./connections.js";
import { share, unshare, unshareAll } from "./sharing.js";
import { callPage } from "./page-bridge.js";

const POPUP_URL = chrome.runtime.getURL("src/popup/popup.html");

export function fromPopup(sender) {
  return sender.id === chrome.runtime.id && typeof sender.url === "string" &&
    (sender.url === POPUP_URL || sender.url.startsWith(`${POPUP_URL}?`) || sender.url.startsWith(`${POPUP_URL}#`));
}

async function tabsView() {
  const all = (await chrome.tabs.query({})).filter((t) => pageOrigin(t.url) || state.shared.has(t.id));
  // The tab the user opened the popup on comes first: that is the one they mean to share.
  const [current] = await chrome.tabs.query({ active: true, lastFocusedWindow: true });
  const i = all.findIndex((t) => t.id === current?.id);
  if (i > 0) all.unshift(...all.splice(i, 1));
  return {
    tabs: all.slice(0, L.MAX_POPUP_TABS).map((t) => {
      const s = state.shared.get(t.id);
      return {
        id: t.id, title: t.title ?? "", origin: s?.origin ?? pageOrigin(t.url), windowId: t.windowId, active: t.active,
        shared: !!s, onOrigin: s ? pageOrigin(t.url) === s.origin : undefined, connection: s ? connectionState(t.id) : undefined,
      };
    }),
    moreTabs: Math.max(0, all.length - L.MAX_POPUP_TABS),
  };
}

async function view() {
  return {
    status: statusText(), url: state.url, paired: hasToken(), wantCode: !!state.codeWanted,
    revoked: state.revoked, pairError: state.pairError, ...(await tabsView()),
  };
}

const tabIdOf = (msg) => (Number.isInteger(msg.tabId) ? msg.tabId : null);

export async function onPopupMessage(msg) {
  switch (msg.type) {
    case "popup.state":
      if (msg.opened) userIsHere();
      await checkGateway(); // at once when a connection is bound; else a loopback /healthz
      return view();
    case "popup.share": {
      const id = tabIdOf(msg);
      const error = id === null ? "No tab" : await share(id);
      return { ...(await view()), error };
    }
    case "popup.unshare": {
      const id = tabIdOf(msg);
      if (id !== null) await unshare(id);
      return view();
    }
    case "popup.pick": {
      const id = tabIdOf(msg);
      if (id === null || !state.shared.has(id)) return { ...(await view()), error: "Share the tab first" };
      try {
        await callPage(id, "pickStart", {});
        const tab = await chrome.tabs.update(id, { active: true });
        await chrome.windows.update(tab.windowId, { focused: true }).catch(() => undefined);
        return { ...(await view()), picking: id };
      } catch (e) {
        return { ...(await view()), error: String(e?.message ?? e) };
      }
    }
    case "popup.code": {
      const code = typeof msg.code === "string" ? msg.code.replace(/\s+/g, "") : "";
      if (!code || code.length > L.MAX_PAIRING_CODE_CHARS) return { ...(await view()), error: "Type the code shown in your Tap tray" };
      if (!submitCode(code)) return { ...(await view()), error: "No pairing is waiting for a code" };
      return view();
    }
    case "popup.url": {
      const url = loopbackUrl(msg.url);
      if (!url) return { ...(await view()), error: "Only ws://127.0.0.1:PORT, ws://localhost:PORT or ws://[::1]:PORT (the gateway on this machine)" };
      if (url !== state.url) {
        state.url = url;
        await saveLocal();
        reconnectAll();
      }
      await checkGateway();
      return view();
    }
    case "popup.unpair":
      await unshareAll();
      unpair();
      return view();
    default:
      return undefined;
  }
}
