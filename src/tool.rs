//! The tool domain, whoever serves it: a tool as its server lists it (`listed`), the
//! names each listing gives its tools (`names`), a call's result as the host sees it
//! (`result`), and a tool's output schema (`output_schema`). Sessions list and call tools
//! with these; the store, the inventory and the gateway show them.

pub mod listed;
pub mod names;
pub mod output_schema;
pub mod result;
