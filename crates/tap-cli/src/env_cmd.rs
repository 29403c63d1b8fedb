//! `tap env`: what a provider started by hand needs to reach the running gateway, as shell
//! lines for `eval "$(tap env)"`.

use crate::output::{client_fail, connect};
use std::path::Path;
use std::process::ExitCode;

/// `tap env`: `export TAP_GATEWAY_URL=…` and `export TAP_PROVIDER_TOKEN_FILE=…`.
pub async fn run(home: &Path) -> ExitCode {
    // Connecting proves the gateway runs (a `gateway.json` left by a killed one would not).
    let client = match connect(home, "tap-env").await {
        Ok(c) => c,
        Err(code) => return code,
    };
    let status = match client.status().await {
        Ok(s) => s,
        Err(e) => return client_fail(e),
    };
    let token_file = std::path::absolute(home.join("provider-token"))
        .unwrap_or_else(|_| home.join("provider-token"));
    println!("export TAP_GATEWAY_URL={}", quoted(&status.address));
    println!(
        "export TAP_PROVIDER_TOKEN_FILE={}",
        quoted(&token_file.display().to_string())
    );
    ExitCode::SUCCESS
}

/// `s` as one POSIX shell word: single quotes, with `'` written as `'\''`.
fn quoted(s: &str) -> String {
    format!("'{}'", s.replace('\'', r"'\''"))
}

#[cfg(test)]
mod tests {
    #[test]
    fn quotes_survive_the_shell() {
        assert_eq!(super::quoted("/a b/it's"), r"'/a b/it'\''s'");
    }
}
