//! What the tray shows, computed from counts. Unit-tested.

/// The tray icon's state, readable at a glance.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrayState {
    /// Running; nothing connected.
    Idle,
    /// At least one session or provider is connected.
    Connected,
    /// Something needs the user: a pairing request waits, a provider failed since the
    /// panel was last opened, an MCP server is failing now, or one waits for the user to
    /// sign in, or a tool's changed definition waits for the user to accept it.
    Attention,
}

/// The counts the tray is drawn from.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    /// Registered sessions.
    pub sessions: usize,
    /// The tools those sessions offer, each name counted once.
    pub tools: usize,
    /// Authenticated provider connections.
    pub providers: usize,
    /// Pairing requests waiting for the user.
    pub pending: usize,
    /// Tool calls waiting for the user's approval.
    pub approvals: usize,
    /// Provider failures not yet seen (cleared when the panel opens).
    pub failures: usize,
    /// The MCP servers failing now (parked, or restarting after a failure), by name; one
    /// entry per instance, so a project server failing in two sessions is there twice.
    pub failing_servers: Vec<String>,
    /// The MCP servers waiting for the user to sign in (OAuth), by name; one entry per
    /// instance, as [`Summary::failing_servers`].
    pub needs_sign_in: Vec<String>,
    /// Tools whose changed definition is held until the user accepts it
    /// (`provider/tool`; docs/pins.md).
    pub held_tools: Vec<String>,
}

/// The tray menu's items. Their ids are what Tauri's menu events carry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TrayItem {
    /// "Open panel".
    Open,
    /// The pending requests ([`Summary::pending_item`]): opens the popup.
    Pending,
    /// The tool calls waiting for approval ([`Summary::approvals_item`]): opens the popup.
    Approvals,
    /// The tools whose changed definition is held ([`Summary::held_item`]): opens the
    /// popup at their diffs, to accept or keep holding.
    Held,
    /// The failing MCP servers ([`Summary::servers_item`]): opens the panel at its
    /// Servers page.
    Servers,
    /// The MCP servers waiting for a sign-in ([`Summary::sign_in_item`]): opens the panel
    /// at its Servers page, where their Sign in buttons are.
    SignIn,
    /// "Connect a client…": opens the panel at its Clients page (the `tap connect` command
    /// of each agent, and the profiles).
    Connect,
    /// "Start at login", a check item.
    Autostart,
    /// "Quit".
    Quit,
}

impl TrayItem {
    /// Every item, in menu order.
    pub const ALL: [TrayItem; 9] = [
        Self::Open,
        Self::Approvals,
        Self::Pending,
        Self::Held,
        Self::Servers,
        Self::SignIn,
        Self::Connect,
        Self::Autostart,
        Self::Quit,
    ];

    /// The menu item's id.
    pub fn id(self) -> &'static str {
        match self {
            Self::Open => "open",
            Self::Pending => "pending",
            Self::Approvals => "approvals",
            Self::Held => "held",
            Self::Servers => "servers",
            Self::SignIn => "sign-in",
            Self::Connect => "connect",
            Self::Autostart => "autostart",
            Self::Quit => "quit",
        }
    }

    /// The item's label for `summary`, and whether it is enabled (only the pending, servers
    /// and sign-in items change: [`Summary::pending_item`], [`Summary::servers_item`],
    /// [`Summary::sign_in_item`]).
    pub fn label(self, summary: &Summary) -> (String, bool) {
        let fixed = |label: &str| (label.to_string(), true);
        match self {
            Self::Open => fixed("Open panel"),
            Self::Pending => summary.pending_item(),
            Self::Approvals => summary.approvals_item(),
            Self::Held => summary.held_item(),
            Self::Servers => summary.servers_item(),
            Self::SignIn => summary.sign_in_item(),
            Self::Connect => fixed("Connect a client…"),
            Self::Autostart => fixed("Start at login"),
            Self::Quit => fixed("Quit"),
        }
    }

    /// The item with menu id `id`.
    pub fn from_id(id: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|i| i.id() == id)
    }
}

/// How many servers' names a menu line and the tooltip show (failing, or waiting for a
/// sign-in).
pub const NAMES_SHOWN: usize = 3;

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// `github, linear`: each name once, at most [`NAMES_SHOWN`] of them, then `, …`.
fn few_names(all: &[String]) -> String {
    let mut names: Vec<&str> = Vec::new();
    for n in all {
        if !names.contains(&n.as_str()) {
            names.push(n);
        }
    }
    let more = names.len() > NAMES_SHOWN;
    names.truncate(NAMES_SHOWN);
    format!("{}{}", names.join(", "), if more { ", …" } else { "" })
}

impl Summary {
    /// The icon state.
    pub fn state(&self) -> TrayState {
        let servers_need_you = !self.failing_servers.is_empty() || !self.needs_sign_in.is_empty();
        let held = !self.held_tools.is_empty();
        let asks = self.pending > 0 || self.approvals > 0;
        if asks || self.failures > 0 || servers_need_you || held {
            TrayState::Attention
        } else if self.sessions > 0 || self.providers > 0 {
            TrayState::Connected
        } else {
            TrayState::Idle
        }
    }

    /// The tooltip, in one line (a tray shows one line well; several are cut or joined
    /// differently by each desktop): the sessions and the tools they offer, the providers
    /// when any, then each thing that needs the user by count (the menu lines name them),
    /// then the address, e.g. `3 sessions · 12 tools · 1 server failing — 127.0.0.1:9400`.
    pub fn tooltip(&self, address: &str) -> String {
        let mut parts = vec![
            plural(self.sessions, "session", "sessions"),
            plural(self.tools, "tool", "tools"),
        ];
        let mut add = |n: usize, one: &str, many: &str| {
            if n > 0 {
                parts.push(plural(n, one, many));
            }
        };
        add(self.providers, "provider", "providers");
        add(
            self.approvals,
            "tool call waiting for approval",
            "tool calls waiting for approval",
        );
        add(self.pending, "pairing request", "pairing requests");
        add(self.failures, "provider failure", "provider failures");
        add(
            self.failing_servers.len(),
            "server failing",
            "servers failing",
        );
        add(
            self.needs_sign_in.len(),
            "server needs sign-in",
            "servers need sign-in",
        );
        // Accepted in the panel or with `tap pins accept`.
        add(self.held_tools.len(), "tool held", "tools held");
        format!("{} — {address}", parts.join(" · "))
    }

    /// `2 MCP servers failing: github, linear`: each name once, at most
    /// [`NAMES_SHOWN`] of them (a menu line must stay short).
    fn servers_failing(&self) -> String {
        let count = plural(self.failing_servers.len(), "MCP server", "MCP servers");
        format!("{count} failing: {}", few_names(&self.failing_servers))
    }

    /// `1 MCP server needs sign-in: github`, `2 MCP servers need sign-in: github, linear`,
    /// named as [`Summary::servers_failing`] names them.
    fn servers_needing_sign_in(&self) -> String {
        let n = self.needs_sign_in.len();
        let count = plural(n, "MCP server needs", "MCP servers need");
        format!("{count} sign-in: {}", few_names(&self.needs_sign_in))
    }

    /// The tray menu's sign-in item, and whether it is enabled.
    pub fn sign_in_item(&self) -> (String, bool) {
        if self.needs_sign_in.is_empty() {
            ("No MCP server needs sign-in".to_string(), false)
        } else {
            (self.servers_needing_sign_in(), true)
        }
    }

    /// The tray menu's failing-servers item, and whether it is enabled.
    pub fn servers_item(&self) -> (String, bool) {
        if self.failing_servers.is_empty() {
            ("No MCP server failing".to_string(), false)
        } else {
            (self.servers_failing(), true)
        }
    }

    /// The tray menu's waiting-calls item (it opens the popup, where they are answered),
    /// and whether it is enabled.
    pub fn approvals_item(&self) -> (String, bool) {
        match self.approvals {
            0 => ("No tool calls waiting".to_string(), false),
            n => (
                format!("{} waiting…", plural(n, "tool call", "tool calls")),
                true,
            ),
        }
    }

    /// The tray menu's held-tools item (it opens the popup at their diffs), and whether
    /// it is enabled.
    pub fn held_item(&self) -> (String, bool) {
        match self.held_tools.len() {
            0 => ("No tool definitions held".to_string(), false),
            n => (
                format!(
                    "{} (definition changed)…",
                    plural(n, "tool held", "tools held")
                ),
                true,
            ),
        }
    }

    /// The tray menu's pending-requests item, and whether it is enabled.
    pub fn pending_item(&self) -> (String, bool) {
        match self.pending {
            0 => ("No pairing requests".to_string(), false),
            n => (
                format!("{}…", plural(n, "pairing request", "pairing requests")),
                true,
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(sessions: usize, providers: usize, pending: usize, failures: usize) -> Summary {
        Summary {
            sessions,
            tools: 0,
            providers,
            pending,
            approvals: 0,
            failures,
            failing_servers: Vec::new(),
            needs_sign_in: Vec::new(),
            held_tools: Vec::new(),
        }
    }

    fn waiting(names: &[&str]) -> Summary {
        Summary {
            needs_sign_in: names.iter().map(|n| n.to_string()).collect(),
            ..s(1, 1, 0, 0)
        }
    }

    fn failing(names: &[&str]) -> Summary {
        Summary {
            failing_servers: names.iter().map(|n| n.to_string()).collect(),
            ..s(1, 1, 0, 0)
        }
    }

    #[test]
    fn menu_labels_are_fixed_but_the_pending_items() {
        let none = s(0, 0, 0, 0);
        assert_eq!(TrayItem::Open.label(&none), ("Open panel".into(), true));
        assert_eq!(TrayItem::Quit.label(&none), ("Quit".into(), true));
        assert_eq!(TrayItem::Autostart.label(&none).0, "Start at login");
        assert_eq!(
            TrayItem::Connect.label(&none),
            ("Connect a client…".into(), true)
        );
        assert_eq!(TrayItem::Pending.label(&none), none.pending_item());
        assert!(TrayItem::Pending.label(&s(0, 0, 2, 0)).1);
    }

    #[test]
    fn waiting_tool_calls_ask_for_attention_and_have_their_menu_line() {
        let none = s(0, 0, 0, 0);
        assert_eq!(
            TrayItem::Approvals.label(&none),
            ("No tool calls waiting".into(), false)
        );
        let one = Summary {
            approvals: 1,
            ..s(1, 1, 0, 0)
        };
        assert_eq!(one.state(), TrayState::Attention);
        assert_eq!(
            TrayItem::Approvals.label(&one),
            ("1 tool call waiting…".into(), true)
        );
        assert_eq!(
            one.tooltip("127.0.0.1:9400"),
            "1 session · 0 tools · 1 provider · 1 tool call waiting for approval — 127.0.0.1:9400"
        );
        let three = Summary {
            approvals: 3,
            ..one
        };
        assert_eq!(three.approvals_item().0, "3 tool calls waiting…");
    }

    #[test]
    fn menu_ids_name_one_item_each() {
        for item in TrayItem::ALL {
            assert_eq!(TrayItem::from_id(item.id()), Some(item));
        }
        assert_eq!(TrayItem::from_id("settings"), None);
    }

    #[test]
    fn state_is_idle_connected_or_attention() {
        assert_eq!(s(0, 0, 0, 0).state(), TrayState::Idle);
        assert_eq!(s(1, 0, 0, 0).state(), TrayState::Connected);
        assert_eq!(s(0, 2, 0, 0).state(), TrayState::Connected);
        assert_eq!(s(0, 0, 1, 0).state(), TrayState::Attention);
        assert_eq!(s(3, 3, 0, 1).state(), TrayState::Attention);
    }

    #[test]
    fn tooltip_carries_the_counts_and_what_needs_attention() {
        assert_eq!(
            s(0, 0, 0, 0).tooltip("127.0.0.1:9400"),
            "0 sessions · 0 tools — 127.0.0.1:9400"
        );
        assert_eq!(
            s(1, 2, 1, 3).tooltip("127.0.0.1:9400"),
            "1 session · 0 tools · 2 providers · 1 pairing request · 3 provider failures — 127.0.0.1:9400"
        );
    }

    #[test]
    fn the_pending_item_counts_and_is_disabled_at_zero() {
        assert_eq!(
            s(0, 0, 0, 0).pending_item(),
            ("No pairing requests".into(), false)
        );
        assert_eq!(
            s(0, 0, 1, 0).pending_item(),
            ("1 pairing request…".into(), true)
        );
        assert_eq!(
            s(0, 0, 4, 0).pending_item(),
            ("4 pairing requests…".into(), true)
        );
    }

    #[test]
    fn a_failing_mcp_server_asks_for_attention_and_names_itself() {
        let one = failing(&["github"]);
        assert_eq!(one.state(), TrayState::Attention);
        assert_eq!(
            one.servers_item(),
            ("1 MCP server failing: github".into(), true)
        );
        assert_eq!(TrayItem::Servers.label(&one), one.servers_item());
        assert_eq!(
            one.tooltip("127.0.0.1:9400"),
            "1 session · 0 tools · 1 provider · 1 server failing — 127.0.0.1:9400"
        );
        // None failing: the item stays, greyed out, and the icon is only connected.
        let none = failing(&[]);
        assert_eq!(none.state(), TrayState::Connected);
        assert_eq!(none.servers_item(), ("No MCP server failing".into(), false));
    }

    #[test]
    fn the_servers_item_counts_instances_and_names_each_server_once_and_few() {
        // A project server failing in two sessions counts twice, is named once.
        assert_eq!(
            failing(&["fs", "fs", "linear"]).servers_item().0,
            "3 MCP servers failing: fs, linear"
        );
        assert_eq!(
            failing(&["a", "b", "c", "d"]).servers_item().0,
            "4 MCP servers failing: a, b, c, …"
        );
    }

    #[test]
    fn a_server_waiting_for_a_sign_in_asks_for_attention_and_names_itself() {
        let one = waiting(&["github"]);
        assert_eq!(one.state(), TrayState::Attention);
        assert_eq!(
            one.sign_in_item(),
            ("1 MCP server needs sign-in: github".into(), true)
        );
        assert_eq!(TrayItem::SignIn.label(&one), one.sign_in_item());
        // It is not failing: that line stays greyed out.
        assert_eq!(one.servers_item(), ("No MCP server failing".into(), false));
        assert_eq!(
            one.tooltip("127.0.0.1:9400"),
            "1 session · 0 tools · 1 provider · 1 server needs sign-in — 127.0.0.1:9400"
        );
        assert_eq!(
            waiting(&["fs", "fs", "linear", "a", "b"]).sign_in_item().0,
            "5 MCP servers need sign-in: fs, linear, a, …"
        );
        let none = waiting(&[]);
        assert_eq!(none.state(), TrayState::Connected);
        assert_eq!(
            none.sign_in_item(),
            ("No MCP server needs sign-in".into(), false)
        );
        // Both at once: a line each in the menu, a part each in the tooltip.
        let both = Summary {
            failing_servers: vec!["exits".into()],
            ..waiting(&["github"])
        };
        assert_eq!(
            both.tooltip("127.0.0.1:9400"),
            "1 session · 0 tools · 1 provider · 1 server failing · 1 server needs sign-in — 127.0.0.1:9400"
        );
    }

    #[test]
    fn a_held_tool_asks_for_attention_and_names_itself() {
        let held = Summary {
            held_tools: vec!["mcp-github/github__create_issue".into()],
            ..s(0, 0, 0, 0)
        };
        assert_eq!(held.state(), TrayState::Attention);
        assert_eq!(
            held.tooltip("127.0.0.1:9400"),
            "0 sessions · 0 tools · 1 tool held — 127.0.0.1:9400"
        );
        // The menu's line opens the popup at the diffs; greyed out when none is held.
        assert_eq!(
            TrayItem::Held.label(&held),
            ("1 tool held (definition changed)…".into(), true)
        );
        assert_eq!(
            TrayItem::Held.label(&s(0, 0, 0, 0)),
            ("No tool definitions held".into(), false)
        );
    }

    #[test]
    fn the_tooltip_is_one_line_with_a_part_for_each_count_there_is() {
        let issue = Summary {
            sessions: 3,
            tools: 12,
            failing_servers: vec!["github".into()],
            ..Summary::default()
        };
        assert_eq!(
            issue.tooltip("127.0.0.1:9400"),
            "3 sessions · 12 tools · 1 server failing — 127.0.0.1:9400"
        );
        // Every combination of what may need the user, at one and at two of each: one
        // line, the fixed counts first, then each part present exactly when its count is,
        // in the same order, singular or plural by its count.
        type Part = (&'static str, &'static str, fn(&mut Summary, usize));
        let parts: [Part; 7] = [
            ("1 provider", "2 providers", |s, n| s.providers = n),
            (
                "1 tool call waiting for approval",
                "2 tool calls waiting for approval",
                |s, n| s.approvals = n,
            ),
            ("1 pairing request", "2 pairing requests", |s, n| {
                s.pending = n
            }),
            ("1 provider failure", "2 provider failures", |s, n| {
                s.failures = n
            }),
            ("1 server failing", "2 servers failing", |s, n| {
                s.failing_servers = vec!["a".into(); n]
            }),
            (
                "1 server needs sign-in",
                "2 servers need sign-in",
                |s, n| s.needs_sign_in = vec!["b".into(); n],
            ),
            ("1 tool held", "2 tools held", |s, n| {
                s.held_tools = vec!["p/t".into(); n]
            }),
        ];
        for n in [1, 2] {
            for mask in 0u32..(1 << parts.len()) {
                let mut summary = Summary {
                    sessions: n,
                    tools: n,
                    ..Summary::default()
                };
                let mut want = vec![plural(n, "session", "sessions"), plural(n, "tool", "tools")];
                for (i, (one, many, set)) in parts.iter().enumerate() {
                    if mask & (1 << i) != 0 {
                        set(&mut summary, n);
                        want.push(if n == 1 { one } else { many }.to_string());
                    }
                }
                let got = summary.tooltip("127.0.0.1:9400");
                assert!(!got.contains('\n'), "{got}");
                assert_eq!(got, format!("{} — 127.0.0.1:9400", want.join(" · ")));
            }
        }
    }
}
