//! `<COPILOT_HOME>/extensions/tap/.provider-token` is one file for all of a user's gateways
//! (each has its own TAP_HOME): the first gateway (or the one on the default port) holds it;
//! the others neither overwrite it nor, when they stop, delete it under the holder.

use std::path::PathBuf;
use tap_testkit::*;

/// A gateway with its own TAP_HOME that shares `copilot_home`.
async fn sharing(copilot_home: PathBuf) -> TestGateway {
    TestGateway::start_with(move |c| c.copilot_home = Some(copilot_home)).await
}

fn token_file(copilot_home: &std::path::Path) -> PathBuf {
    copilot_home.join("extensions/tap/.provider-token")
}

#[tokio::test]
async fn a_second_gateway_leaves_the_first_ones_copilot_token_alone() {
    let shared = tempfile::tempdir().unwrap();
    let file = token_file(shared.path());
    let first = sharing(shared.path().to_path_buf()).await;
    let read = || tap_gateway::read_secret_file(&file).unwrap();
    assert_eq!(read(), first.token());

    let second = sharing(shared.path().to_path_buf()).await;
    assert_ne!(second.token(), first.token());
    assert_eq!(
        read(),
        first.token(),
        "the second gateway overwrote the file"
    );
    assert_eq!(second.handle.gateway().files().copilot_provider_token, None);

    second.handle.stop().await.unwrap();
    assert_eq!(read(), first.token(), "the second gateway removed the file");
    first.handle.stop().await.unwrap();
    assert!(!file.exists(), "the holder removes it when it stops");
}

#[tokio::test]
async fn a_gateway_whose_copilot_token_was_taken_over_does_not_remove_it() {
    let shared = tempfile::tempdir().unwrap();
    let file = token_file(shared.path());
    let gw = sharing(shared.path().to_path_buf()).await;
    // The gateway on the default port started later and wrote its own token.
    std::fs::write(&file, "ptk-the-default-port-gateway\n").unwrap();
    gw.handle.stop().await.unwrap();
    assert_eq!(
        tap_gateway::read_secret_file(&file).unwrap(),
        "ptk-the-default-port-gateway"
    );
}
