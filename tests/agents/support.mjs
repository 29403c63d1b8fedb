// The agent suite's helpers: a real `tap gateway` with the MCP server `good` and the profile
// `no-fails`, a project whose tap.config.json runs the test provider, `tap connect` into a
// throwaway HOME, and the real agent CLIs (installed by scripts/test-agents.sh into
// AGENTS_CACHE) run offline against the fake model with a clean environment.

import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { startGateway as startTapGateway, tapBin } from "../js-support/gateway.mjs";
import { run, start, stopChild } from "../js-support/process.mjs";
import { waitFor } from "../js-support/wait.mjs";

const here = path.dirname(fileURLToPath(import.meta.url));
const repo = path.resolve(here, "..", "..");
const cache = process.env.TAP_AGENTS_CACHE ?? path.join(os.homedir(), ".cache", "tap-gateway", "agents");
export const BIN = {
  gemini: path.join(cache, "node_modules", ".bin", "gemini"),
  opencode: path.join(cache, "node_modules", ".bin", "opencode"),
};
tapBin(); // fails at once, naming TAP_BIN, when it is not set (scripts/test-agents.sh sets it)

/** How long one agent run may take before it is killed (a turn takes 2-5 s here). */
export const RUN_MS = 90000;
/** The profile the tests connect with: every tool but the MCP server's `good__fails`. */
export const PROFILE = "no-fails";
/** The fake model's script: the provider's tool, then the MCP server's, then the final text. */
export const PLAN = [
  { tool: "weather", args: { city: "Oslo" } },
  { tool: "good__echo", args: { message: "hello through MCP" } },
];

/** All a gateway or CLI here inherits: nothing that could reach a model API or change a CLI's behaviour. */
const cleanEnv = () => ({ PATH: process.env.PATH, LANG: "C.UTF-8" });

/**
 * A `tap gateway` in `dir` (TAP_HOME `dir/tap`, HOME `dir/home`) with the MCP server `good`
 * (tests/mcp/servers/good.py: `good__echo` and more) ready, and the profile PROFILE.
 */
export async function startGateway(dir) {
  const gw = await startTapGateway({ dir, baseEnv: cleanEnv(), ownHome: true });
  const python = process.env.TAP_TEST_PYTHON ?? "python3";
  const steps = [
    ["mcp", "add", "good", "--", python, path.join(repo, "tests", "mcp", "servers", "good.py")],
    ["profiles", "set", PROFILE, "--hide-tool", "good__fails", "--description", "every tool but good__fails"],
  ];
  for (const args of steps) {
    const r = await gw.tap(args);
    if (r.code !== 0) throw new Error(`tap ${args.join(" ")} failed (${r.code}): ${r.stdout}${r.stderr}`);
  }
  await waitFor(async () => {
    const r = await gw.tap(["mcp", "list", "--json"]);
    return r.code === 0 && JSON.parse(r.stdout).find((s) => s.name === "good")?.state === "ready";
  }, "the MCP server good to be ready");
  return gw;
}

/**
 * A working directory for one agent run and a HOME for the CLI; with `provider`, its
 * `tap.config.json` runs the test provider `forecasts` (provider.mjs) for each session
 * opened there, recording its calls in `record`. Returns { cwd, home, record, calls() }.
 */
export function makeProject(root, name, provider) {
  const cwd = path.join(root, name, "project");
  const home = path.join(root, name, "home");
  fs.mkdirSync(cwd, { recursive: true });
  fs.mkdirSync(home, { recursive: true });
  const record = path.join(root, name, "provider.jsonl");
  if (provider) {
    fs.writeFileSync(path.join(cwd, "tap.config.json"), JSON.stringify({
      providers: { forecasts: { command: process.execPath, args: [path.join(here, "provider.mjs"), record] } },
    }));
  }
  const calls = () => (fs.existsSync(record) ? fs.readFileSync(record, "utf8") : "").split("\n").filter(Boolean).map((l) => JSON.parse(l));
  return { cwd, home, record, calls };
}

/**
 * Opens the gateway session the client's `tap mcp --session CLIENT` joins: labelled CLIENT,
 * in the project (so the gateway starts its provider). Resolves once the provider is bound
 * there (its `ready` line), so the CLI's first `tools/list` already holds its tools: a
 * session `tap mcp` registers itself gets the provider a moment after the CLI listed them.
 */
export async function openSession(gw, client, project) {
  const session = await gw.openSession(client, ["--cwd", project.cwd]);
  await waitFor(() => project.calls().some((c) => c.ready), `the provider forecasts to bind in session ${client}`);
  return session;
}

/** `tap connect CLIENT [--profile P]` with the project's HOME (and XDG_CONFIG_HOME inside it). */
export async function connect(gw, client, project, profile) {
  project.tapHome = gw.tapHome;
  const env = { ...gw.env, HOME: project.home, XDG_CONFIG_HOME: path.join(project.home, ".config") };
  return run(tapBin(), ["connect", client, ...(profile ? ["--profile", profile] : [])], { env });
}

/** Runs BIN ARGS in the project with `env` on top of a clean one; resolves {code, stdout, stderr}. */
async function runAgent(bin, args, project, env) {
  // TAP_HOME: the `tap mcp` the CLI launches finds the test's gateway there.
  const { child, output } = start(bin, args, { cwd: project.cwd, env: { ...cleanEnv(), HOME: project.home, TAP_HOME: project.tapHome, ...env } });
  // A run that hangs is killed: its test then fails on the exit code, with the output so far.
  const timer = setTimeout(() => stopChild(child, output, "SIGKILL"), RUN_MS);
  const code = await output.exited;
  clearTimeout(timer);
  return { code, stdout: output.stdout, stderr: output.stderr };
}

/**
 * `gemini -p PROMPT` against the fake model (GOOGLE_GEMINI_BASE_URL, an API key of no
 * account). `--skip-trust`: headless Gemini refuses a folder it was never told to trust
 * (docs: cli/trusted-folders.md). `-m` names a model so Gemini's router asks no classifier
 * first. Tool approval is the user policy the test's HOME holds (gemini.test.mjs).
 */
export function runGemini(project, modelUrl, prompt) {
  return runAgent(BIN.gemini, ["-p", prompt, "--skip-trust", "-m", "gemini-2.5-flash", "--output-format", "json"], project, {
    GEMINI_API_KEY: "fake-key", GOOGLE_GEMINI_BASE_URL: modelUrl,
  });
}

/**
 * `opencode run PROMPT` against the fake model, through a provider `fake`
 * (`@ai-sdk/openai-compatible`, bundled in opencode) given in OPENCODE_CONFIG_CONTENT, so
 * the MCP entry comes from the file `tap connect` wrote and nothing else. Its data, cache
 * and state go under the project's HOME.
 */
export function runOpencode(project, modelUrl, prompt) {
  const config = {
    provider: { fake: { npm: "@ai-sdk/openai-compatible", name: "Fake", options: { baseURL: `${modelUrl}/v1`, apiKey: "fake-key" }, models: { "fake-model": { name: "Fake model" } } } },
    model: "fake/fake-model",
  };
  const xdg = (d) => path.join(project.home, d);
  return runAgent(BIN.opencode, ["run", prompt], project, {
    XDG_CONFIG_HOME: xdg(".config"), XDG_DATA_HOME: xdg(".local/share"), XDG_CACHE_HOME: xdg(".cache"), XDG_STATE_HOME: xdg(".local/state"),
    OPENCODE_CONFIG_CONTENT: JSON.stringify(config),
    // Nothing but the fake model: no models.dev catalogue, no update check, no plugins. opencode
    // still starts an npm install of `@opencode-ai/plugin` into its config directory (for
    // custom tools) in the background; a registry on a closed loopback port makes it fail at
    // once instead of downloading (under strace, every connect() of a run was to 127.0.0.1).
    OPENCODE_DISABLE_MODELS_FETCH: "true", OPENCODE_DISABLE_AUTOUPDATE: "true", OPENCODE_DISABLE_DEFAULT_PLUGINS: "true", OPENCODE_PURE: "1",
    npm_config_registry: "http://127.0.0.1:9/",
  });
}
