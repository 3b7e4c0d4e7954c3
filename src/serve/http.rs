//! Streamable HTTP at `/mcp`. Loopback by default; any other address needs a bearer token
//! (compared in constant time). A browser page cannot reach the server through a name it
//! rebinds to loopback: a request whose `Origin` is not a loopback origin (or one allowed
//! by `--allow-origin`) gets 403.

use super::{Handler, ServeOptions};
use crate::error::{Error, Result};
use axum::extract::{Request, State};
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use rmcp::transport::streamable_http_server::session::local::LocalSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use std::net::SocketAddr;
use std::sync::Arc;
use subtle::ConstantTimeEq;

struct Guard {
    token: Option<String>,
    allowed_origins: Vec<String>,
}

/// A fresh random token: 32 bytes as hex.
fn new_token() -> Result<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| Error::Other {
        message: format!("cannot draw a random token: {e}"),
    })?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

fn is_loopback_origin(origin: &str) -> bool {
    let Some(rest) = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
    else {
        return false;
    };
    let host = if let Some(v6) = rest.strip_prefix('[') {
        v6.split(']').next().unwrap_or("")
    } else {
        rest.split(':').next().unwrap_or("")
    };
    matches!(host, "localhost" | "127.0.0.1" | "::1")
}

async fn guard(State(g): State<Arc<Guard>>, request: Request, next: Next) -> Response {
    if let Some(origin) = request.headers().get(header::ORIGIN) {
        let origin = origin.to_str().unwrap_or("");
        let allowed = is_loopback_origin(origin) || g.allowed_origins.iter().any(|o| o == origin);
        if !allowed {
            return (
                StatusCode::FORBIDDEN,
                format!("origin {origin:?} is not allowed (pass --allow-origin to allow it)"),
            )
                .into_response();
        }
    }
    if let Some(token) = &g.token {
        let sent = request
            .headers()
            .get(header::AUTHORIZATION)
            .and_then(|v| v.to_str().ok())
            // The scheme is case-insensitive (RFC 9110, section 11.1).
            .and_then(|v| v.split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map_or("", |(_, t)| t.trim_start());
        if !bool::from(sent.as_bytes().ct_eq(token.as_bytes())) {
            let mut r =
                (StatusCode::UNAUTHORIZED, "a valid bearer token is required").into_response();
            r.headers_mut()
                .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
            return r;
        }
    }
    next.run(request).await
}

pub(super) async fn run(handler: Handler, addr: SocketAddr, options: &ServeOptions) -> Result<()> {
    let loopback = addr.ip().is_loopback();
    let token = match (&options.token, loopback) {
        (Some(t), _) => Some(t.clone()),
        (None, true) => None,
        (None, false) => {
            let t = new_token()?;
            eprintln!(
                "indexer serve: {addr} is not a loopback address, so clients must send\n  Authorization: Bearer {t}\n(this token is printed once; pass --token to choose one)"
            );
            Some(t)
        }
    };
    let mut config = StreamableHttpServerConfig::default()
        .with_max_request_body_bytes(options.max_request_bytes);
    if !loopback {
        // Clients name this machine however they reach it; the token is what admits them.
        config = config.disable_allowed_hosts();
    }
    let service: StreamableHttpService<Handler, LocalSessionManager> = StreamableHttpService::new(
        move || Ok(handler.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    );
    let guard_state = Arc::new(Guard {
        token,
        allowed_origins: options.allowed_origins.clone(),
    });
    let router = axum::Router::new()
        .nest_service("/mcp", service)
        .layer(axum::middleware::from_fn_with_state(guard_state, guard));
    let listener = tokio::net::TcpListener::bind(addr)
        .await
        .map_err(|e| Error::invalid(format!("cannot listen on {addr}: {e}")))?;
    let bound = listener.local_addr().unwrap_or(addr);
    eprintln!("indexer serve: listening on http://{bound}/mcp");
    // Answers go out as several writes (event-stream framing): without TCP_NODELAY each
    // small answer waited for the client's delayed ACK (a 40 ms floor measured on Linux).
    let listener = axum::serve::ListenerExt::tap_io(listener, |tcp| {
        let _ = tcp.set_nodelay(true);
    });
    axum::serve(listener, router)
        .with_graceful_shutdown(async {
            let _ = tokio::signal::ctrl_c().await;
        })
        .await
        .map_err(|e| Error::Other {
            message: format!("the HTTP server stopped: {e}"),
        })?;
    Ok(())
}
