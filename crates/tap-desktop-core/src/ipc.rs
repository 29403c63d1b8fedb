//! The IPC commands the panel (`ui/src/transport.ts`) may send the shell: one table
//! ([`desktop_commands!`]) names each command with its arguments and its result, and from it
//! come [`DesktopCall`] (parsed from what Tauri receives), the [`DesktopHandler`] trait the
//! shell implements (`src-tauri/src/commands.rs`), and the panel's TypeScript
//! (`DesktopCommands.ts` in `ui/src/desktop-generated/`, with the types below, checked by
//! the test below), as the control methods' are (`tap_protocol::control`). A command that
//! fails answers `{code, message}` ([`IpcError`]).

use serde::{Deserialize, Serialize};
use std::net::SocketAddr;

/// Declares every command once: its handler (also its wire name, as Tauri's own commands
/// have), its arguments (an object: Tauri sends `{}` when there are none) and its result.
macro_rules! desktop_commands {
    ($(
        $(#[doc = $doc:literal])*
        $variant:ident($handler:ident) ($args:ty) -> $result:ty;
    )*) => {
        /// A command and its arguments, as the panel sent them.
        #[derive(Debug, Clone, PartialEq)]
        pub enum DesktopCall {
            $(
                $(#[doc = $doc])*
                $variant($args),
            )*
        }

        impl DesktopCall {
            /// Every command name, in declaration order.
            pub const COMMANDS: &'static [&'static str] = &[$(stringify!($handler)),*];

            /// The wire name of this call's command.
            pub fn command(&self) -> &'static str {
                match self {
                    $(Self::$variant(_) => stringify!($handler),)*
                }
            }

            /// The call the panel made with `args` (the invoke's JSON body): `None` when
            /// this app has no such command, an error sentence when the arguments do not
            /// fit it.
            pub fn parse(command: &str, args: serde_json::Value) -> Option<Result<Self, String>> {
                let bad = |e: serde_json::Error| format!("invalid args for command `{command}`: {e}");
                match command {
                    $(stringify!($handler) => Some(serde_json::from_value(args).map(Self::$variant).map_err(bad)),)*
                    _ => None,
                }
            }

            /// Runs this call on `handler` and serializes the command's result. The
            /// handler returns each command's own result type, so the compiler checks that
            /// every command answers with what the table (and the panel's TypeScript) says.
            pub fn dispatch(self, handler: &mut impl DesktopHandler) -> Result<serde_json::Value, IpcError> {
                match self {
                    $(Self::$variant(args) => to_json(handler.$handler(args)?),)*
                }
            }
        }

        /// What answers the commands (the shell): one function per command, with its
        /// arguments and result types.
        pub trait DesktopHandler {
            $(
                $(#[doc = $doc])*
                fn $handler(&mut self, args: $args) -> Result<$result, IpcError>;
            )*
        }

        /// The TypeScript `DesktopCommands` type (each command's args and result type), and
        /// the types it imports. `visitor` is shown every args and result type.
        #[cfg(test)]
        fn typescript_command_map(
            cfg: &ts_rs::Config,
            visitor: &mut impl ts_rs::TypeVisitor,
        ) -> (String, Vec<ts_rs::Dependency>) {
            use ts_rs::TS;
            let mut body = String::new();
            let mut deps = Vec::new();
            $(
                body.push_str(&format!(
                    "  {:?}: {{ args: {}; result: {} }};\n",
                    stringify!($handler),
                    <$args as TS>::name(cfg),
                    <$result as TS>::name(cfg),
                ));
                visitor.visit::<$args>();
                visitor.visit::<$result>();
                deps.extend(ts_rs::Dependency::from_ty::<$args>(cfg));
                deps.extend(ts_rs::Dependency::from_ty::<$result>(cfg));
            )*
            (format!("export type DesktopCommands = {{\n{body}}};\n"), deps)
        }
    };
}

fn to_json(value: impl Serialize) -> Result<serde_json::Value, IpcError> {
    serde_json::to_value(value).map_err(|e| IpcError::new(IpcErrorCode::Internal, e))
}

desktop_commands! {
    /// Where the panel connects, and with what: the panel's login in the app.
    ControlEndpoint(control_endpoint) (NoArgs) -> Endpoint;
    /// Whether the login item exists.
    GetAutostart(get_autostart) (NoArgs) -> bool;
    /// Writes or removes the login item; the tray's check item follows.
    SetAutostart(set_autostart) (AutostartArgs) -> ();
    /// `None` when the keyring holds the control token, else the sentence the panel shows.
    SecretStorageNotice(secret_storage_notice) (NoArgs) -> Option<String>;
    /// Shows the panel window, making it if needed (the popup's "Open panel").
    OpenPanel(open_panel) (NoArgs) -> ();
    /// Closes (destroys) the calling window (the popup).
    HideWindow(hide_window) (NoArgs) -> ();
    /// The popup's content height (CSS px): its window takes it, within bounds. Other
    /// windows keep their size.
    FitPopup(fit_popup) (FitPopupArgs) -> ();
    /// What the popup shows first: its window takes the title that names it
    /// ([`crate::windows::popup_title`]). Other windows keep theirs.
    PopupShows(popup_shows) (PopupShowsArgs) -> ();
    /// The calling window's page drew its first frame: the app logs the time since the
    /// window was asked for.
    PageRendered(page_rendered) (NoArgs) -> ();
    /// Opens an `http`/`https` URL in the user's own browser (a remote MCP server's
    /// sign-in page): [`crate::browser::open`]. Other schemes are refused (`URL_REFUSED`).
    OpenUrl(open_url) (OpenUrlArgs) -> ();
}

/// The arguments of a command that takes none. Whatever the panel sends is ignored, as
/// Tauri's own commands without arguments do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct NoArgs {}

impl<'de> Deserialize<'de> for NoArgs {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        serde::de::IgnoredAny::deserialize(d).map(|_| NoArgs {})
    }
}

/// `set_autostart`'s arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct AutostartArgs {
    /// On (write the login item) or off (remove it).
    pub on: bool,
}

/// `fit_popup`'s arguments.
#[derive(Debug, Clone, Copy, PartialEq, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct FitPopupArgs {
    /// The popup's content height, CSS px.
    pub height: f64,
}

/// `popup_shows`'s arguments.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct PopupShowsArgs {
    /// What the popup shows first.
    pub shows: PopupContent,
}

/// What the popup can show: its sections, in page order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub enum PopupContent {
    /// Tool calls waiting for approval.
    Calls,
    /// Tools whose changed definition is held, with their diffs.
    Held,
    /// Pairing requests (also what an empty popup shows: "No pending requests").
    Pairing,
}

/// `open_url`'s arguments.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct OpenUrlArgs {
    /// The page to open: an absolute `http` or `https` URL.
    pub url: String,
}

/// Where the panel connects, and with what (`control_endpoint`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct Endpoint {
    /// `ws://127.0.0.1:PORT/control`.
    pub url: String,
    /// The control token.
    pub token: String,
}

impl Endpoint {
    /// The control endpoint of the gateway at `address`.
    pub fn new(address: SocketAddr, token: &str) -> Self {
        Self {
            url: format!("ws://{address}/control"),
            token: token.to_string(),
        }
    }
}

/// Why a command failed: a stable code for the panel to act on, a sentence for the user.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct IpcError {
    /// What failed.
    pub code: IpcErrorCode,
    /// What went wrong, as the OS or Tauri said it.
    pub message: String,
}

/// The codes of [`IpcError`]. New codes may be added; existing ones keep their spelling.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "SCREAMING_SNAKE_CASE")]
pub enum IpcErrorCode {
    /// The login item could not be read or changed (`get_autostart`, `set_autostart`).
    AutostartFailed,
    /// A window could not be shown or hidden (`hide_window`).
    WindowFailed,
    /// A result could not be serialized (a bug).
    Internal,
    /// `open_url` was given something else than an `http` or `https` URL with a host.
    UrlRefused,
    /// The browser could not be started (`open_url`: no `xdg-open`, …).
    OpenFailed,
}

impl IpcError {
    /// An error with `code` and `message`.
    pub fn new(code: IpcErrorCode, message: impl std::fmt::Display) -> Self {
        Self {
            code,
            message: message.to_string(),
        }
    }
}

impl std::fmt::Display for IpcError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for IpcError {}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::{BTreeMap, BTreeSet};
    use std::path::{Path, PathBuf};
    use ts_rs::{TypeVisitor, TS};

    const REGENERATE: &str = "TAP_UPDATE_TS=1 cargo test -p tap-desktop-core ipc::";
    const NOTE: &str =
        "// Generated from crates/tap-desktop-core/src/ipc.rs by its tests. Do not edit.\n";

    #[test]
    fn errors_are_code_and_message() {
        let e = IpcError::new(IpcErrorCode::AutostartFailed, "no home directory");
        assert_eq!(
            serde_json::to_value(&e).unwrap(),
            serde_json::json!({"code": "AUTOSTART_FAILED", "message": "no home directory"})
        );
        assert_eq!(e.to_string(), "no home directory");
        assert_eq!(
            serde_json::to_value(IpcErrorCode::WindowFailed).unwrap(),
            "WINDOW_FAILED"
        );
    }

    #[test]
    fn the_endpoint_is_the_control_websocket() {
        let e = Endpoint::new("127.0.0.1:9400".parse().unwrap(), "ctk-1");
        assert_eq!(
            serde_json::to_value(&e).unwrap(),
            serde_json::json!({"url": "ws://127.0.0.1:9400/control", "token": "ctk-1"})
        );
    }

    fn generated_dir() -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../ui/src/desktop-generated")
    }

    /// Every exported type reachable from the commands: TS name → file text.
    struct Collect<'a> {
        cfg: &'a ts_rs::Config,
        files: BTreeMap<String, String>,
    }

    impl ts_rs::TypeVisitor for Collect<'_> {
        fn visit<T: TS + 'static + ?Sized>(&mut self) {
            if T::output_path().is_none() || self.files.contains_key(&T::ident(self.cfg)) {
                return;
            }
            let text = T::export_to_string(self.cfg).unwrap();
            self.files.insert(T::ident(self.cfg), text);
            T::visit_dependencies(self);
        }
    }

    /// The bridge method's name for a command: `fit_popup` → `fitPopup`.
    fn camel(snake: &str) -> String {
        let mut parts = snake.split('_');
        let mut out = parts.next().unwrap_or_default().to_string();
        for p in parts {
            let mut chars = p.chars();
            out.extend(chars.next().map(|c| c.to_ascii_uppercase()));
            out.push_str(chars.as_str());
        }
        out
    }

    fn render() -> BTreeMap<String, String> {
        let cfg = ts_rs::Config::new();
        let mut c = Collect {
            cfg: &cfg,
            files: BTreeMap::new(),
        };
        c.visit::<IpcError>();
        let (decl, deps) = typescript_command_map(&cfg, &mut c);
        let imports: BTreeSet<String> = deps.into_iter().map(|d| d.ts_name).collect();
        let mut commands = String::from(NOTE);
        for name in &imports {
            commands.push_str(&format!("import type {{ {name} }} from \"./{name}\";\n"));
        }
        commands.push_str("\n/** Every desktop IPC command: its args and its result (a failure rejects with an `IpcError`). */\n");
        commands.push_str(&decl);
        commands.push_str("\n/** Every command's name, by the name of the panel's bridge method for it. */\nexport const DesktopCommand = {\n");
        for name in DesktopCall::COMMANDS {
            commands.push_str(&format!("  {}: {name:?},\n", camel(name)));
        }
        commands.push_str("} as const satisfies Record<string, keyof DesktopCommands>;\n");

        let mut files: BTreeMap<String, String> = c
            .files
            .iter()
            .map(|(name, text)| (format!("{name}.ts"), text.clone()))
            .collect();
        let mut index = String::from(NOTE);
        for name in c.files.keys() {
            index.push_str(&format!("export type {{ {name} }} from \"./{name}\";\n"));
        }
        index.push_str("export type { DesktopCommands } from \"./DesktopCommands\";\nexport { DesktopCommand } from \"./DesktopCommands\";\n");
        files.insert("DesktopCommands.ts".into(), commands);
        files.insert("index.ts".into(), index);
        files
    }

    /// A shell that records what it was asked.
    #[derive(Default)]
    struct Shell {
        autostart: bool,
        heights: Vec<f64>,
        opened: Vec<String>,
        shows: Vec<PopupContent>,
    }

    impl DesktopHandler for Shell {
        fn control_endpoint(&mut self, _: NoArgs) -> Result<Endpoint, IpcError> {
            Ok(Endpoint::new("127.0.0.1:9400".parse().unwrap(), "ctk-1"))
        }
        fn get_autostart(&mut self, _: NoArgs) -> Result<bool, IpcError> {
            Ok(self.autostart)
        }
        fn set_autostart(&mut self, args: AutostartArgs) -> Result<(), IpcError> {
            self.autostart = args.on;
            Ok(())
        }
        fn secret_storage_notice(&mut self, _: NoArgs) -> Result<Option<String>, IpcError> {
            Ok(None)
        }
        fn open_panel(&mut self, _: NoArgs) -> Result<(), IpcError> {
            Ok(())
        }
        fn hide_window(&mut self, _: NoArgs) -> Result<(), IpcError> {
            Err(IpcError::new(IpcErrorCode::WindowFailed, "no such window"))
        }
        fn fit_popup(&mut self, args: FitPopupArgs) -> Result<(), IpcError> {
            self.heights.push(args.height);
            Ok(())
        }
        fn page_rendered(&mut self, _: NoArgs) -> Result<(), IpcError> {
            Ok(())
        }
        fn popup_shows(&mut self, args: PopupShowsArgs) -> Result<(), IpcError> {
            self.shows.push(args.shows);
            Ok(())
        }
        fn open_url(&mut self, args: OpenUrlArgs) -> Result<(), IpcError> {
            crate::browser::check(&args.url)
                .map_err(|why| IpcError::new(IpcErrorCode::UrlRefused, why))?;
            self.opened.push(args.url);
            Ok(())
        }
    }

    fn call(shell: &mut Shell, command: &str, args: serde_json::Value) -> serde_json::Value {
        let call = DesktopCall::parse(command, args).unwrap().unwrap();
        assert_eq!(call.command(), command);
        match call.dispatch(shell) {
            Ok(v) => v,
            Err(e) => serde_json::to_value(e).unwrap(),
        }
    }

    #[test]
    fn calls_are_parsed_by_name_and_answered_with_their_result() {
        use serde_json::json;
        let mut shell = Shell::default();
        assert_eq!(
            call(&mut shell, "control_endpoint", json!({})),
            json!({"url": "ws://127.0.0.1:9400/control", "token": "ctk-1"})
        );
        assert_eq!(call(&mut shell, "get_autostart", json!({})), json!(false));
        // A command without a result answers null, as Tauri's own do.
        assert_eq!(
            call(&mut shell, "set_autostart", json!({"on": true})),
            json!(null)
        );
        assert_eq!(call(&mut shell, "get_autostart", json!({})), json!(true));
        assert_eq!(
            call(&mut shell, "secret_storage_notice", json!({})),
            json!(null)
        );
        call(&mut shell, "fit_popup", json!({"height": 312.5}));
        assert_eq!(shell.heights, [312.5]);
        call(&mut shell, "popup_shows", json!({"shows": "held"}));
        assert_eq!(shell.shows, [PopupContent::Held]);
        // Commands without arguments take whatever comes.
        assert_eq!(call(&mut shell, "open_panel", json!(null)), json!(null));
        assert_eq!(
            call(&mut shell, "page_rendered", json!({"x": 1})),
            json!(null)
        );
        // A failure is the handler's IpcError.
        assert_eq!(
            call(&mut shell, "hide_window", json!({})),
            json!({"code": "WINDOW_FAILED", "message": "no such window"})
        );
        let url = "https://auth.example.com/authorize?state=s";
        assert_eq!(
            call(&mut shell, "open_url", json!({"url": url})),
            json!(null)
        );
        assert_eq!(shell.opened, [url]);
        assert_eq!(
            call(&mut shell, "open_url", json!({"url": "file:///etc/passwd"}))["code"],
            "URL_REFUSED"
        );
        assert_eq!(shell.opened.len(), 1);
    }

    #[test]
    fn unknown_commands_and_bad_arguments_are_refused() {
        use serde_json::json;
        assert_eq!(DesktopCall::parse("quit", json!({})), None);
        let err = DesktopCall::parse("set_autostart", json!({})).unwrap();
        assert!(err
            .unwrap_err()
            .contains("invalid args for command `set_autostart`: missing field `on`"));
        let err = DesktopCall::parse("fit_popup", json!({"height": "tall"})).unwrap();
        assert!(err.is_err());
        let err = DesktopCall::parse("open_url", json!({"url": 3})).unwrap();
        assert!(err.is_err());
    }

    #[test]
    fn every_command_is_in_the_typescript_map_and_has_a_bridge_name() {
        let files = render();
        let map = &files["DesktopCommands.ts"];
        for name in DesktopCall::COMMANDS {
            assert!(
                map.contains(&format!("{name:?}: {{ args: ")),
                "{name} missing in {map}"
            );
            assert!(
                map.contains(&format!("  {}: {name:?},", camel(name))),
                "{map}"
            );
        }
        assert_eq!(camel("secret_storage_notice"), "secretStorageNotice");
        assert!(
            map.contains("\"set_autostart\": { args: AutostartArgs; result: null }"),
            "{map}"
        );
    }

    /// The committed TypeScript matches these types (regenerate with `REGENERATE`).
    #[test]
    fn generated_typescript_is_up_to_date() {
        let dir = generated_dir();
        let want = render();
        if std::env::var_os("TAP_UPDATE_TS").is_some_and(|v| v == "1") {
            std::fs::create_dir_all(&dir).unwrap();
            for entry in std::fs::read_dir(&dir).unwrap() {
                let path = entry.unwrap().path();
                let name = path.file_name().unwrap().to_string_lossy().to_string();
                if !want.contains_key(&name) {
                    std::fs::remove_file(path).unwrap();
                }
            }
            for (name, text) in &want {
                std::fs::write(dir.join(name), text).unwrap();
            }
            return;
        }
        let mut problems = Vec::new();
        for (name, text) in &want {
            match std::fs::read_to_string(dir.join(name)) {
                Err(_) => problems.push(format!("missing: {name}")),
                Ok(t) if &t != text => problems.push(format!("stale: {name}")),
                Ok(_) => {}
            }
        }
        for entry in std::fs::read_dir(&dir).into_iter().flatten() {
            let name = entry.unwrap().file_name().to_string_lossy().to_string();
            if !want.contains_key(&name) {
                problems.push(format!("not generated any more: {name}"));
            }
        }
        assert!(
            problems.is_empty(),
            "ui/src/desktop-generated/ does not match crates/tap-desktop-core/src/ipc.rs:\n  {}\nRegenerate with:\n  {REGENERATE}\nand commit the result.",
            problems.join("\n  ")
        );
    }
}
