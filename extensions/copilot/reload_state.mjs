// State handed from this process to the one `extensions.reload()` starts: the CLI relaunches
// the extension to change its tools, so the connection and what is queued must be carried over.

import fs from "node:fs";
import path from "node:path";
import { copilotSessionId, extDir } from "./environment.mjs";
import { RESUME_WINDOW_MS } from "./limits.mjs";

const stateDir = path.join(extDir, ".state");
const stateFile = copilotSessionId && path.join(stateDir, `${copilotSessionId.replace(/[^\w.-]/g, "_")}.json`);

export function takeSavedState() {
  if (!stateFile) return null;
  try {
    const saved = JSON.parse(fs.readFileSync(stateFile, "utf8"));
    fs.rmSync(stateFile, { force: true });
    return Date.now() - saved.savedAt < RESUME_WINDOW_MS ? saved : null;
  } catch {
    return null;
  }
}

export function saveState(state) {
  fs.mkdirSync(stateDir, { recursive: true, mode: 0o700 });
  const tmp = `${stateFile}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, JSON.stringify({ ...state, savedAt: Date.now() }), { mode: 0o600 });
  fs.renameSync(tmp, stateFile);
}
