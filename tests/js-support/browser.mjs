// Debian's Chromium (never a downloaded browser) and the gateway's panel in it, for the JS
// test suites that drive a browser (panel e2e, TypeScript SDK, Copilot).
//
// playwright-core is each suite's own dependency (ui/, sdk/typescript/, tests/copilot/ each
// pin it in their package.json): Node resolves a bare import from the importing file's
// folder, and this folder has no node_modules. So the suite passes its `chromium` in.

/** The Chromium binary: CHROMIUM if set, else Debian's. */
export const chromiumPath = () => process.env.CHROMIUM ?? "/usr/bin/chromium";

/** Launches Debian's Chromium, headless, with the suite's playwright-core `chromium`. */
export function launchChromium(chromium) {
  return chromium.launch({
    executablePath: chromiumPath(),
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
  });
}

/**
 * Opens the panel in a new page of `owner` (a browser or a browser context; `pageOptions`
 * for newPage) with a login link (`target`: the link, or a gateway from gateway.mjs, which
 * makes a fresh one), and waits until the panel is live. The page's `errors` collects its
 * uncaught exceptions and console errors (an exception, a CSP violation, a failed load).
 */
export async function openPanel(owner, target, { timeout, ...pageOptions } = {}) {
  const page = await owner.newPage(pageOptions);
  page.errors = [];
  page.on("pageerror", (e) => page.errors.push(`page error: ${e.message}`));
  page.on("console", (m) => {
    if (m.type() === "error") page.errors.push(`console: ${m.text()}`);
  });
  await page.goto(typeof target === "string" ? target : await target.loginUrl());
  await page.getByRole("status").filter({ hasText: "Live" }).waitFor({ timeout });
  return page;
}

/** Navigates the panel with its own links (no reload), then waits for the page heading. */
export async function goTo(panel, title, timeout) {
  await panel.getByRole("navigation", { name: "Pages" }).getByRole("link", { name: title }).click();
  await panel.getByRole("heading", { level: 1, name: title }).waitFor({ timeout });
}
