// The Copilot CLI as a Tap session: the real `@github/copilot` CLI, offline, against the fake
// model, with the extension installed by the real `tap install copilot` and a real
// `tap gateway`. Run by scripts/test-copilot.sh.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { startFakeModel, textOf } from "./fake-model.mjs";
import { startProvider } from "./provider.mjs";
import { launchChromium } from "../js-support/browser.mjs";
import { tempDir } from "../js-support/process.mjs";
import { waitFor } from "../js-support/wait.mjs";
import {
  PATIENCE_MS, SESSION_END_MS, chromium, copilotLogs, openSessionsPage, requestText, runCopilot, runInteractiveCopilot,
  installWithoutTap, readJsonLines, startGateway, tap,
} from "./support.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
/** A 1x1 PNG, for a provider's file result. */
const PNG_1X1 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==";
let dir, gw, model, project;

/** A project whose tap.config.json starts the scripted provider `proj` for each session. */
function makeProject(root) {
  const project = path.join(root, "project");
  fs.mkdirSync(project);
  const config = {
    name: "proj",
    tools: [
      { name: "weather", reply: "sunny in", push: { level: "surface", event: "WEATHER-SURFACE-EVENT" }, progress: "WEATHER-PROGRESS half way" },
      { name: "forbidden", reply: "should never run" },
      { name: "advised", reply: "advice taken" },
      { name: "snapshot", file: { name: "snapshot.png", mimeType: "image/png", base64: PNG_1X1 } },
      { name: "hold" },
      { name: "release" },
    ],
    hello: {
      context: "AMBIENT: the build is green",
      startup_context: "STARTUP: monitoring 3 endpoints",
      hooks: {
        transforms: {
          custom_instructions: { action: "append", content: "TRANSFORM: use metric units" },
          safety: { action: "append", content: "SAFETY-TRANSFORM: never push to main" },
        },
        onPreToolUse: [
          { match: { tool: "forbidden" }, action: "deny", reason: "forbidden by the project's policy" },
          { match: { tool: "advised" }, action: "context", content: "HOOK-CONTEXT: the quota resets at noon" },
        ],
      },
      subscribe: ["user.message", "tool.execution_complete"],
    },
    onRelease: { level: "inject", event: "late tool ready", prompt: 'CALL:weather{"city":"Bergen"}' },
    // What every session's `proj` receives (session events, lifecycle), one JSON line each.
    record: path.join(root, "proj-record.jsonl"),
  };
  fs.writeFileSync(path.join(project, "proj.json"), JSON.stringify(config));
  fs.writeFileSync(path.join(project, "tap.config.json"), JSON.stringify({
    providers: { proj: { command: process.execPath, args: [path.join(here, "provider.mjs"), "proj.json"] } },
  }));
  // The provider imports `ws` from here.
  fs.symlinkSync(path.join(here, "node_modules"), path.join(project, "node_modules"));
  return project;
}

before(async () => {
  dir = tempDir("tap-copilot-");
  model = await startFakeModel();
  gw = await startGateway(dir);
  const installed = await gw.tap(["install", "copilot"]);
  assert.equal(installed.code, 0, installed.stdout + installed.stderr);
  assert.match(installed.stdout, /Turned on Copilot's experimental extensions feature/);
  project = makeProject(dir);
});

after(async () => {
  await gw?.stop();
  await model?.close();
  if (process.env.KEEP_TEST_DIR) console.log(`kept ${dir}`);
  else fs.rmSync(dir, { recursive: true, force: true });
});

function copilot(prompt, cwd = project) {
  return runCopilot({ cwd, prompt, copilotHome: gw.copilotHome, tapHome: gw.tapHome, modelUrl: model.url });
}

async function finished(run) {
  const r = await run.done;
  assert.equal(r.code, 0, `copilot failed:\n${r.stdout}\n${r.stderr}\n${copilotLogs(gw.copilotHome)}`);
  return r;
}

test("the first prompt calls a project provider's tool and the answer quotes its result", async () => {
  const before = model.requests.length;
  const r = await finished(copilot('CALL:weather{"city":"Oslo"}'));
  assert.match(r.stdout, /RESULT\(weather\): sunny in \{"city":"Oslo"\}/, r.stdout);
  // The provider's surface push is a line in the session's timeline.
  assert.match(r.stdout, /\[proj\] WEATHER-SURFACE-EVENT/, r.stdout);
  const first = model.requests[before];
  assert.ok(first.tools.some((t) => t.function?.name === "weather"), "weather offered on the first request");
  // The prompt transforms landed in the CLI's own system prompt sections, after the
  // section's text (append); the ambient context reached the model with the prompt.
  const system = first.messages.filter((m) => m.role === "system").map(textOf).join("\n");
  assert.match(system, /\S[\s\S]*TRANSFORM: use metric units/, system.slice(-2000));
  assert.match(system, /SAFETY-TRANSFORM: never push to main/);
  const text = requestText(first);
  assert.doesNotMatch(first.messages.filter((m) => m.role !== "system").map(textOf).join("\n"), /TRANSFORM: use metric units/);
  assert.match(text, /AMBIENT: the build is green/);
  // The provider's startup_context (session.context) reached the model at the session's start.
  assert.match(text, /STARTUP: monitoring 3 endpoints/);
  // Its tool.progress is a line in the timeline.
  assert.match(r.stdout, /\[weather\] WEATHER-PROGRESS half way/, r.stdout);
});

test("a provider's file result reaches the CLI as an attached image, with its path as the text", async () => {
  const before = model.requests.length;
  const r = await finished(copilot("CALL:snapshot{}"));
  // The CLI shows the attachment it got (the offline model is not one it sends images to).
  assert.match(r.stdout, /\[Image: [^\]]*snapshot\.png \[image\/png\] 1x1\]/, r.stdout);
  const next = model.requests[before + 1];
  assert.match(textOf(next.messages.at(-1)), /^File result: \S*snapshot\.png \(image\/png, 70 bytes, readable until /);
});

test("a deny hook rule blocks a call with its reason", async () => {
  const before = model.requests.length;
  const r = await finished(copilot("CALL:forbidden{}"));
  assert.match(r.stdout, /Denied by preToolUse hook: forbidden by the project's policy/, r.stdout);
  const seen = model.requests.slice(before).map(requestText).join("\n");
  assert.match(seen, /forbidden by the project's policy/);
  assert.doesNotMatch(seen, /should never run/);
});

test("a context hook rule's text reaches the model with the tool's result", async () => {
  const before = model.requests.length;
  const r = await finished(copilot("CALL:advised{}"));
  assert.match(r.stdout, /RESULT\(advised\): advice taken \{\}/, r.stdout);
  const [ask, ...rest] = model.requests.slice(before);
  // Asked before the tool runs: the request that chose the tool cannot have it...
  assert.doesNotMatch(requestText(ask), /HOOK-CONTEXT/);
  // ...and the next request, which carries the tool's result, has it (the CLI adds it as a
  // message after the result).
  assert.ok(rest.length >= 1, "a request after the tool call");
  const next = requestText(rest[0]);
  assert.match(next, /advice taken \{\}[\s\S]*HOOK-CONTEXT: the quota resets at noon/, next);
});

test("a provider subscribed to session events gets the turn's user message and tool completion, then idle", async () => {
  const record = path.join(dir, "proj-record.jsonl");
  const prompt = 'CALL:weather{"city":"Lima"}';
  await finished(copilot(prompt));
  // `proj` runs in the gateway's process tree and records what it receives.
  const seen = () => readJsonLines(record);
  const session = await waitFor(() =>
    seen().find((m) => m.type === "session.event" && m.event === "user.message" && m.data?.content?.includes(prompt))?.sessionId, "the turn's user.message at the provider", PATIENCE_MS);
  const ours = () => seen().filter((m) => m.sessionId === session && m.type !== "hello.ack");
  const name = (m) => (m.type === "session.event" ? m.event : `lifecycle ${m.state}`);
  // The session ends with the CLI: everything of this session has arrived by then.
  await waitFor(() => ours().some((m) => m.state === "shutdown.pending"), "the session's shutdown at the provider", PATIENCE_MS);
  const ms = ours();
  assert.deepEqual(ms.map(name), ["lifecycle started", "user.message", "tool.execution_complete", "lifecycle idle", "lifecycle shutdown.pending"]);
  assert.equal(ms[1].data.content, prompt);
  // The spec's payload (Provider Interface, session.event table)...
  const done = ms[2].data;
  assert.equal(done.tool, "weather");
  assert.equal(done.provider, "proj");
  assert.deepEqual(done.args, { city: "Lima" });
  assert.deepEqual(done.result, { type: "success", output: 'sunny in {"city":"Lima"}' });
  assert.ok(Number.isInteger(done.durationMs) && done.durationMs >= 0, JSON.stringify(done));
  // ...and Copilot's names, as before.
  assert.equal(done.toolName, "weather");
  assert.equal(done.success, true);
  assert.equal(typeof done.toolCallId, "string");
});

test("mid-session: the session is in tap status while it runs, an inject push starts a turn, and the session leaves with the CLI", async () => {
  const run = copilot("CALL:hold{}");
  // The turn is held inside `hold`: the session is live.
  const session = await waitFor(async () => {
    const s = await gw.status();
    const proj = s.providers.find((p) => p.name === "proj" && p.inFlight === 1);
    return proj && s.sessions.find((x) => x.id === proj.session);
  }, "the Copilot session in hold", PATIENCE_MS);
  assert.equal(session.hostName, "copilot");
  assert.equal(session.cwd, project);
  assert.equal(session.foreground, true);
  assert.equal(session.label, "copilot: project");
  assert.equal(session.state, "busy");

  // Releasing `hold` makes `proj` push an inject whose prompt calls `weather` in a new turn.
  const released = await gw.tap(["call", "--session", session.id, "release", "{}"]);
  assert.equal(released.code, 0, released.stdout + released.stderr);
  const r = await finished(run);
  assert.match(r.stdout, /RESULT\(hold\): held until released/, r.stdout);
  assert.match(r.stdout, /\[proj\] late tool ready/, r.stdout);
  assert.match(r.stdout, /RESULT\(weather\): sunny in \{"city":"Bergen"\}/, r.stdout);
  // The extension ends its session as the CLI takes it down: shortly after the exit.
  await waitFor(async () => !(await gw.status()).sessions.find((s) => s.id === session.id), "the session ended with the CLI", SESSION_END_MS);
});

test("the panel's Sessions page lists the running Copilot session, then shows it ended when the CLI exits", async () => {
  const browser = await launchChromium(chromium);
  let run;
  try {
    const page = await openSessionsPage(browser, gw);
    run = copilot("CALL:hold{}");
    // The turn is held inside `hold`: the session stays registered until it is released.
    const session = await waitFor(async () => {
      const s = await gw.status();
      const proj = s.providers.find((p) => p.name === "proj" && p.inFlight === 1);
      return proj && s.sessions.find((x) => x.id === proj.session);
    }, "the Copilot session in hold", PATIENCE_MS);
    // The page was open before the session came: the row arrives live.
    const row = page.locator(`tr[data-session-id="${session.id}"]`);
    await row.getByText("copilot: project", { exact: true }).waitFor();
    await row.locator(".pill", { hasText: "busy" }).waitFor();
    const text = await row.innerText();
    for (const word of [project, "copilot", "foreground", "proj", "weather", "hold"]) assert.ok(text.includes(word), `the row shows ${word}: ${text}`);

    const released = await gw.tap(["call", "--session", session.id, "release", "{}"]);
    assert.equal(released.code, 0, released.stdout + released.stderr);
    await finished(run);
    await row.waitFor({ state: "detached" });
    const ended = page.locator(`tr[data-ended-session-id="${session.id}"]`);
    await ended.getByText("copilot: project", { exact: true }).waitFor();
    assert.ok((await ended.innerText()).includes(project));
  } finally {
    if (run && run.child.exitCode === null) run.child.kill("SIGKILL");
    await browser.close();
  }
});

test("interactive: a provider bound mid-session adds its tool after the reload, and the next turn calls it", async () => {
  // An interactive session (`copilot -p` neither waits for the reload nor outlives it) in a
  // directory without tap.config.json: no Tap tools at first.
  const plain = path.join(dir, "plain");
  fs.mkdirSync(plain, { recursive: true });
  const debugFile = path.join(dir, "interactive-debug.log");
  const run = runInteractiveCopilot({ cwd: plain, firstPrompt: "first turn", copilotHome: gw.copilotHome,
                                      tapHome: gw.tapHome, modelUrl: model.url, debugFile });
  let late;
  try {
    const session = await waitFor(async () =>
      (await gw.status()).sessions.find((s) => s.hostName === "copilot" && s.cwd === plain), "the interactive Copilot session in tap status", PATIENCE_MS);
    run.sessionId = session.id; // the extension registers Copilot's own session id
    await waitFor(() =>
      run.events().some((e) => e.type === "assistant.message" && e.data.content === "DONE: first turn"), "the first turn's answer", PATIENCE_MS);
    assert.deepEqual(session.tools, []);
    const joins = () => (fs.existsSync(debugFile) ? fs.readFileSync(debugFile, "utf8") : "").match(/joined with tools: .*/g) ?? [];
    assert.equal(joins().length, 1, fs.readFileSync(debugFile, "utf8"));

    // A provider binds to this session with a tool of its own.
    late = startProvider({ name: "late", tools: [{ name: "late_tool", reply: "late reply" }] },
                         { url: gw.url, token: gw.token, session: session.id });
    await late.ready;
    await waitFor(async () =>
      (await gw.status()).sessions.find((s) => s.id === session.id)?.tools.includes("late_tool"), "late_tool in the session's tools", PATIENCE_MS);
    // The extension relaunches itself with the new tool set and resumes its gateway host.
    await waitFor(() =>
      joins().some((l) => /late_tool.*after a reload/.test(l)), "the relaunched extension joined with late_tool", PATIENCE_MS);
    await waitFor(async () =>
      (await gw.status()).sessions.find((s) => s.id === session.id && !s.hostDetached), "the host attached again", PATIENCE_MS);

    const before = model.requests.length;
    run.send('CALL:late_tool{"n":1}');
    const answer = await waitFor(() =>
      run.events().find((e) => e.type === "assistant.message" && /^RESULT\(/.test(e.data.content ?? "")), "the second turn's answer", PATIENCE_MS);
    assert.equal(answer.data.content, 'RESULT(late_tool): late reply {"n":1}');
    assert.deepEqual(late.calls.map((c) => [c.tool, c.args]), [["late_tool", { n: 1 }]]);
    assert.ok(model.requests[before].tools.some((t) => t.function?.name === "late_tool"), "late_tool offered to the model");
    // One reload, not one per message: the gateway kept the same session throughout.
    assert.equal(joins().length, 2, fs.readFileSync(debugFile, "utf8"));

    await run.exit();
    await waitFor(async () => !(await gw.status()).sessions.find((s) => s.id === session.id), "the session ended with the CLI", SESSION_END_MS);
  } catch (e) {
    e.message += `\n--- screen ---\n${run.screen.slice(-3000)}\n--- debug ---\n${fs.existsSync(debugFile) ? fs.readFileSync(debugFile, "utf8") : ""}\n--- logs ---\n${copilotLogs(gw.copilotHome)}`;
    throw e;
  } finally {
    late?.close();
    if (run.child.exitCode === null) run.kill();
  }
});

test("interactive: the extension registers when the gateway starts after the CLI, and again after a gateway restart", async () => {
  const late = tempDir("tap-copilot-");
  const copilotHome = path.join(late, "copilot");
  const tapHome = path.join(late, "tap");
  // No tap to start a gateway with, or the extension would start one itself (gateway_start.test.mjs).
  await installWithoutTap(copilotHome);
  const work = path.join(late, "work");
  fs.mkdirSync(work);
  const debugFile = path.join(late, "extension-debug.log");
  const run = runInteractiveCopilot({ cwd: work, firstPrompt: "no gateway yet", copilotHome, tapHome, modelUrl: model.url, debugFile });
  let gateway;
  try {
    // The CLI works without a gateway.
    run.sessionId = await waitFor(() => run.findSessionId(), "the Copilot session's state", PATIENCE_MS);
    await waitFor(() =>
      run.events().some((e) => e.type === "assistant.message" && e.data.content === "DONE: no gateway yet"), "the answer without a gateway", PATIENCE_MS);

    gateway = await startGateway(late);
    const ours = (s) => s.hostName === "copilot" && s.cwd === work;
    const first = await waitFor(async () => (await gateway.status()).sessions.find(ours), "the session registered with the late gateway", PATIENCE_MS);

    // A restart forgets the host's resume token: the extension registers the session again.
    await gateway.stop();
    gateway = await startGateway(late);
    await waitFor(async () =>
      (await gateway.status()).sessions.find((s) => ours(s) && s.id === first.id && !s.hostDetached), "the session registered with the restarted gateway", PATIENCE_MS);

    run.send("after the restart");
    await waitFor(() =>
      run.events().some((e) => e.type === "assistant.message" && e.data.content === "DONE: after the restart"), "a turn after the restart", PATIENCE_MS);
    await run.exit();
    await waitFor(async () => !(await gateway.status()).sessions.find(ours), "the session ended with the CLI", SESSION_END_MS);
  } catch (e) {
    e.message += `\n--- screen ---\n${run.screen.slice(-3000)}\n--- debug ---\n${fs.existsSync(debugFile) ? fs.readFileSync(debugFile, "utf8") : ""}\n--- logs ---\n${copilotLogs(copilotHome)}`;
    throw e;
  } finally {
    if (run.child.exitCode === null) run.kill();
    await gateway?.stop();
    fs.rmSync(late, { recursive: true, force: true });
  }
});

test("a tool of an MCP server in the gateway's mcp.json is called from Copilot, and its result reaches the model", async (t) => {
  // A gateway of its own: the server's tools are in every session, which the others' tool lists must not have.
  const own = tempDir("tap-copilot-");
  let gateway;
  try {
    fs.mkdirSync(path.join(own, "tap"));
    const good = path.resolve(here, "../mcp/servers/good.py");
    fs.writeFileSync(path.join(own, "tap", "mcp.json"),
                     JSON.stringify({ mcpServers: { good: { command: process.env.TAP_TEST_PYTHON || "python3", args: [good] } } }));
    gateway = await startGateway(own);
    assert.equal((await gateway.tap(["install", "copilot"])).code, 0);
    await waitFor(async () => {
      const r = await gateway.tap(["mcp", "list", "--json"]);
      return r.code === 0 && JSON.parse(r.stdout).find((s) => s.name === "good" && s.state === "ready");
    }, "good ready in tap mcp list", PATIENCE_MS);

    /** `copilot -p` in `cwd` calls good__echo; its answer quotes the server's text, which the model got as is. */
    const callsEcho = async (cwd) => {
      const before = model.requests.length;
      const run = runCopilot({ cwd, prompt: 'CALL:good__echo{"message":"from copilot"}', copilotHome: gateway.copilotHome,
                               tapHome: gateway.tapHome, modelUrl: model.url });
      const r = await run.done;
      assert.equal(r.code, 0, `copilot failed:\n${r.stdout}\n${r.stderr}\n${copilotLogs(gateway.copilotHome)}`);
      assert.match(r.stdout, /RESULT\(good__echo\): from copilot/, r.stdout);
      const [ask, next] = model.requests.slice(before);
      assert.ok(ask.tools.some((t) => t.function?.name === "good__echo"), "good__echo offered to the model");
      // An all-text MCP result reaches a session host as its text.
      assert.equal(next.messages.at(-1).role, "tool");
      assert.equal(textOf(next.messages.at(-1)), "from copilot");
    };

    // In a project (a tap.config.json, here with no providers of its own) the extension waits
    // for the first providers' tools before the first prompt: the server's arrive then.
    const inProject = path.join(own, "project");
    fs.mkdirSync(inProject);
    fs.writeFileSync(path.join(inProject, "tap.config.json"), "{}");
    await t.test("in a project", () => callsEcho(inProject));

    // Elsewhere too: the session's first tool set has only the built-in tools (the user
    // servers' are bound to each new session just after it registers), and
    // `session.registered` says `toolsPending`, so the extension waits for them.
    const plain = path.join(own, "plain");
    fs.mkdirSync(plain);
    await t.test("outside a project", () => callsEcho(plain));

    // An image block is an attachment (ToolResultObject.binaryResultsForLlm), not JSON text.
    await t.test("an image result is attached, its text is the text", async () => {
      const before = model.requests.length;
      const run = runCopilot({ cwd: plain, prompt: "CALL:good__image{}", copilotHome: gateway.copilotHome, tapHome: gateway.tapHome, modelUrl: model.url });
      const r = await run.done;
      assert.equal(r.code, 0, `copilot failed:\n${r.stdout}\n${r.stderr}\n${copilotLogs(gateway.copilotHome)}`);
      // The CLI shows the attachment it got; the model gets the text (the offline model is
      // not one the CLI sends images to: see docs/copilot.md).
      assert.match(r.stdout, /\[Image: an image \[image\/png\] 1x1\]/, r.stdout);
      const next = model.requests[before + 1];
      assert.equal(textOf(next.messages.at(-1)), "a 1x1 PNG");
    });
  } finally {
    await gateway?.stop();
    fs.rmSync(own, { recursive: true, force: true });
  }
});

// With `tap` on PATH the extension starts a gateway instead (gateway_start.test.mjs): here the
// CLI's PATH has none (the suite's tap is TAP_BIN, in a directory of its own).
test("without a gateway and with no tap on PATH the CLI still works, says so once, and starts no gateway", async () => {
  const lonely = tempDir("tap-copilot-");
  try {
    const copilotHome = path.join(lonely, "copilot");
    const tapHome = path.join(lonely, "tap");
    await installWithoutTap(copilotHome);
    const before = model.requests.length;
    const run = runCopilot({ cwd: lonely, prompt: "hello there", copilotHome, tapHome, modelUrl: model.url });
    const r = await run.done;
    assert.equal(r.code, 0, r.stdout + r.stderr);
    assert.match(r.stdout, /DONE: hello there/);
    assert.equal((r.stdout + r.stderr).match(/Tap: no gateway running/g)?.length, 1, r.stdout + r.stderr);
    assert.equal(fs.existsSync(path.join(tapHome, "gateway.json")), false, "no gateway was started");
    assert.equal(model.requests.length, before + 1);
  } finally {
    fs.rmSync(lonely, { recursive: true, force: true });
  }
});
