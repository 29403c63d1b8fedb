// A web page on another origin cannot use the control plane: its WebSocket to /control is
// refused with HTTP 403 before any upgrade, and it cannot exchange a login code either.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { request } from "node:http";
import { waitFor } from "../../../tests/js-support/wait.mjs";
import { launchBrowser, providerPageHtml, serveOtherOrigin, startGateway } from "./support.mjs";

/** A raw HTTP request to the gateway; resolves with the status code (101 for an upgrade). */
function rawStatus(hostPort, { method = "GET", path, headers, body }) {
  const [host, port] = hostPort.split(":");
  return new Promise((resolve, reject) => {
    const req = request({ host, port: Number(port), method, path, headers });
    req.on("upgrade", (res, socket) => {
      socket.destroy();
      resolve(res.statusCode);
    });
    req.on("response", (res) => {
      res.resume();
      resolve(res.statusCode);
    });
    req.on("error", reject);
    req.end(body);
  });
}

const upgradeHeaders = (origin) => ({
  Connection: "Upgrade",
  Upgrade: "websocket",
  "Sec-WebSocket-Version": "13",
  "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
  ...(origin ? { Origin: origin } : {}),
});

describe("the control plane and another origin", () => {
  let gateway, site, browser;

  before(async () => {
    gateway = await startGateway();
    site = await serveOtherOrigin(await providerPageHtml(gateway.hostPort));
    browser = await launchBrowser();
  });

  after(async () => {
    await browser?.close();
    await site?.close();
    await gateway?.stop();
  });

  test("a page on another origin cannot open ws://<gateway>/control (403)", async () => {
    const page = await browser.newPage();
    const console = [];
    page.on("console", (m) => console.push(m.text()));
    // Answer the example's pairing prompt with nothing: this test is about /control only.
    page.on("dialog", (d) => d.dismiss());
    await page.goto(site.url);
    const outcome = await page.evaluate(
      (hostPort) =>
        new Promise((resolve) => {
          const ws = new WebSocket(`ws://${hostPort}/control`);
          let opened = false;
          ws.onopen = () => {
            opened = true;
            ws.send(JSON.stringify({ type: "request", id: "1", method: "pairing.list" }));
          };
          ws.onclose = (e) => resolve({ opened, code: e.code });
        }),
      gateway.hostPort,
    );
    assert.deepEqual(outcome, { opened: false, code: 1006 });
    await waitFor(() => console.some((t) => t.includes("/control") && t.includes("403")), "Chromium's log of the 403 answer");

    // The page cannot trade a login code for the control token either.
    const login = await page.evaluate(async (base) => {
      try {
        const r = await fetch(`${base}/api/login`, { method: "POST", headers: { "Content-Type": "application/json" }, body: '{"code":"x"}' });
        return `status ${r.status}`;
      } catch (e) {
        return `failed: ${e.name}`;
      }
    }, gateway.httpBase);
    assert.equal(login, "failed: TypeError");
    await page.close();
  });

  test("the gateway answers 403 to that Origin, and upgrades only its own", async () => {
    const status = (origin) => rawStatus(gateway.hostPort, { path: "/control", headers: upgradeHeaders(origin) });
    assert.equal(await status(site.origin), 403, "another port on 127.0.0.1");
    assert.equal(await status("http://evil.example"), 403);
    assert.equal(await status("null"), 403);
    assert.equal(await status(gateway.httpBase), 101, "the panel's own origin");
    assert.equal(await status(undefined), 101, "native clients send no Origin");

    const login = (origin) =>
      rawStatus(gateway.hostPort, {
        method: "POST",
        path: "/api/login",
        headers: { "Content-Type": "application/json", Origin: origin },
        body: '{"code":"not-a-code"}',
      });
    assert.equal(await login(site.origin), 403);
    assert.equal(await login(gateway.httpBase), 401, "own origin, wrong code");
  });
});
