//! The Neovim plugin against the server's declaration of the protocol, so the two cannot drift
//! apart again (issue 16: the plugin sent `bravebot/session/cancel` as a request while the server
//! registers it as a notification, and the error was swallowed).
//!
//! The server's side is read from its sources: the method names from `pub mod method` in
//! `server/src/protocol.rs`, which of them the server answers from the `.custom_method(...)` calls
//! in `server/src/lsp.rs` (a handler returning `Result<...>` serves a request, one returning
//! nothing a notification), and the params fields from the handler's params struct. The plugin's
//! side is `extension-neovim/lua/bravebot/protocol.lua`, the one module through which the plugin
//! sends anything and which refuses, at run time, a field its list does not name; no other Lua file
//! may name a `bravebot/` method or call a client's `request` or `notify` itself. The VS Code
//! extension's side is the `outgoing` and `incoming` tables of `extension-vscode/src/protocol.ts`,
//! through which `extension-vscode/src/wire.ts` sends everything, refusing at run time what the
//! table does not list; no other TypeScript file may call `sendRequest` or `sendNotification`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ sits in the workspace")
        .to_path_buf()
}

fn read(relative: &str) -> String {
    std::fs::read_to_string(root().join(relative))
        .unwrap_or_else(|e| panic!("cannot read {relative}: {e}"))
}

/// The text from `opener` to its matching closing brace.
fn block<'a>(text: &'a str, opener: &str) -> Option<&'a str> {
    let start = text.find(opener)?;
    let open = start + text[start..].find('{')?;
    let mut depth = 0;
    for (i, c) in text[open..].char_indices() {
        match c {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    return Some(&text[start..open + i + 1]);
                }
            }
            _ => {}
        }
    }
    None
}

fn camel(snake: &str) -> String {
    let mut out = String::new();
    let mut upper = false;
    for c in snake.chars() {
        if c == '_' {
            upper = true;
        } else if upper {
            out.extend(c.to_uppercase());
            upper = false;
        } else {
            out.push(c);
        }
    }
    out
}

/// Whether a method is sent as a request (an answer is awaited) or as a notification.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Request,
    Notification,
}

impl Kind {
    fn lua(self) -> &'static str {
        match self {
            Kind::Request => "request",
            Kind::Notification => "notification",
        }
    }
}

/// One params field the server reads.
#[derive(Debug, PartialEq, Eq)]
struct Field {
    name: String,
    /// Missing from the params, the message is refused.
    required: bool,
}

/// A method as the server declares it.
#[derive(Debug)]
struct ServerMethod {
    name: String,
    kind: Kind,
    /// Client → server (the server registers a handler), else server → client.
    incoming_to_server: bool,
    fields: Vec<Field>,
}

/// `pub const NAME: &str = "value";` in `pub mod method { ... }`.
fn method_constants(protocol_rs: &str) -> BTreeMap<String, String> {
    let body = block(protocol_rs, "pub mod method").expect("protocol.rs has `pub mod method`");
    let mut out = BTreeMap::new();
    for line in body.lines() {
        let Some(rest) = line.trim().strip_prefix("pub const ") else {
            continue;
        };
        let Some((name, value)) = rest.split_once(": &str = ") else {
            continue;
        };
        let value = value.trim().trim_end_matches(';').trim_matches('"');
        out.insert(name.to_owned(), value.to_owned());
    }
    out
}

/// The fields of `pub struct name`, camelCased as serde's `rename_all` writes them.
fn struct_fields(protocol_rs: &str, name: &str) -> Vec<Field> {
    let opener = format!("pub struct {name} {{");
    let start = protocol_rs
        .find(&opener)
        .unwrap_or_else(|| panic!("protocol.rs declares no `{opener}`"));
    // The attributes right above the struct: a struct-wide `default` makes every field optional.
    let above: Vec<&str> = protocol_rs[..start]
        .lines()
        .rev()
        .take_while(|l| l.trim_start().starts_with("#[") || l.trim_start().starts_with("///"))
        .collect();
    let struct_default = above
        .iter()
        .any(|l| l.contains("serde(") && l.contains("default"));
    let camel_case = above
        .iter()
        .any(|l| l.contains("rename_all = \"camelCase\""));
    let body = block(protocol_rs, &opener).expect("the struct's braces close");
    let mut fields = Vec::new();
    let mut field_default = false;
    let mut rename: Option<String> = None;
    for line in body.lines().skip(1) {
        let line = line.trim();
        if line.starts_with("#[serde(") {
            field_default |= line.contains("default");
            if let Some(r) = line.split("rename = \"").nth(1) {
                rename = r.split('"').next().map(str::to_owned);
            }
            continue;
        }
        let Some(rest) = line.strip_prefix("pub ") else {
            continue;
        };
        let Some((field, ty)) = rest.split_once(':') else {
            continue;
        };
        let wire = rename.take().unwrap_or_else(|| {
            if camel_case {
                camel(field)
            } else {
                field.to_owned()
            }
        });
        let optional = ty.trim().starts_with("Option<");
        fields.push(Field {
            name: wire,
            required: !(optional || field_default || struct_default),
        });
        field_default = false;
    }
    fields
}

/// Every `bravebot/` method the server declares, with its kind, direction and params fields.
fn server_methods() -> Vec<ServerMethod> {
    let protocol_rs = read("server/src/protocol.rs");
    let lsp_rs = read("server/src/lsp.rs");
    let constants = method_constants(&protocol_rs);
    let server_sources: Vec<String> = std::fs::read_dir(root().join("server/src"))
        .expect("server/src")
        .map(|e| e.expect("an entry").path())
        .filter(|p| p.extension().is_some_and(|x| x == "rs"))
        .map(|p| std::fs::read_to_string(&p).expect("a source file"))
        .collect();
    let mut out = Vec::new();
    for (constant, name) in &constants {
        let registration = format!(".custom_method(method::{constant}, Backend::");
        if let Some(at) = lsp_rs.find(&registration) {
            let handler: String = lsp_rs[at + registration.len()..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            let signature_at = lsp_rs
                .find(&format!("async fn {handler}(&self, params: "))
                .unwrap_or_else(|| {
                    panic!("lsp.rs has no `async fn {handler}(&self, params: ...)`")
                });
            let signature = &lsp_rs[signature_at..];
            let signature = &signature[..signature.find('{').expect("the handler has a body")];
            let params_type: String = signature
                .split("params: ")
                .nth(1)
                .expect("a params argument")
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            let kind = if signature.contains("-> Result<") {
                Kind::Request
            } else if !signature.contains("->") {
                // tower-lsp-server serves a handler that returns nothing as a notification and
                // answers a request sent to it with an error.
                Kind::Notification
            } else {
                panic!("cannot tell whether {handler} serves a request: {signature}")
            };
            out.push(ServerMethod {
                name: name.clone(),
                kind,
                incoming_to_server: true,
                fields: struct_fields(&protocol_rs, &params_type),
            });
        } else {
            // Sent by the server: a request when the server's outbox sends it as one
            // (`Outbox::request`, WRITE-60), a notification otherwise.
            let sent_as_request = format!(".request(method::{constant},");
            let kind = if server_sources.iter().any(|s| s.contains(&sent_as_request)) {
                Kind::Request
            } else {
                Kind::Notification
            };
            out.push(ServerMethod {
                name: name.clone(),
                kind,
                incoming_to_server: false,
                fields: Vec::new(),
            });
        }
    }
    out
}

/// One entry of protocol.lua's `M.outgoing` or `M.incoming`.
#[derive(Debug)]
struct LuaMethod {
    kind: String,
    params: Vec<String>,
}

/// The entries of the Lua table `M.<table> = { ... }`, one a line:
/// `['bravebot/x'] = { kind = 'request', params = { 'a', 'b' } },`.
fn lua_table(source: &str, table: &str) -> BTreeMap<String, LuaMethod> {
    let body = block(source, &format!("M.{table} = {{"))
        .unwrap_or_else(|| panic!("protocol.lua has no `M.{table} = {{`"));
    let mut out = BTreeMap::new();
    for line in body.lines().skip(1) {
        let Some(rest) = line.trim().strip_prefix("['") else {
            continue;
        };
        let (name, rest) = rest.split_once("']").expect("a quoted method name");
        let kind = rest
            .split("kind = '")
            .nth(1)
            .and_then(|k| k.split('\'').next())
            .unwrap_or_else(|| panic!("{name} has no kind"))
            .to_owned();
        let params = rest
            .split("params = {")
            .nth(1)
            .map(|p| {
                p.split('}')
                    .next()
                    .unwrap_or_default()
                    .split(',')
                    .map(|f| f.trim().trim_matches('\'').to_owned())
                    .filter(|f| !f.is_empty())
                    .collect()
            })
            .unwrap_or_default();
        out.insert(name.to_owned(), LuaMethod { kind, params });
    }
    out
}

/// The `.lua` files of the plugin, as (path relative to the repository, text).
/// What is wrong with how a front sends the server's method `m`, as listed in its table `entry`
/// (`front` names it in messages, `table` is the table's name).
fn compare_outgoing(
    m: &ServerMethod,
    entry: Option<&LuaMethod>,
    front: &str,
    table: &str,
) -> Vec<String> {
    let Some(entry) = entry else {
        return vec![format!("{} is missing from {table}", m.name)];
    };
    let mut problems = Vec::new();
    if entry.kind != m.kind.lua() {
        problems.push(format!(
            "{} is a {} on the server but the {front} sends it as a {}",
            m.name,
            m.kind.lua(),
            entry.kind
        ));
    }
    for field in &entry.params {
        if !m.fields.iter().any(|f| &f.name == field) {
            problems.push(format!(
                "{} sends field {field}, which the server does not declare ({:?})",
                m.name, m.fields
            ));
        }
    }
    for field in m.fields.iter().filter(|f| f.required) {
        if !entry.params.contains(&field.name) {
            problems.push(format!(
                "{} cannot send {}, which the server requires",
                m.name, field.name
            ));
        }
    }
    problems
}

/// What is wrong with how a front lists the method `m` the server sends (`table` names the list).
fn compare_incoming(m: &ServerMethod, entry: Option<&LuaMethod>, table: &str) -> Vec<String> {
    match entry {
        None => vec![format!("{} is missing from {table}", m.name)],
        Some(entry) if entry.kind != m.kind.lua() => vec![format!(
            "{} is a {} from the server, listed as a {}",
            m.name,
            m.kind.lua(),
            entry.kind
        )],
        Some(_) => Vec::new(),
    }
}

fn plugin_lua() -> Vec<(String, String)> {
    let mut out = Vec::new();
    for dir in ["extension-neovim/lua/bravebot", "extension-neovim/plugin"] {
        let entries = std::fs::read_dir(root().join(dir)).unwrap_or_else(|e| panic!("{dir}: {e}"));
        for entry in entries.flatten() {
            let path = entry.path();
            if path.extension().is_some_and(|e| e == "lua") {
                let name = format!("{dir}/{}", entry.file_name().to_string_lossy());
                let text = std::fs::read_to_string(&path).expect("a readable Lua file");
                out.push((name, text));
            }
        }
    }
    out.sort();
    out
}

const LUA_PROTOCOL: &str = "extension-neovim/lua/bravebot/protocol.lua";

// Verifies: NVIM-9
/// Every method the server answers is listed with the kind the server gives it, and with params
/// fields the server declares, including every field it requires; every method the server sends
/// is handled.
#[test]
fn the_neovim_plugin_sends_each_method_with_the_kind_and_fields_the_server_declares() {
    let methods = server_methods();
    assert!(
        methods.iter().filter(|m| m.incoming_to_server).count() >= 7
            && methods
                .iter()
                .any(|m| m.kind == Kind::Notification && m.incoming_to_server),
        "reading the server's sources found too little: {methods:?}"
    );
    let lua = read(LUA_PROTOCOL);
    let outgoing = lua_table(&lua, "outgoing");
    let incoming = lua_table(&lua, "incoming");
    let handlers = read("extension-neovim/lua/bravebot/handlers.lua");
    let mut problems = Vec::new();
    for m in &methods {
        if m.incoming_to_server {
            problems.extend(compare_outgoing(
                m,
                outgoing.get(&m.name),
                "plugin",
                "M.outgoing",
            ));
        } else {
            problems.extend(compare_incoming(m, incoming.get(&m.name), "M.incoming"));
            // handlers.lua registers it through protocol.lua's constant for it.
            let constant = lua.lines().find_map(|l| {
                let (lhs, rhs) = l.split_once(" = '")?;
                (rhs.trim_end_matches('\'') == m.name).then(|| lhs.trim().to_owned())
            });
            match constant {
                Some(c) if handlers.contains(&format!("[rpc.{}]", c.trim_start_matches("M."))) => {}
                _ => problems.push(format!("handlers.lua registers no handler for {}", m.name)),
            }
        }
    }
    for name in outgoing.keys().chain(incoming.keys()) {
        if !methods.iter().any(|m| &m.name == name) {
            problems.push(format!(
                "protocol.lua lists {name}, which the server does not have"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "the plugin and the server disagree:\n{}",
        problems.join("\n")
    );
}

// Verifies: NVIM-9
/// protocol.lua is the only way out: no other Lua file names a method or calls a client itself.
#[test]
fn no_neovim_plugin_file_but_protocol_lua_sends_to_the_server() {
    let mut problems = Vec::new();
    let files = plugin_lua();
    assert!(
        files.iter().any(|(name, _)| name == LUA_PROTOCOL),
        "{LUA_PROTOCOL} is missing"
    );
    for (name, text) in files.iter().filter(|(name, _)| name != LUA_PROTOCOL) {
        for needle in [
            "'bravebot/",
            "\"bravebot/",
            ":request(",
            ":request_sync(",
            ":notify(",
            "client.request(",
            "client.request_sync(",
            "client.notify(",
            "vim.lsp.buf_request",
        ] {
            if text.contains(needle) {
                problems.push(format!(
                    "{name} contains `{needle}`: send through protocol.lua"
                ));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

/// The entries of `export const <table> = { ... }` in protocol.ts, one a line:
/// `'bravebot/x': { kind: 'request', params: ['a', 'b'] },`.
fn ts_table(source: &str, table: &str) -> BTreeMap<String, LuaMethod> {
    let body = block(source, &format!("export const {table} = {{"))
        .unwrap_or_else(|| panic!("protocol.ts has no `export const {table} = {{`"));
    let mut out = BTreeMap::new();
    for line in body.lines().skip(1) {
        let Some(rest) = line.trim().strip_prefix("'bravebot/") else {
            continue;
        };
        let (name, rest) = rest.split_once("':").expect("a quoted method name");
        let kind = rest
            .split("kind: '")
            .nth(1)
            .and_then(|k| k.split('\'').next())
            .unwrap_or_else(|| panic!("bravebot/{name} has no kind"))
            .to_owned();
        let params = rest
            .split("params: [")
            .nth(1)
            .map(|p| {
                p.split(']')
                    .next()
                    .unwrap_or_default()
                    .split(',')
                    .map(|f| f.trim().trim_matches('\'').to_owned())
                    .filter(|f| !f.is_empty())
                    .collect()
            })
            .unwrap_or_default();
        out.insert(format!("bravebot/{name}"), LuaMethod { kind, params });
    }
    out
}

const TS_PROTOCOL: &str = "extension-vscode/src/protocol.ts";
const TS_WIRE: &str = "extension-vscode/src/wire.ts";

/// Every method the server answers is in the extension's `outgoing` table with the server's kind,
/// params fields the server declares and every field it requires; every method the server sends is
/// in `incoming` and handled in ctx.ts.
// Verifies: VSC-46
#[test]
fn the_vscode_extension_sends_each_method_with_the_kind_and_fields_the_server_declares() {
    let methods = server_methods();
    let ts = read(TS_PROTOCOL);
    let outgoing = ts_table(&ts, "outgoing");
    let incoming = ts_table(&ts, "incoming");
    assert!(
        outgoing.len() >= 7 && !incoming.is_empty(),
        "reading protocol.ts found too little: {outgoing:?} {incoming:?}"
    );
    let ctx = read("extension-vscode/src/ctx.ts");
    let mut problems = Vec::new();
    for m in &methods {
        if m.incoming_to_server {
            problems.extend(compare_outgoing(
                m,
                outgoing.get(&m.name),
                "extension",
                "outgoing",
            ));
        } else {
            problems.extend(compare_incoming(m, incoming.get(&m.name), "incoming"));
            // ctx.ts registers it through protocol.ts's `methods` name for it.
            let constant = ts.lines().find_map(|l| {
                let (lhs, rhs) = l.split_once(": '")?;
                (rhs.trim_end_matches(',').trim_end_matches('\'') == m.name)
                    .then(|| lhs.trim().to_owned())
            });
            let registered = constant.is_some_and(|c| {
                let on = if m.kind == Kind::Request {
                    "onRequest"
                } else {
                    "onNotification"
                };
                ctx.contains(&format!("client.{on}(methods.{c},"))
            });
            if !registered {
                problems.push(format!("ctx.ts registers no handler for {}", m.name));
            }
        }
    }
    for name in outgoing.keys().chain(incoming.keys()) {
        if !methods.iter().any(|m| &m.name == name) {
            problems.push(format!(
                "protocol.ts lists {name}, which the server does not have"
            ));
        }
    }
    assert!(
        problems.is_empty(),
        "the VS Code extension and the server disagree:\n{}",
        problems.join("\n")
    );
}

/// The `.ts` files of the extension's sources, tests left out, as (path, text).
fn extension_ts() -> Vec<(String, String)> {
    fn walk(dir: &Path, rel: &str, out: &mut Vec<(String, String)>) {
        let entries = std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{rel}: {e}"));
        for entry in entries.flatten() {
            let path = entry.path();
            let name = format!("{rel}/{}", entry.file_name().to_string_lossy());
            if path.is_dir() {
                if entry.file_name() != "test" {
                    walk(&path, &name, out);
                }
            } else if path.extension().is_some_and(|e| e == "ts") {
                out.push((
                    name,
                    std::fs::read_to_string(&path).expect("a readable file"),
                ));
            }
        }
    }
    let mut out = Vec::new();
    walk(
        &root().join("extension-vscode/src"),
        "extension-vscode/src",
        &mut out,
    );
    out.sort();
    out
}

// Verifies: VSC-46
/// wire.ts is the only way out: no other file of the extension sends to the server itself.
#[test]
fn no_vscode_extension_file_but_wire_ts_sends_to_the_server() {
    let files = extension_ts();
    assert!(
        files.iter().any(|(name, _)| name == TS_WIRE) && files.len() >= 10,
        "{TS_WIRE} is missing, or too few files were found: {:?}",
        files.iter().map(|(n, _)| n).collect::<Vec<_>>()
    );
    let mut problems = Vec::new();
    for (name, text) in files.iter().filter(|(name, _)| name != TS_WIRE) {
        for needle in [".sendRequest(", ".sendNotification(", ".sendRequest<"] {
            if text.contains(needle) {
                problems.push(format!("{name} contains `{needle}`: send through wire.ts"));
            }
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn struct_fields_reads_optional_defaulted_and_renamed_fields() {
    let rs = "#[derive(Deserialize)]\n#[serde(rename_all = \"camelCase\")]\npub struct P {\n    pub session_id: String,\n    #[serde(default)]\n    pub files: Vec<String>,\n    pub cwd: Option<String>,\n    #[serde(rename = \"ref\")]\n    pub reference: String,\n}\n";
    assert_eq!(
        struct_fields(rs, "P"),
        vec![
            Field {
                name: "sessionId".into(),
                required: true
            },
            Field {
                name: "files".into(),
                required: false
            },
            Field {
                name: "cwd".into(),
                required: false
            },
            Field {
                name: "ref".into(),
                required: true
            },
        ]
    );
    let lua = "M.outgoing = {\n  ['bravebot/a'] = { kind = 'notification', params = { 'sessionId' } },\n}\n";
    let table = lua_table(lua, "outgoing");
    assert_eq!(table["bravebot/a"].kind, "notification");
    assert_eq!(table["bravebot/a"].params, vec!["sessionId".to_owned()]);
}
