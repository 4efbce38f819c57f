//! Which tools of a session run as tasks: those whose latest listing says
//! `execution.taskSupport` is `"required"`, and `"optional"` ones when the caller asks.
//! `"forbidden"` (or no word) means a plain call, whatever the caller asks.

use std::collections::HashMap;
use std::sync::Mutex;

use serde::Deserialize;

use crate::lock::lock;
use crate::tool::listed::ListedTool;

/// By the server's tool names: `true` for required, `false` for optional. Empty for most
/// servers, which costs their calls one lock.
#[derive(Default)]
pub struct TaskSupport(Mutex<HashMap<String, bool>>);

#[derive(Deserialize)]
struct Members {
    #[serde(default)]
    execution: Option<Execution>,
}

#[derive(Deserialize)]
struct Execution {
    #[serde(rename = "taskSupport", default)]
    task_support: Option<String>,
}

impl TaskSupport {
    /// Takes the word of a complete listing, in place of the previous one's.
    pub fn record(&self, tools: &[ListedTool]) {
        let supports = tools.iter().filter_map(|tool| {
            let extra = tool.extra.as_ref()?;
            extra.keys().find(|key| *key == "execution")?;
            let members: Members = serde_json::from_str(extra.json.get()).ok()?;
            let required = match members.execution?.task_support?.as_str() {
                "required" => true,
                "optional" => false,
                _ => return None,
            };
            Some((tool.name.clone(), required))
        });
        *lock(&self.0) = supports.collect();
    }

    /// Whether a call of `tool` runs as a task, the caller having `asked` for one or not.
    pub fn runs_as_task(&self, tool: &str, asked: bool) -> bool {
        let supports = lock(&self.0);
        supports
            .get(tool)
            .is_some_and(|required| *required || asked)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tool::listed::Page;

    #[test]
    fn required_always_optional_when_asked_forbidden_never() {
        let page = r#"{"tools":[
            {"name":"r","inputSchema":{},"execution":{"taskSupport":"required"}},
            {"name":"o","inputSchema":{},"execution":{"taskSupport":"optional"}},
            {"name":"f","inputSchema":{},"execution":{"taskSupport":"forbidden"}},
            {"name":"p","inputSchema":{},"title":"P"}]}"#;
        let page: Page = serde_json::from_str(page).expect("page");
        let support = TaskSupport::default();
        support.record(&page.into_parts().0);
        let runs = |tool, asked| support.runs_as_task(tool, asked);
        assert!(runs("r", false) && runs("r", true));
        assert!(!runs("o", false) && runs("o", true));
        assert!(!runs("f", true) && !runs("p", true) && !runs("unknown", true));
    }
}
