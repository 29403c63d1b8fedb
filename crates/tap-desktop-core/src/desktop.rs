//! What the shell shares between the tray, the windows, the IPC commands and the event
//! loop ([`Desktop`], managed by the Tauri app), and what follows the engine's events into
//! it ([`Follower`]).

use crate::engine::Engine;
use crate::failures::ProviderFailure;
use crate::ipc::Endpoint;
use crate::mcp_watch::Snapshot;
use crate::popup::PopupShown;
use crate::tray_state::Summary;
use crate::watcher::{self, Action, Watcher};
use crate::windows::WindowState;
use std::future::Future;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tap_gateway::{Gateway, GatewayEvent};
use tokio::sync::broadcast;
use tokio::sync::mpsc::UnboundedReceiver;

/// The desktop app's state around its engine. `T`: the shell's tray handles (cheap clones
/// of Tauri handles: [`Desktop::tray`] copies them out, so no lock is held while a call
/// waits for the main thread).
pub struct Desktop<T> {
    /// `TAP_HOME`.
    pub home: PathBuf,
    /// Where the gateway listens.
    pub address: SocketAddr,
    /// The control token the panel authenticates with (handed over IPC, never in a URL).
    control_token: String,
    /// The panel's notice when the token is not in a keyring.
    secret_notice: Option<String>,
    /// The desktop's view of the gateway (shared with the [`Follower`]).
    watcher: Arc<Mutex<Watcher>>,
    /// The tray, once built (absent when it could not be built).
    tray: Mutex<Option<T>>,
    /// The engine, taken out when the app exits to stop it.
    engine: Mutex<Option<Engine>>,
    /// The windows' opening times and the popup's height.
    pub windows: WindowState,
}

/// Feeds the engine's events and the provider failures to the [`Desktop`]'s watcher.
pub struct Follower {
    gateway: Gateway,
    watcher: Arc<Mutex<Watcher>>,
    events: broadcast::Receiver<GatewayEvent>,
}

impl Follower {
    /// Runs until the engine's event stream ends, handing each batch of actions to `apply`
    /// ([`watcher::follow`]).
    pub fn run(
        self,
        failures: UnboundedReceiver<ProviderFailure>,
        apply: impl FnMut(Vec<Action>),
    ) -> impl Future<Output = ()> {
        watcher::follow(self.gateway, self.watcher, self.events, failures, apply)
    }
}

impl<T: Clone> Desktop<T> {
    /// The state around a started `engine`, and its follower (to run once the state is
    /// where `apply` finds it). `notify_after`: [`crate::popup::notify_after`].
    pub fn new(engine: Engine, home: PathBuf, notify_after: Duration) -> (Self, Follower) {
        let gateway = engine.gateway().clone();
        // Subscribe before reading the state, so nothing between the two is missed.
        let events = gateway.subscribe();
        let watcher = Watcher::new(&Snapshot::of(&gateway), &gateway.pairing_list())
            .with_waiting_calls(&gateway.approvals_list().waiting)
            .with_notify_after(notify_after);
        let watcher = Arc::new(Mutex::new(watcher));
        let desktop = Self {
            home,
            address: gateway.address(),
            control_token: gateway.control_token().to_string(),
            secret_notice: engine.secret_notice(),
            watcher: watcher.clone(),
            tray: Mutex::new(None),
            engine: Mutex::new(Some(engine)),
            windows: WindowState::default(),
        };
        let follower = Follower {
            gateway,
            watcher,
            events,
        };
        (desktop, follower)
    }

    /// Where the panel connects, and with what.
    pub fn endpoint(&self) -> Endpoint {
        Endpoint::new(self.address, &self.control_token)
    }

    /// The panel's notice when the control token is not in a keyring.
    pub fn secret_notice(&self) -> Option<String> {
        self.secret_notice.clone()
    }

    /// What the tray shows.
    pub fn summary(&self) -> Summary {
        self.watcher.lock().unwrap().summary()
    }

    /// The tray, when it was built.
    pub fn tray(&self) -> Option<T> {
        self.tray.lock().unwrap().clone()
    }

    /// Keeps the tray once built.
    pub fn set_tray(&self, tray: T) {
        *self.tray.lock().unwrap() = Some(tray);
    }

    /// The hosted gateway, while the engine runs (the notifications' answers go to it).
    pub fn gateway(&self) -> Option<Gateway> {
        let engine = self.engine.lock().unwrap();
        engine.as_ref().map(|e| e.gateway().clone())
    }

    /// The engine, to stop it (once: `None` after).
    pub fn take_engine(&self) -> Option<Engine> {
        self.engine.lock().unwrap().take()
    }

    /// The panel was shown: the failures it shows count as seen. True when the tray
    /// changes.
    pub fn failures_seen(&self) -> bool {
        !self.watcher.lock().unwrap().failures_seen().is_empty()
    }

    /// Whether the popup could be shown: what the watcher does about it (a popup that
    /// cannot be shown is replaced by notifications).
    pub fn popup_shown(&self, shown: bool) -> Vec<Action> {
        let shown = if shown {
            PopupShown::Yes
        } else {
            PopupShown::No
        };
        let now = tokio::time::Instant::now();
        self.watcher.lock().unwrap().set_popup(shown, now)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::engine::StartOptions;
    use std::sync::mpsc;
    use tap_secrets::MemoryBackend;

    #[tokio::test]
    async fn the_state_hands_out_the_engine_once_and_follows_its_events() {
        let dir = tempfile::tempdir().unwrap();
        let options = StartOptions::for_tests(dir.path(), Arc::new(MemoryBackend::new()));
        let engine = Engine::start(options).await.unwrap();
        let token = engine.gateway().control_token().to_string();
        let (desktop, follower) =
            Desktop::<&'static str>::new(engine, dir.path().into(), Duration::from_secs(60));
        assert_eq!(
            desktop.endpoint(),
            Endpoint::new(desktop.address, &token),
            "the gateway's own address and token"
        );
        assert_eq!(desktop.secret_notice(), None, "the token is in the keyring");
        assert_eq!(desktop.tray(), None);
        desktop.set_tray("tray");
        assert_eq!(desktop.tray(), Some("tray"));
        assert!(!desktop.failures_seen(), "none to see");
        assert_eq!(desktop.popup_shown(true), vec![]);

        // A provider failure reaches the watcher through the follower: the tray changes.
        let (failed, failures) = tokio::sync::mpsc::unbounded_channel();
        let (tx, applied) = mpsc::channel();
        let following = tokio::spawn(follower.run(failures, move |a| tx.send(a).unwrap()));
        failed
            .send(ProviderFailure("provider process exited".into()))
            .unwrap();
        let actions = tokio::task::spawn_blocking(move || applied.recv().unwrap())
            .await
            .unwrap();
        assert!(actions.contains(&Action::UpdateTray), "{actions:?}");
        assert!(desktop.failures_seen(), "seen once the panel is shown");
        assert!(!desktop.failures_seen());

        let engine = desktop.take_engine().expect("the engine");
        assert!(desktop.take_engine().is_none(), "taken once");
        following.abort();
        engine.stop().await;
    }
}
