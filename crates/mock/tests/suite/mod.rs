mod k3;
mod mock_server;
mod server_bugs;

/// The body of a POST of `body` to `path` on `server`, as text.
async fn post_text(server: &kimi_mock::MockServer, path: &str, body: &serde_json::Value) -> String {
    let _ = rustls::crypto::ring::default_provider().install_default();
    reqwest::Client::new()
        .post(format!("{}{path}", server.base_url()))
        .json(body)
        .send()
        .await
        .expect("sent")
        .text()
        .await
        .expect("body")
}
