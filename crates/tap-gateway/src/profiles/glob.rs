//! Tool-name globs as users write them in profiles: `*` any run of characters, `?` one
//! character, everything else literal (tool names hold no other special characters). Matched
//! without backtracking blow-up: the classic two-pointer walk, linear in practice and at
//! worst name length × pattern length (both bounded).

/// Whether `name` matches `pattern`.
pub fn matches(pattern: &str, name: &str) -> bool {
    let (p, n): (Vec<char>, Vec<char>) = (pattern.chars().collect(), name.chars().collect());
    let (mut pi, mut ni) = (0, 0);
    // Where the last `*` was, and the name position it was tried against.
    let mut star: Option<(usize, usize)> = None;
    while ni < n.len() {
        match p.get(pi) {
            Some('*') => {
                star = Some((pi, ni));
                pi += 1;
            }
            Some(c) if *c == '?' || *c == n[ni] => {
                pi += 1;
                ni += 1;
            }
            _ => match star {
                // Let the last `*` take one more character and try again.
                Some((sp, sn)) => {
                    pi = sp + 1;
                    ni = sn + 1;
                    star = Some((sp, sn + 1));
                }
                None => return false,
            },
        }
    }
    p[pi..].iter().all(|c| *c == '*')
}

#[cfg(test)]
mod tests {
    use super::matches;

    #[test]
    fn stars_questions_and_literals() {
        assert!(matches("github__*", "github__create_issue"));
        assert!(matches("*", ""));
        assert!(matches("*__delete_*", "gh__delete_repo"));
        assert!(matches("tap_?tream*", "tap_stream_history"));
        assert!(!matches("github__*", "gitlab__x"));
        assert!(!matches("echo", "echo2"));
        assert!(matches("a*b*c", "aXbYbZc"));
        assert!(!matches("a*b*c", "aXbYbZ"));
        // A pattern of many stars against a long near-miss stays a bounded walk.
        let long = "a".repeat(200);
        assert!(!matches(&"*a".repeat(50), &format!("{long}b")));
        assert!(matches(&"*a".repeat(50), &long));
    }
}
