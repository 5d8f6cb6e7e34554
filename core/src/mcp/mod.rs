//! MCP servers over stdio, through `rmcp` (the protocol's own Rust SDK): what a person declared in
//! `~/.bravebot/settings.json` (`mcp.servers`, the home layer only), each server started confined
//! ([`crate::sandbox`]) once the person approved it, its tools listed and pinned, and stopped with
//! the session.
//!
//! What a server says is untrusted: its tools' descriptions and everything a call returns. A
//! tool's name is used only when it is a short ASCII identifier, and its schema is rebuilt by the
//! driver from a closed vocabulary of structure and JSON types ([`schema`]), never passed on. What
//! the person saw and approved is pinned by digest; a tool whose name, description or schema
//! differs from what was pinned, and a tool that was not there, is withheld until the person
//! approves it again.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rmcp::model::{CallToolRequestParams, ContentBlock};
use rmcp::service::{Peer, RoleClient, RunningService, ServiceExt};
use serde_json::{Map, Value};

use crate::kernel::label::Label;
use crate::kernel::labelled::Labelled;
use crate::sandbox::{self, Plan, Policy};

pub mod schema;

/// What every tool name a server offers starts with, as the planner sees it:
/// `mcp__<server>__<tool>`.
pub const PREFIX: &str = "mcp__";

/// How long a server has to answer a call or a listing.
pub const CALL_DEADLINE: Duration = Duration::from_secs(60);
/// How long a server has to start and answer `initialize`.
pub const START_DEADLINE: Duration = Duration::from_secs(20);

/// One server as the person declared it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerEntry {
    pub name: String,
    /// A program name looked up on `PATH`, or an absolute path.
    pub command: String,
    pub args: Vec<String>,
    /// Paths it may read, and write (`~/` is the home directory).
    pub read: Vec<String>,
    pub write: Vec<String>,
    /// Whether it may reach the network.
    pub network: bool,
}

/// Whether a string can be a part of a planner function's name: 1 to 64 letters, digits, `_` or
/// `-`. A server's name may hold no `__`, which separates the parts.
fn identifier(s: &str) -> bool {
    !s.is_empty()
        && s.len() <= 64
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '-')
}

/// Reads `mcp.servers`: an object from server name to `{ command, args?, read?, write?, network? }`.
pub fn parse_servers(value: &Value) -> Option<Vec<ServerEntry>> {
    let map = value.as_object()?;
    let mut out = Vec::new();
    for (name, entry) in map {
        if !identifier(name) || name.contains("__") {
            return None;
        }
        let entry = entry.as_object()?;
        let strings = |key: &str| -> Option<Vec<String>> {
            match entry.get(key) {
                None => Some(Vec::new()),
                Some(Value::Array(items)) => items
                    .iter()
                    .map(|i| i.as_str().map(str::to_string))
                    .collect(),
                Some(_) => None,
            }
        };
        if entry
            .keys()
            .any(|k| !["command", "args", "read", "write", "network"].contains(&k.as_str()))
        {
            return None;
        }
        out.push(ServerEntry {
            name: name.clone(),
            command: entry.get("command")?.as_str()?.to_string(),
            args: strings("args")?,
            read: strings("read")?,
            write: strings("write")?,
            network: match entry.get("network") {
                None => false,
                Some(v) => v.as_bool()?,
            },
        });
    }
    Some(out)
}

/// A declared path made absolute: `~/` is `home`; anything else not absolute is refused.
pub fn expand(path: &str, home: Option<&Path>) -> Result<PathBuf, String> {
    match (path.strip_prefix("~/"), home) {
        (Some(rest), Some(home)) => Ok(home.join(rest)),
        (Some(_), None) => Err(format!("{path}: no home directory to expand ~ in")),
        (None, _) if Path::new(path).is_absolute() => Ok(PathBuf::from(path)),
        (None, _) => Err(format!("{path} is not an absolute path")),
    }
}

/// The program a declaration names, resolved: an absolute path as it is, otherwise the first
/// executable of that name on `PATH`.
pub fn resolve_program(command: &str, path_var: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    let runnable = |p: &Path| {
        std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
    };
    if command.contains('/') {
        let p = PathBuf::from(command);
        return (p.is_absolute() && runnable(&p)).then_some(p);
    }
    std::env::split_paths(path_var?)
        .map(|d| d.join(command))
        .find(|p| runnable(p))
}

/// The policy a server runs under: the system's programs and libraries readable, its program
/// readable, what it declared, and the network only if it asked.
pub fn server_policy(
    entry: &ServerEntry,
    program: &Path,
    home: Option<&Path>,
) -> Result<Policy, String> {
    let mut policy = sandbox::system_policy().read(program);
    for p in &entry.read {
        policy = policy.read(expand(p, home)?);
    }
    for p in &entry.write {
        policy = policy.write(expand(p, home)?);
    }
    Ok(policy.network(entry.network))
}

/// The first of a server's write grants that lies strictly inside a git repository, with that
/// repository's top, or `None`. Seed 003 refuses an MCP server such a directory on every platform:
/// a `.git` beneath a grant is held back (SANDBOX-6), but one above it is the repository the
/// grant's files belong to, whose hooks and configuration git runs unconfined. Looks at each
/// grant's ancestors for a `.git` entry, so it touches the disk: call it off the runtime's workers.
pub fn grant_inside_repository(
    entry: &ServerEntry,
    home: Option<&Path>,
) -> Result<Option<(PathBuf, PathBuf)>, String> {
    for p in &entry.write {
        let grant = expand(p, home)?;
        // Each ancestor once, nearest first; a path has few, so the walk is bounded by its depth.
        for top in grant.ancestors().skip(1) {
            if std::fs::symlink_metadata(top.join(".git")).is_ok() {
                return Ok(Some((grant.clone(), top.to_path_buf())));
            }
        }
    }
    Ok(None)
}

/// What the person approved of one tool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Approval {
    /// Offered with its name and structural schema only.
    NameAndSchema,
    /// Offered with its description too, which the person saw.
    WithDescription,
}

/// One tool as the server listed it. Its name is a short identifier (checked); the description is
/// the server's and untrusted; the schema is the driver's rebuild of the server's.
#[derive(Clone, Debug)]
pub struct Listed {
    pub name: String,
    pub description: Labelled<Vec<u8>>,
    /// The tool as the person is shown it, untrusted: the schema the planner reads, the tokens
    /// that stand for the server's own names, where the walk was cut, and the whole description.
    pub shown: Labelled<String>,
    /// The schema the planner is offered, rebuilt by the driver, and how to call the server.
    pub rebuilt: schema::Rebuilt,
    /// SHA-256 of name, description and the whole schema as the server sent them.
    pub digest: String,
}

/// The tools a listing held: the ones whose names can be used, and how many could not.
#[derive(Clone, Debug, Default)]
pub struct Listing {
    pub tools: Vec<Listed>,
    pub unusable: usize,
}

fn digest(name: &str, description: &str, schema: &Map<String, Value>) -> String {
    let whole = serde_json::json!([name, description, schema]).to_string();
    let d = ring::digest::digest(&ring::digest::SHA256, whole.as_bytes());
    d.as_ref().iter().map(|b| format!("{b:02x}")).collect()
}

/// Turns the server's tool list into [`Listed`] tools. A tool whose name is not a short ASCII
/// identifier ([`schema::kept_name`]) is counted and not offered. Only the name, the description and
/// the input schema are looked at; a title, an output schema, annotations, icons and `_meta` are
/// left where they are, read by nobody.
pub fn listing(tools: Vec<rmcp::model::Tool>) -> Listing {
    let mut out = Listing::default();
    for tool in tools {
        let name = tool.name.to_string();
        if !schema::kept_name(&name) {
            out.unusable += 1;
            continue;
        }
        let description = tool.description.map(|d| d.to_string()).unwrap_or_default();
        let input = tool.input_schema.as_ref();
        let rebuilt = schema::rebuild(input);
        let mut shown = format!("  the agent reads its schema: {}\n", rebuilt.schema);
        for (token, server) in &rebuilt.renamed {
            shown.push_str(&format!(
                "  {token} is a name bravebot gave the server's parameter {}, which gets its own name back\n",
                Value::String(server.clone())
            ));
        }
        if let Some(cut) = rebuilt.cut.describe() {
            shown.push_str(&format!("  {cut}\n"));
        }
        shown.push_str(&format!(
            "  description ({} bytes, read by the agent only if you offer descriptions):\n{description}\n",
            description.len()
        ));
        out.tools.push(Listed {
            digest: digest(&name, &description, input),
            rebuilt,
            description: Labelled::new(description.into_bytes(), Label::UNTRUSTED_PRIVATE),
            shown: Labelled::new(shown, Label::UNTRUSTED_PRIVATE),
            name,
        });
    }
    out
}

/// Where a server stands in a session.
#[derive(Clone, Debug)]
pub enum State {
    /// Not yet put to the person.
    Unasked,
    /// The person said no, or nobody was there to ask.
    Declined(String),
    /// It could not be confined or started; the reason, for `status`.
    Refused(String),
    Running(Arc<Running>),
    Stopped,
}

/// A started server.
pub struct Running {
    pub pid: Option<u32>,
    pub program: PathBuf,
    pub plan: Plan,
    peer: Peer<RoleClient>,
    service: tokio::sync::Mutex<Option<RunningService<RoleClient, ()>>>,
    child: Mutex<Option<tokio::process::Child>>,
    /// The digests the person approved, and how.
    pub pinned: Mutex<BTreeMap<String, (String, Approval)>>,
    /// The newest listing.
    pub listed: Mutex<Listing>,
    /// Digests the person chose to keep withheld: not put to them again this session.
    pub declined: Mutex<std::collections::BTreeSet<String>>,
}

impl std::fmt::Debug for Running {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Running")
            .field("pid", &self.pid)
            .field("program", &self.program)
            .finish()
    }
}

/// What a call gave back, or why it gave nothing. Nothing the server wrote in an error is kept.
pub enum CallError {
    Stopped,
    TimedOut,
    Cancelled,
    /// The server answered the call with a protocol error.
    Answered,
}

impl CallError {
    pub fn describe(&self) -> &'static str {
        match self {
            CallError::Stopped => "the server is not running any more",
            CallError::TimedOut => "the server did not answer within 60 seconds",
            CallError::Cancelled => "the call was cancelled",
            CallError::Answered => {
                "the server answered with an error (what it said is not passed on)"
            }
        }
    }
}

/// A call's content, untrusted: its text, its pictures as they came, and how many sounds it held
/// (not kept).
pub struct Returned {
    pub text: Labelled<Vec<u8>>,
    pub pictures: Vec<Picture>,
    pub sounds: usize,
}

/// A picture a server answered: its base64 as sent and the media type it claimed, both untrusted
/// and neither decoded nor looked at here.
pub struct Picture {
    pub base64: Labelled<Vec<u8>>,
    pub media_type: Labelled<String>,
}

impl Running {
    /// Asks the server for its tools again.
    pub async fn relist(&self) -> Result<(), CallError> {
        let tools = tokio::time::timeout(CALL_DEADLINE, self.peer.list_all_tools())
            .await
            .map_err(|_| CallError::TimedOut)?
            .map_err(|e| kind(&e))?;
        *self.listed.lock().unwrap_or_else(|p| p.into_inner()) = listing(tools);
        Ok(())
    }

    /// The listed tools with what the person approved of each: `None` where the tool is new or
    /// differs from what was pinned, so it is withheld.
    pub fn tools(&self) -> Vec<(Listed, Option<Approval>)> {
        let pinned = self.pinned.lock().unwrap_or_else(|p| p.into_inner());
        self.listed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .tools
            .iter()
            .map(|t| {
                let approval = pinned
                    .get(&t.name)
                    .filter(|(d, _)| *d == t.digest)
                    .map(|(_, a)| *a);
                (t.clone(), approval)
            })
            .collect()
    }

    /// Pins what the person approved of these tools.
    pub fn pin(&self, tools: &[Listed], approval: Approval) {
        let mut pinned = self.pinned.lock().unwrap_or_else(|p| p.into_inner());
        for t in tools {
            pinned.insert(t.name.clone(), (t.digest.clone(), approval));
        }
    }

    pub async fn call(
        &self,
        tool: &str,
        arguments: Map<String, Value>,
    ) -> Result<Returned, CallError> {
        let params = CallToolRequestParams::new(tool.to_string()).with_arguments(arguments);
        let result = tokio::time::timeout(CALL_DEADLINE, self.peer.call_tool(params))
            .await
            .map_err(|_| CallError::TimedOut)?
            .map_err(|e| kind(&e))?;
        let mut text = String::new();
        let mut pictures = Vec::new();
        let mut sounds = 0;
        let no_blocks = result.content.is_empty();
        for block in result.content {
            match block {
                ContentBlock::Text(t) => {
                    text.push_str(&t.text);
                    text.push('\n');
                }
                ContentBlock::Image(image) => pictures.push(Picture {
                    base64: Labelled::new(image.data.into_bytes(), Label::UNTRUSTED_PRIVATE),
                    media_type: Labelled::new(image.mime_type, Label::UNTRUSTED_PRIVATE),
                }),
                ContentBlock::Audio(_) => sounds += 1,
                other => {
                    text.push_str(&serde_json::to_string(&other).unwrap_or_default());
                    text.push('\n');
                }
            }
        }
        if no_blocks && let Some(structured) = &result.structured_content {
            text.push_str(&structured.to_string());
        }
        Ok(Returned {
            text: Labelled::new(text.into_bytes(), Label::UNTRUSTED_PRIVATE),
            pictures,
            sounds,
        })
    }

    /// Stops the server: the session ends, or the person offered none of its tools.
    pub fn stop(&self) {
        if let Some(pid) = self.pid {
            crate::process::stop_group(pid);
        }
        if let Some(mut child) = self.child.lock().unwrap_or_else(|p| p.into_inner()).take() {
            let _ = child.start_kill();
        }
        if let Ok(mut service) = self.service.try_lock() {
            service.take();
        }
    }
}

fn kind(e: &rmcp::service::ServiceError) -> CallError {
    use rmcp::service::ServiceError;
    match e {
        ServiceError::TransportClosed | ServiceError::TransportSend(_) => CallError::Stopped,
        ServiceError::Cancelled { .. } => CallError::Cancelled,
        ServiceError::Timeout { .. } => CallError::TimedOut,
        _ => CallError::Answered,
    }
}

/// Starts a server confined by `confined`, in `cwd`, without the variables in `withheld`, and
/// lists its tools.
pub async fn start(
    program: &Path,
    entry: &ServerEntry,
    cwd: &Path,
    withheld: &crate::process::Withheld,
    confined: &sandbox::Confined,
) -> Result<Running, String> {
    let arg0 = program.to_string_lossy();
    let mut child = crate::process::spawn_confined(
        crate::process::Spec {
            program,
            arg0: &arg0,
            args: &entry.args,
            cwd,
            env: Vec::new(),
            withheld,
            base: None,
            stdin: std::process::Stdio::piped(),
            stdout: std::process::Stdio::piped(),
            stderr: std::process::Stdio::null(),
        },
        confined,
    )
    .map_err(|e| {
        format!(
            "{} could not be started confined: {}",
            program.display(),
            e.source
        )
    })?;
    let pid = child.id();
    let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
        return Err("the server's standard streams could not be opened".into());
    };
    let service = match tokio::time::timeout(START_DEADLINE, ().serve((stdout, stdin))).await {
        Ok(Ok(service)) => service,
        Ok(Err(_)) => {
            let _ = child.start_kill();
            return Err("the server did not complete the MCP handshake".into());
        }
        Err(_) => {
            let _ = child.start_kill();
            return Err("the server did not answer the MCP handshake within 20 seconds".into());
        }
    };
    let running = Running {
        pid,
        program: program.to_path_buf(),
        plan: confined.plan.clone(),
        peer: service.peer().clone(),
        service: tokio::sync::Mutex::new(Some(service)),
        child: Mutex::new(Some(child)),
        pinned: Mutex::new(BTreeMap::new()),
        listed: Mutex::new(Listing::default()),
        declined: Mutex::new(std::collections::BTreeSet::new()),
    };
    if running.relist().await.is_err() {
        running.stop();
        return Err("the server did not list its tools".into());
    }
    Ok(running)
}

/// A session's servers, by name, in the order they were declared.
#[derive(Default)]
pub struct Servers {
    entries: Vec<ServerEntry>,
    states: Mutex<BTreeMap<String, State>>,
}

/// One server in `session/status`.
#[derive(Clone, Debug, serde::Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerStatus {
    pub name: String,
    pub state: String,
    pub command: String,
    pub read: Vec<String>,
    pub write: Vec<String>,
    pub network: bool,
    pub pid: Option<u32>,
    /// What the confinement in force differs by (left-out paths, held-back `.git`s) and the
    /// network as enforced.
    pub confinement: Vec<String>,
    pub tools: Vec<String>,
}

impl Servers {
    pub fn new(entries: Vec<ServerEntry>) -> Servers {
        let states = entries
            .iter()
            .map(|e| (e.name.clone(), State::Unasked))
            .collect();
        Servers {
            entries,
            states: Mutex::new(states),
        }
    }

    pub fn entries(&self) -> &[ServerEntry] {
        &self.entries
    }

    pub fn state(&self, name: &str) -> Option<State> {
        self.states
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(name)
            .cloned()
    }

    pub fn set(&self, name: &str, state: State) {
        self.states
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(name.to_string(), state);
    }

    /// The running servers, in declaration order.
    pub fn running(&self) -> Vec<(String, Arc<Running>)> {
        let states = self.states.lock().unwrap_or_else(|p| p.into_inner());
        self.entries
            .iter()
            .filter_map(|e| match states.get(&e.name) {
                Some(State::Running(r)) => Some((e.name.clone(), r.clone())),
                _ => None,
            })
            .collect()
    }

    /// Stops every running server (the session is ending).
    pub fn stop_all(&self) {
        let mut states = self.states.lock().unwrap_or_else(|p| p.into_inner());
        for state in states.values_mut() {
            if let State::Running(r) = state {
                r.stop();
                *state = State::Stopped;
            }
        }
    }

    pub fn status(&self) -> Vec<ServerStatus> {
        let states = self.states.lock().unwrap_or_else(|p| p.into_inner());
        self.entries
            .iter()
            .map(|e| {
                let state = states.get(&e.name).cloned().unwrap_or(State::Unasked);
                let (word, pid, confinement, tools) = match &state {
                    State::Unasked => ("not started".to_string(), None, Vec::new(), Vec::new()),
                    State::Declined(why) => {
                        (format!("not started: {why}"), None, Vec::new(), Vec::new())
                    }
                    State::Refused(why) => {
                        (format!("refused: {why}"), None, Vec::new(), Vec::new())
                    }
                    State::Stopped => ("stopped".to_string(), None, Vec::new(), Vec::new()),
                    State::Running(r) => (
                        "running, confined".to_string(),
                        r.pid,
                        r.plan.notes(),
                        r.tools()
                            .into_iter()
                            .map(|(t, a)| {
                                let how = match a {
                                    Some(Approval::WithDescription) => {
                                        "offered with its description"
                                    }
                                    Some(Approval::NameAndSchema) => "offered by name and schema",
                                    None => "withheld until approved",
                                };
                                format!("mcp__{}__{}: {how}", e.name, t.name)
                            })
                            .collect(),
                    ),
                };
                ServerStatus {
                    name: e.name.clone(),
                    state: word,
                    command: e.command.clone(),
                    read: e.read.clone(),
                    write: e.write.clone(),
                    network: e.network,
                    pid,
                    confinement,
                    tools,
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    // Verifies: MCP-1
    #[test]
    fn a_declaration_is_read_whole_or_refused() {
        let ok = parse_servers(&json!({"notes": {"command": "notes-mcp", "args": ["--x"], "read": ["~/notes"], "network": true}}))
            .expect("parses");
        assert_eq!(ok[0].name, "notes");
        assert_eq!(ok[0].read, vec!["~/notes".to_string()]);
        assert!(ok[0].network);
        for bad in [
            json!({"a__b": {"command": "x"}}),
            json!({"a b": {"command": "x"}}),
            json!({"a": {"args": []}}),
            json!({"a": {"command": "x", "env": {}}}),
            json!({"a": {"command": "x", "network": "yes"}}),
        ] {
            assert!(parse_servers(&bad).is_none(), "{bad}");
        }
        assert_eq!(
            expand("~/n", Some(Path::new("/h"))),
            Ok(PathBuf::from("/h/n"))
        );
        assert!(expand("rel", Some(Path::new("/h"))).is_err());
    }

    // Verifies: SANDBOX-9
    #[test]
    fn a_write_grant_inside_a_repository_is_found_and_the_repositorys_top_is_not() {
        let dir = tempfile::tempdir().expect("a directory");
        let repo = dir.path().join("repo");
        std::fs::create_dir_all(repo.join(".git")).expect("a .git");
        std::fs::create_dir_all(repo.join("sub/deeper")).expect("a subdirectory");
        std::fs::create_dir_all(dir.path().join("plain")).expect("a plain directory");
        let entry = |write: &[&str]| ServerEntry {
            write: write.iter().map(|w| (*w).to_string()).collect(),
            ..parse_servers(&json!({"s": {"command": "x"}})).expect("parses")[0].clone()
        };
        let at = |p: &Path| p.to_string_lossy().into_owned();
        let inside = at(&repo.join("sub/deeper"));
        assert_eq!(
            grant_inside_repository(&entry(&[&at(&dir.path().join("plain")), &inside]), None),
            Ok(Some((repo.join("sub/deeper"), repo.clone())))
        );
        // The top holds its .git beneath the grant, which SANDBOX-6 holds back.
        assert_eq!(
            grant_inside_repository(&entry(&[&at(&repo)]), None),
            Ok(None)
        );
        assert_eq!(
            grant_inside_repository(&entry(&[&at(&dir.path().join("plain"))]), None),
            Ok(None)
        );
    }
}
