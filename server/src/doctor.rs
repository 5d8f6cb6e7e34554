//! `bravebot doctor`: what is configured and what answers, one fact a line, never a credential.

use std::io::Write;
use std::path::Path;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use bravebot_core::egress::Egress;
use bravebot_core::model::ModelClient;

use crate::setup;

/// Language servers the `lsp` tool would start, by binary name (seed 004), each with the
/// arguments that make it say its version and exit, where it has them. A file on `PATH` is not
/// yet a server that runs: rustup puts a proxy named `rust-analyzer` in `~/.cargo/bin` whether
/// or not the component is installed, and version managers' shims stand there the same way, so a
/// server is reported found only once it answered. `pyright-langserver` has no such argument (it
/// only starts speaking the protocol), so it is reported where it is on `PATH`, unasked.
const LANGUAGE_SERVERS: &[(&str, &str, Option<&[&str]>)] = &[
    ("Rust", "rust-analyzer", Some(&["--version"])),
    (
        "TypeScript/JavaScript",
        "typescript-language-server",
        Some(&["--version"]),
    ),
    ("Python", "pyright-langserver", None),
    ("Go", "gopls", Some(&["version"])),
    ("C/C++", "clangd", Some(&["--version"])),
];

/// How long a language server is given to say its version.
const VERSION_WAIT: Duration = Duration::from_secs(5);

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
    lines.push(match setup::check_model_config(&settings) {
        Some(c) => format!(
            "check model: {} at {} (model {}, vetting.model from {})",
            c.api.as_str(),
            c.base_url,
            c.name,
            settings
                .check_model
                .as_ref()
                .map_or("default", |m| m.source.as_str())
        ),
        None => "check model: the planner's (set `vetting.model` in ~/.bravebot/settings.json for one of its own)".to_string(),
    });
    let client = ModelClient::new(setup::model_config(&settings), egress.clone());
    lines.push(match client.probe().await {
        Ok(fact) => format!("model answers: yes, {fact}"),
        Err(e) => format!(
            "model answers: no, {e} (set BRAVEBOT_MODEL_URL or `model.baseUrl` in ~/.bravebot/settings.json)"
        ),
    });
    let (budget, from) = bravebot_core::settings::context_budget(
        m.context_tokens,
        match m.context_tokens {
            Some(_) => None,
            None => client.listed_context_tokens().await,
        },
        &m.name,
    );
    lines.push(format!(
        "context budget: {budget} tokens, from the {} (a reply's room is kept within it)",
        match from {
            bravebot_core::settings::ContextSource::Setting => "setting model.contextTokens",
            bravebot_core::settings::ContextSource::Endpoint => "endpoint's model listing",
            bravebot_core::settings::ContextSource::ModelName => "model's name",
            bravebot_core::settings::ContextSource::Default => "default",
        }
    ));
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
    lines.push(format!(
        "confined {}",
        confined_runs(settings.run_confined, false)
    ));
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
    let withheld = bravebot_core::process::Withheld::with_credentials(
        settings
            .model
            .credential_variables
            .iter()
            .map(String::as_str),
    );
    // Asked side by side, so servers that hang cost one wait, not one each.
    let checks = LANGUAGE_SERVERS
        .iter()
        .map(|(language, binary, version_args)| {
            language_server_line(language, binary, *version_args, &withheld)
        });
    lines.extend(futures::future::join_all(checks).await);
    let mut out = std::io::stdout().lock();
    for line in lines {
        let _ = writeln!(out, "{line}");
    }
    ExitCode::SUCCESS
}

/// The line for one language server: where it is and whether it runs.
async fn language_server_line(
    language: &str,
    binary: &str,
    version_args: Option<&[&str]>,
    withheld: &bravebot_core::process::Withheld,
) -> String {
    match (find_on_path(binary), version_args) {
        (None, _) => format!("language server for {language}: {binary} not found on PATH"),
        (Some(p), None) => format!(
            "language server for {language}: {binary} at {}",
            p.display()
        ),
        (Some(p), Some(args)) => match answers(&p, args, withheld).await {
            Answered::Yes => format!(
                "language server for {language}: {binary} at {}",
                p.display()
            ),
            Answered::No(_) if is_rustup_proxy(&p) => format!(
                "language server for {language}: {binary} not usable: rustup's proxy is there ({}) but the component is not installed: rustup component add {binary}",
                p.display()
            ),
            Answered::No(why) => format!(
                "language server for {language}: {binary} is on PATH at {} but does not run ({why}): reinstall it, or put one that runs earlier on PATH",
                p.display()
            ),
        },
    }
}

/// Whether a language server ran when asked its version.
enum Answered {
    Yes,
    /// Why not, in a few words of ours: the exit status, a signal, a timeout, or a failed start.
    No(String),
}

/// Runs `program args` and waits at most [`VERSION_WAIT`] for it to exit 0. It starts in `/`, so
/// no workspace file (a `rust-toolchain.toml` picking a toolchain rustup would fetch) has a say,
/// with stdin closed and its output thrown away: only the exit status is looked at.
async fn answers(
    program: &Path,
    args: &[&str],
    withheld: &bravebot_core::process::Withheld,
) -> Answered {
    use std::process::Stdio;
    let args: Vec<String> = args.iter().map(|a| (*a).to_owned()).collect();
    let arg0 = program
        .file_name()
        .and_then(|n| n.to_str())
        .unwrap_or_default();
    let spawned = bravebot_core::process::spawn(bravebot_core::process::Spec {
        program,
        arg0,
        args: &args,
        cwd: Path::new("/"),
        env: Vec::new(),
        withheld,
        base: None,
        stdin: Stdio::null(),
        stdout: Stdio::null(),
        stderr: Stdio::null(),
    });
    let mut child = match spawned {
        Ok(child) => child,
        Err(e) => return Answered::No(format!("it could not be started: {}", e.source)),
    };
    let group = child.id();
    match tokio::time::timeout(VERSION_WAIT, child.wait()).await {
        Ok(Ok(status)) if status.success() => Answered::Yes,
        Ok(Ok(status)) => Answered::No(match status.code() {
            Some(code) => format!("asked its version, it exited with status {code}"),
            None => "asked its version, it was stopped by a signal".to_owned(),
        }),
        Ok(Err(e)) => Answered::No(format!("it could not be waited for: {e}")),
        Err(_) => {
            if let Some(group) = group {
                bravebot_core::process::stop_group(group);
            }
            Answered::No(format!(
                "asked its version, it did not answer within {} s",
                VERSION_WAIT.as_secs()
            ))
        }
    }
}

/// Whether `program` is one of rustup's proxies: the `rustup` binary under another name, linked
/// hard (rustup's way) or symbolically to the `rustup` beside it or followed to a file named
/// `rustup`. Told from the file system's metadata, never from what the program prints.
fn is_rustup_proxy(program: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    let followed = std::fs::canonicalize(program).ok();
    if followed
        .as_deref()
        .and_then(Path::file_name)
        .is_some_and(|n| n == "rustup" || n == "rustup-init")
    {
        return true;
    }
    let Some(rustup) = program.parent().map(|d| d.join("rustup")) else {
        return false;
    };
    match (std::fs::metadata(program), std::fs::metadata(&rustup)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

/// Whether lines run confined without a question (RUN-17), and whether this kernel can hold them.
pub fn confined_runs(setting: bool, chosen: bool) -> String {
    let can = bravebot_core::sandbox::level().network_denial();
    match (setting || chosen, can) {
        (true, true) => format!(
            "runs: lines the kernel can hold run confined without a question ({})",
            if setting {
                "run.confined: unasked"
            } else {
                "chosen on a run question"
            }
        ),
        (true, false) => "runs: run.confined is unasked, but this kernel cannot confine a line, so every line is asked".to_string(),
        (false, true) => "runs: asked (run.confined: never); this kernel could run them confined".to_string(),
        (false, false) => "runs: asked (run.confined: never); this kernel could not confine them".to_string(),
    }
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
