// A web-based MCP client the user runs on a loopback origin (http://localhost:<port>) can use
// the MCP facade with the host token; a page of another site cannot, token or not, and a
// loopback page without the token is refused (issue 44). Real Chromium, real gateway.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { launchBrowser, serveOtherOrigin, startGateway } from "./support.mjs";

const INITIALIZE = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "web-client", version: "1" } },
};

/** Runs in the page: initialize, then tools/list on the session it got; what the page could read. */
function mcpFromPage({ endpoint, token, initialize }) {
  const headers = { "Content-Type": "application/json", Accept: "application/json, text/event-stream" };
  if (token) headers.Authorization = `Bearer ${token}`;
  const post = (body, extra = {}) => fetch(endpoint, { method: "POST", headers: { ...headers, ...extra }, body: JSON.stringify(body) });
  // A JSON answer, or one event of a stream (Streamable HTTP may answer either way).
  const read = async (res) => {
    const text = await res.text();
    if (text.trimStart().startsWith("{")) return JSON.parse(text);
    const data = text.split("\n").find((l) => l.startsWith("data:") && l.length > 6);
    return JSON.parse(data.slice(5));
  };
  return (async () => {
    try {
      const init = await post(initialize);
      if (!init.ok) return { status: init.status };
      const session = init.headers.get("mcp-session-id");
      const server = (await read(init)).result?.serverInfo?.name;
      const extra = session ? { "Mcp-Session-Id": session } : {};
      await post({ jsonrpc: "2.0", method: "notifications/initialized" }, extra);
      const list = await post({ jsonrpc: "2.0", id: 2, method: "tools/list" }, extra);
      const tools = (await read(list)).result.tools.map((t) => t.name);
      return { status: init.status, server, tools };
    } catch (e) {
      return { failed: e.name };
    }
  })();
}

describe("the MCP facade and web pages", () => {
  let gateway, site, browser;

  before(async () => {
    gateway = await startGateway();
    site = await serveOtherOrigin("<!doctype html><title>local MCP client</title>");
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await site?.close();
    await gateway?.stop();
  });

  const endpoint = () => `${gateway.httpBase}/mcp/web-client`;

  test("a page on http://localhost:<other port> with the token lists the session's tools", async () => {
    const page = await browser.newPage();
    await page.goto(site.url.replace("127.0.0.1", "localhost"));
    const got = await page.evaluate(mcpFromPage, { endpoint: endpoint(), token: gateway.hostToken, initialize: INITIALIZE });
    assert.equal(got.status, 200, JSON.stringify(got));
    assert.ok(got.tools.includes("tap_status"), JSON.stringify(got));
    await page.close();
  });

  test("the same page without the token is refused (401)", async () => {
    const page = await browser.newPage();
    await page.goto(site.url.replace("127.0.0.1", "localhost"));
    const got = await page.evaluate(mcpFromPage, { endpoint: endpoint(), token: null, initialize: INITIALIZE });
    assert.deepEqual(got, { status: 401 });
    await page.close();
  });

  test("a page of another site cannot use it, even with the token", async () => {
    const page = await browser.newPage();
    // The page's origin is http://evil.test, served here without any network.
    await page.route("http://evil.test/", (route) =>
      route.fulfill({ contentType: "text/html", body: "<!doctype html><title>a site</title>" }),
    );
    await page.goto("http://evil.test/");
    const got = await page.evaluate(mcpFromPage, { endpoint: endpoint(), token: gateway.hostToken, initialize: INITIALIZE });
    assert.deepEqual(got, { failed: "TypeError" }, "the browser got no answer it may read");
    await page.close();
  });
});
