import { useEffect, useState } from "preact/hooks";
import { usePanel, type PanelState } from "./store";
import { Overview } from "./pages/Overview";
import { Pairing } from "./pages/Pairing";
import { Sessions } from "./pages/Sessions";
import { Providers } from "./pages/Providers";
import { Streams } from "./pages/Streams";
import { Traces } from "./pages/Traces";
import { Playground } from "./pages/Playground";
import { Diagnostics } from "./pages/Diagnostics";
import { Logs } from "./pages/Logs";
import { Settings } from "./pages/Settings";
import { Emitters } from "./pages/Emitters";
import { Servers } from "./pages/Servers";
import { Clients } from "./pages/Clients";
import { Approvals } from "./pages/Approvals";
import { ApprovalPrompt } from "./components/ApprovalPrompt";
import { useWaitingCalls } from "./pages/approvals/model";
import { Popup } from "./pages/Popup";
import { useLedgerState } from "./ledger";

/**
 * The pages, in navigation order. The route is the URL fragment: `#/sessions`, `#/sessions/<id>`,
 * `#/streams/<session>?stream=<stream>`, `#/traces/<trace id>`, `#/traces?provider=<name>&status=error&range=1h`, `#/emitters/<session>`, `#/clients/<profile>`.
 */
const PAGES = [
  { id: "overview", title: "Overview" },
  { id: "pairing", title: "Pairing" },
  { id: "approvals", title: "Approvals" },
  { id: "sessions", title: "Sessions" },
  { id: "providers", title: "Providers" },
  { id: "streams", title: "Streams" },
  { id: "traces", title: "Traces" },
  { id: "playground", title: "Playground" },
  { id: "diagnostics", title: "Diagnostics" },
  { id: "logs", title: "Logs" },
  { id: "settings", title: "Settings" },
  { id: "emitters", title: "Emitters" },
  { id: "servers", title: "Servers" },
  { id: "clients", title: "Clients" },
] as const;
type PageId = (typeof PAGES)[number]["id"];

/** `?view=popup`: the tray popup, only the pending pairing requests. */
const POPUP = new URLSearchParams(location.search).get("view") === "popup";

interface Route {
  page: PageId;
  arg?: string;
  /** What follows `?` in the fragment (e.g. the Streams page's `stream`). */
  query: URLSearchParams;
}

function parseRoute(hash: string): Route {
  const raw = hash.replace(/^#\/?/, "");
  const q = raw.indexOf("?");
  const [page, ...rest] = (q < 0 ? raw : raw.slice(0, q)).split("/");
  const known = PAGES.find((p) => p.id === page);
  return {
    page: known ? known.id : "overview",
    arg: rest.length ? decodeURIComponent(rest.join("/")) : undefined,
    query: new URLSearchParams(q < 0 ? "" : raw.slice(q + 1)),
  };
}

function useRoute(): Route {
  const [route, setRoute] = useState(() => parseRoute(location.hash));
  useEffect(() => {
    const onChange = () => setRoute(parseRoute(location.hash));
    window.addEventListener("hashchange", onChange);
    return () => window.removeEventListener("hashchange", onChange);
  }, []);
  return route;
}

export function App() {
  const state = usePanel();
  const route = useRoute();
  const ledger = useLedgerState();
  const { waiting } = useWaitingCalls();
  const title = PAGES.find((p) => p.id === route.page)!.title;

  useEffect(() => {
    document.title = POPUP ? "Pairing requests · Tap" : `${title} · Tap panel`;
  }, [title]);

  if (state.phase.kind === "starting") return null;
  if (state.phase.kind === "login") return <Login message={state.phase.message} />;
  if (POPUP) return <Popup state={state} />;

  const pending = state.pairings.filter((p) => p.state === "pending").length;
  return (
    <div class="shell">
      <a class="skip" href="#main" onClick={(e) => { e.preventDefault(); document.getElementById("main")?.focus(); }}>
        Skip to content
      </a>
      <nav class="nav" aria-label="Pages">
        <div class="brand">Tap</div>
        <ul>
          {PAGES.map((p) => (
            <li key={p.id}>
              <a href={`#/${p.id}`} aria-current={route.page === p.id ? "page" : undefined}>
                {p.title}
                {p.id === "pairing" && pending > 0 && (
                  <span class="badge attention">
                    {pending}
                    <span class="sr-only"> pending</span>
                  </span>
                )}
                {p.id === "approvals" && waiting.length > 0 && (
                  <span class="badge attention" data-testid="approvals-badge">
                    {waiting.length}
                    <span class="sr-only"> waiting</span>
                  </span>
                )}
              </a>
            </li>
          ))}
        </ul>
        <ConnectionBadge state={state} />
      </nav>
      <main id="main" class="main" tabIndex={-1}>
        <h1>{title}</h1>
        {state.phase.kind === "connecting" && (
          <p class="notice" role="status">
            {state.phase.message ? `${state.phase.message}. ` : ""}Connecting to the gateway… (attempt {state.phase.attempt})
          </p>
        )}
        {ledger && !ledger.durable && (
          <p class="notice" role="status" data-testid="history-notice">
            <strong>History in memory only: </strong>
            {ledger.reason ?? "the history database cannot be written"}. Stream events and traces from now on are lost when the gateway
            stops (<a href="#/diagnostics">Diagnostics</a> has the details).
          </p>
        )}
        {state.status && <ApprovalPrompt waiting={waiting} live={state.phase.kind === "live"} showBanner={route.page !== "approvals"} />}
        {state.status ? <Page route={route} state={state} /> : null}
      </main>
    </div>
  );
}

function Page({ route, state }: { route: Route; state: PanelState }) {
  switch (route.page) {
    case "overview":
      return <Overview state={state} />;
    case "pairing":
      return <Pairing state={state} />;
    case "sessions":
      return <Sessions state={state} selected={route.arg} />;
    case "providers":
      return <Providers state={state} />;
    case "streams":
      return <Streams state={state} sessionId={route.arg} stream={route.query.get("stream") ?? undefined} />;
    case "traces":
      return <Traces state={state} traceId={route.arg} given={route.query} />;
    case "playground":
      return <Playground state={state} />;
    case "diagnostics":
      return <Diagnostics state={state} />;
    case "logs":
      return <Logs state={state} />;
    case "settings":
      return <Settings state={state} />;
    case "emitters":
      return <Emitters state={state} sessionId={route.arg} />;
    case "servers":
      return <Servers state={state} />;
    case "clients":
      return <Clients state={state} selected={route.arg} />;
    case "approvals":
      return <Approvals state={state} />;
  }
}

function ConnectionBadge({ state }: { state: PanelState }) {
  const live = state.phase.kind === "live";
  return (
    <div class={`conn ${live ? "ok" : "warn"}`} role="status" aria-live="polite">
      <span class="dot" aria-hidden="true" />
      {live ? "Live" : "Reconnecting"}
    </div>
  );
}

function Login({ message }: { message?: string }) {
  return (
    <main class="login" id="main">
      <h1>Tap panel</h1>
      {message && (
        <p class="error" role="alert">
          {message}
        </p>
      )}
      <p>
        Run <code>tap ui</code> to get a login link for this panel.
      </p>
      <p class="muted">
        The link works once, for two minutes. The panel keeps its token for this tab only; closing the tab logs out.
      </p>
      <button type="button" class="btn" onClick={() => location.reload()}>
        Reload
      </button>
    </main>
  );
}
