use super::*;

fn home() -> tempfile::TempDir {
    tempfile::tempdir().unwrap()
}

#[test]
fn a_working_keyring_holds_the_token_and_nothing_is_written_to_disk() {
    let dir = home();
    let backend = MemoryBackend::new();
    let token = generate_token("ctk-");
    let placed = place_control_token(&backend, dir.path(), &token, true);
    assert_eq!(placed, Placement::Keyring);
    assert_eq!(placed.store_label(), "keyring");
    assert_eq!(placed.notice(dir.path()), None);
    assert_eq!(
        backend.stored(&control_token_account(dir.path())),
        Some(token.clone())
    );
    assert_eq!(
        read_control_token(&backend, dir.path(), Some("keyring")).unwrap(),
        Some(token)
    );
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
}

#[test]
fn a_keyring_that_refuses_the_token_falls_back_to_the_file_with_the_reason() {
    let dir = home();
    let backend = MemoryBackend::refusing("Couldn't access platform storage: locked");
    let placed = place_control_token(&backend, dir.path(), "ctk-x", true);
    assert_eq!(
        placed,
        Placement::File {
            reason: "Couldn't access platform storage: locked".into()
        }
    );
    assert_eq!(placed.store_label(), "file");
    let notice = placed.notice(dir.path()).unwrap();
    assert!(
        notice.contains("Couldn't access platform storage: locked"),
        "{notice}"
    );
    assert!(
        notice.contains(&dir.path().join("control-token").display().to_string()),
        "{notice}"
    );
    assert!(notice.contains("0600"), "{notice}");
}

#[test]
fn a_keyring_that_answers_something_else_is_not_trusted_and_is_cleaned_up() {
    let dir = home();
    let backend = MemoryBackend::answering("ctk-other");
    let placed = place_control_token(&backend, dir.path(), "ctk-mine", true);
    assert_eq!(
        placed,
        Placement::File {
            reason: "the keyring did not return the token it was given".into()
        }
    );
    assert_eq!(backend.stored(&control_token_account(dir.path())), None);
}

#[test]
fn tap_keyring_off_skips_the_keyring() {
    let dir = home();
    let backend = MemoryBackend::new();
    let placed = place_control_token(&backend, dir.path(), "ctk-x", false);
    assert_eq!(
        placed,
        Placement::File {
            reason: "TAP_KEYRING=off".into()
        }
    );
    assert_eq!(backend.stored(&control_token_account(dir.path())), None);
}

#[test]
fn the_file_store_reads_control_token_trimmed_and_none_when_absent() {
    let dir = home();
    let backend = MemoryBackend::new();
    assert_eq!(
        read_control_token(&backend, dir.path(), Some("file")).unwrap(),
        None
    );
    std::fs::write(dir.path().join("control-token"), "ctk-abc\n").unwrap();
    assert_eq!(
        read_control_token(&backend, dir.path(), Some("file")).unwrap(),
        Some("ctk-abc".into())
    );
    // A gateway.json from before the field existed means the file.
    assert_eq!(
        read_control_token(&backend, dir.path(), None).unwrap(),
        Some("ctk-abc".into())
    );
}

#[test]
fn an_unknown_store_is_an_error_naming_it() {
    let dir = home();
    let err = read_control_token(&MemoryBackend::new(), dir.path(), Some("vault")).unwrap_err();
    assert_eq!(
        err.to_string(),
        "unknown controlTokenStore 'vault' (expected 'keyring' or 'file')"
    );
}

#[test]
fn accounts_differ_per_home_and_forget_removes_only_that_one() {
    let (a, b) = (home(), home());
    assert_ne!(
        control_token_account(a.path()),
        control_token_account(b.path())
    );
    assert!(control_token_account(a.path()).starts_with("control-token:/"));
    let backend = MemoryBackend::new();
    assert_eq!(
        place_control_token(&backend, a.path(), "ctk-a", true),
        Placement::Keyring
    );
    assert_eq!(
        place_control_token(&backend, b.path(), "ctk-b", true),
        Placement::Keyring
    );
    forget_control_token(&backend, a.path()).unwrap();
    assert_eq!(backend.stored(&control_token_account(a.path())), None);
    assert_eq!(
        backend.stored(&control_token_account(b.path())),
        Some("ctk-b".into())
    );
    // Forgetting twice is fine.
    forget_control_token(&backend, a.path()).unwrap();
}

#[test]
fn generated_tokens_carry_256_random_bits() {
    let a = generate_token("ctk-");
    let b = generate_token("ctk-");
    assert!(a.starts_with("ctk-"));
    assert_eq!(a.len(), 4 + 43);
    assert!(a[4..]
        .bytes()
        .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'_'));
    assert_ne!(a, b);
}
