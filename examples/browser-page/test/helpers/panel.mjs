// The gateway's panel in real Chromium, as a user reads a pairing code there: log in with a
// one-time login link (`tap ui --no-open`), open the Pairing page, find the pending request
// from the provider page's origin and read the code's digits. Every wait is on a locator.
// Self-contained, as ./gateway.mjs says why; the repository's suites log in and navigate with
// tests/js-support/browser.mjs, and sdk/typescript/test/helpers/panel.mjs reads the code the same way.
import assert from "node:assert/strict";
import { WAIT_MS } from "./gateway.mjs";

/**
 * Opens `loginUrl` (from `tap ui --no-open`) in a new page of `browser`, waits until the panel
 * is live, then goes to its Pairing page with the panel's own navigation. The page's
 * `errors` collects its uncaught exceptions and console errors.
 */
export async function openPanelPairing(browser, loginUrl) {
  const panel = await browser.newPage();
  panel.errors = [];
  panel.on("pageerror", (e) => panel.errors.push(`page error: ${e.message}`));
  panel.on("console", (m) => { if (m.type() === "error") panel.errors.push(`console: ${m.text()}`); });
  await panel.goto(loginUrl);
  await panel.getByRole("status").filter({ hasText: "Live" }).waitFor({ timeout: WAIT_MS });
  await panel.getByRole("navigation", { name: "Pages" }).getByRole("link", { name: "Pairing" }).click();
  await panel.getByRole("heading", { level: 1, name: "Pairing" }).waitFor({ timeout: WAIT_MS });
  return panel;
}

/** The pending request from `origin` on the panel's Pairing page (a locator; it may not be there yet). */
export function pendingRequest(panel, origin) {
  return panel.locator("li.request").filter({ has: panel.getByTestId("pairing-origin").getByText(origin, { exact: true }) });
}

/**
 * Waits for exactly one pending request from `origin` on the panel's Pairing page, checks the
 * origin and name it shows, and returns the code read from its digits.
 */
export async function codeFromPanel(panel, { origin, name }) {
  const request = pendingRequest(panel, origin);
  await request.waitFor({ timeout: WAIT_MS }); // strict: a second request from the origin fails here
  const facts = await request.locator("dl.facts").evaluate((dl) =>
    Object.fromEntries([...dl.querySelectorAll("dt")].map((dt) => [dt.textContent, dt.nextElementSibling?.textContent])));
  assert.equal(facts.Origin, origin, "the origin the panel shows");
  assert.equal(facts.Name, name, "the name the panel shows");
  const code = request.getByTestId("pairing-code");
  const digits = (await code.locator(".digit").allTextContents()).join("");
  assert.match(digits, /^\d{6}$/, "six digits in the panel");
  assert.equal(await code.getAttribute("data-code"), digits);
  return digits;
}
