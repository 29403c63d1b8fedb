// Starting a gateway when none runs (issue 40): `tap gateway --exit-when-idle`, the spec's
// process model for a gateway started on demand, so it stops once no session has used it
// for its grace period. The desktop app (or a `tap gateway` someone runs) is never raced:
// a gateway refuses to start while another runs for the same TAP_HOME, and the saved port
// (settings.json) is the lock between two starting at once; the loser exits and this
// extension connects to the winner, whichever it is.

import { spawn } from "node:child_process";
import fs from "node:fs";
import path from "node:path";
import { debug, extDir } from "./environment.mjs";

/** The `tap` to start: on PATH, else the one `tap install copilot` recorded in
 * `.tap-install.json` (`tap`), when it still exists. */
export function findTap() {
  const name = process.platform === "win32" ? "tap.exe" : "tap";
  for (const dir of (process.env.PATH ?? "").split(path.delimiter).filter(Boolean)) {
    const candidate = path.join(dir, name);
    try {
      fs.accessSync(candidate, fs.constants.X_OK);
      if (fs.statSync(candidate).isFile()) return candidate;
    } catch {} // not there
  }
  try {
    const recorded = JSON.parse(fs.readFileSync(path.join(extDir, ".tap-install.json"), "utf8")).tap;
    if (typeof recorded === "string" && fs.statSync(recorded).isFile()) return recorded;
  } catch {} // no record, or no tap in it
  return null;
}

/** Starts `tap gateway --exit-when-idle` detached (it outlives this process by design: the
 * CLI's next session may use it). Asked only when the session starts (host.mjs), never on
 * a reconnect. Returns what happened in a few words, or null when there is no `tap`. */
export function startGateway() {
  const tap = findTap();
  if (!tap) return null;
  debug("starting a gateway:", tap);
  try {
    const child = spawn(tap, ["gateway", "--exit-when-idle"], { detached: true, stdio: "ignore", env: process.env });
    child.on("error", (e) => debug("gateway start failed:", e.message));
    child.unref();
    return `started ${tap} gateway --exit-when-idle`;
  } catch (e) {
    return `could not start ${tap}: ${e.message}`;
  }
}
