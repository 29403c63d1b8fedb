// Finding the running gateway, and whether the session's directory is a Tap project.

import fs from "node:fs";
import os from "node:os";
import path from "node:path";

/** `$TAP_HOME`, else the platform data directory, as `tap_client::default_home()` computes it. */
export function tapHome() {
  if (process.env.TAP_HOME) return process.env.TAP_HOME;
  const home = os.homedir();
  if (process.platform === "darwin") return path.join(home, "Library", "Application Support", "tap");
  if (process.platform === "win32") return path.join(process.env.APPDATA ?? home, "tap");
  return path.join(process.env.XDG_DATA_HOME || path.join(home, ".local", "share"), "tap");
}

/** `{address, token}` of the running gateway, or a one-line reason it cannot be found. */
export function discover() {
  const home = tapHome();
  try {
    const state = JSON.parse(fs.readFileSync(path.join(home, "gateway.json"), "utf8"));
    const token = fs.readFileSync(path.join(home, "host-token"), "utf8").trim();
    return { address: state.address, token };
  } catch (e) {
    if (e.code === "ENOENT") return { error: `no gateway running for ${home}`, missing: true };
    return { error: `cannot read ${home}: ${e.message}` };
  }
}

/** Whether `dir` or a parent has a tap.config.json (then the gateway starts project providers). */
export function hasProjectConfig(dir) {
  for (let d = dir; ; d = path.dirname(d)) {
    if (fs.existsSync(path.join(d, "tap.config.json"))) return true;
    if (path.dirname(d) === d) return false;
  }
}
