//! The `bravebot` binary: `lsp` speaks the protocol on stdio, `exec` runs one headless turn,
//! `doctor` says what is configured and what answers (CONTRACT §1), `demo` shows one turn against
//! a scripted model built into the binary.

mod acp;
mod buffers;
mod demo;
mod doctor;
mod exec;
mod lsp;
mod protocol;
mod rewind;
mod screen;
mod setup;
mod transcript;
mod transport;

use std::io::Write;
use std::process::ExitCode;
use std::sync::Arc;

use bravebot_core::egress::Egress;

const USAGE: &str = "usage: bravebot <command>

commands:
  lsp                    speak the bravebot protocol on stdin/stdout (started by an editor)
  acp                    speak the Agent Client Protocol on stdin/stdout (Zed, JetBrains,
                         Emacs and other ACP hosts)
  exec [--json] [--vet] PROMPT
                         run one headless turn in the current directory; with --vet a
                         check that finds nothing releases output in place of a person
  checkpoints [SESSION]  list a recorded session's checkpoints (the newest session of this
                         directory unless one is named): id, kind, prompt, files changed
  restore CHECKPOINT [SESSION]
                         restore the workspace to a checkpoint; prints what went back,
                         what was left and why, and the command that undoes it
  doctor                 say what is configured and what answers
  demo                   one turn against a scripted model built into bravebot, over a
                         sample project in a temporary directory; no network, no settings
  --version              print the version
";

fn main() -> ExitCode {
    // Before anything reads a credential: a crash must not leave a core file holding one.
    bravebot_core::secret::disable_core_dumps();
    let args: Vec<String> = std::env::args().skip(1).collect();
    let words: Vec<&str> = args.iter().map(String::as_str).collect();
    match words.as_slice() {
        ["--version" | "-V" | "version"] => {
            let _ = writeln!(std::io::stdout(), "bravebot {}", env!("CARGO_PKG_VERSION"));
            ExitCode::SUCCESS
        }
        ["--help" | "-h" | "help"] => {
            let _ = std::io::stdout().write_all(USAGE.as_bytes());
            ExitCode::SUCCESS
        }
        ["lsp", ..] => run(Mode::Lsp),
        ["acp"] => run(Mode::Acp),
        ["doctor"] => run(Mode::Doctor),
        ["checkpoints"] => run(Mode::Rewind(rewind::Command::List { session: None })),
        ["checkpoints", session] => run(Mode::Rewind(rewind::Command::List {
            session: Some((*session).to_string()),
        })),
        ["restore", checkpoint] => run(Mode::Rewind(rewind::Command::Restore {
            checkpoint: (*checkpoint).to_string(),
            session: None,
        })),
        ["restore", checkpoint, session] => run(Mode::Rewind(rewind::Command::Restore {
            checkpoint: (*checkpoint).to_string(),
            session: Some((*session).to_string()),
        })),
        ["demo"] => run(Mode::Demo),
        ["exec", rest @ ..] => match exec_args(rest) {
            Some((json, vet, prompt)) => run(Mode::Exec { json, vet, prompt }),
            None => {
                let _ = std::io::stderr().write_all(USAGE.as_bytes());
                ExitCode::from(2)
            }
        },
        _ => {
            let _ = std::io::stderr().write_all(USAGE.as_bytes());
            ExitCode::from(2)
        }
    }
}

enum Mode {
    Lsp,
    Acp,
    Doctor,
    Demo,
    Exec {
        json: bool,
        vet: bool,
        prompt: String,
    },
    Rewind(rewind::Command),
}

/// `exec [--json] [--vet] PROMPT`, flags in either order.
fn exec_args(words: &[&str]) -> Option<(bool, bool, String)> {
    let (mut json, mut vet) = (false, false);
    let mut prompt = None;
    for w in words {
        match *w {
            "--json" => json = true,
            "--vet" => vet = true,
            flag if flag.starts_with("--") => return None,
            text if prompt.is_none() => prompt = Some(text.to_string()),
            _ => return None,
        }
    }
    prompt.map(|p| (json, vet, p))
}

fn run(mode: Mode) -> ExitCode {
    init_logging();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            let _ = writeln!(std::io::stderr(), "bravebot: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    let code = runtime.block_on(async move {
        match mode {
            // The demonstration builds its own way out, which reads nothing from the environment.
            Mode::Demo => demo::run().await,
            Mode::Lsp => match network() {
                Ok(egress) => {
                    if lsp::serve(egress).await {
                        ExitCode::SUCCESS
                    } else {
                        ExitCode::FAILURE
                    }
                }
                Err(code) => code,
            },
            Mode::Acp => match network() {
                Ok(egress) => {
                    if acp::serve(egress).await {
                        ExitCode::SUCCESS
                    } else {
                        ExitCode::FAILURE
                    }
                }
                Err(code) => code,
            },
            Mode::Doctor => match network() {
                Ok(egress) => doctor::run(egress).await,
                Err(code) => code,
            },
            Mode::Exec { json, vet, prompt } => match network() {
                Ok(egress) => exec::run(egress, prompt, json, vet).await,
                Err(code) => code,
            },
            Mode::Rewind(command) => match network() {
                Ok(egress) => rewind::run(egress, command).await,
                Err(code) => code,
            },
        }
    });
    // Whatever is still waiting once the protocol ended (a question nobody will answer) must not
    // keep the process alive.
    runtime.shutdown_timeout(std::time::Duration::from_millis(100));
    // Records and prompts handed to their writing thread are on disk before the process ends.
    bravebot_core::record::finish_writes();
    code
}

/// The way out, with the certificates and proxy the environment names.
fn network() -> Result<Arc<Egress>, ExitCode> {
    Egress::from_env(&|name| std::env::var(name).ok())
        .map(Arc::new)
        .map_err(|e| {
            let _ = writeln!(
                std::io::stderr(),
                "bravebot: network settings unusable: {e}"
            );
            ExitCode::FAILURE
        })
}

/// Logs go to stderr, or to `BRAVEBOT_LOG_FILE`, at `BRAVEBOT_LOG` (default `warn`). Never stdout.
fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("BRAVEBOT_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    let file = std::env::var_os("BRAVEBOT_LOG_FILE").and_then(|p| {
        std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(p)
            .ok()
    });
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(false);
    match file {
        Some(f) => builder.with_writer(std::sync::Mutex::new(f)).init(),
        None => builder.with_writer(std::io::stderr).init(),
    }
    // A panic is logged where the logs go, not only on stderr, which an editor may not keep.
    let report = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        tracing::error!("panicked: {info}");
        report(info);
    }));
}

#[cfg(test)]
mod tests {
    use super::exec_args;

    // Verifies: VET-5, BIN-20
    #[test]
    fn exec_takes_json_and_vet_in_either_order_and_refuses_unknown_flags() {
        assert_eq!(
            exec_args(&["--vet", "--json", "hi"]),
            Some((true, true, "hi".to_string()))
        );
        assert_eq!(exec_args(&["hi"]), Some((false, false, "hi".to_string())));
        assert_eq!(exec_args(&["--yolo", "hi"]), None);
        assert_eq!(exec_args(&["a", "b"]), None);
        assert_eq!(exec_args(&[]), None);
    }
}
