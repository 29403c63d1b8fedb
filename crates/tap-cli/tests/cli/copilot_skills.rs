//! `tap install copilot` / `tap uninstall copilot` / `--check` / `tap connect copilot
//! --dry-run` with the agent skills and the session-start instructions, on a throwaway
//! COPILOT_HOME: the files are the repository's `skills/` (the same the gateway serves as MCP
//! prompts), uninstall removes exactly them, and a user's own files are never overwritten nor
//! removed. That the real Copilot CLI shows them to the model: tests/copilot/skills.test.mjs.

use crate::common::{run, tap_command, CliOut};
use std::path::{Path, PathBuf};

const SKILLS: [&str; 4] = ["tap-goal", "tap-loop", "tap-monitor", "tap-orchestrate"];

async fn tap(dir: &Path, args: &[&str]) -> CliOut {
    let mut cmd = tap_command(&dir.join("tap"), &dir.join("copilot"));
    cmd.args(args);
    run(cmd).await
}

/// The repository's text of a skill.
fn source(skill: &str) -> String {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../skills");
    std::fs::read_to_string(root.join(skill).join("SKILL.md")).unwrap()
}

fn skill_file(home: &Path, skill: &str) -> PathBuf {
    home.join("skills").join(skill).join("SKILL.md")
}

/// Every file under `dir`, relative, sorted.
fn tree(dir: &Path) -> Vec<String> {
    fn walk(root: &Path, dir: &Path, out: &mut Vec<String>) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                out.push(format!("{}/", p.strip_prefix(root).unwrap().display()));
                walk(root, &p, out);
            } else {
                out.push(p.strip_prefix(root).unwrap().display().to_string());
            }
        }
    }
    let mut out = Vec::new();
    walk(dir, dir, &mut out);
    out.sort();
    out
}

#[tokio::test]
async fn copilot_install_writes_the_skills_and_instructions_and_uninstall_removes_only_them() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("copilot");
    // The user's own skill and instructions, beside where tap's go.
    let mine = skill_file(&home, "my-review");
    std::fs::create_dir_all(mine.parent().unwrap()).unwrap();
    std::fs::write(
        &mine,
        "---\nname: my-review\ndescription: mine\n---\nmine\n",
    )
    .unwrap();
    std::fs::create_dir_all(home.join("instructions")).unwrap();
    std::fs::write(
        home.join("instructions/style.instructions.md"),
        "Be terse.\n",
    )
    .unwrap();
    std::fs::write(
        home.join("copilot-instructions.md"),
        "Use British spelling.\n",
    )
    .unwrap();
    let before = tree(&home);

    let out = tap(dir.path(), &["install", "copilot"]).await;
    assert_eq!(out.code(), Some(0), "{out:?}");
    for skill in SKILLS {
        let text = std::fs::read_to_string(skill_file(&home, skill)).unwrap();
        let src = source(skill);
        // The front matter first (the CLI reads it only there), then tap's marker line, then
        // the rest of the repository's file unchanged.
        let front = &src[..src[4..].find("\n---\n").unwrap() + 9];
        assert!(text.starts_with(front), "{skill}: {text}");
        let rest = &text[front.len()..];
        let (marker, body) = rest.split_once('\n').unwrap();
        assert!(
            marker.starts_with("<!-- tap-gateway: installed by `tap install copilot`"),
            "{marker}"
        );
        assert_eq!(format!("{front}{body}"), src, "{skill}");
        assert!(
            out.stdout.contains(&format!(
                "Installed the {skill} skill at {}.",
                skill_file(&home, skill).display()
            )),
            "{}",
            out.stdout
        );
    }
    let instructions = home.join("instructions/tap.instructions.md");
    let text = std::fs::read_to_string(&instructions).unwrap();
    assert!(text.contains("`tap_query_records`"), "{text}");
    assert!(text.contains("`tap-monitor`"), "{text}");

    let again = tap(dir.path(), &["install", "copilot"]).await;
    assert_eq!(again.code(), Some(0), "{again:?}");
    assert!(
        again
            .stdout
            .contains("Tap's skills and session-start instructions are already installed."),
        "{}",
        again.stdout
    );

    let out = tap(dir.path(), &["uninstall", "copilot"]).await;
    assert_eq!(out.code(), Some(0), "{out:?}");
    assert!(
        out.stdout.contains(&format!(
            "Removed {} (the tap-loop skill).",
            skill_file(&home, "tap-loop").display()
        )),
        "{}",
        out.stdout
    );
    // Exactly the user's files again (settings.json: the flag install turned on, now off;
    // `extensions/`: the extension's parent directory, which its uninstall leaves).
    let after: Vec<_> = tree(&home)
        .into_iter()
        .filter(|f| f != "settings.json" && f != "extensions/")
        .collect();
    assert_eq!(after, before);
    assert_eq!(
        std::fs::read_to_string(&mine).unwrap(),
        "---\nname: my-review\ndescription: mine\n---\nmine\n"
    );
}

#[tokio::test]
async fn copilot_a_users_file_at_a_skills_path_refuses_install_until_forced_and_stays_on_uninstall()
{
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("copilot");
    let mine = skill_file(&home, "tap-monitor");
    std::fs::create_dir_all(mine.parent().unwrap()).unwrap();
    let my_text = "---\nname: tap-monitor\ndescription: my own monitor\n---\nwatch it\n";
    std::fs::write(&mine, my_text).unwrap();

    let dry = tap(dir.path(), &["connect", "copilot", "--dry-run"]).await;
    assert_eq!(dry.code(), Some(0), "{dry:?}");
    assert!(
        dry.stdout
            .contains(&format!("{} would not be replaced", mine.display())),
        "{}",
        dry.stdout
    );
    assert!(
        dry.stdout.contains(&format!(
            "{} would be installed.",
            skill_file(&home, "tap-goal").display()
        )),
        "{}",
        dry.stdout
    );

    let out = tap(dir.path(), &["install", "copilot"]).await;
    assert_eq!(out.code(), Some(1), "{out:?}");
    let refused: serde_json::Value = serde_json::from_str(out.stdout.trim()).unwrap();
    assert_eq!(refused["errorCode"], "CONFLICT");
    assert!(
        refused["error"].as_str().unwrap().starts_with(&format!(
            "{} exists and was not written by tap; it was left alone",
            mine.display()
        )),
        "{refused}"
    );
    assert_eq!(
        tree(&home),
        vec![
            "skills/",
            "skills/tap-monitor/",
            "skills/tap-monitor/SKILL.md"
        ],
        "nothing written"
    );

    let forced = tap(dir.path(), &["install", "copilot", "--force"]).await;
    assert_eq!(forced.code(), Some(0), "{forced:?}");
    let backup = std::fs::read_dir(mine.parent().unwrap())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .find(|p| p != &mine)
        .expect("a backup beside it");
    assert_eq!(std::fs::read_to_string(&backup).unwrap(), my_text);
    assert!(
        forced.stdout.contains("Moved the existing"),
        "{}",
        forced.stdout
    );

    let out = tap(dir.path(), &["uninstall", "copilot"]).await;
    assert_eq!(out.code(), Some(0), "{out:?}");
    assert!(!mine.exists(), "tap's copy removed");
    assert_eq!(
        std::fs::read_to_string(&backup).unwrap(),
        my_text,
        "the user's kept"
    );

    // The user's file back in place: uninstall leaves it and says so.
    std::fs::write(&mine, my_text).unwrap();
    let out = tap(dir.path(), &["uninstall", "copilot"]).await;
    assert_eq!(out.code(), Some(0), "{out:?}");
    assert!(
        out.stdout.contains(&format!(
            "Left {} alone: tap did not write it.",
            mine.display()
        )),
        "{}",
        out.stdout
    );
    assert_eq!(std::fs::read_to_string(&mine).unwrap(), my_text);
}

#[tokio::test]
async fn copilot_check_reports_each_skill_and_the_instructions() {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("copilot");
    let out = tap(dir.path(), &["install", "copilot"]).await;
    assert_eq!(out.code(), Some(0), "{out:?}");
    let out = tap(dir.path(), &["install", "copilot", "--check"]).await;
    for skill in SKILLS {
        let want = format!("ok    skill {skill} {}", skill_file(&home, skill).display());
        assert!(
            out.stdout.lines().any(|l| l == want),
            "{want}\n{}",
            out.stdout
        );
    }
    let instructions = home.join("instructions/tap.instructions.md");
    let want = format!(
        "ok    session-start instructions {}",
        instructions.display()
    );
    assert!(out.stdout.lines().any(|l| l == want), "{}", out.stdout);

    // One removed, one edited by hand (the marker stays), one replaced by the user's.
    std::fs::remove_file(skill_file(&home, "tap-goal")).unwrap();
    let loop_file = skill_file(&home, "tap-loop");
    let edited = std::fs::read_to_string(&loop_file).unwrap() + "\nmore\n";
    std::fs::write(&loop_file, edited).unwrap();
    std::fs::write(&instructions, "my own\n").unwrap();
    let out = tap(dir.path(), &["install", "copilot", "--check"]).await;
    assert_eq!(out.code(), Some(1), "{out:?}");
    for want in [
        format!(
            "FAIL  no skill tap-goal at {}: run `tap install copilot`",
            skill_file(&home, "tap-goal").display()
        ),
        format!(
            "FAIL  skill tap-loop {} is another tap's or edited: run `tap install copilot` to replace it",
            loop_file.display()
        ),
        format!(
            "FAIL  {} was not written by tap, so the agent gets it instead of Tap's session-start instructions: `tap install copilot --force` replaces it (keeping a backup)",
            instructions.display()
        ),
    ] {
        assert!(out.stdout.lines().any(|l| l == want), "{want}\n{}", out.stdout);
    }
    // `tap connect`'s status (and the panel's) calls the Copilot CLI drifted, naming the file.
    let r = tap_connect::copilot::report(&tap_connect::Dirs {
        home: dir.path().into(),
        config: dir.path().join("config"),
        codex: dir.path().join("codex"),
        copilot: home.clone(),
        cwd: dir.path().into(),
    });
    assert_eq!(r.state, tap_connect::State::Drifted, "{r:?}");
    assert!(
        r.detail.as_deref().unwrap_or("").contains("tap-goal"),
        "{r:?}"
    );
}
