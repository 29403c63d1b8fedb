//! The agent skills (`skills/` at the repository's root: `tap-goal`, `tap-loop`,
//! `tap-monitor`, `tap-orchestrate`) as MCP prompts: slash commands in Claude Code and other
//! clients. The text is the files', included at build time, so the prompts and an install of
//! the same files as Copilot skills never differ; each file's front matter gives the
//! prompt's name and description, the rest is the prompt.

use std::sync::OnceLock;
use tap_protocol::clients::{SkillInfo, SkillInstall, SkillInstallState, SkillsList};

/// One skill: its file's front matter and body, and the one argument its prompt takes.
pub(crate) struct Skill {
    pub name: &'static str,
    pub description: &'static str,
    pub body: &'static str,
    pub argument: &'static str,
    pub argument_description: &'static str,
}

/// Each skill's file, with its prompt's argument.
const FILES: [(&str, &str, &str); 4] = [
    (
        include_str!("../../../../skills/tap-goal/SKILL.md"),
        "goal",
        "The goal, and what will show it is met",
    ),
    (
        include_str!("../../../../skills/tap-loop/SKILL.md"),
        "task",
        "The task to keep working on, and when it is done",
    ),
    (
        include_str!("../../../../skills/tap-monitor/SKILL.md"),
        "watch",
        "What to watch (a command, a build, a log) and what matters in it",
    ),
    (
        include_str!("../../../../skills/tap-orchestrate/SKILL.md"),
        "workflow",
        "The workflow: its steps, roles and what proves each step done",
    ),
];

/// The skills, parsed once.
pub(crate) fn all() -> &'static [Skill] {
    static SKILLS: OnceLock<Vec<Skill>> = OnceLock::new();
    SKILLS.get_or_init(|| {
        FILES
            .iter()
            .map(|(text, argument, argument_description)| {
                let (name, description, body) =
                    parse(text).expect("a skill file has front matter with name and description");
                Skill {
                    name,
                    description,
                    body,
                    argument,
                    argument_description,
                }
            })
            .collect()
    })
}

pub(crate) fn find(name: &str) -> Option<&'static Skill> {
    all().iter().find(|s| s.name == name)
}

impl Skill {
    /// The prompt's text: the skill, then the user's request when there is one.
    pub fn text(&self, request: Option<&str>) -> String {
        match request.map(str::trim).filter(|r| !r.is_empty()) {
            Some(r) => format!("{}\n\n## The request\n\n{r}\n", self.body.trim_end()),
            None => self.body.to_string(),
        }
    }
}

/// `skills.list`: each skill, with its state among the Copilot CLI's skills under
/// `copilot_home` (none: the gateway has no home directory, so no client's files).
pub(crate) fn list(copilot_home: Option<&std::path::Path>) -> SkillsList {
    use tap_connect::copilot::{skills as files, Layout, WORD};
    let installs = copilot_home
        .map(|h| files::items(&Layout::new(h.to_path_buf())))
        .unwrap_or_default();
    SkillsList {
        skills: all()
            .iter()
            .map(|s| SkillInfo {
                name: s.name.into(),
                description: s.description.into(),
                installed: installs
                    .iter()
                    .filter(|i| i.name == s.name)
                    .map(|i| SkillInstall {
                        client: WORD.into(),
                        path: i.path.display().to_string(),
                        state: match files::state(i) {
                            Ok(files::State::Current) => SkillInstallState::Installed,
                            Ok(files::State::Stale) => SkillInstallState::Outdated,
                            Ok(files::State::Other) => SkillInstallState::Shadowed,
                            // Unreadable counts as not there: connecting says why.
                            Ok(files::State::Missing) | Err(_) => SkillInstallState::Missing,
                        },
                    })
                    .collect(),
            })
            .collect(),
    }
}

/// `---\nname: …\ndescription: …\n---\n<body>` → (name, description, body).
fn parse(text: &'static str) -> Option<(&'static str, &'static str, &'static str)> {
    let rest = text.strip_prefix("---\n")?;
    let end = rest.find("\n---\n")?;
    let (front, body) = (&rest[..end], &rest[end + "\n---\n".len()..]);
    let field = |key: &str| {
        front
            .lines()
            .find_map(|l| l.strip_prefix(key)?.strip_prefix(':'))
            .map(str::trim)
            .filter(|v| !v.is_empty())
    };
    Some((field("name")?, field("description")?, body.trim_start()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_skill_parses_and_names_only_tools_the_gateway_has() {
        let names: Vec<&str> = all().iter().map(|s| s.name).collect();
        assert_eq!(
            names,
            ["tap-goal", "tap-loop", "tap-monitor", "tap-orchestrate"]
        );
        let tools: Vec<String> = crate::state::builtin_defs::tools()
            .iter()
            .map(|d| d.name.clone())
            .collect();
        let mentioned = regex::Regex::new(r"\btap_[a-z_]+").unwrap();
        for s in all() {
            assert!(s.description.len() > 40, "{}", s.name);
            assert!(s.body.starts_with("# "), "{}", s.name);
            for m in mentioned.find_iter(s.body) {
                assert!(
                    tools.iter().any(|t| t == m.as_str()),
                    "{} names {}, which is not a built-in tool",
                    s.name,
                    m.as_str()
                );
            }
        }
        let goal = find("tap-goal").unwrap();
        assert!(goal.body.contains("tap_verify_goal_output"));
        assert!(goal
            .text(Some(" ship it "))
            .ends_with("## The request\n\nship it\n"));
        assert_eq!(goal.text(Some("  ")), goal.body);
        assert!(parse("no front matter").is_none());
        assert!(parse("---\nname: x\n---\nbody").is_none(), "no description");
    }
}
