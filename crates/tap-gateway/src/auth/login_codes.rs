//! One-time panel login codes (`ui.login`, `POST /api/login`; see `server/login.rs`):
//! issued to a control client, redeemed once by the panel page.

use super::tokens;
use std::collections::VecDeque;
use std::sync::Mutex;
use tap_protocol::limits::{MAX_UI_LOGIN_CODES, UI_LOGIN_CODE_TTL};
use tokio::time::Instant;

/// The outstanding codes with their expiry, oldest first.
#[derive(Default)]
pub(crate) struct LoginCodes {
    codes: Mutex<VecDeque<(String, Instant)>>,
}

impl LoginCodes {
    /// A fresh code: 256 random bits, base64url; valid once, until the returned instant.
    pub fn issue(&self) -> (String, Instant) {
        let code = tokens::generate("");
        let now = Instant::now();
        let expires = now + UI_LOGIN_CODE_TTL;
        let mut codes = self.codes.lock().unwrap();
        codes.retain(|(_, exp)| *exp > now);
        while codes.len() >= MAX_UI_LOGIN_CODES {
            codes.pop_front();
        }
        codes.push_back((code.clone(), expires));
        (code, expires)
    }

    /// Consumes `presented` if it is an outstanding, unexpired code. Every outstanding
    /// code is compared, each in constant time, so the time taken says nothing about
    /// which one (or how much of one) matched.
    pub fn redeem(&self, presented: &str) -> bool {
        let now = Instant::now();
        let mut codes = self.codes.lock().unwrap();
        codes.retain(|(_, exp)| *exp > now);
        let mut found = None;
        for (i, (code, _)) in codes.iter().enumerate() {
            if tokens::matches(presented, code) {
                found = Some(i);
            }
        }
        match found {
            Some(i) => {
                codes.remove(i);
                true
            }
            None => false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test(start_paused = true)]
    async fn a_code_works_once_and_only_until_it_expires() {
        let codes = LoginCodes::default();
        let (a, _) = codes.issue();
        let (b, _) = codes.issue();
        assert_eq!(a.len(), 43);
        assert_ne!(a, b);
        assert!(!codes.redeem(&a[..42]));
        assert!(!codes.redeem(""));
        assert!(codes.redeem(&a));
        assert!(!codes.redeem(&a), "second use");
        tokio::time::advance(UI_LOGIN_CODE_TTL).await;
        assert!(!codes.redeem(&b), "expired");
    }

    #[tokio::test]
    async fn issuing_past_the_cap_forgets_the_oldest() {
        let codes = LoginCodes::default();
        let first = codes.issue().0;
        let rest: Vec<String> = (0..MAX_UI_LOGIN_CODES).map(|_| codes.issue().0).collect();
        assert!(!codes.redeem(&first));
        for c in rest {
            assert!(codes.redeem(&c));
        }
    }
}
