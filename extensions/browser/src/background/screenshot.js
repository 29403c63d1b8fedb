// browser_screenshot: the visible part of a shared tab as a PNG, answered as an MCP image
// result (the tool declares resultFormat "mcp", so MCP clients get an image and `tap call`
// prints the object). captureVisibleTab can only take the tab its window shows.
import { TapError } from "../../vendor/tap-sdk/browser.js";
import { L } from "./state.js";
import { sharedTab } from "./page-bridge.js";

export async function screenshot(tabId) {
  const { tab } = await sharedTab(tabId);
  if (!tab.active) {
    // Retryable: for a call without `target` the gateway tries once on another shared tab,
    // which may be the one on screen (docs/write-a-provider.md, several instances).
    throw new TapError("NOT_VISIBLE", "The tab is not the one its window shows: bring it to the front (or ask the user to) and try again", { retryable: true });
  }
  let dataUrl;
  try {
    dataUrl = await chrome.tabs.captureVisibleTab(tab.windowId, { format: "png" });
  } catch (e) {
    // Chrome allows a couple of captures a second (MAX_CAPTURE_VISIBLE_TAB_CALLS_PER_SECOND).
    throw new TapError("UNAVAILABLE", `The browser refused the capture: ${e?.message ?? e}`, { retryable: false });
  }
  // The tab may have navigated away between the check and the capture: check again.
  await sharedTab(tabId);
  const data = String(dataUrl).replace(/^data:image\/png;base64,/, "");
  if (data.length > L.MAX_SCREENSHOT_BASE64_CHARS) {
    throw new TapError("PAYLOAD_TOO_LARGE", `The screenshot is ${data.length} base64 characters (over ${L.MAX_SCREENSHOT_BASE64_CHARS}): make the window smaller`);
  }
  return { content: [{ type: "image", data, mimeType: "image/png" }] };
}
