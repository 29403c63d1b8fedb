#!/usr/bin/env node
// The "CI status" provider: polls CI with CI_STATUS_CMD, answers `ci_status`, tells the session
// when the status changes (a `surface` event on stream `ci`), and gates `git push` in shell-like
// tools while CI is red. See README.md for the settings.
import { connectProvider, RateLimitedError } from "@tap-gateway/provider";
import { readConfig, ConfigError, checkOnce, gateRules, gateDecision, describe, changed, GATE_ID } from "./ci.mjs";

/** The stream the status events go to (`tap streams history --session ID ci`). */
const STREAM = "ci";

let config;
try {
  config = readConfig();
} catch (e) {
  if (!(e instanceof ConfigError)) throw e;
  console.error(`ci-status: ${e.message}`);
  process.exit(2);
}

let last; // the latest check: {state, conclusion, detail, checkedAt}
let provider;
let timer;
let checking; // the check in flight, so a `refresh` joins it instead of running the command twice

async function check() {
  checking ??= (async () => {
    const status = await checkOnce(config.command, config.cmdTimeoutSeconds);
    const previous = last;
    last = status;
    if (changed(previous, status)) await report(status, previous);
    return status;
  })().finally(() => { checking = undefined; });
  return checking;
}

/** First check: `keep` (stored, nobody interrupted). A change: `surface`, so the agent sees it. */
async function report(status, previous) {
  const level = previous ? "surface" : "keep";
  const event = describe(status, previous);
  const metadata = { state: status.state, conclusion: status.conclusion, detail: status.detail, checkedAt: status.checkedAt, previous: previous?.conclusion };
  try {
    await provider.push(level, event, { stream: STREAM, metadata });
  } catch (e) {
    if (e instanceof RateLimitedError) {
      // Over the session's budget: store it anyway so `ci_status` and the stream agree.
      await provider.push("keep", event, { stream: STREAM, metadata }).catch(() => {});
    } else {
      console.error(`ci-status: could not push '${event}': ${e.code ?? ""} ${e.message}`);
    }
  }
}

/** Runs the checks one after another (never two commands at once), CI_POLL_SECONDS apart. */
function schedule() {
  timer = setTimeout(async () => {
    await check().catch((e) => console.error(`ci-status: check failed: ${e.message}`));
    schedule();
  }, config.pollSeconds * 1000);
}

try {
  provider = await connectProvider({
    name: config.name,
    tools: {
      ci_status: {
        description: "The CI status of this project as last checked: green, red, pending or unknown, with the run and the time of the check. refresh: check now instead.",
        parameters: { type: "object", properties: { refresh: { type: "boolean", description: "Run the status command now" } }, additionalProperties: false },
        handler: async ({ refresh } = {}) => {
          const status = refresh || !last ? await check() : last;
          return { ...status, pollSeconds: config.pollSeconds };
        },
      },
    },
    hooks: { onPreToolUse: gateRules(config.gateTools) },
    // Answered from the last check, so a push is never held up by a slow CI query.
    gates: { [GATE_ID]: () => gateDecision(last) },
  });
} catch (e) {
  console.error(`ci-status: cannot connect to the gateway: ${e.code ?? ""} ${e.message}`);
  process.exit(1);
}

console.error(`ci-status: bound to ${provider.sessionId}; checking every ${config.pollSeconds} s; gating git push in ${config.gateTools.join(", ")}`);
await check().catch((e) => console.error(`ci-status: check failed: ${e.message}`));
schedule();

for (const sig of ["SIGINT", "SIGTERM"]) {
  process.once(sig, async () => {
    clearTimeout(timer);
    await provider.close("stopped").catch(() => {});
    process.exit(0);
  });
}
