//! `tap … | head`: when the reader of tap's output goes away, tap stops quietly, as other
//! command-line tools do, instead of panicking.
//!
//! Rust ignores SIGPIPE, so a write to a closed pipe fails with `BrokenPipe`, and `println!`
//! panics on that with "failed printing to stdout". Restoring SIGPIPE's default would make
//! the same failure kill `tap gateway` or `tap mcp` whenever a socket peer goes away, so
//! instead that one panic ends the process with status 0: the reader asked for no more.

/// Installs the hook; any other panic is reported as before.
pub fn install() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        let message = info
            .payload()
            .downcast_ref::<String>()
            .map(String::as_str)
            .or_else(|| info.payload().downcast_ref::<&str>().copied())
            .unwrap_or("");
        if is_closed_stdout(message) {
            std::process::exit(0);
        }
        previous(info);
    }));
}

/// Whether a panic message is `println!`'s on a closed pipe.
fn is_closed_stdout(message: &str) -> bool {
    message.starts_with("failed printing to stdout") && message.contains("Broken pipe")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_broken_pipe_on_stdout_is_quiet() {
        assert!(is_closed_stdout(
            "failed printing to stdout: Broken pipe (os error 32)"
        ));
        assert!(!is_closed_stdout(
            "failed printing to stdout: No space left on device (os error 28)"
        ));
        assert!(!is_closed_stdout(
            "called `Option::unwrap()` on a `None` value"
        ));
    }
}
