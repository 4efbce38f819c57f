//! The tool domain, whoever serves it: a tool as its server lists it (`listed`), the
//! names each listing gives its tools (`names`), a call's result as the host sees it
//! (`result`, its structured output printed as `JSON.stringify` prints it: `js_json`),
//! a tool's output schema (`output_schema`) and the check of a result
//! against it (`output_check`), and the MCP Apps rule of who may see a tool
//! (`visibility`). Sessions list and call tools with these; the store, the inventory
//! and the gateway show them.

pub mod js_json;
pub mod listed;
pub mod names;
pub mod output_check;
pub mod output_schema;
pub mod result;
pub mod visibility;
