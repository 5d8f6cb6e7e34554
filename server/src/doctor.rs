//! `bravebot doctor`: what is configured and what answers, one fact a line, never a credential.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;

use bravebot_core::egress::Egress;
use bravebot_core::model::ModelClient;

use crate::setup;

/// Language servers the `lsp` tool would start, by binary name (seed 004).
const LANGUAGE_SERVERS: &[(&str, &str)] = &[
    ("Rust", "rust-analyzer"),
    ("TypeScript/JavaScript", "typescript-language-server"),
    ("Python", "pyright-langserver"),
    ("Go", "gopls"),
    ("C/C++", "clangd"),
];

pub async fn run(egress: Arc<Egress>) -> ExitCode {
    let cwd = std::env::current_dir().unwrap_or_else(|_| "/".into());
    let (settings, notes) = setup::load_settings(&cwd, None);
    let mut lines = vec![format!("version: bravebot {}", env!("CARGO_PKG_VERSION"))];
    let m = &settings.model;
    lines.push(format!(
        "model backend: {} at {} (model {}, from {})",
        m.api.as_str(),
        m.base_url,
        m.name,
        m.source.as_str()
    ));
    lines.push(match setup::credential_source(&settings) {
        Some(var) => format!("credential: set, from the environment variable {var}"),
        None => "credential: none".to_string(),
    });
    let client = ModelClient::new(setup::model_config(&settings), egress.clone());
    lines.push(match client.probe().await {
        Ok(fact) => format!("model answers: yes, {fact}"),
        Err(e) => format!(
            "model answers: no, {e} (set BRAVEBOT_MODEL_URL or `model.baseUrl` in ~/.bravebot/settings.json)"
        ),
    });
    if notes.is_empty() {
        lines.push("settings read: none (defaults in force)".to_string());
    }
    lines.extend(notes.iter().map(ToString::to_string));
    lines.push(format!(
        "vetting: reads {}, auto {}",
        if settings.vetting_reads {
            format!(
                "checked (files up to {} KiB; a verdict is remembered for the bytes it judged)",
                settings.check_max_bytes / 1024
            )
        } else {
            "not checked: what nobody vouched for is held back or asked about".to_string()
        },
        if settings.vetting_auto { "on" } else { "off" }
    ));
    lines.push(format!(
        "trust rules at the start of a session in {}: AGENTS.md (file) and .bravebot/skills/ (directory), origin instructions, each only where it stays inside the workspace once links are followed",
        cwd.display()
    ));
    lines.extend(egress.describe().lines());
    lines.push(format!("confinement: {}", confinement()));
    let level = bravebot_core::sandbox::level();
    lines.push(format!(
        "network denial for confined processes: {}",
        if level.network_denial() {
            "enforced by the kernel"
        } else {
            "not enforceable here, so a server that does not ask for the network is not started"
        }
    ));
    if settings.mcp_servers.is_empty() {
        lines.push("MCP servers: none declared in ~/.bravebot/settings.json".to_string());
    }
    for server in &settings.mcp_servers {
        lines.push(format!(
            "MCP server {}: {} {:?}, reads {:?}, writes {:?}, network {}; started on a session's first turn once approved, confined",
            server.name,
            server.command,
            server.args,
            server.read,
            server.write,
            if server.network { "allowed" } else { "denied" }
        ));
    }
    for (language, binary) in LANGUAGE_SERVERS {
        lines.push(match find_on_path(binary) {
            Some(p) => format!(
                "language server for {language}: {binary} at {}",
                p.display()
            ),
            None => format!("language server for {language}: {binary} not found on PATH"),
        });
    }
    let mut out = std::io::stdout().lock();
    for line in lines {
        let _ = writeln!(out, "{line}");
    }
    ExitCode::SUCCESS
}

/// What the kernel offers for confining a process (SANDBOX-5).
pub fn confinement() -> String {
    bravebot_core::sandbox::level().describe()
}

fn find_on_path(binary: &str) -> Option<std::path::PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(binary))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}
