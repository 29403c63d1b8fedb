//! Text the gateway shows that may quote what a peer sent.

/// `text` cut to `max` characters, marked with `…` when it was longer.
pub(crate) fn cut(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &text[..i]),
        None => text.to_string(),
    }
}
