//! Signing in goes back only to a page of this server: a `next` that a browser would read as another site
//! (`//host`, `/\host`, a tab or newline after the first `/`, which browsers drop, `https://host`) goes to `/`, on
//! the sign-in page's form and in the redirect after signing in.

use crate::support::{Browser, start, token};

#[tokio::test]
async fn next_never_leads_off_the_server() {
    let env = start().await;
    let bearer = token(&env);
    let off_site = ["//evil.example", "/\\evil.example", "/\t/evil.example", "/\n/evil.example", "https://evil.example/",
        "/work\r\nLocation: //evil.example", "evil.example", " /\t/evil.example"];
    for next in off_site {
        let mut browser = Browser::default();
        let query: String = next.bytes().map(|b| format!("%{b:02X}")).collect();
        let (status, page) = browser.get(&env, &format!("/signin?next={query}")).await;
        assert_eq!(status, 200, "{next:?}: {page}");
        assert!(page.contains(r#"name="next" value="/""#), "the form goes back to / for {next:?}: {page}");
        let signed = browser.post_answer(&env, "/signin", &[("token", &bearer), ("next", next)]).await;
        assert_eq!(signed.status(), 303, "{next:?}");
        assert_eq!(signed.headers()["location"], "/", "{next:?}");
    }
    let mut browser = Browser::default();
    browser.get(&env, "/signin?next=/work%3Fx%3D1").await;
    let signed = browser.post_answer(&env, "/signin", &[("token", &bearer), ("next", "/work?x=1")]).await;
    assert_eq!(signed.headers()["location"], "/work?x=1", "a page of this server is kept");
    // An escaped tab is a path of this server's (browsers drop only raw tabs and newlines).
    let mut browser = Browser::default();
    browser.get(&env, "/signin").await;
    let signed = browser.post_answer(&env, "/signin", &[("token", &bearer), ("next", "/%09/evil.example")]).await;
    assert_eq!(signed.headers()["location"], "/%09/evil.example");
}
