// The Diagnostics and Logs pages against the real gateway: hostile providers (garbage,
// an oversized message) drive the counters and the panel shows them live; the gateway's
// log streams in with a level filter, search and pause, and no token ever shows.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { goTo } from "../../../tests/js-support/browser.mjs";
import { waitFor } from "../../../tests/js-support/wait.mjs";
import { launchBrowser, nodeProvider, panelInNewContext, screenshot, startGateway } from "./support.mjs";

/** A raw provider socket from Node (no auth yet); `frames` collects what the gateway sends. */
async function rawSocket(gateway) {
  const ws = new WebSocket(`ws://${gateway.hostPort}/`);
  const frames = [];
  ws.addEventListener("message", (e) => frames.push(JSON.parse(String(e.data))));
  await new Promise((resolve, reject) => {
    ws.addEventListener("open", resolve, { once: true });
    ws.addEventListener("error", () => reject(new Error("cannot connect")), { once: true });
  });
  return { ws, frames, error: (code) => waitFor(() => frames.find((f) => f.type === "error" && f.code === code), `error ${code}`) };
}

describe("Diagnostics and Logs", () => {
  let gateway, session, browser, panel, tokens;

  before(async () => {
    gateway = await startGateway();
    session = await gateway.openSession("e2e");
    const home = gateway.env.TAP_HOME;
    tokens = await Promise.all(["provider-token", "host-token", "control-token"].map(async (f) => (await readFile(path.join(home, f), "utf8")).trim()));
    browser = await launchBrowser();
    ({ panel } = await panelInNewContext(browser, gateway, { colorScheme: "light" }));
    await panel.evaluate(() => (window.__notReloaded = true));
  });

  after(async () => {
    await browser?.close();
    await gateway?.stop();
  });

  const card = (id) => panel.getByTestId(`diag-${id}`);
  const cardIs = (id, text) => waitFor(async () => (await card(id).textContent()) === text, `${id} = ${text}`);

  test("Diagnostics shows connection states, and errors, limits and failures appear live", async () => {
    await goTo(panel, "Diagnostics");
    await cardIs("sessions", "1");
    await cardIs("hosts", "1");
    await cardIs("control", "1 / 16");
    await cardIs("providers-open", "0 / 50");
    // Nothing waits to be written to a reading peer; the card says each socket's limit.
    await cardIs("queued", "0 B");
    const queuedCard = card("queued").locator("..");
    assert.match(await queuedCard.innerText(), /0 messages · peak .* · 32\.0 MiB a socket at most/);
    await panel.getByText("No provider has been sent an error.").waitFor();
    // History's queue: records and bytes waiting for the writer, against both bounds.
    await cardIs("history-queue", "0 / 8192");
    assert.match(await card("history-queue").locator("..").innerText(), /records waiting for the writer · 0 B of 2\.0 MiB/);

    // A socket that never authenticates, sending garbage: INVALID_JSON, awaiting auth.
    const raw = await rawSocket(gateway);
    raw.ws.send("this is not json");
    await raw.error("INVALID_JSON");
    await cardIs("await-auth", "1");
    const errors = panel.getByRole("table", { name: "Errors by code" });
    await waitFor(async () => (await errors.locator('tr[data-code="INVALID_JSON"] td.num').textContent()) === "1", "INVALID_JSON counted");

    // A bound provider sends a message over 2 MB: PAYLOAD_TOO_LARGE and the payloadSize limit.
    const big = await nodeProvider(gateway, { name: "big-pusher", session: session.id, tools: ["t"] });
    await cardIs("bound", "1");
    big.push("huge", "x".repeat(2 * 1024 * 1024 + 100));
    await waitFor(() => big.inbox.find((m) => m.type === "error" && m.code === "PAYLOAD_TOO_LARGE"), "PAYLOAD_TOO_LARGE");
    const limit = panel.getByRole("table", { name: "Limits hit" }).locator('tr[data-limit="payloadSize"]');
    await waitFor(async () => (await limit.locator("td.num").textContent()) === "1", "payloadSize hit shown");
    assert.match(await limit.innerText(), /ago/);
    await waitFor(async () => (await errors.locator('tr[data-code="PAYLOAD_TOO_LARGE"] td.num').textContent()) === "1", "PAYLOAD_TOO_LARGE counted");

    const failures = panel.getByRole("table", { name: /Recent failures/ }).locator("tbody tr");
    await waitFor(async () => (await failures.count()) === 2, "two failures");
    const newest = await failures.first().innerText();
    assert.match(newest, /PAYLOAD_TOO_LARGE/);
    assert.match(newest, /to push/);
    assert.match(newest, /big-pusher/, "the provider is named");
    assert.match(newest, new RegExp(session.id));
    assert.match(await failures.nth(1).innerText(), /INVALID_JSON/);
    // One limit hit, of however many the gateway enforces (the count grows with new limits).
    await panel.getByRole("heading", { name: /^Limits hit \(1 of \d+\)$/ }).waitFor();
    await screenshot(panel, "diagnostics");

    // The socket goes: the state follows.
    raw.ws.close();
    await cardIs("await-auth", "0");
    big.close();
    await cardIs("bound", "0");
    assert.equal(await panel.evaluate(() => window.__notReloaded), true, "every change came live");
  });

  test("Logs shows the gateway's log live, filters by level and text, and pauses", async () => {
    await goTo(panel, "Logs");
    const count = panel.getByTestId("logs-count");
    const list = panel.getByRole("list", { name: /Log records/ });
    await list.getByText("gateway listening").waitFor();
    await list.getByText("panel logged in").first().waitFor();

    // A provider connects: its record arrives without a reload, newest first.
    const p = await nodeProvider(gateway, { name: "log-watcher", session: session.id });
    await waitFor(async () => /provider bound/.test(await list.getByRole("listitem").first().innerText()), "'provider bound' on top");
    const bound = await list.getByRole("listitem").filter({ hasText: "provider bound" }).first().innerText();
    assert.match(bound, /info/);
    assert.match(bound, /name=log-watcher/);

    // Search, then level.
    const shown = async () => Number((await count.innerText()).split(" ")[0]);
    await panel.getByRole("searchbox", { name: "Search" }).fill("log-watcher");
    await waitFor(async () => (await shown()) >= 1, "search results");
    for (const row of await list.getByRole("listitem").all()) assert.match(await row.innerText(), /log-watcher/);
    await panel.getByRole("searchbox", { name: "Search" }).fill("");
    await panel.getByRole("combobox", { name: "Level" }).selectOption("warn");
    await waitFor(async () => {
      const rows = await list.getByRole("listitem").allInnerTexts().catch(() => []);
      return rows.every((t) => /\b(warn|error)\b/.test(t));
    }, "only warnings and errors");
    await panel.getByRole("combobox", { name: "Level" }).selectOption("all");

    // Pause: new records wait (and are counted) until Resume.
    await panel.getByRole("searchbox", { name: "Search" }).fill("provider disconnected");
    // big-pusher's, from the test before.
    await waitFor(async () => (await shown()) === 1, "the earlier disconnect");
    const total = async () => Number((await count.innerText()).split(" ")[2]);
    const before = await total();
    await panel.getByRole("button", { name: "Pause" }).click();
    p.close();
    const tail = panel.getByTestId("logs-tail");
    await waitFor(async () => /paused · [1-9]\d* new waiting/.test(await tail.innerText()), "records waiting");
    assert.equal(await total(), before, "nothing added while paused");
    assert.equal(await shown(), 1);
    await panel.getByRole("button", { name: "Resume" }).click();
    await waitFor(async () => (await shown()) === 2, "the new disconnect after Resume");
    assert.ok((await total()) > before);
    assert.equal(await tail.innerText(), "live");
    await panel.getByRole("searchbox", { name: "Search" }).fill("");
    await screenshot(panel, "logs");

    const text = await panel.locator("main").innerText();
    for (const t of tokens) assert.ok(!text.includes(t), "no token is shown in the log");
  });

  test("the pages logged no errors", async () => {
    assert.deepEqual(panel.errors, []);
  });
});
