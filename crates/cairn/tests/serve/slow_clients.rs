//! Slow clients against `cairn serve`: connections that trickle their headers or stall in their body are closed by the
//! server within its time limits, and meanwhile everyone else is answered, including over a long-lived stream.

use rmcp::ServiceExt;
use rmcp::transport::StreamableHttpClientTransport;

use crate::slow_connections::{Slow, all_closed_by_the_server};
use crate::support::fresh_serve;

#[tokio::test(flavor = "multi_thread")]
async fn slow_connections_are_closed_while_others_are_served() {
    let fresh = fresh_serve().await;
    let served = &fresh.served;
    let host = served.base.strip_prefix("http://").unwrap().to_owned();

    let mut slow = Vec::new();
    for _ in 0..20 {
        slow.push(Slow::trickling_headers(&host, "/roscoe/mcp").await);
        slow.push(Slow::stalling_body(&host, "/roscoe/mcp").await);
    }
    // Everyone else is served meanwhile, over a client whose session outlives the slow connections.
    let client = ().serve(StreamableHttpClientTransport::from_uri(served.url("/roscoe/mcp"))).await.unwrap();
    assert!(!client.list_all_tools().await.unwrap().is_empty());
    assert_eq!(reqwest::get(served.url("/healthz")).await.unwrap().status(), 200);

    all_closed_by_the_server(slow).await;
    assert!(!client.list_all_tools().await.unwrap().is_empty(), "the client is still served");
    let _ = client.cancel().await;
}
