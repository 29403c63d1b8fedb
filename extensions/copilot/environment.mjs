// What this extension process knows of where it runs: the CLI's session, the directory, the
// profile it registers with, and the debug log.

import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

export const HOST_NAME = "copilot";
/** The profile (docs/clients.md, "Profiles") `tap install copilot --profile NAME` wrote here;
 * `TAP_COPILOT_PROFILE` in the CLI's environment overrides it for one run. */
const INSTALLED_PROFILE = null;
export const profile = process.env.TAP_COPILOT_PROFILE || INSTALLED_PROFILE;
/** `TAP_COPILOT_DEBUG=<file>` appends a line per protocol step there (Copilot shows no extension output). */
const debugFile = process.env.TAP_COPILOT_DEBUG;
export function debug(...parts) {
  if (debugFile) fs.appendFileSync(debugFile, `${new Date().toISOString()} [${process.pid}] ${parts.join(" ")}\n`);
}
/** The installed extension's directory (`<COPILOT_HOME>/extensions/tap`). */
export const extDir = path.dirname(fileURLToPath(import.meta.url));
export const copilotSessionId = process.env.SESSION_ID;
export const cwd = process.cwd();
