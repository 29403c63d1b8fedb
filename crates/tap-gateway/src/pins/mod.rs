//! Pinned tool definitions (`docs/pins.md`, issue 39): the first definition seen of each
//! provider's tool is pinned (`pins.json`, by the provider's name and the tool's); a later
//! definition that differs is held: the tool map leaves it out of every session
//! (`state::tool_map`) and a call naming it is refused (`tools::route`) until the user
//! accepts it. Everything a provider or an MCP server declares comes through the tool map,
//! so that one check covers both.
//!
//! [`Pins`] has its own lock, taken inside the state lock (never the other way round) and
//! never across an await. New pins found while building a tool map are written by a task
//! of their own, so no file is written under the state lock; what the user changes is
//! written before the answer.

pub(crate) mod canon;
pub(crate) mod diff;
pub(crate) mod pins_file;

use crate::error::Error;
use crate::events::{Events, GatewayEvent};
use crate::limits::{
    MAX_CACHED_PIN_HASHES, MAX_HELD_TOOLS, MAX_PINNED_TEXT_BYTES, MAX_PINS, MAX_PINS_FILE_BYTES,
};
use pins_file::{Pin, PinsFile};
use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, Weak};
use tap_protocol::pins::{HeldReason, HeldTool, PinInfo, PinsList};
use tap_protocol::provider::ToolDef;
use tap_protocol::ErrorCode;
use tokio::sync::Notify;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

/// The gateway's pins: a cheap handle.
#[derive(Clone)]
pub(crate) struct Pins {
    inner: Arc<Inner>,
}

struct Inner {
    path: PathBuf,
    table: Mutex<Table>,
    /// Taken around every write of the file, before the table is copied, so a later
    /// copy is never overwritten by an earlier one.
    writing: Mutex<()>,
    /// Poked when first-seen tools were pinned: the writer task saves them.
    dirty: Notify,
    events: Events,
}

struct Table {
    file: PinsFile,
    /// Why `pins.json` could not be read: every provider tool is held (fail closed) and
    /// the file is never written over.
    unreadable: Option<String>,
    /// (provider, tool) → the latest differing definition seen. Not kept across
    /// restarts: a provider offering it again holds it again.
    held: BTreeMap<(String, String), Held>,
    /// The bytes of the texts `file` keeps.
    text_bytes: usize,
    /// First-seen pins not yet written.
    unsaved: bool,
    /// Definitions' hashes by their `Arc`'s address (see `Table::hash_of`).
    hashes: HashMap<usize, (Weak<ToolDef>, String)>,
}

#[derive(Clone)]
struct Held {
    reason: HeldReason,
    hash: String,
    /// The offered definition's canonical text, when within `MAX_PINNED_TEXT_BYTES`.
    text: Option<String>,
    since: String,
}

impl Pins {
    /// Reads `data_dir/pins.json`. One that cannot be read holds every provider tool until
    /// it is fixed: offering unpinned tools would let a changed definition through
    /// unnoticed, which is what pinning is for.
    pub fn load(data_dir: &Path, events: Events) -> Self {
        let path = pins_file::path(data_dir);
        let (file, unreadable) = match pins_file::load(&path) {
            Ok(f) => (f, None),
            Err(why) => {
                tracing::error!("{why}; every provider tool is held until then");
                (PinsFile::default(), Some(why))
            }
        };
        let text_bytes = file.text_bytes();
        Self {
            inner: Arc::new(Inner {
                path,
                table: Mutex::new(Table {
                    file,
                    unreadable,
                    held: BTreeMap::new(),
                    text_bytes,
                    unsaved: false,
                    hashes: HashMap::new(),
                }),
                writing: Mutex::new(()),
                dirty: Notify::new(),
                events,
            }),
        }
    }

    /// Starts the task writing first-seen pins; it writes what is left when `stopping`
    /// is cancelled, and ends.
    pub fn spawn_writer(&self, tasks: &TaskTracker, stopping: CancellationToken) {
        let me = self.clone();
        tasks.spawn(async move {
            loop {
                let stop = tokio::select! {
                    _ = me.inner.dirty.notified() => false,
                    _ = stopping.cancelled() => true,
                };
                if let Err(why) = me.save_if_unsaved() {
                    tracing::warn!("new pins could not be written: {why}");
                }
                if stop {
                    break;
                }
            }
        });
    }

    fn table(&self) -> MutexGuard<'_, Table> {
        self.inner.table.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether `provider`'s tool `def` may be offered: pinning is off for the provider,
    /// or the definition is the pinned one, or it was never seen and is pinned now.
    /// Otherwise it is held (and a `status` event says so the first time).
    pub fn offers(&self, provider: &str, def: &Arc<ToolDef>) -> bool {
        let mut t = self.table();
        if t.file.disabled.contains(provider) {
            return true;
        }
        let hash = t.hash_of(def);
        let reason = match t.file.pins.get(provider).and_then(|m| m.get(&def.name)) {
            Some(pin) if pin.hash == hash => return true,
            _ if t.unreadable.is_some() => HeldReason::Unreadable,
            Some(_) => HeldReason::Changed,
            None if t.file.count() >= MAX_PINS => HeldReason::Full,
            None => {
                let pin = t.pin_of(hash, canon::text(def));
                t.file
                    .pins
                    .entry(provider.to_string())
                    .or_default()
                    .insert(def.name.clone(), pin);
                t.unsaved = true;
                self.inner.dirty.notify_one();
                return true;
            }
        };
        let key = (provider.to_string(), def.name.clone());
        if t.held.get(&key).is_some_and(|h| h.hash == hash) {
            return false;
        }
        // Past the bound the tool is still held, only not listed (a provider renaming its
        // tools without end cannot grow the list).
        if t.held.len() >= MAX_HELD_TOOLS && !t.held.contains_key(&key) {
            return false;
        }
        tracing::warn!(
            "tool '{}' of '{provider}' is held ({reason:?}): `tap pins diff {provider} {}`",
            def.name,
            def.name
        );
        let text = canon::text(def);
        t.held.insert(
            key,
            Held {
                reason,
                hash,
                text: (text.len() <= MAX_PINNED_TEXT_BYTES).then_some(text),
                since: crate::time::rfc3339(std::time::SystemTime::now()),
            },
        );
        self.inner.events.emit(GatewayEvent::StatusChanged);
        false
    }

    /// Pins what is held of `provider` (one `tool`, or all), `hash` being the reviewed
    /// definition's if given. Answers how many were accepted.
    pub fn accept(
        &self,
        provider: &str,
        tool: Option<&str>,
        hash: Option<&str>,
    ) -> Result<usize, Error> {
        self.change(|t| {
            if let Some(why) = &t.unreadable {
                return Err(Error::new(ErrorCode::Internal, why.clone()));
            }
            let keys: Vec<(String, String)> = t
                .held
                .keys()
                .filter(|(p, tl)| p.as_str() == provider && tool.is_none_or(|x| x == tl.as_str()))
                .cloned()
                .collect();
            if keys.is_empty() {
                return Err(nothing("held", provider, tool));
            }
            for key in &keys {
                let held = &t.held[key];
                if let Some(h) = hash.filter(|h| *h != held.hash) {
                    return Err(Error::new(
                        ErrorCode::NotFound,
                        format!(
                            "The held definition of '{}' of '{provider}' is {}, not {h}: it changed since it was shown; look again (`tap pins diff {provider} {}`)",
                            key.1, held.hash, key.1
                        ),
                    ));
                }
                let new = !t.file.pins.get(provider).is_some_and(|m| m.contains_key(&key.1));
                if new && t.file.count() >= MAX_PINS {
                    return Err(Error::new(
                        ErrorCode::RateLimited,
                        format!("{MAX_PINS} definitions are pinned already; forget some first (`tap pins forget PROVIDER`)"),
                    ));
                }
                let held = t.held.remove(key).expect("listed above");
                if let Some(old) = t.file.pins.get(provider).and_then(|m| m.get(&key.1)) {
                    t.text_bytes -= old.text.as_ref().map_or(0, |x| x.len());
                }
                let pin = match held.text {
                    Some(text) => t.pin_of(held.hash, text),
                    None => Pin {
                        hash: held.hash,
                        text: None,
                        pinned_at: crate::time::rfc3339(std::time::SystemTime::now()),
                    },
                };
                t.file
                    .pins
                    .entry(provider.to_string())
                    .or_default()
                    .insert(key.1.clone(), pin);
            }
            Ok(keys.len())
        })
    }

    /// Forgets the pins of `provider` (one `tool`, or all) and what is held of them: the
    /// next definition seen is pinned as new. Answers how many pins were forgotten.
    pub fn forget(&self, provider: &str, tool: Option<&str>) -> Result<usize, Error> {
        self.change(|t| {
            t.held.retain(|(p, tl), _| {
                !(p.as_str() == provider && tool.is_none_or(|x| x == tl.as_str()))
            });
            let Some(tools) = t.file.pins.get_mut(provider) else {
                return Err(nothing("pinned", provider, tool));
            };
            let before = tools.len();
            tools.retain(|tl, _| tool.is_some_and(|x| x != tl.as_str()));
            let forgotten = before - tools.len();
            if tools.is_empty() {
                t.file.pins.remove(provider);
            }
            if forgotten == 0 {
                return Err(nothing("pinned", provider, tool));
            }
            t.text_bytes = t.file.text_bytes();
            Ok(forgotten)
        })
    }

    /// Turns pinning on or off for `provider`. Off, what was held of it is offered.
    pub fn set_enabled(&self, provider: &str, enabled: bool) -> Result<(), Error> {
        self.change(|t| {
            if enabled {
                t.file.disabled.remove(provider);
            } else {
                t.file.disabled.insert(provider.to_string());
                t.held.retain(|(p, _), _| p.as_str() != provider);
            }
            Ok(())
        })
    }

    /// Whether the user knows a provider by this name here (a pin, a hold or a setting).
    pub fn knows(&self, provider: &str) -> bool {
        let t = self.table();
        t.file.pins.contains_key(provider)
            || t.file.disabled.contains(provider)
            || t.held.keys().any(|(p, _)| p.as_str() == provider)
    }

    /// What is held, then every pin.
    pub fn list(&self) -> PinsList {
        let t = self.table();
        let held = t
            .held
            .iter()
            .map(|((provider, tool), h)| {
                let pin = t.file.pins.get(provider).and_then(|m| m.get(tool));
                let pinned = pin.and_then(|p| p.text.clone());
                HeldTool {
                    provider: provider.clone(),
                    tool: tool.clone(),
                    reason: h.reason,
                    pinned_hash: pin.map(|p| p.hash.clone()),
                    diff: diff::fields(pinned.as_deref(), h.text.as_deref()),
                    pinned,
                    offered_hash: h.hash.clone(),
                    offered: h.text.clone(),
                    since: h.since.clone(),
                }
            })
            .collect();
        let pins = t
            .file
            .pins
            .iter()
            .flat_map(|(provider, tools)| {
                tools.iter().map(move |(tool, p)| PinInfo {
                    provider: provider.clone(),
                    tool: tool.clone(),
                    hash: p.hash.clone(),
                    pinned_at: p.pinned_at.clone(),
                    text_kept: p.text.is_some(),
                })
            })
            .collect();
        PinsList {
            held,
            pins,
            disabled: t.file.disabled.iter().cloned().collect(),
            problem: t.unreadable.clone(),
            path: self.inner.path.display().to_string(),
        }
    }

    /// Applies a user's change to a copy of the table, writes the file, and only then
    /// keeps the change (a write that fails changes nothing).
    fn change<T>(&self, f: impl FnOnce(&mut Table) -> Result<T, Error>) -> Result<T, Error> {
        let _writing = self.inner.writing.lock().unwrap_or_else(|e| e.into_inner());
        let mut t = self.table();
        if let Some(why) = &t.unreadable {
            return Err(Error::new(ErrorCode::Internal, why.clone()));
        }
        let mut next = Table {
            file: t.file.clone(),
            unreadable: None,
            held: t.held.clone(),
            text_bytes: t.text_bytes,
            unsaved: false,
            hashes: std::mem::take(&mut t.hashes),
        };
        let out = f(&mut next)?;
        // Written under the table lock, so a tool map being built meanwhile waits for
        // the file (a few KiB, at a user's click) rather than seeing a change not kept.
        pins_file::save(&self.inner.path, &next.file).map_err(|why| {
            Error::new(
                ErrorCode::Internal,
                format!(
                    "{} could not be written: {why}; nothing was changed",
                    self.inner.path.display()
                ),
            )
        })?;
        *t = next;
        Ok(out)
    }

    /// Writes first-seen pins, if any are unwritten.
    fn save_if_unsaved(&self) -> Result<(), String> {
        let _writing = self.inner.writing.lock().unwrap_or_else(|e| e.into_inner());
        let file = {
            let mut t = self.table();
            if !t.unsaved || t.unreadable.is_some() {
                return Ok(());
            }
            t.unsaved = false;
            t.file.clone()
        };
        pins_file::save(&self.inner.path, &file)
    }
}

impl Table {
    /// `def`'s hash, computed once per definition rather than for every tool of every
    /// session at each tool-map rebuild under the state lock (a JSON round trip and a
    /// SHA-256 each). Keyed by the `Arc`'s address: the entry's `Weak` keeps that
    /// allocation, so no other definition can have the address while the entry lives, and
    /// a definition in an `Arc` is never changed in place while a `Weak` to it exists.
    fn hash_of(&mut self, def: &Arc<ToolDef>) -> String {
        let key = Arc::as_ptr(def) as usize;
        if let Some((weak, hash)) = self.hashes.get(&key) {
            if weak.strong_count() > 0 && std::ptr::eq(weak.as_ptr(), Arc::as_ptr(def)) {
                return hash.clone();
            }
        }
        if self.hashes.len() >= MAX_CACHED_PIN_HASHES {
            self.hashes.retain(|_, (weak, _)| weak.strong_count() > 0);
            if self.hashes.len() >= MAX_CACHED_PIN_HASHES {
                self.hashes.clear();
            }
        }
        let hash = canon::hash(&canon::text(def));
        self.hashes.insert(key, (Arc::downgrade(def), hash.clone()));
        hash
    }

    /// A pin of `text` (kept when within the size limits).
    fn pin_of(&mut self, hash: String, text: String) -> Pin {
        let keep = text.len() <= MAX_PINNED_TEXT_BYTES
            && self.text_bytes + text.len() <= MAX_PINS_FILE_BYTES;
        if keep {
            self.text_bytes += text.len();
        }
        Pin {
            hash,
            text: keep.then_some(text),
            pinned_at: crate::time::rfc3339(std::time::SystemTime::now()),
        }
    }
}

fn nothing(what: &str, provider: &str, tool: Option<&str>) -> Error {
    let which = match tool {
        Some(t) => format!("tool '{t}' of provider '{provider}'"),
        None => format!("tool of provider '{provider}'"),
    };
    Error::new(
        ErrorCode::NotFound,
        format!("No {which} is {what} (`tap pins list`)"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn def(description: &str) -> Arc<ToolDef> {
        Arc::new(ToolDef {
            name: "t".into(),
            description: description.into(),
            ..ToolDef::default()
        })
    }

    #[test]
    fn a_changed_definition_is_held_whatever_allocation_it_comes_in() {
        let dir = tempfile::tempdir().unwrap();
        let pins = Pins::load(dir.path(), Events::new());
        let first = def("one");
        assert!(pins.offers("p", &first), "first seen: pinned");
        assert!(pins.offers("p", &first), "the same definition, remembered");
        assert!(
            pins.offers("p", &def("one")),
            "the same text in another Arc"
        );
        drop(first);
        // New allocations, whichever addresses they get, are hashed for what they hold.
        for _ in 0..100 {
            assert!(
                !pins.offers("p", &def("two")),
                "a changed definition is held"
            );
        }
        assert_eq!(pins.list().held.len(), 1);
    }

    #[test]
    fn the_hash_cache_stays_bounded() {
        let dir = tempfile::tempdir().unwrap();
        let pins = Pins::load(dir.path(), Events::new());
        // More live definitions than the cache holds (and than may be pinned).
        let live: Vec<Arc<ToolDef>> = (0..MAX_CACHED_PIN_HASHES + 10)
            .map(|i| {
                Arc::new(ToolDef {
                    name: format!("t{i}"),
                    ..ToolDef::default()
                })
            })
            .collect();
        for (i, d) in live.iter().enumerate() {
            assert_eq!(pins.offers("p", d), i < MAX_PINS, "tool {i}");
        }
        assert!(pins.table().hashes.len() <= MAX_CACHED_PIN_HASHES);
        assert_eq!(pins.list().pins.len(), MAX_PINS);
        // Held past the limit all the same, and listed up to theirs.
        let held = MAX_CACHED_PIN_HASHES + 10 - MAX_PINS;
        assert_eq!(pins.list().held.len(), held.min(MAX_HELD_TOOLS));
    }
}
