//! The gateway: a store view served as one MCP server, to any downstream client in
//! either era, over streamable HTTP or stdio. rmcp's server side does the protocol (its
//! handler trait, its streamable HTTP service with both eras' session rules); `View`
//! maps each downstream request to the view's, with the downstream's cancel and
//! progress wired to it; `http` is the listener and its front door.

mod changes;
mod completed;
mod door;
mod following;
mod http;
mod logs;
mod meta;
mod names;
mod oauth;
mod offers;
mod parked;
mod questions;
mod quick_call;
mod relay;
mod routes;
mod shared;
mod stdio;
mod subscriptions;
mod tasks;
mod tools;
mod view;

pub use self::door::{Door, DoorError};
pub use self::http::{Listening, serve_http};
pub use self::oauth::OAuthOptions;
pub use self::shared::ViewOptions;
pub use self::stdio::serve_stdio;
pub use self::view::View;
