// The panel's Approvals page and the prompt on every page (docs/approvals.md, "In the
// panel"), on the real call path: a real `tap call` of a tool annotated `destructiveHint:
// true` waits in a real `tap gateway`; the panel shows it (secrets masked) and answers it.
// "For this session" lets it finish and the session's next call through unasked; the grant
// is listed and revoked, after which the call is asked again; the prompt on another page and
// its D key deny it, and the call fails with the gateway's "denied" error; "ask for every
// tool of this provider" adds the rule that makes an unannotated tool wait; a page on another
// origin cannot answer; the history lists who decided each call. Screenshots: docs/screenshots/approvals.png, approvals-prompt.png.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { goTo } from "../../../tests/js-support/browser.mjs";
import { providerToken, tokenHandshake } from "../../../tests/js-support/gateway.mjs";
import { waitFor } from "../../../tests/js-support/wait.mjs";
import { launchBrowser, panelInNewContext, screenshot, serveOtherOrigin, startGateway } from "./support.mjs";

const GITHUB_TOKEN = "ghp_0123456789abcdefghijABCDEFGHIJklmn";
const BEARER = "Bearer eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJtZSJ9.c2lnbmF0dXJlLXNpZ25hdHVyZQ";
const ARGS = {
  path: "/home/me/projects/site/build",
  recursive: true,
  api_token: GITHUB_TOKEN,
  headers: { Authorization: BEARER },
  note: "cleaning up the old build before the release; ".repeat(6),
};

/** A provider `files` bound to `session`, offering `rm` (destructive) and `ls`; it answers every call with its arguments. */
async function filesProvider(gateway, session) {
  const token = await providerToken(gateway.env.TAP_HOME);
  const ws = new WebSocket(`ws://${gateway.hostPort}/`);
  const inbox = [];
  ws.addEventListener("message", (e) => {
    const msg = JSON.parse(String(e.data));
    inbox.push(msg);
    if (msg.type === "tool.call") ws.send(JSON.stringify({ type: "tool.result", id: msg.id, data: { ran: msg.tool } }));
  });
  await new Promise((resolve, reject) => {
    ws.addEventListener("open", resolve, { once: true });
    ws.addEventListener("error", () => reject(new Error("files: cannot connect")), { once: true });
  });
  const params = { type: "object", properties: {} };
  await tokenHandshake(ws, inbox, token, {
    name: "files",
    instance: "files-1",
    session,
    tools: [
      { name: "rm", description: "Removes a file or a tree", parameters: params, annotations: { destructiveHint: true } },
      { name: "ls", description: "Lists a directory", parameters: params, annotations: { readOnlyHint: true } },
    ],
  });
  return { inbox, calls: () => inbox.filter((m) => m.type === "tool.call").length, close: () => ws.close() };
}

describe("the Approvals page and the prompt on every page", () => {
  let gateway, browser, context, panel, session, files;

  /** `tap call --session S TOOL ARGS` in the background: resolves with { code, stdout, stderr }. */
  const call = (tool, args = {}) => gateway.tap(["call", "--session", session.id, tool, JSON.stringify(args)], 60000);
  const waitingIds = async () => JSON.parse((await gateway.tap(["approvals", "list", "--json"])).stdout).waiting.map((w) => w.id);
  const card = () => panel.getByTestId("waiting-call");

  before(async () => {
    gateway = await startGateway();
    session = await gateway.openSession("approvals-e2e");
    files = await filesProvider(gateway, session.id);
    browser = await launchBrowser();
    ({ context, panel } = await panelInNewContext(browser, gateway));
    await goTo(panel, "Approvals");
  });

  after(async () => {
    files?.close();
    await context?.close();
    await browser?.close();
    await gateway?.stop();
  });

  test("an unannotated tool runs unasked; nothing waits", async () => {
    const out = await call("ls");
    assert.equal(out.code, 0, out.stderr);
    assert.deepEqual(JSON.parse(out.stdout), { ran: "ls" });
    await panel.getByTestId("waiting-empty").waitFor();
  });

  test("a destructive call waits; the page shows it with its secrets masked; 'for this session' lets it and the next through", async () => {
    const before = files.calls();
    const first = call("rm", ARGS);
    await card().waitFor();
    const text = await card().innerText();
    assert.match(text, /\brm\b/);
    assert.match(text, /files/);
    assert.match(text, /approvals-e2e/);
    assert.match(text, /destructiveHint: true/);
    assert.match(text, /default: destructiveHint/);
    const args = await panel.getByTestId("call-args").innerText();
    assert.match(args, /"path": "\/home\/me\/projects\/site\/build"/);
    assert.match(args, /"api_token": "••••• masked \(\d+ chars\)"/);
    assert.match(args, /"Authorization": "••••• masked/);
    assert.ok(!args.includes(GITHUB_TOKEN) && !args.includes("eyJ"), args);
    assert.match(args, /more chars\)/, "the long note is folded");
    assert.ok(!(await panel.content()).includes(GITHUB_TOKEN), "the token is nowhere in the page");
    assert.match(await panel.getByTestId("approvals-badge").innerText(), /^1/);
    assert.equal(files.calls(), before, "the provider has not been called");
    await screenshot(panel, "approvals");

    await card().getByRole("button", { name: /^For this session/ }).click();
    const out = await first;
    assert.equal(out.code, 0, out.stderr);
    assert.deepEqual(JSON.parse(out.stdout), { ran: "rm" });
    await panel.getByTestId("waiting-empty").waitFor();

    // The session's next call is not asked: it finishes with nobody answering.
    const again = await call("rm", { path: "/tmp/other" });
    assert.equal(again.code, 0, again.stderr);
    assert.equal(files.calls(), before + 2);
  });

  test("the grant is listed; revoked, the next call is asked again", async () => {
    const row = panel.getByTestId("grant");
    await row.waitFor();
    const text = await row.innerText();
    assert.match(text, /allow/);
    assert.match(text, /\brm\b/);
    assert.match(text, /this session/);
    assert.match(text, new RegExp(session.id));
    const grants = JSON.parse((await gateway.tap(["approvals", "grants", "--json"])).stdout).grants;
    assert.equal(grants.length, 1);
    assert.equal(grants[0].scope, "session");

    await row.getByRole("button", { name: "Revoke the grant for rm" }).click();
    await row.getByRole("button", { name: "Yes, revoke" }).click();
    await row.waitFor({ state: "detached" });
    assert.deepEqual(JSON.parse((await gateway.tap(["approvals", "grants", "--json"])).stdout).grants, []);

    const asked = call("rm", { path: "/tmp/third" });
    await card().waitFor();
    const [id] = await waitingIds();
    assert.ok(id);
    // Answered with a button on the page this time: once.
    await card().getByRole("button", { name: /^Approve once/ }).click();
    assert.equal((await asked).code, 0);
    await panel.getByTestId("waiting-empty").waitFor();
  });

  test("a page on another origin cannot answer a waiting call", async () => {
    const asked = call("rm", { path: "/tmp/fourth" });
    await card().waitFor();
    const [id] = await waitingIds();
    const site = await serveOtherOrigin("<!doctype html><title>elsewhere</title><p>another site</p>");
    try {
      const page = await browser.newPage();
      await page.goto(site.url);
      const outcome = await page.evaluate(
        ({ hostPort, id }) =>
          new Promise((resolve) => {
            const ws = new WebSocket(`ws://${hostPort}/control`);
            let opened = false;
            ws.onopen = () => {
              opened = true;
              ws.send(JSON.stringify({ type: "request", id: "1", method: "approvals.approve", params: { id, for: "always" } }));
            };
            ws.onclose = (e) => resolve({ opened, code: e.code });
          }),
        { hostPort: gateway.hostPort, id },
      );
      assert.deepEqual(outcome, { opened: false, code: 1006 });
      await page.close();
    } finally {
      await site.close();
    }
    // Still waiting, and nothing was granted.
    assert.deepEqual(await waitingIds(), [id]);
    assert.deepEqual(JSON.parse((await gateway.tap(["approvals", "grants", "--json"])).stdout).grants, []);
    await card().getByRole("button", { name: /^Deny/ }).first().click();
    const out = await asked;
    assert.notEqual(out.code, 0);
    assert.match(out.stdout + out.stderr, /The user denied the call to 'rm'/);
  });

  test("on another page the prompt shows the waiting call; its D key denies it and the call fails not approved", async () => {
    await goTo(panel, "Sessions");
    assert.equal(await panel.getByTestId("approval-prompt").count(), 0, "no prompt while nothing waits");
    const before = files.calls();
    const asked = call("rm", ARGS);
    const prompt = panel.getByTestId("approval-prompt");
    await prompt.waitFor();
    const text = await prompt.innerText();
    assert.match(text, /A tool call waits for your approval/);
    assert.match(text, /\brm\b/);
    assert.match(text, /••••• masked/);
    assert.ok(!text.includes(GITHUB_TOKEN));
    assert.match(text, /Keys: A approve once · S for this session · H for 1 hour · D deny/);
    await screenshot(panel, "approvals-prompt");

    await panel.keyboard.press("d");
    const out = await asked;
    assert.notEqual(out.code, 0);
    assert.match(out.stdout + out.stderr, /The user denied the call to 'rm'/);
    assert.equal(files.calls(), before, "a denied call never reaches the provider");
    await prompt.waitFor({ state: "detached" });
  });

  test("the A key approves once from any page; the next call is asked again", async () => {
    const asked = call("rm", ARGS);
    await panel.getByTestId("approval-prompt").waitFor();
    // The prompt fits the smallest window the panel supports (window-sizes.test.mjs) without a sideways scrollbar.
    await panel.setViewportSize({ width: 800, height: 600 });
    const fits = await panel.evaluate(() => document.documentElement.scrollWidth <= document.documentElement.clientWidth);
    await panel.setViewportSize({ width: 1280, height: 800 });
    assert.ok(fits, "the prompt fits 800 px");
    await panel.keyboard.press("a");
    assert.equal((await asked).code, 0);
    await panel.getByTestId("approval-prompt").waitFor({ state: "detached" });
    assert.deepEqual(JSON.parse((await gateway.tap(["approvals", "grants", "--json"])).stdout).grants, [], "once remembers nothing");
  });

  test("a key typed into a field is not an answer; S outside one approves for the session", async () => {
    await goTo(panel, "Approvals");
    const asked = call("rm", { path: "/tmp/s" });
    await card().waitFor();
    const id = panel.getByRole("form", { name: "Add a rule" }).getByLabel("Id", { exact: true });
    await id.fill("");
    await id.pressSequentially("dash");
    assert.equal(await id.inputValue(), "dash");
    assert.equal((await waitingIds()).length, 1, "still waiting after d, a, s, h typed into the field");
    await id.fill("");
    await id.blur();
    await panel.keyboard.press("s");
    assert.equal((await asked).code, 0);
    const grants = JSON.parse((await gateway.tap(["approvals", "grants", "--json"])).stdout).grants;
    assert.deepEqual(grants.map((g) => [g.tool, g.scope, g.session]), [["rm", "session", session.id]]);
    await panel.getByTestId("grant").getByRole("button", { name: "Revoke the grant for rm" }).click();
    await panel.getByTestId("grant").getByRole("button", { name: "Yes, revoke" }).click();
    await panel.getByTestId("grant").waitFor({ state: "detached" });
  });

  test("a grant limited to an argument pattern lets matching calls through and asks for the others", async () => {
    // The token comes first: a secret is never proposed (the field would show it).
    const asked = call("rm", { api_token: GITHUB_TOKEN, path: "/tmp/keep" });
    await card().waitFor();
    await card().getByLabel("Grant only for calls whose argument").check();
    assert.equal(await card().getByLabel("Argument (JSON pointer)").inputValue(), "/path");
    assert.equal(await card().getByLabel("Regex").inputValue(), "^/tmp/keep$");
    await card().getByRole("button", { name: /^For this session/ }).click();
    assert.equal((await asked).code, 0);
    const row = panel.getByTestId("grant");
    await row.waitFor();
    assert.match(await row.innerText(), /\/path ~ \^\/tmp\/keep\$/);
    const [grant] = JSON.parse((await gateway.tap(["approvals", "grants", "--json"])).stdout).grants;
    assert.deepEqual(grant.args, [{ pointer: "/path", regex: "^/tmp/keep$" }]);

    assert.equal((await call("rm", { path: "/tmp/keep" })).code, 0, "matching: unasked");
    const other = call("rm", { path: "/tmp/other" });
    await card().waitFor();
    await card().getByRole("button", { name: /^Deny/ }).first().click();
    assert.notEqual((await other).code, 0);
    await row.getByRole("button", { name: "Revoke the grant for rm" }).click();
    await row.getByRole("button", { name: "Yes, revoke" }).click();
    await row.waitFor({ state: "detached" });
  });

  test("'ask for every tool of files' from a waiting call makes the unannotated tool wait; the rule is removed on the page", async () => {
    const asked = call("rm", { path: "/tmp/b" });
    await card().waitFor();
    await card().getByRole("button", { name: "Ask for every tool of files" }).click();
    const rule = panel.getByTestId("rule");
    await rule.waitFor();
    assert.match(await rule.innerText(), /ask-files[\s\S]*ask[\s\S]*provider=files/);
    const rules = JSON.parse((await gateway.tap(["policy", "list", "--json"])).stdout).rules;
    assert.deepEqual(rules.map((r) => [r.id, r.action, r.match.provider]), [["ask-files", "ask", "files"]]);
    await card().getByRole("button", { name: /^Approve once/ }).click();
    assert.equal((await asked).code, 0);

    const listed = call("ls");
    await card().waitFor();
    assert.match(await card().innerText(), /\bls\b[\s\S]*rule ask-files/);
    await card().getByRole("button", { name: /^Approve once/ }).click();
    assert.equal((await listed).code, 0);

    await rule.getByRole("button", { name: "Remove rule ask-files" }).click();
    await rule.getByRole("button", { name: "Yes, remove" }).click();
    await rule.waitFor({ state: "detached" });
    assert.equal((await call("ls")).code, 0, "unasked again");
  });

  test("the rule form adds a deny rule that refuses a call before the provider", async () => {
    const form = panel.getByRole("form", { name: "Add a rule" });
    await form.getByLabel("Id", { exact: true }).fill("no-ls");
    await form.getByLabel("Action").selectOption("deny");
    await form.getByLabel("Tool (glob)").fill("l?");
    await form.getByLabel("Reason").fill("no listing today");
    await form.getByRole("button", { name: "Add rule" }).click();
    await panel.getByTestId("rule").filter({ hasText: "no-ls" }).waitFor();
    const before = files.calls();
    const out = await call("ls");
    assert.notEqual(out.code, 0);
    assert.match(out.stdout + out.stderr, /no listing today/);
    assert.equal(files.calls(), before);

    // The history, from the calls' traces: the rule's deny first, then the answers given here.
    const decision = panel.getByTestId("decision");
    await waitFor(async () => /no-ls/.test((await decision.first().innerText().catch(() => "")) ?? ""), "the deny in the history");
    const rows = await decision.allInnerTexts();
    assert.match(rows[0], /\bls\b[\s\S]*deny[\s\S]*rule no-ls/);
    assert.ok(rows.some((r) => /\brm\b[\s\S]*allow[\s\S]*you[\s\S]*asked by the default/.test(r)), rows.join("\n"));
    assert.ok(rows.some((r) => /\brm\b[\s\S]*deny[\s\S]*you/.test(r)), rows.join("\n"));
    assert.ok(rows.some((r) => /\brm\b[\s\S]*allow[\s\S]*grant \S/.test(r)), rows.join("\n"));
    assert.ok(!rows.some((r) => /\bls\b[\s\S]*allow[\s\S]*default/.test(r)), "the defaults' silent allows are left out");
    assert.deepEqual(panel.errors, []);
  });
});
