// A profile for Copilot sessions: `tap connect copilot --profile NAME` writes the profile into
// the extension, every session registers with it, and the model's tool list is the profile's
// (a hidden provider tool is missing, the others are there). TAP_COPILOT_PROFILE overrides it
// for one run; an unknown profile leaves the session without Tap tools, saying why, never with
// every tool; connecting again without --profile removes it. Hook rules can hold for the
// profile and for Copilot sessions (`match.profile`, `match.client`). The real Copilot CLI,
// offline, against the fake model; run by scripts/test-copilot.sh.

import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { startFakeModel } from "./fake-model.mjs";
import { tempDir } from "../js-support/process.mjs";
import { copilotLogs, requestText, runCopilot, startGateway } from "./support.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
let dir, gw, model, project;

/** A project whose provider `site` offers `weather` and `forbidden`, with a context rule for
 * `weather` in Copilot sessions with profile web, and a deny for another client's sessions. */
function makeProject(root) {
  const project = path.join(root, "project");
  fs.mkdirSync(project);
  const config = {
    name: "site",
    tools: [{ name: "weather", reply: "sunny in" }, { name: "forbidden", reply: "should never run" }],
    hello: {
      hooks: {
        onPreToolUse: [
          { match: { tool: "weather", profile: "web", client: "copilot" }, action: "context", content: "HOOK: web in copilot" },
          { match: { tool: "weather", client: "claude-code" }, action: "deny", reason: "not in claude-code" },
        ],
      },
    },
  };
  fs.writeFileSync(path.join(project, "site.json"), JSON.stringify(config));
  fs.writeFileSync(path.join(project, "tap.config.json"), JSON.stringify({
    providers: { site: { command: process.execPath, args: [path.join(here, "provider.mjs"), "site.json"] } },
  }));
  fs.symlinkSync(path.join(here, "node_modules"), path.join(project, "node_modules"));
  return project;
}

before(async () => {
  dir = tempDir("tap-copilot-profile-");
  model = await startFakeModel();
  gw = await startGateway(dir);
  fs.writeFileSync(path.join(gw.tapHome, "profiles.json"), JSON.stringify({
    profiles: { web: { hideTools: ["forbidden"] }, noweather: { hideTools: ["weather"] } },
  }));
  project = makeProject(dir);
});

after(async () => {
  await gw?.stop();
  await model?.close();
  if (process.env.KEEP_TEST_DIR) console.log(`kept ${dir}`);
  else fs.rmSync(dir, { recursive: true, force: true });
});

async function run(prompt, env = {}) {
  const before = model.requests.length;
  const r = await runCopilot({ cwd: project, prompt, copilotHome: gw.copilotHome, tapHome: gw.tapHome, modelUrl: model.url, env }).done;
  assert.equal(r.code, 0, `copilot failed:\n${r.stdout}\n${r.stderr}\n${copilotLogs(gw.copilotHome)}`);
  const requests = model.requests.slice(before);
  assert.ok(requests.length >= 1, "the model was asked");
  return { ...r, requests, tools: requests[0].tools?.map((t) => t.function?.name) ?? [] };
}

/** `tap connect --json`'s line for the Copilot CLI. */
async function copilotClient() {
  const r = await gw.tap(["connect", "--json"]);
  assert.equal(r.code, 0, r.stdout + r.stderr);
  return JSON.parse(r.stdout).find((c) => c.client === "copilot");
}

test("with a profile that hides a tool, the model's tool list lacks it and has the others", async () => {
  const connected = await gw.tap(["connect", "copilot", "--profile", "web"]);
  assert.equal(connected.code, 0, connected.stdout + connected.stderr);
  assert.match(connected.stdout, /every Copilot session uses profile web/);
  const listed = await copilotClient();
  assert.equal(listed.state, "connected");
  assert.equal(listed.profile, "web");

  const r = await run('CALL:weather{"city":"Oslo"}');
  // Not denied (the deny is for claude-code's sessions); the web + copilot rule's context
  // reaches the model with the result.
  assert.match(r.stdout, /RESULT\(weather\): sunny in \{"city":"Oslo"\}/, r.stdout);
  assert.match(r.requests.map(requestText).join("\n"), /HOOK: web in copilot/);
  assert.ok(r.tools.includes("weather"), `weather offered: ${r.tools}`);
  assert.ok(!r.tools.includes("forbidden"), `forbidden hidden: ${r.tools}`);
  // The gateway's own tools stay (the profile does not hide them).
  assert.ok(r.tools.includes("tap_stream_history"), `tap_* offered: ${r.tools}`);

  // A model that calls the hidden tool anyway gets nothing from the provider.
  const hostile = await run("CALL:forbidden{}");
  const seen = hostile.stdout + hostile.requests.map(requestText).join("\n");
  assert.doesNotMatch(seen, /should never run/);
});

test("TAP_COPILOT_PROFILE overrides the installed profile for one run", async () => {
  const r = await run("hello", { TAP_COPILOT_PROFILE: "noweather" });
  assert.ok(r.tools.includes("forbidden"), `forbidden offered: ${r.tools}`);
  assert.ok(!r.tools.includes("weather"), `weather hidden: ${r.tools}`);
});

test("an unknown profile: the session has no Tap tools and says why", async () => {
  const r = await run("hello", { TAP_COPILOT_PROFILE: "nope" });
  assert.ok(!r.tools.includes("weather") && !r.tools.includes("forbidden"), `${r.tools}`);
  assert.ok(!r.tools.some((t) => t.startsWith("tap_")), `${r.tools}`);
  // The CLI wraps long lines.
  const said = (r.stdout + r.stderr).replace(/\s+/g, " ");
  assert.match(said, /Tap: the Tap gateway refused this session \(NOT_FOUND: no profile 'nope'[^\n]*; it has no Tap tools\./, said);
});

test("connecting again without --profile removes it: every tool again", async () => {
  const connected = await gw.tap(["connect", "copilot"]);
  assert.equal(connected.code, 0, connected.stdout + connected.stderr);
  const listed = await copilotClient();
  assert.equal(listed.state, "connected");
  assert.equal(listed.profile, undefined);
  const r = await run('CALL:weather{"city":"Rome"}');
  assert.ok(r.tools.includes("weather") && r.tools.includes("forbidden"), `${r.tools}`);
  // Without the profile, the web rule does not apply.
  assert.match(r.stdout, /RESULT\(weather\): sunny in \{"city":"Rome"\}/, r.stdout);
  assert.doesNotMatch(r.requests.map(requestText).join("\n"), /HOOK: web in copilot/);
});
