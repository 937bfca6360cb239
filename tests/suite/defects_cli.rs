//! Issue 11's defects seen through the binary: doctor probing as the real requests go,
//! `config init` followed by a passing `doctor`, `exec`'s stderr and its error texts.

use kimi_mock::MockOptions;

use super::doctor::against_mock;

#[tokio::test]
async fn doctor_passes_against_a_server_that_always_streams() {
    for mode in ["raw", "chat"] {
        let opts = MockOptions {
            always_stream: true,
            chunk_bytes: Some(3),
            ..MockOptions::default()
        };
        let (r, requests) = against_mock(opts, mode, "").await;
        assert_eq!(r.code, Some(0), "{mode}: {}\n{}", r.out, r.err);
        assert!(!r.out.contains('✗'), "{mode}: {}", r.out);
        // The probe asks for a stream, like the app's own requests.
        assert_eq!(requests.len(), 1, "{requests:?}");
        assert_eq!(requests[0]["stream"], true, "{mode}");
    }
    // The chat probe puts the call together from its streamed deltas.
    let (r, _) = against_mock(MockOptions::default(), "chat", "").await;
    assert!(
        r.line("✓ tool calls: ").contains("get_weather {\"city\""),
        "{}",
        r.out
    );
}
