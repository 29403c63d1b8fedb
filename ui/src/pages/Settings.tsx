import { useEffect, useState } from "preact/hooks";
import type { SettingsPatch, SettingsResult } from "../generated";
import { store, useControlEvents, type PanelState } from "../store";
import { useMethod } from "../method";
import { desktop, type DesktopError } from "../transport";
import { Files } from "./settings/Files";

/** What `settings.set` accepts (crates/tap-protocol/src/settings.rs). */
const HISTORY_DAYS = [1, 3650] as const;
const HISTORY_MIB = [16, 1048576] as const;

/**
 * The gateway's settings (`$TAP_HOME/settings.json`): the port (applies at the next
 * start), notifications, the history's limits, and start at login (the desktop app's own setting).
 */
export function Settings({ state }: { state: PanelState }) {
  const live = state.phase.kind === "live";
  const [result, setResult] = useState<SettingsResult | null>(null);
  const [port, setPort] = useState("");
  const [days, setDays] = useState("");
  const [mib, setMib] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const show = (r: SettingsResult) => {
    setResult(r);
    setPort(String(r.settings.port));
    setDays(String(r.settings.historyDays));
    setMib(String(r.settings.historyMaxMib));
  };

  // Loaded once per connection; a change by any client arrives as `settings.changed` below.
  const got = useMethod("settings.get", {});
  useEffect(() => void (got.data && show(got.data)), [got.data]);
  useEffect(() => void (got.error && setError(got.error.message)), [got.error]);

  // Another panel (or the tray) changed them: show what is saved now.
  useControlEvents((event) => {
    if (event.kind === "settings.changed" && result) {
      const running = result.runningPort;
      show({ ...result, settings: event.settings, restartRequired: event.settings.port !== running });
    }
  });

  const save = async (patch: SettingsPatch, what: string) => {
    setBusy(true);
    setError(null);
    setSaved(null);
    try {
      show(await store.call("settings.set", patch));
      setSaved(what);
    } catch (e) {
      setError(e instanceof Error ? e.message : String(e));
      store
        .call("settings.get", {})
        .then(show)
        .catch(() => {});
    } finally {
      setBusy(false);
    }
  };

  if (!result) {
    return error ? (
      <p class="error" role="alert">
        {error}
      </p>
    ) : (
      <p class="muted">Loading…</p>
    );
  }

  const portValue = Number(port);
  const portValid = /^\d+$/.test(port) && portValue >= 1 && portValue <= 65535;
  const portChanged = portValid && portValue !== result.settings.port;
  const daysValue = Number(days);
  const daysValid = /^\d+$/.test(days) && daysValue >= HISTORY_DAYS[0] && daysValue <= HISTORY_DAYS[1];
  const mibValue = Number(mib);
  const mibValid = /^\d+$/.test(mib) && mibValue >= HISTORY_MIB[0] && mibValue <= HISTORY_MIB[1];
  const historyPatch: SettingsPatch = {};
  if (daysValid && daysValue !== result.settings.historyDays) historyPatch.historyDays = daysValue;
  if (mibValid && mibValue !== result.settings.historyMaxMib) historyPatch.historyMaxMib = mibValue;
  const historyChanged = daysValid && mibValid && Object.keys(historyPatch).length > 0;

  return (
    <div class="settings">
      <section class="setting" aria-labelledby="port-heading">
        <h2 id="port-heading">Port</h2>
        <form
          class="setting-row"
          onSubmit={(e) => {
            e.preventDefault();
            if (portChanged) void save({ port: portValue }, "Port saved.");
          }}
        >
          <label class="field">
            <span>Listen on 127.0.0.1 port</span>
            <input
              type="number"
              inputMode="numeric"
              min={1}
              max={65535}
              value={port}
              aria-invalid={!portValid}
              aria-describedby="port-help"
              onInput={(e) => setPort((e.currentTarget as HTMLInputElement).value)}
            />
          </label>
          <button type="submit" class="btn primary" disabled={!portChanged || busy || !live}>
            Save port
          </button>
        </form>
        <p id="port-help" class="small muted">
          Applies after restart: the gateway keeps listening on port <span class="mono">{result.runningPort}</span> until it starts
          again. <code>tap gateway --listen</code> overrides it.
        </p>
        {result.restartRequired && (
          <p class="notice" role="status" data-testid="restart-required">
            Saved port {result.settings.port} applies after restart (now running on {result.runningPort}).
          </p>
        )}
        {!portValid && port !== "" && <p class="error">A port is a number from 1 to 65535.</p>}
      </section>

      <section class="setting" aria-labelledby="notify-heading">
        <h2 id="notify-heading">Notifications</h2>
        <label class="check">
          <input
            type="checkbox"
            checked={result.settings.notifications}
            disabled={!live}
            onChange={(e) => {
              const on = (e.currentTarget as HTMLInputElement).checked;
              // Shown at once; `save` shows what the gateway saved (the old value on failure).
              setResult({ ...result, settings: { ...result.settings, notifications: on } });
              void save({ notifications: on }, on ? "Notifications on." : "Notifications off.");
            }}
          />
          Show desktop notifications for pairing requests and provider failures
        </label>
        <p class="small muted">The desktop app shows them; a gateway in a terminal has none to show.</p>
      </section>

      <section class="setting" aria-labelledby="history-heading">
        <h2 id="history-heading">History</h2>
        <form
          class="setting-row"
          onSubmit={(e) => {
            e.preventDefault();
            if (historyChanged) void save(historyPatch, "History limits saved.");
          }}
        >
          <label class="field">
            <span>Keep history for (days)</span>
            <input
              type="number"
              inputMode="numeric"
              min={HISTORY_DAYS[0]}
              max={HISTORY_DAYS[1]}
              value={days}
              aria-invalid={!daysValid}
              aria-describedby="history-help"
              onInput={(e) => setDays((e.currentTarget as HTMLInputElement).value)}
            />
          </label>
          <label class="field">
            <span>At most (MiB)</span>
            <input
              type="number"
              inputMode="numeric"
              min={HISTORY_MIB[0]}
              max={HISTORY_MIB[1]}
              value={mib}
              aria-invalid={!mibValid}
              aria-describedby="history-help"
              onInput={(e) => setMib((e.currentTarget as HTMLInputElement).value)}
            />
          </label>
          <button type="submit" class="btn primary" disabled={!historyChanged || busy || !live}>
            Save history limits
          </button>
        </form>
        <p id="history-help" class="small muted">
          The history database (stream events, traces, sessions and providers as they came and went) drops what is older than
          this, and the oldest first when it grows beyond the size.
        </p>
        {!daysValid && days !== "" && (
          <p class="error">
            Days are a whole number from {HISTORY_DAYS[0]} to {HISTORY_DAYS[1]}.
          </p>
        )}
        {!mibValid && mib !== "" && (
          <p class="error">
            The size is a whole number of MiB from {HISTORY_MIB[0]} to {HISTORY_MIB[1]}.
          </p>
        )}
      </section>

      <StartAtLogin />

      <p class="small muted">
        Saved in <span class="mono">{result.file}</span>.
      </p>
      <p role="status" class="small ok-text" data-testid="settings-saved">
        {saved ?? ""}
      </p>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
      {state.files && <Files files={state.files} />}
    </div>
  );
}

/** The desktop app's login item; in a browser it is shown, disabled, with why. */
function StartAtLogin() {
  const [on, setOn] = useState<boolean | null>(null);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    if (!desktop) return;
    desktop
      .getAutostart()
      .then(setOn)
      .catch((e: DesktopError) => setError(e.message));
  }, []);

  return (
    <section class="setting" aria-labelledby="login-heading">
      <h2 id="login-heading">Start at login</h2>
      <label class="check">
        <input
          type="checkbox"
          checked={on ?? false}
          disabled={!desktop || on === null}
          aria-describedby="login-help"
          onChange={(e) => {
            const want = (e.currentTarget as HTMLInputElement).checked;
            setError(null);
            desktop!
              .setAutostart(want)
              .then(() => setOn(want))
              .catch((err: DesktopError) => setError(err.message));
          }}
        />
        Start Tap when I log in (hidden, in the tray)
      </label>
      <p id="login-help" class="small muted" data-testid="autostart-help">
        {desktop
          ? "The desktop app starts at login from the tray; this is the same switch as the tray menu's."
          : "This is a desktop-app setting: it is not available in a browser. Install the desktop app, or start `tap gateway` from your session's startup."}
      </p>
      {error && (
        <p class="error" role="alert">
          {error}
        </p>
      )}
    </section>
  );
}
