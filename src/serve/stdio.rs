//! The gateway over stdio: one view, one downstream client, on this process's stdin and
//! stdout, in whichever era the client opens.

use std::io;

use rmcp::ServiceExt;

use super::view::View;

/// Serves `view` on stdin and stdout until the client closes stdin or the gateway stops.
pub async fn serve_stdio(view: View) -> io::Result<()> {
    let closing = view.shared.closing.clone();
    let transport = (tokio::io::stdin(), tokio::io::stdout());
    let running = view
        .session()
        .serve_with_ct(transport, closing.child_token())
        .await
        .map_err(io::Error::other)?;
    let _ = running.waiting().await;
    Ok(())
}
