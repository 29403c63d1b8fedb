//! The agent skills and the session-start instructions, installed as the Copilot CLI's own
//! (probed on Copilot CLI 1.0.102: both reach the model's first request, the skills in its
//! `<available_skills>` list, the instructions in its system prompt):
//! - `<COPILOT_HOME>/skills/<name>/SKILL.md`: a personal skill (the CLI's `skills` directory
//!   under `COPILOT_HOME`, "Personal" in its `/skills` list);
//! - `<COPILOT_HOME>/instructions/tap.instructions.md`: personal custom instructions (the CLI
//!   reads `instructions/**/*.instructions.md` there besides `copilot-instructions.md`, so
//!   tap never edits the user's own instructions file).
//!
//! The text is `skills/` at the repository's root, included at build time: the gateway serves
//! the same files as MCP prompts (`tap-gateway`'s `mcp/skills.rs`), so the two never differ.
//! Each installed file carries [`MARKER`] (in a SKILL.md, the line after its front matter,
//! which the CLI needs first): a file without it is the user's and is never overwritten
//! (`force` moves it aside) nor removed.

use super::install::write_atomic;
use super::{Error, FileChange, Layout};
use std::path::{Path, PathBuf};

/// Each skill's name (its directory) and `SKILL.md` text.
pub const SKILLS: [(&str, &str); 4] = [
    (
        "tap-goal",
        include_str!("../../../../skills/tap-goal/SKILL.md"),
    ),
    (
        "tap-loop",
        include_str!("../../../../skills/tap-loop/SKILL.md"),
    ),
    (
        "tap-monitor",
        include_str!("../../../../skills/tap-monitor/SKILL.md"),
    ),
    (
        "tap-orchestrate",
        include_str!("../../../../skills/tap-orchestrate/SKILL.md"),
    ),
];

/// The session-start instructions: what Tap tools and skills the agent has.
const INSTRUCTIONS: &str = include_str!("../../../../skills/session-instructions.md");

/// The start of the line that marks a file tap installed (an HTML comment: Markdown readers
/// and the model see a note, nothing else).
pub const MARKER: &str = "<!-- tap-gateway: installed by `tap install copilot`";

fn marker_line() -> String {
    format!(
        "{MARKER} (tap {}); `tap uninstall copilot` removes it -->\n",
        super::VERSION
    )
}

/// One file tap installs: what it is (`tap-goal`, …, or `instructions`), where, and its text.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Item {
    pub name: &'static str,
    pub path: PathBuf,
    pub text: String,
}

/// The files, skills first, with this tap's text.
pub fn items(l: &Layout) -> Vec<Item> {
    let mut items: Vec<Item> = SKILLS
        .iter()
        .map(|(name, text)| Item {
            name,
            path: l.skills.join(name).join("SKILL.md"),
            text: marked_skill(text),
        })
        .collect();
    items.push(Item {
        name: "instructions",
        path: l.instructions.clone(),
        text: format!("{}\n{INSTRUCTIONS}", marker_line()),
    });
    items
}

/// The skill with the marker line after its front matter (the CLI reads the front matter only
/// when the file starts with it).
fn marked_skill(text: &str) -> String {
    let end = text
        .strip_prefix("---\n")
        .and_then(|rest| rest.find("\n---\n"))
        .map(|i| 4 + i + "\n---\n".len())
        .expect("a skill file starts with front matter");
    format!("{}{}{}", &text[..end], marker_line(), &text[end..])
}

/// Where one installed file stands.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum State {
    Missing,
    /// This tap's text.
    Current,
    /// tap's, another version's or edited: install replaces it.
    Stale,
    /// The user's: left alone.
    Other,
}

fn is_taps(text: &str) -> bool {
    text.lines().take(8).any(|l| l.starts_with(MARKER))
}

pub fn state(item: &Item) -> Result<State, Error> {
    Ok(match read(&item.path)? {
        None => State::Missing,
        Some(t) if t == item.text => State::Current,
        Some(t) if is_taps(&t) => State::Stale,
        Some(_) => State::Other,
    })
}

/// What [`install`] did to one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Written {
    Already,
    Written {
        updated: bool,
        moved: Option<PathBuf>,
    },
}

/// Writes every file. A file of the user's at one of the paths refuses the whole install
/// before anything is written, unless `force`, which moves it aside first.
pub fn install(l: &Layout, force: bool) -> Result<Vec<(Item, Written)>, Error> {
    let items = items(l);
    let states = items.iter().map(state).collect::<Result<Vec<_>, _>>()?;
    if !force {
        if let Some((item, _)) = items.iter().zip(&states).find(|(_, s)| **s == State::Other) {
            return Err(Error::NotTaps {
                file: item.path.clone(),
                removing: false,
            });
        }
    }
    let mut done = Vec::new();
    for (item, s) in items.into_iter().zip(states) {
        let written = match s {
            State::Current => Written::Already,
            _ => {
                let dir = item.path.parent().unwrap_or(Path::new("."));
                std::fs::create_dir_all(dir).map_err(io("create", dir))?;
                let moved = match s {
                    State::Other => {
                        let backup = crate::write::backup_path(&item.path);
                        std::fs::rename(&item.path, &backup).map_err(io("back up", &item.path))?;
                        Some(backup)
                    }
                    _ => None,
                };
                write_atomic(&item.path, &item.text).map_err(io("write", &item.path))?;
                Written::Written {
                    updated: s == State::Stale,
                    moved,
                }
            }
        };
        done.push((item, written));
    }
    Ok(done)
}

/// What [`remove`] did to one file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Removal {
    NotThere,
    Removed,
    /// The user's file: left.
    LeftAlone,
}

/// Removes the files tap installed (any tap version's), and a skill's directory when that
/// leaves it empty; the user's files, and the `skills/` and `instructions/` directories, stay.
pub fn remove(l: &Layout) -> Result<Vec<(Item, Removal)>, Error> {
    let mut done = Vec::new();
    for item in items(l) {
        let r = match state(&item)? {
            State::Missing => Removal::NotThere,
            State::Other => Removal::LeftAlone,
            State::Current | State::Stale => {
                std::fs::remove_file(&item.path).map_err(io("remove", &item.path))?;
                if item.name != "instructions" {
                    if let Some(dir) = item.path.parent() {
                        let _ = std::fs::remove_dir(dir);
                    }
                }
                Removal::Removed
            }
        };
        done.push((item, r));
    }
    Ok(done)
}

/// The files' changes for a plan: written on connect, removed on disconnect (tap's only).
pub fn changes(l: &Layout, connect: bool) -> Result<Vec<FileChange>, Error> {
    let mut changes = Vec::new();
    for item in items(l) {
        let old = read(&item.path)?;
        let new = match (connect, state(&item)?) {
            (_, State::Current) if connect => continue,
            (true, State::Other) => {
                return Err(Error::NotTaps {
                    file: item.path,
                    removing: false,
                })
            }
            (true, _) => Some(item.text),
            (false, State::Current | State::Stale) => None,
            (false, _) => continue,
        };
        changes.push(FileChange {
            path: item.path,
            old,
            new,
        });
    }
    Ok(changes)
}

fn read(path: &Path) -> Result<Option<String>, Error> {
    crate::write::read(path).map_err(io("read", path))
}

fn io<'a>(what: &'static str, file: &'a Path) -> impl FnOnce(std::io::Error) -> Error + 'a {
    move |error| Error::Io {
        what,
        file: file.to_path_buf(),
        error,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_marker_follows_the_front_matter_and_the_rest_is_the_file() {
        for (name, text) in SKILLS {
            let marked = marked_skill(text);
            assert!(
                marked.starts_with(&format!("---\nname: {name}\n")),
                "{name}"
            );
            assert!(is_taps(&marked), "{name}");
            assert_eq!(marked.replacen(&marker_line(), "", 1), text);
            // The CLI parses the front matter as YAML and silently skips a skill whose plain
            // scalar holds ": " (Copilot CLI 1.0.102 dropped tap-orchestrate for it).
            let description = text.lines().nth(2).unwrap();
            let value = description.strip_prefix("description: ").unwrap();
            assert!(
                !value.contains(": ") && !value.contains(" #"),
                "{name}: {value}"
            );
        }
    }

    #[test]
    fn a_users_file_refuses_install_unless_forced_and_is_never_removed() {
        let dir = tempfile::tempdir().unwrap();
        let l = Layout::new(dir.path().join("copilot"));
        let mine = l.skills.join("tap-loop").join("SKILL.md");
        std::fs::create_dir_all(mine.parent().unwrap()).unwrap();
        std::fs::write(&mine, "---\nname: tap-loop\ndescription: mine\n---\nmine\n").unwrap();
        let e = install(&l, false).unwrap_err();
        assert!(
            matches!(e, Error::NotTaps { ref file, .. } if *file == mine),
            "{e}"
        );
        assert!(
            !l.instructions.exists(),
            "nothing written before the refusal"
        );
        assert!(changes(&l, true).is_err(), "a plan refuses too");

        let r = remove(&l).unwrap();
        assert!(r.iter().all(|(i, r)| match i.name {
            "tap-loop" => *r == Removal::LeftAlone,
            _ => *r == Removal::NotThere,
        }));
        assert!(mine.exists());

        let done = install(&l, true).unwrap();
        let moved = done
            .iter()
            .find_map(|(i, w)| match w {
                Written::Written { moved: Some(m), .. } if i.name == "tap-loop" => Some(m.clone()),
                _ => None,
            })
            .expect("moved aside");
        assert!(std::fs::read_to_string(moved).unwrap().contains("mine"));
        assert!(changes(&l, true).unwrap().is_empty(), "all current");
        assert!(install(&l, false)
            .unwrap()
            .iter()
            .all(|(_, w)| *w == Written::Already));
        assert_eq!(changes(&l, false).unwrap().len(), 5);
    }
}
