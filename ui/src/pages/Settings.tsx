import { useEffect, useState } from "preact/hooks";
import type { SettingsPatch, SettingsResult } from "../generated";
import { store, useControlEvents, type PanelState } from "../store";
import { desktop, type DesktopError } from "../transport";

/**
 * The gateway's settings (`$TAP_HOME/settings.json`): the port (applies at the next
 * start), notifications, and start at login (the desktop app's own setting).
 */
export function Settings({ state }: { state: PanelState }) {
  const live = state.phase.kind === "live";
  const [result, setResult] = useState<SettingsResult | null>(null);
  const [port, setPort] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [saved, setSaved] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const show = (r: SettingsResult) => {
    setResult(r);
    setPort(String(r.settings.port));
  };

  useEffect(() => {
    if (!live) return;
    let current = true;
    store
      .call("settings.get", {})
      .then((r) => current && show(r))
      .catch((e) => current && setError(e instanceof Error ? e.message : String(e)));
    return () => {
      current = false;
    };
  }, [live, state.generation]);

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
