//! What the panel (through `ui/src/transport.ts`) may ask of the shell: the commands of
//! `tap_desktop_core::ipc`'s table, parsed there (`DesktopCall`) and answered here, each by
//! its `DesktopHandler` function. Every command answers the window that called it only; the
//! control token crosses the IPC, never a URL. Failures reach the panel as `IpcError`
//! (`{code, message}`); a call with arguments that do not fit is refused with a sentence, as
//! Tauri refuses its own commands'.

use crate::{actions, Desktop};
use tap_desktop_core::ipc::{self, DesktopCall, DesktopHandler, IpcError, IpcErrorCode::*};
use tap_desktop_core::windows::{popup_title, POPUP};
use tauri::ipc::{Invoke, InvokeBody};
use tauri::{AppHandle, Manager, State, WebviewWindow};
use tauri_plugin_autostart::ManagerExt;

/// The app's invoke handler: false for a command it does not have (Tauri then answers
/// "Command … not found"). Runs on the main thread, as Tauri's own synchronous commands do.
pub fn handle(invoke: Invoke) -> bool {
    let args = match invoke.message.payload() {
        InvokeBody::Json(args) => args.clone(),
        InvokeBody::Raw(_) => Default::default(),
    };
    let call = match DesktopCall::parse(invoke.message.command(), args) {
        None => return false,
        Some(Err(refused)) => return refuse(invoke, refused),
        Some(Ok(call)) => call,
    };
    let webview = invoke.message.webview();
    let app = webview.app_handle().clone();
    let window = app.get_webview_window(webview.label());
    match call.dispatch(&mut Caller { app, window }) {
        Ok(result) => invoke.resolver.resolve(result),
        Err(e) => invoke.resolver.reject(e),
    }
    true
}

fn refuse(invoke: Invoke, why: String) -> bool {
    invoke.resolver.reject(why);
    true
}

/// A command's caller: the app and the calling window.
struct Caller {
    app: AppHandle,
    window: Option<WebviewWindow>,
}

impl Caller {
    fn desktop(&self) -> Result<State<'_, Desktop>, IpcError> {
        let state = self.app.try_state::<Desktop>();
        state.ok_or_else(|| IpcError::new(Internal, "the app is starting"))
    }

    fn window(&self) -> Result<&WebviewWindow, IpcError> {
        let window = self.window.as_ref();
        window.ok_or_else(|| IpcError::new(WindowFailed, "not called by a window"))
    }
}

impl DesktopHandler for Caller {
    fn control_endpoint(&mut self, _: ipc::NoArgs) -> Result<ipc::Endpoint, IpcError> {
        Ok(self.desktop()?.endpoint())
    }

    fn get_autostart(&mut self, _: ipc::NoArgs) -> Result<bool, IpcError> {
        let on = self.app.autolaunch().is_enabled();
        on.map_err(|e| IpcError::new(AutostartFailed, e))
    }

    fn set_autostart(&mut self, args: ipc::AutostartArgs) -> Result<(), IpcError> {
        actions::set_autostart(&self.app, args.on).map_err(|e| IpcError::new(AutostartFailed, e))
    }

    fn secret_storage_notice(&mut self, _: ipc::NoArgs) -> Result<Option<String>, IpcError> {
        Ok(self.desktop()?.secret_notice())
    }

    fn open_panel(&mut self, _: ipc::NoArgs) -> Result<(), IpcError> {
        actions::open_panel(&self.app);
        Ok(())
    }

    /// Destroyed, not hidden (see `windows`). Tauri carries the destruction out on a later
    /// turn of the event loop, after this answer.
    fn hide_window(&mut self, _: ipc::NoArgs) -> Result<(), IpcError> {
        let destroyed = self.window()?.destroy();
        destroyed.map_err(|e| IpcError::new(WindowFailed, e))
    }

    /// Only the popup follows its page's height; other windows keep their size.
    fn fit_popup(&mut self, args: ipc::FitPopupArgs) -> Result<(), IpcError> {
        let window = self.window()?;
        if window.label() != POPUP.label {
            return Ok(());
        }
        let fitted = actions::fit_popup(&self.app, window, args.height);
        fitted.map_err(|e| IpcError::new(WindowFailed, e))
    }

    /// Only the popup is named for what it shows.
    fn popup_shows(&mut self, args: ipc::PopupShowsArgs) -> Result<(), IpcError> {
        let window = self.window()?;
        if window.label() != POPUP.label {
            return Ok(());
        }
        let named = window.set_title(popup_title(args.shows));
        named.map_err(|e| IpcError::new(WindowFailed, e))
    }

    /// Logged with the time since the window was asked for
    /// (`scripts/desktop-footprint.sh` reads it).
    fn page_rendered(&mut self, _: ipc::NoArgs) -> Result<(), IpcError> {
        let label = self.window()?.label().to_string();
        self.desktop()?.windows.page_rendered(&label);
        Ok(())
    }

    /// In the user's own browser, never in a webview of the app (a sign-in page wants the
    /// user's browser, with its accounts); only `http`/`https` (`browser::check`).
    fn open_url(&mut self, args: ipc::OpenUrlArgs) -> Result<(), IpcError> {
        tap_desktop_core::browser::open(&args.url)
    }
}
