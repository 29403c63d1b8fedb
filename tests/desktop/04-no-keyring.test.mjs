// A desktop without a Secret Service (and without a notification server): the app runs
// under its own D-Bus session bus that can start no service at all. The control token
// then goes to a 0600 file, the panel gets the notice, the CLI still authenticates, and a
// notification that cannot be shown is logged, not fatal.

import { after, before, describe, test } from "node:test";
import assert from "node:assert/strict";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { gatewayJson, pairings } from "../js-support/gateway.mjs";
import { remove } from "../js-support/process.mjs";
import { waitFor } from "../js-support/wait.mjs";
import {
  freshHome,
  mapState,
  mode,
  pairingProvider,
  tap,
  webdriverSession,
} from "./support.mjs";

/** A session bus configuration with no service directory: nothing can be D-Bus activated. */
async function bareBusConfig(dir) {
  const services = path.join(dir, "no-services");
  await mkdir(services, { recursive: true });
  const file = path.join(dir, "bare-session.conf");
  await writeFile(
    file,
    `<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <keep_umask/>
  <listen>unix:tmpdir=${dir}</listen>
  <servicedir>${services}</servicedir>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
`,
  );
  return file;
}

describe("without a keyring", () => {
  let h, session, browser, info;

  before(async () => {
    // A reminder delay of 0: the pairing request notifies at once, popup or not, so the
    // failing notification path is exercised without waiting.
    h = await freshHome("no-keyring", { TAP_DESKTOP_NOTIFY_AFTER_MS: "0" });
    const config = await bareBusConfig(h.dir);
    session = await webdriverSession(h.env, ["--show"], ["dbus-run-session", `--config-file=${config}`, "--"]);
    browser = session.browser;
    info = await gatewayJson(h.home);
  });

  after(async () => {
    await session?.stop();
    if (h) await remove(h.dir);
  });

  test("the control token falls back to a 0600 file, with a notice in the panel, and the CLI authenticates", async () => {
    assert.equal(info.controlTokenStore, "file");
    const file = path.join(h.home, "control-token");
    assert.equal(await mode(file), 0o600);
    const token = (await readFile(file, "utf8")).trim();
    const endpoint = await browser.executeAsync((done) => {
      window.__TAURI_INTERNALS__.invoke("control_endpoint").then(done, (e) => done(String(e)));
    });
    assert.equal(endpoint.token, token);
    // The notice, as the panel's Overview shows it.
    const notice = await browser.$('[data-testid="secret-storage-notice"]');
    await notice.waitForExist({ timeout: 15000 });
    const text = await notice.getText();
    assert.match(text, /No OS keyring is available \(no keyring service: .*org\.freedesktop\.secrets/);
    assert.ok(text.includes(file), text);
    assert.match(text, /mode 0600/);
    const list = await tap(h.env, ["pairing", "list", "--json"]);
    assert.equal(list.code, 0, list.stderr);
  });

  test("with no notification server a pairing request is logged as not notified, and the app carries on", async () => {
    const provider = await pairingProvider(info.address, { origin: "http://127.0.0.1:8767", name: "no-server" });
    const log = await waitFor(
      () => session.driverOutput.stderr.includes("could not show a desktop notification") && session.driverOutput.stderr,
      "the failed notification in the log",
    );
    assert.match(log, /could not show a desktop notification .*org\.freedesktop\.Notifications/);
    await waitFor(async () => (await mapState("Tap — pairing requests")) === "IsViewable", "the popup");
    assert.equal((await pairings(h.env)).filter((p) => p.state === "pending").length, 1);
    provider.close();
  });
});
