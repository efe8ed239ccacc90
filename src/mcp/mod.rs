//! The MCP server: agents search and read their own history through the store's library API
//! ([`Db`]), so it answers the same on SQLite and on a PostgreSQL team store.
//!
//! * [`tools`]: the tool list (small on purpose: Claude Code sends it with every request).
//! * [`args`]: arguments checked, and the errors a tool answers with.
//! * [`page`]: every answer one line of compact JSON under a byte budget, with `next`.
//! * [`find`], [`read`], [`files`], [`usage`]: the tools.
//! * [`install`]: registering the server with Claude Code as `claude mcp add` does.
//!
//! `sessiondb mcp` serves it over stdio ([`serve_stdio`]); `sessiondb serve` mounts it at
//! `/mcp` as streamable HTTP ([`http_service`]). Tool calls run on tokio's blocking pool.
//!
//! **The calling session.** Claude Code 2.1.332 starts a stdio server with
//! `CLAUDE_CODE_SESSION_ID` (the id of the session that spawned it) in its environment (seen
//! by experiment: `docs/mcp.md`); over HTTP it sends no such thing, so a caller there may
//! send the header `X-Claude-Code-Session-Id` itself. That session is left out of `find`
//! unless `include_self` is set, and marked `current` in listings.

pub mod args;
pub mod files;
pub mod find;
pub mod install;
pub mod page;
pub mod read;
pub mod tools;
pub mod usage;

use crate::backend::Db;
use args::{Args, ToolError};
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, Implementation,
    ListToolsResult, PaginatedRequestParams, ServerCapabilities, ServerConfig, Tool,
    ToolAnnotations,
};
use rmcp::service::RequestContext;
use rmcp::{ErrorData, RoleServer, ServerHandler};
use serde_json::{Map, Value};
use std::sync::Arc;

/// The header an HTTP caller names its own session with.
pub const SESSION_HEADER: &str = "x-claude-code-session-id";

/// The environment variable Claude Code gives the servers it spawns.
pub const SESSION_ENV: &str = "CLAUDE_CODE_SESSION_ID";

/// Whether `id` can be a session id (a file stem: no control characters, not too long):
/// anything else a caller names itself by is ignored.
pub fn plausible_session_id(id: &str) -> bool {
    !id.is_empty() && id.len() <= 200 && !id.contains(|c: char| c.is_control() || c == '/')
}

/// How a server runs.
#[derive(Debug, Clone, Default)]
pub struct Options {
    /// Offer `tag`, `rename` and `fork`.
    pub allow_write: bool,
    /// The session that is calling (left out of `find`).
    pub caller: Option<String>,
    /// The `--db` the server was started with, for the commands `resume_plan` writes.
    pub db_arg: Option<String>,
}

/// What a tool call sees.
pub struct Context<'a> {
    /// The store.
    pub db: &'a Db,
    /// The calling session, if known.
    pub caller: Option<&'a str>,
    /// The `--db` to put in commands.
    pub db_arg: Option<&'a str>,
    /// The answer's byte budget.
    pub budget: usize,
}

/// The MCP server over one store.
#[derive(Clone)]
pub struct Server {
    db: Arc<Db>,
    options: Arc<Options>,
}

impl Server {
    /// A server over `db`.
    pub fn new(db: Arc<Db>, options: Options) -> Server {
        Server {
            db,
            options: Arc::new(options),
        }
    }

    /// Runs tool `name` with `arguments` (blocking: store work). The answer is compact JSON;
    /// `Err` is a tool error.
    ///
    /// # Errors
    /// The [`ToolError`] the tool answered with.
    pub fn call(
        &self,
        name: &str,
        arguments: &Map<String, Value>,
        caller: Option<&str>,
    ) -> Result<Value, ToolError> {
        let cx = Context {
            db: &self.db,
            caller: caller.or(self.options.caller.as_deref()),
            db_arg: self.options.db_arg.as_deref(),
            budget: page::DEFAULT_BUDGET,
        };
        let a = Args::new(arguments);
        if tools::spec(name, self.options.allow_write).is_none() {
            if tools::spec(name, true).is_some() {
                return Err(ToolError::new(
                    "read_only",
                    format!(
                        "{name} changes the store; this server was started without --allow-write"
                    ),
                ));
            }
            return Err(ToolError::new(
                "unknown_tool",
                format!("no tool {:?}; call tools/list", args::clip(name, 40)),
            ));
        }
        match name {
            "find" => find::find(&cx, &a),
            "list_sessions" => find::list_sessions(&cx, &a),
            "session_overview" => read::overview(&cx, &a),
            "read" => read::read(&cx, &a),
            "files" => files::files(&cx, &a),
            "resume_plan" => files::resume_plan(&cx, &a),
            "usage" => usage::usage(&cx, &a),
            "tag" => files::tag(&cx, &a),
            "rename" => files::rename(&cx, &a),
            "fork" => files::fork(&cx, &a),
            _ => unreachable!("every listed tool is dispatched"),
        }
    }

    /// [`Server::call`] as an MCP result: one text block of compact JSON, an error as
    /// `{"error": code, "message": …}` with `isError`.
    pub fn call_result(
        &self,
        name: &str,
        arguments: &Map<String, Value>,
        caller: Option<&str>,
    ) -> CallToolResult {
        match self.call(name, arguments, caller) {
            Ok(v) => CallToolResult::success(vec![ContentBlock::text(v.to_string())]),
            Err(e) => CallToolResult::error(vec![ContentBlock::text(
                serde_json::json!({ "error": e.code, "message": e.message }).to_string(),
            )]),
        }
    }

    /// The tools offered.
    pub fn tool_list(&self) -> Vec<Tool> {
        tools::specs(self.options.allow_write)
            .map(|s| {
                let mut annotations = ToolAnnotations::new().read_only(s.read_only);
                if !s.read_only {
                    annotations = annotations.destructive(false);
                }
                let mut tool = Tool::new(s.name, s.description, tools::input_schema(s));
                tool.annotations = Some(annotations);
                tool
            })
            .collect()
    }
}

impl ServerHandler for Server {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("sessiondb", env!("CARGO_PKG_VERSION")))
    }

    async fn list_tools(
        &self,
        _request: Option<PaginatedRequestParams>,
        _context: RequestContext<RoleServer>,
    ) -> Result<ListToolsResult, ErrorData> {
        Ok(ListToolsResult::with_all_items(self.tool_list()))
    }

    fn get_tool(&self, name: &str) -> Option<Tool> {
        self.tool_list().into_iter().find(|t| t.name == name)
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        context: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let caller = context
            .extensions
            .get::<axum::http::request::Parts>()
            .and_then(|p| p.headers.get(SESSION_HEADER))
            .and_then(|v| v.to_str().ok())
            .filter(|v| plausible_session_id(v))
            .map(str::to_owned);
        let server = self.clone();
        let name = request.name.to_string();
        let arguments = request.arguments.unwrap_or_default();
        let result = tokio::task::spawn_blocking(move || {
            server.call_result(&name, &arguments, caller.as_deref())
        })
        .await
        .map_err(|e| ErrorData::internal_error(format!("the tool stopped: {e}"), None))?;
        Ok(result.into())
    }
}

/// Serves MCP over standard input and output until the client closes them.
///
/// # Errors
/// When the transport fails to start.
pub async fn serve_stdio(db: Arc<Db>, options: Options) -> std::io::Result<()> {
    use rmcp::ServiceExt;
    let running = Server::new(db, options)
        .serve(rmcp::transport::stdio())
        .await
        .map_err(std::io::Error::other)?;
    running.waiting().await.map_err(std::io::Error::other)?;
    Ok(())
}

/// The streamable HTTP endpoint `serve` mounts at `/mcp`: stateless, answers as plain JSON.
/// `serve`'s guard has already checked Host and Origin (and its token check the bearer
/// token) by the time a request gets here; on top of that, any request a browser sends
/// (one with an `Origin`) is refused, so that no page, the web viewer's included, can call
/// it. Request bodies are limited to `body_limit` bytes, as on the rest of the server.
pub fn http_service(
    db: Arc<Db>,
    options: Options,
    body_limit: usize,
) -> rmcp::transport::streamable_http_server::StreamableHttpService<
    Server,
    rmcp::transport::streamable_http_server::session::local::LocalSessionManager,
> {
    use rmcp::transport::streamable_http_server::{
        session::local::LocalSessionManager, StreamableHttpServerConfig, StreamableHttpService,
    };
    let server = Server::new(db, options);
    let config = StreamableHttpServerConfig::default()
        .with_legacy_session_mode(false)
        .with_json_response(true)
        .with_sse_keep_alive(None)
        .disable_allowed_hosts()
        .enforce_origin_validation()
        .with_max_request_body_bytes(body_limit);
    StreamableHttpService::new(
        move || Ok(server.clone()),
        Arc::new(LocalSessionManager::default()),
        config,
    )
}
