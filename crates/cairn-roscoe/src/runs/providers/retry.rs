//! A call made of attempts: each attempt has the time limit `calls.timeoutMs`; a transient failure (429, 529, 5xx,
//! no connection) is tried again up to `calls.retries` times, after the provider's `Retry-After` when it gave one,
//! else after an exponential backoff (`calls.backoffMs`, doubled each time, at most `calls.maxBackoffMs`) of which a
//! random part is waited ("equal jitter": half the backoff plus up to the other half), so calls refused together do
//! not come back together. A `Retry-After` longer than `maxBackoffMs` is not waited out: the call fails with it.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use super::{Failure, Provider, Reply, Request};
use crate::runs::settings::CallLimits;

/// What a call came to: its reply or why it failed, the attempts made and the time it took.
pub(crate) struct Outcome {
    /// The reply, or what went wrong (the last attempt's failure).
    pub(crate) reply: Result<Reply, String>,
    /// Attempts made.
    pub(crate) attempts: u32,
    /// From the first attempt to the outcome, waits included.
    pub(crate) latency: Duration,
}

/// Calls `provider` with `request` under `limits`.
pub(crate) async fn call(provider: &dyn Provider, request: &Request, limits: &CallLimits) -> Outcome {
    let started = Instant::now();
    let mut attempts = 0;
    let reply = loop {
        attempts += 1;
        let limit = Duration::from_millis(limits.timeout_ms);
        let failure = match tokio::time::timeout(limit, provider.call(request)).await {
            Ok(Ok(reply)) => break Ok(reply),
            Err(_) => break Err(format!("no answer within {} ms (calls.timeoutMs)", limits.timeout_ms)),
            Ok(Err(Failure::Permanent(message))) => break Err(message),
            Ok(Err(Failure::Transient { message, retry_after })) => (message, retry_after),
        };
        let (message, retry_after) = failure;
        if attempts > limits.retries {
            break Err(format!("{message} (gave up after {attempts} attempts)"));
        }
        let max = Duration::from_millis(limits.max_backoff_ms);
        let wait = match retry_after {
            Some(asked) if asked > max => {
                break Err(format!(
                    "{message}; it asked to wait {} s, longer than calls.maxBackoffMs ({} ms)",
                    asked.as_secs_f64(),
                    limits.max_backoff_ms
                ));
            }
            Some(asked) => asked,
            None => backoff(limits, attempts),
        };
        tokio::time::sleep(wait).await;
    };
    Outcome { reply, attempts, latency: started.elapsed() }
}

/// The wait after failed attempt `attempt` (1-based): half of `backoffMs · 2^(attempt−1)` (capped) plus a random
/// part of the other half.
fn backoff(limits: &CallLimits, attempt: u32) -> Duration {
    let full = limits.backoff_ms.saturating_mul(1u64 << (attempt - 1).min(20)).min(limits.max_backoff_ms);
    let half = full / 2;
    Duration::from_millis(half + random() % (full - half + 1))
}

/// A random number (xorshift over a seed from the clock), enough to spread retries.
fn random() -> u64 {
    static STATE: AtomicU64 = AtomicU64::new(0);
    let mut x = STATE.load(Ordering::Relaxed);
    if x == 0 {
        x = std::time::SystemTime::now().duration_since(std::time::UNIX_EPOCH).map_or(1, |d| d.as_nanos() as u64) | 1;
    }
    x ^= x << 13;
    x ^= x >> 7;
    x ^= x << 17;
    STATE.store(x, Ordering::Relaxed);
    x
}

#[cfg(test)]
mod tests {
    use std::sync::Mutex;

    use async_trait::async_trait;

    use super::*;
    use crate::engine::Billing;

    /// Fails with the scripted failures, then answers.
    struct Scripted(Mutex<Vec<Failure>>);

    #[async_trait]
    impl Provider for Scripted {
        fn billing(&self) -> Billing {
            Billing::Metered
        }
        fn max_output_tokens(&self) -> Option<u32> {
            Some(1)
        }
        async fn call(&self, _: &Request) -> Result<Reply, Failure> {
            match self.0.lock().unwrap().pop() {
                Some(failure) => Err(failure),
                None => Ok(Reply { text: "ok".into(), ..Reply::default() }),
            }
        }
    }

    fn request() -> Request {
        Request { model: "m".into(), prompt: "p".into(), cwd: ".".into() }
    }

    fn transient(retry_after: Option<u64>) -> Failure {
        Failure::Transient { message: "busy".into(), retry_after: retry_after.map(Duration::from_millis) }
    }

    #[tokio::test]
    async fn transient_failures_are_retried_until_the_retries_run_out() {
        let limits = CallLimits { retries: 2, backoff_ms: 1, max_backoff_ms: 5, ..CallLimits::default() };
        let outcome = call(&Scripted(Mutex::new(vec![transient(None), transient(Some(1))])), &request(), &limits).await;
        assert_eq!((outcome.reply.unwrap().text, outcome.attempts), ("ok".to_owned(), 3));
        let outcome = call(&Scripted(Mutex::new(vec![transient(None); 3])), &request(), &limits).await;
        assert_eq!(outcome.reply.unwrap_err(), "busy (gave up after 3 attempts)");
        let permanent = Scripted(Mutex::new(vec![Failure::Permanent("bad key".into())]));
        let outcome = call(&permanent, &request(), &limits).await;
        assert_eq!((outcome.reply.unwrap_err(), outcome.attempts), ("bad key".to_owned(), 1));
    }

    #[tokio::test]
    async fn a_retry_after_beyond_the_longest_backoff_fails_the_call() {
        let limits = CallLimits { retries: 5, max_backoff_ms: 10, ..CallLimits::default() };
        let outcome = call(&Scripted(Mutex::new(vec![transient(Some(60_000))])), &request(), &limits).await;
        assert!(outcome.reply.unwrap_err().contains("longer than calls.maxBackoffMs"));
        assert_eq!(outcome.attempts, 1);
    }

    /// Never answers.
    struct Silent;

    #[async_trait]
    impl Provider for Silent {
        fn billing(&self) -> Billing {
            Billing::Metered
        }
        fn max_output_tokens(&self) -> Option<u32> {
            Some(1)
        }
        async fn call(&self, _: &Request) -> Result<Reply, Failure> {
            std::future::pending().await
        }
    }

    #[tokio::test]
    async fn an_attempt_past_its_time_limit_fails_the_call() {
        let limits = CallLimits { timeout_ms: 20, retries: 3, ..CallLimits::default() };
        let outcome = call(&Silent, &request(), &limits).await;
        assert_eq!(outcome.reply.unwrap_err(), "no answer within 20 ms (calls.timeoutMs)");
        assert_eq!(outcome.attempts, 1);
    }

    #[test]
    fn backoff_doubles_within_its_cap_and_keeps_at_least_half() {
        let limits = CallLimits { backoff_ms: 100, max_backoff_ms: 1_000, ..CallLimits::default() };
        for _ in 0..50 {
            let first = backoff(&limits, 1).as_millis();
            let third = backoff(&limits, 3).as_millis();
            let tenth = backoff(&limits, 10).as_millis();
            assert!((50..=100).contains(&first) && (200..=400).contains(&third) && (500..=1_000).contains(&tenth));
        }
    }
}
