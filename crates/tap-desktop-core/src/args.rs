//! Command line and environment of the app.

use std::net::SocketAddr;

/// How this launch was asked to behave.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Options {
    /// Show the panel at start (`--show`, `TAP_DESKTOP_SHOW=1`): the first manual launch
    /// and the WebDriver tests.
    pub show: bool,
    /// Started at login (`--hidden`, the autostart entry's flag): stay in the tray.
    pub hidden: bool,
    /// Where the gateway listens (`--listen 127.0.0.1:PORT`, `TAP_DESKTOP_LISTEN`); `None`:
    /// the port from `$TAP_HOME/settings.json`, else 9400.
    pub listen: Option<SocketAddr>,
    /// `--help`.
    pub help: bool,
}

/// Printed for `--help`.
pub const USAGE: &str = "\
Usage: tap-desktop [--show | --hidden] [--listen 127.0.0.1:PORT]

The Tap Gateway tray app: runs the gateway (as `tap gateway` does) with a tray icon,
pairing popup, control panel window and desktop notifications.

  --show            open the panel window at start (also TAP_DESKTOP_SHOW=1)
  --hidden          start in the tray only (what the login item uses)
  --listen ADDR     loopback address to serve on (also TAP_DESKTOP_LISTEN);
                    default: the port in $TAP_HOME/settings.json, else 127.0.0.1:9400
";

/// Parses the arguments after the program name; `env` looks up an environment variable.
/// Unknown arguments are returned as warnings (a login item or a second launch must not
/// fail over a stray flag).
pub fn parse(
    args: impl IntoIterator<Item = String>,
    env: impl Fn(&str) -> Option<String>,
) -> Result<(Options, Vec<String>), String> {
    let mut o = Options::default();
    let mut ignored = Vec::new();
    let mut listen: Option<String> = None;
    let mut args = args.into_iter();
    while let Some(a) = args.next() {
        match a.as_str() {
            "--show" => o.show = true,
            "--hidden" => o.hidden = true,
            "--help" | "-h" => o.help = true,
            "--listen" => {
                listen = Some(
                    args.next()
                        .ok_or("--listen needs an address (127.0.0.1:PORT)")?,
                )
            }
            _ => match a.strip_prefix("--listen=") {
                Some(v) => listen = Some(v.to_string()),
                None => ignored.push(a),
            },
        }
    }
    if !o.show && !o.hidden {
        o.show = env("TAP_DESKTOP_SHOW").is_some_and(|v| truthy(&v));
    }
    if o.hidden {
        // The login item's `--hidden` wins over a leftover TAP_DESKTOP_SHOW.
        o.show = false;
    }
    let listen = listen.or_else(|| env("TAP_DESKTOP_LISTEN").filter(|v| !v.trim().is_empty()));
    if let Some(l) = listen {
        let addr: SocketAddr = l
            .trim()
            .parse()
            .map_err(|_| format!("'{l}' is not an address like 127.0.0.1:9400"))?;
        if !addr.ip().is_loopback() {
            return Err(format!(
                "refusing to listen on {addr}: the gateway serves loopback only (use 127.0.0.1:PORT)"
            ));
        }
        o.listen = Some(addr);
    }
    Ok((o, ignored))
}

/// Whether there is a display for GTK (`env` looks up an environment variable): on Linux,
/// `DISPLAY` or `WAYLAND_DISPLAY` set and not empty; elsewhere always.
pub fn has_display(env: impl Fn(&'static str) -> Option<std::ffi::OsString>) -> bool {
    if !cfg!(target_os = "linux") {
        return true;
    }
    ["DISPLAY", "WAYLAND_DISPLAY"]
        .into_iter()
        .any(|v| env(v).is_some_and(|d| !d.is_empty()))
}

fn truthy(v: &str) -> bool {
    matches!(
        v.trim().to_ascii_lowercase().as_str(),
        "1" | "true" | "yes" | "on"
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(args: &[&str], env: &[(&str, &str)]) -> Result<(Options, Vec<String>), String> {
        let env: Vec<(String, String)> = env
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        parse(args.iter().map(|s| s.to_string()), move |k| {
            env.iter().find(|(n, _)| n == k).map(|(_, v)| v.clone())
        })
    }

    #[test]
    fn no_arguments_start_hidden_on_the_default_port() {
        let (o, ignored) = run(&[], &[]).unwrap();
        assert_eq!(o, Options::default());
        assert!(ignored.is_empty());
    }

    #[test]
    fn show_comes_from_the_flag_or_the_environment_and_hidden_wins() {
        assert!(run(&["--show"], &[]).unwrap().0.show);
        assert!(run(&[], &[("TAP_DESKTOP_SHOW", "1")]).unwrap().0.show);
        assert!(!run(&[], &[("TAP_DESKTOP_SHOW", "0")]).unwrap().0.show);
        let (o, _) = run(&["--hidden"], &[("TAP_DESKTOP_SHOW", "1")]).unwrap();
        assert!(o.hidden && !o.show);
    }

    #[test]
    fn listen_comes_from_the_flag_before_the_environment() {
        let (o, _) = run(
            &["--listen", "127.0.0.1:0"],
            &[("TAP_DESKTOP_LISTEN", "127.0.0.1:7")],
        )
        .unwrap();
        assert_eq!(o.listen, Some("127.0.0.1:0".parse().unwrap()));
        let (o, _) = run(&["--listen=127.0.0.1:9500"], &[]).unwrap();
        assert_eq!(o.listen, Some("127.0.0.1:9500".parse().unwrap()));
        let (o, _) = run(&[], &[("TAP_DESKTOP_LISTEN", "[::1]:9401")]).unwrap();
        assert_eq!(o.listen, Some("[::1]:9401".parse().unwrap()));
    }

    #[test]
    fn non_loopback_and_malformed_addresses_are_refused() {
        let e = run(&["--listen", "0.0.0.0:9400"], &[]).unwrap_err();
        assert!(e.contains("loopback only"), "{e}");
        let e = run(&["--listen", "localhost"], &[]).unwrap_err();
        assert_eq!(e, "'localhost' is not an address like 127.0.0.1:9400");
        let e = run(&["--listen"], &[]).unwrap_err();
        assert_eq!(e, "--listen needs an address (127.0.0.1:PORT)");
    }

    #[test]
    #[cfg(target_os = "linux")]
    fn a_display_is_x_or_wayland_and_empty_means_none() {
        let env = |set: &'static [(&'static str, &'static str)]| {
            move |k: &'static str| {
                set.iter()
                    .find(|(n, _)| *n == k)
                    .map(|(_, v)| std::ffi::OsString::from(v))
            }
        };
        assert!(has_display(env(&[("DISPLAY", ":99")])));
        assert!(has_display(env(&[("WAYLAND_DISPLAY", "wayland-0")])));
        assert!(!has_display(env(&[])));
        assert!(!has_display(env(&[
            ("DISPLAY", ""),
            ("WAYLAND_DISPLAY", "")
        ])));
    }

    #[test]
    fn unknown_arguments_are_reported_not_fatal() {
        let (o, ignored) = run(&["--hidden", "--psn_0_1234", "x"], &[]).unwrap();
        assert!(o.hidden);
        assert_eq!(ignored, vec!["--psn_0_1234".to_string(), "x".to_string()]);
    }
}
