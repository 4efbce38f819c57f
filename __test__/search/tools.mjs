// The tool catalog the search quality is measured on: tools as well-known MCP servers list
// them (filesystem, git, GitHub, Slack, databases, browsers, maps, the reference
// "everything" server, this suite's own fixture server...), written compactly, plus
// generated services whose resources and verbs overlap theirs on purpose (files, issues,
// messages, events, customers), so that a query must find its tool among look-alikes.
// `catalog(n)` returns at least `n` tools; `QUERIES` pairs a request in a user's words
// with the tool it means.
import { defaultTools } from "../fixtures/catalog.mjs"

const s = (description, type = "string") => ({ type, description })

/** server → [tool, description, { parameter: description }] */
const KNOWN = {
  filesystem: [
    ["read_file", "Read the complete contents of a file from the file system", { path: "Path of the file" }],
    ["read_multiple_files", "Read the contents of several files at once", { paths: "Paths of the files" }],
    ["write_file", "Create a new file or overwrite an existing file with new content", { path: "", content: "" }],
    ["edit_file", "Make line-based edits to a text file, returning a git-style diff", { path: "", edits: "" }],
    ["create_directory", "Create a new directory, or make sure it exists", { path: "" }],
    ["list_directory", "Get a detailed listing of all files and directories in a path", { path: "" }],
    ["directory_tree", "Get a recursive tree view of files and directories as JSON", { path: "" }],
    ["move_file", "Move or rename files and directories", { source: "", destination: "" }],
    ["search_files", "Recursively search for files and directories matching a pattern", { path: "", pattern: "" }],
    ["get_file_info", "Retrieve metadata about a file: size, creation time, modified time, permissions", { path: "" }],
  ],
  git: [
    ["git_status", "Shows the working tree status", { repo_path: "" }],
    ["git_diff_unstaged", "Shows changes in the working directory that are not yet staged", { repo_path: "" }],
    ["git_diff_staged", "Shows changes that are staged for commit", { repo_path: "" }],
    ["git_commit", "Records changes to the repository", { repo_path: "", message: "Commit message" }],
    ["git_add", "Adds file contents to the staging area", { repo_path: "", files: "" }],
    ["git_reset", "Unstages all staged changes", { repo_path: "" }],
    ["git_log", "Shows the commit logs", { repo_path: "", max_count: "" }],
    ["git_create_branch", "Creates a new branch from an optional base branch", { repo_path: "", branch_name: "" }],
    ["git_checkout", "Switches branches", { repo_path: "", branch_name: "" }],
    ["git_show", "Shows the contents of a commit", { repo_path: "", revision: "" }],
  ],
  github: [
    ["create_issue", "Create a new issue in a GitHub repository", { owner: "", repo: "", title: "", body: "" }],
    ["list_issues", "List issues in a GitHub repository with filtering options", { owner: "", repo: "", state: "" }],
    ["update_issue", "Update an existing issue in a GitHub repository", { owner: "", repo: "", issue_number: "" }],
    ["add_issue_comment", "Add a comment to an existing issue", { owner: "", repo: "", issue_number: "", body: "" }],
    [
      "create_pull_request",
      "Create a new pull request in a GitHub repository",
      { owner: "", repo: "", head: "", base: "" },
    ],
    ["merge_pull_request", "Merge a pull request", { owner: "", repo: "", pull_number: "" }],
    [
      "get_pull_request_files",
      "Get the list of files changed in a pull request",
      { owner: "", repo: "", pull_number: "" },
    ],
    [
      "create_pull_request_review",
      "Create a review on a pull request",
      { owner: "", repo: "", pull_number: "", event: "" },
    ],
    ["search_repositories", "Search for GitHub repositories", { query: "" }],
    ["create_repository", "Create a new GitHub repository in your account", { name: "", private: "" }],
    [
      "get_file_contents",
      "Get the contents of a file or directory from a GitHub repository",
      { owner: "", repo: "", path: "" },
    ],
    [
      "push_files",
      "Push multiple files to a GitHub repository in a single commit",
      { owner: "", repo: "", branch: "", files: "" },
    ],
    ["fork_repository", "Fork a GitHub repository to your account or an organization", { owner: "", repo: "" }],
    ["list_commits", "Get the list of commits of a branch in a GitHub repository", { owner: "", repo: "", sha: "" }],
    ["search_code", "Search for code across GitHub repositories", { q: "" }],
    ["search_users", "Search for users on GitHub", { q: "" }],
  ],
  slack: [
    ["slack_list_channels", "List public channels in the workspace", { limit: "" }],
    ["slack_post_message", "Post a new message to a Slack channel", { channel_id: "", text: "" }],
    [
      "slack_reply_to_thread",
      "Reply to a specific message thread in Slack",
      { channel_id: "", thread_ts: "", text: "" },
    ],
    ["slack_add_reaction", "Add an emoji reaction to a message", { channel_id: "", timestamp: "", reaction: "" }],
    ["slack_get_channel_history", "Get recent messages from a channel", { channel_id: "" }],
    ["slack_get_users", "Get a list of all users in the workspace with their basic profile information", {}],
    ["slack_get_user_profile", "Get detailed profile information for a specific user", { user_id: "" }],
  ],
  postgres: [["query", "Run a read-only SQL query against the PostgreSQL database", { sql: "" }]],
  sqlite: [
    ["read_query", "Execute a SELECT query on the SQLite database", { query: "" }],
    ["write_query", "Execute an INSERT, UPDATE, or DELETE query on the SQLite database", { query: "" }],
    ["create_table", "Create a new table in the SQLite database", { query: "" }],
    ["list_tables", "List all tables in the SQLite database", {}],
    ["describe_table", "Get the schema information for a specific table", { table_name: "" }],
  ],
  memory: [
    ["create_entities", "Create multiple new entities in the knowledge graph", { entities: "" }],
    ["create_relations", "Create relations between entities in the knowledge graph", { relations: "" }],
    ["add_observations", "Add new observations to existing entities in the knowledge graph", { observations: "" }],
    ["delete_entities", "Delete entities and their relations from the knowledge graph", { entityNames: "" }],
    ["read_graph", "Read the entire knowledge graph", {}],
    ["search_nodes", "Search for nodes in the knowledge graph based on a query", { query: "" }],
  ],
  puppeteer: [
    ["puppeteer_navigate", "Navigate the browser to a URL", { url: "" }],
    ["puppeteer_screenshot", "Take a screenshot of the current page or a specific element", { name: "", selector: "" }],
    ["puppeteer_click", "Click an element on the page", { selector: "" }],
    ["puppeteer_fill", "Fill out an input field", { selector: "", value: "" }],
    ["puppeteer_select", "Select an element on the page with a Select tag", { selector: "", value: "" }],
    ["puppeteer_hover", "Hover an element on the page", { selector: "" }],
    ["puppeteer_evaluate", "Execute JavaScript in the browser console", { script: "" }],
  ],
  fetch: [
    ["fetch", "Fetches a URL from the internet and extracts its contents as markdown", { url: "", max_length: "" }],
  ],
  time: [
    ["get_current_time", "Get the current time in a specific timezone", { timezone: "IANA timezone name" }],
    ["convert_time", "Convert a time between timezones", { source_timezone: "", time: "", target_timezone: "" }],
  ],
  weather: [
    ["get_forecast", "Get the weather forecast for a location", { latitude: "", longitude: "" }],
    ["get_alerts", "Get active weather alerts for a US state", { state: "Two-letter state code" }],
  ],
  maps: [
    ["maps_geocode", "Convert an address into geographic coordinates", { address: "" }],
    ["maps_reverse_geocode", "Convert coordinates into an address", { latitude: "", longitude: "" }],
    ["maps_search_places", "Search for places using the Places API", { query: "", location: "" }],
    ["maps_place_details", "Get detailed information about a specific place", { place_id: "" }],
    ["maps_distance_matrix", "Calculate travel distance and time between points", { origins: "", destinations: "" }],
    ["maps_elevation", "Get elevation data for locations on the earth", { locations: "" }],
    ["maps_directions", "Get directions between two points", { origin: "", destination: "", mode: "" }],
  ],
  brave: [
    [
      "brave_web_search",
      "Performs a web search using the Brave Search API, for general queries, news and articles",
      { query: "" },
    ],
    ["brave_local_search", "Searches for local businesses and places such as restaurants and services", { query: "" }],
  ],
  sentry: [
    [
      "get_sentry_issue",
      "Retrieve and analyze a Sentry issue by ID or URL, with its stacktrace",
      { issue_id_or_url: "" },
    ],
  ],
  gdrive: [["gdrive_search", "Search for files in Google Drive", { query: "" }]],
  // As @modelcontextprotocol/server-everything 2026.8.31 (the suite's tasks server) lists them.
  everything: [
    ["echo", "Echoes back the input string", { message: "" }],
    [
      "get-annotated-message",
      "Demonstrates how annotations can be used to provide metadata about content.",
      { messageType: "", includeImage: "" },
    ],
    ["get-env", "Returns all environment variables, helpful for debugging MCP server configuration", {}],
    [
      "get-resource-links",
      "Returns up to ten resource links that reference different types of resources",
      { count: "" },
    ],
    [
      "get-resource-reference",
      "Returns a resource reference that can be used by MCP clients",
      { resourceType: "", resourceId: "" },
    ],
    [
      "get-structured-content",
      "Returns structured content along with an output schema for client data validation",
      { location: "" },
    ],
    ["get-sum", "Returns the sum of two numbers", { a: "", b: "" }],
    ["get-tiny-image", "Returns a tiny MCP logo image.", {}],
    [
      "gzip-file-as-resource",
      "Compresses a single file using gzip compression. Depending upon the selected output type, returns either the compressed data as a gzipped resource or a resource link, allowing it to be downloaded in a subsequent request during the current session.",
      { name: "", data: "", outputType: "" },
    ],
    ["toggle-simulated-logging", "Toggles simulated, random-leveled logging on or off.", {}],
    ["toggle-subscriber-updates", "Toggles simulated resource subscription updates on or off.", {}],
    [
      "trigger-long-running-operation",
      "Demonstrates a long running operation with progress updates.",
      { duration: "", steps: "" },
    ],
    [
      "simulate-research-query",
      "Simulates a deep research operation that gathers, analyzes, and synthesizes information. Demonstrates MCP task-based operations with progress through multiple stages. If 'ambiguous' is true and client supports elicitation, sends an elicitation request for clarification.",
      { topic: "", ambiguous: "" },
    ],
  ],
  docker: [
    ["list_containers", "List all Docker containers, running or stopped", { all: "" }],
    ["run_container", "Create and start a Docker container from an image", { image: "", name: "", ports: "" }],
    ["stop_container", "Stop a running Docker container", { container_id: "" }],
    ["fetch_container_logs", "Fetch the logs of a Docker container", { container_id: "", tail: "" }],
    ["pull_image", "Pull a Docker image from a registry", { repository: "", tag: "" }],
  ],
  kubernetes: [
    ["get_pods", "List the pods in a Kubernetes namespace", { namespace: "" }],
    ["pod_logs", "Get the logs of a pod", { name: "", namespace: "", container: "" }],
    ["scale_deployment", "Scale a Kubernetes deployment to a number of replicas", { name: "", replicas: "" }],
    ["apply_manifest", "Apply a YAML manifest to the cluster", { manifest: "" }],
  ],
  gmail: [
    ["send_email", "Send an email to one or more recipients", { to: "", subject: "", body: "" }],
    ["search_emails", "Search the mailbox for emails matching a query", { query: "" }],
    ["read_email", "Read the full content of an email by its ID", { messageId: "" }],
    ["draft_email", "Create a draft email without sending it", { to: "", subject: "", body: "" }],
  ],
  calendar: [
    ["list_events", "List upcoming events in a calendar", { calendarId: "", timeMin: "" }],
    ["create_event", "Create a calendar event with attendees", { summary: "", start: "", end: "", attendees: "" }],
    ["find_free_slots", "Find free time slots shared by several people", { emails: "", duration: "" }],
  ],
  stripe: [
    ["create_customer", "Create a customer in Stripe", { name: "", email: "" }],
    ["create_payment_link", "Create a payment link for a product", { price: "", quantity: "" }],
    ["create_refund", "Refund a payment intent", { payment_intent: "", amount: "" }],
    ["list_invoices", "List invoices of a customer", { customer: "" }],
  ],
  fixture: defaultTools.map((t) => [t.name, t.description, {}]),
}

/** Generated services: [server, resources]; every resource gets every verb. */
const SERVICES = [
  ["zendesk", ["ticket", "user", "organization", "macro", "view", "article"]],
  ["hubspot", ["contact", "company", "deal", "note", "task", "email"]],
  ["salesforce", ["account", "lead", "opportunity", "case", "report", "file"]],
  ["jira", ["issue", "project", "sprint", "board", "comment", "attachment"]],
  ["linear", ["issue", "team", "cycle", "label", "comment", "project"]],
  ["notion", ["page", "database", "block", "comment", "user", "file"]],
  ["confluence", ["page", "space", "comment", "attachment", "label", "template"]],
  ["shopify", ["product", "order", "customer", "collection", "inventory_item", "discount"]],
  ["quickbooks", ["invoice", "customer", "payment", "vendor", "bill", "expense"]],
  ["asana", ["task", "project", "section", "tag", "story", "workspace"]],
  ["trello", ["card", "board", "list", "checklist", "member", "label"]],
  ["intercom", ["conversation", "contact", "message", "tag", "segment", "note"]],
  ["dropbox", ["file", "folder", "shared_link", "revision", "team_member", "paper_doc"]],
  ["box", ["file", "folder", "collaboration", "comment", "task", "web_link"]],
  ["twilio", ["message", "call", "phone_number", "recording", "conversation", "verification"]],
  ["sendgrid", ["email", "template", "contact", "list", "campaign", "suppression"]],
  ["datadog", ["monitor", "dashboard", "metric", "event", "incident", "log_query"]],
  ["pagerduty", ["incident", "service", "schedule", "escalation_policy", "user", "alert"]],
  ["gitlab", ["merge_request", "issue", "pipeline", "project", "branch", "release"]],
  ["bitbucket", ["pull_request", "repository", "pipeline", "branch", "commit", "issue"]],
  ["airtable", ["record", "table", "base", "field", "view", "comment"]],
  ["figma", ["file", "comment", "component", "project", "style", "version"]],
  ["mailchimp", ["campaign", "audience", "member", "template", "segment", "report"]],
  ["workday", ["worker", "position", "time_off_request", "job_requisition", "payslip", "expense_report"]],
  ["greenhouse", ["candidate", "application", "job", "interview", "offer", "scorecard"]],
  ["okta", ["user", "group", "application", "policy", "factor", "session"]],
  ["cloudflare", ["zone", "dns_record", "worker", "firewall_rule", "page_rule", "certificate"]],
  ["vercel", ["deployment", "project", "domain", "environment_variable", "alias", "team"]],
  ["netlify", ["site", "deploy", "form", "build_hook", "dns_zone", "function"]],
  ["supabase", ["table", "row", "bucket", "function", "user", "migration"]],
  ["mongodb", ["collection", "document", "index", "database", "user", "aggregation"]],
  ["elastic", ["index", "document", "alias", "snapshot", "pipeline", "template"]],
  ["snowflake", ["warehouse", "table", "query", "stage", "role", "task"]],
  ["bigquery", ["dataset", "table", "job", "view", "routine", "model"]],
  ["discord", ["message", "channel", "role", "member", "thread", "webhook"]],
  ["teams", ["message", "channel", "meeting", "team", "chat", "file"]],
  ["zoom", ["meeting", "webinar", "recording", "user", "participant", "report"]],
  ["calendly", ["event", "event_type", "invitee", "scheduling_link", "webhook", "availability"]],
  ["youtube", ["video", "playlist", "comment", "channel", "caption", "subscription"]],
  ["spotify", ["playlist", "track", "album", "artist", "queue", "device"]],
]

const VERBS = [
  ["list", (r, svc) => `List ${r}s in ${svc}, with filters and pagination`, ["filter", "page", "per_page"]],
  ["get", (r, svc) => `Get one ${r} from ${svc} by its ID`, ["id"]],
  ["create", (r, svc) => `Create a new ${r} in ${svc}`, ["name", "fields"]],
  ["update", (r, svc) => `Update the fields of an existing ${r} in ${svc}`, ["id", "fields"]],
  ["delete", (r, svc) => `Delete a ${r} from ${svc} permanently`, ["id"]],
  ["search", (r, svc) => `Search ${svc} ${r}s by keyword`, ["query", "limit"]],
  ["export", (r, svc) => `Export ${r}s from ${svc} as CSV or JSON`, ["format", "since"]],
  ["archive", (r, svc) => `Archive a ${r} in ${svc} so it no longer shows in active lists`, ["id"]],
]

const capital = (name) => name[0].toUpperCase() + name.slice(1)
const schema = (params) => ({
  type: "object",
  properties: Object.fromEntries(Object.entries(params).map(([k, d]) => [k, s(d || k.replaceAll("_", " "))])),
})

/** `{ server, name, description, inputSchema }` for every tool, the known ones first. */
export function catalog(min = 2_000) {
  const tools = []
  for (const [server, list] of Object.entries(KNOWN)) {
    for (const [name, description, params] of list)
      tools.push({ server, name, description, inputSchema: schema(params) })
  }
  // Past the services above (the first round), more services of the same kinds.
  for (let round = 0; tools.length < min; round++) {
    for (const [base, resources] of SERVICES) {
      const server = round === 0 ? base : `${base}${round + 1}`
      for (const resource of resources) {
        const words = resource.replaceAll("_", " ")
        for (const [verb, describe, params] of VERBS) {
          const inputSchema = schema(Object.fromEntries(params.map((p) => [p, ""])))
          tools.push({ server, name: `${verb}_${resource}`, description: describe(words, capital(base)), inputSchema })
        }
      }
    }
  }
  return tools
}

/** [what a user asks for, the tool meant as `server_tool`] */
export const QUERIES = [
  ["read the contents of a file on disk", "filesystem_read_file"],
  ["save text into a new file", "filesystem_write_file"],
  ["rename a file", "filesystem_move_file"],
  ["show me the folder structure recursively", "filesystem_directory_tree"],
  ["when was this file last modified", "filesystem_get_file_info"],
  ["find files matching a glob pattern", "filesystem_search_files"],
  ["what changed in my working tree that is not staged", "git_git_diff_unstaged"],
  ["commit my changes with a message", "git_git_commit"],
  ["switch to another git branch", "git_git_checkout"],
  ["show the commit history log", "git_git_log"],
  ["open a new issue on GitHub", "github_create_issue"],
  ["comment on a GitHub issue", "github_add_issue_comment"],
  ["open a pull request", "github_create_pull_request"],
  ["merge the pull request", "github_merge_pull_request"],
  ["which files did the pull request change", "github_get_pull_request_files"],
  ["fork a repository", "github_fork_repository"],
  ["search code on GitHub for a function name", "github_search_code"],
  ["send a message to a slack channel", "slack_slack_post_message"],
  ["react with an emoji to a slack message", "slack_slack_add_reaction"],
  ["reply in a slack thread", "slack_slack_reply_to_thread"],
  ["recent messages of a slack channel", "slack_slack_get_channel_history"],
  ["run a SQL select against postgres", "postgres_query"],
  ["insert rows into the sqlite database", "sqlite_write_query"],
  ["what columns does this sqlite table have", "sqlite_describe_table"],
  ["remember facts as entities in the knowledge graph", "memory_create_entities"],
  ["search the knowledge graph nodes", "memory_search_nodes"],
  ["take a screenshot of the web page", "puppeteer_puppeteer_screenshot"],
  ["open a URL in the browser", "puppeteer_puppeteer_navigate"],
  ["run javascript in the browser page", "puppeteer_puppeteer_evaluate"],
  ["download a web page as markdown", "fetch_fetch"],
  ["what time is it in Tokyo timezone", "time_get_current_time"],
  ["convert 3pm from New York time to Berlin time", "time_convert_time"],
  ["weather forecast for these coordinates", "weather_get_forecast"],
  ["severe weather alerts in California", "weather_get_alerts"],
  ["turn an address into latitude and longitude", "maps_maps_geocode"],
  ["driving directions from the airport to the hotel", "maps_maps_directions"],
  ["how high above sea level is this place (elevation)", "maps_maps_elevation"],
  ["search the web for recent news", "brave_brave_web_search"],
  ["find restaurants nearby", "brave_brave_local_search"],
  ["analyze the sentry error stacktrace", "sentry_get_sentry_issue"],
  ["add two numbers together", "everything_get-sum"],
  ["print the environment variables of the server", "everything_get-env"],
  ["compress a file with gzip", "everything_gzip-file-as-resource"],
  ["run a deep research task on a topic", "everything_simulate-research-query"],
  ["turn the simulated logging on or off", "everything_toggle-simulated-logging"],
  ["start a docker container from an image", "docker_run_container"],
  ["show the logs of a docker container", "docker_fetch_container_logs"],
  ["scale the deployment to 5 replicas", "kubernetes_scale_deployment"],
  ["list pods in the namespace", "kubernetes_get_pods"],
  ["email the report to my boss", "gmail_send_email"],
  ["find a free time slot for a meeting with three people", "calendar_find_free_slots"],
  ["refund the customer's payment", "stripe_create_refund"],
  ["wait for some milliseconds then answer", "fixture_sleep"],
  ["close out a zendesk ticket by archiving it", "zendesk_archive_ticket"],
  ["export all hubspot deals to CSV", "hubspot_export_deal"],
  ["create a new lead in salesforce", "salesforce_create_lead"],
  ["search jira issues by keyword", "jira_search_issue"],
  ["delete a trello card", "trello_delete_card"],
  ["update a shopify product", "shopify_update_product"],
  ["list the pagerduty incidents", "pagerduty_list_incident"],
  ["get a gitlab pipeline by id", "gitlab_get_pipeline"],
  ["add a DNS record in cloudflare", "cloudflare_create_dns_record"],
  ["create an environment variable on vercel", "vercel_create_environment_variable"],
  ["schedule a zoom meeting", "zoom_create_meeting"],
  ["add a candidate in greenhouse", "greenhouse_create_candidate"],
]
