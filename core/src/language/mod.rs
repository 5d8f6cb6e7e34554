//! The language servers of one session: which server a file's extension calls for, finding its
//! binary, starting it once the person approved, keeping it for the session, restarting it once
//! after a crash, and stopping it when the session ends.
//!
//! The table is fixed (seed 004): Rust → `rust-analyzer`; TypeScript and JavaScript →
//! `typescript-language-server --stdio`, or the project's own `tsc --lsp --stdio` where the
//! project carries TypeScript 7 (which has no `tsserver.js`); Python → `pyright-langserver
//! --stdio`; Go → `gopls`; C and C++ → `clangd`. The binary must be on `PATH`.
//!
//! A server is one child per language per session, started through [`crate::process::spawn`] in
//! its own process group with piped stdio ([`rpc`] speaks JSON-RPC over it). Asking the person is
//! the `lsp` tool's part; this module remembers the answer. A server's index cache goes under
//! `~/.bravebot/lsp/<workspace key>/<language>/` where the server lets us choose (rust-analyzer's
//! target directory, gopls's cache); clangd would write its background index inside the tree, so
//! it runs without one.
//!
//! ```no_run
//! # async fn f() {
//! use bravebot_core::language::{Language, LanguageServers, Limits};
//! let servers = LanguageServers::new("/src/project".into(), None, std::env::var_os("PATH"), Limits::default());
//! let launch = servers.launch(Language::Python).expect("pyright-langserver on PATH");
//! servers.approve(Language::Python);
//! let server = servers.start(&launch).await.expect("it starts");
//! assert!(server.pid() > 0);
//! servers.stop_all();
//! # }
//! ```

pub mod position;
mod rpc;
mod server;
mod table;

use std::collections::HashMap;
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use crate::process::Withheld;

pub use rpc::RpcError;
pub use server::Server;
pub use table::{Language, Launch, Limits, covered_extensions};

/// The person's word on starting a language's server in this session.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Approval {
    Unasked,
    /// Allowed: kept for the session, restarts included.
    Approved,
    /// Refused for the rest of the session ("not in this session").
    Declined,
}

/// Why a question got no answer from a server: each a different sentence, none an empty result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Unavailable {
    /// The table has no server for this file's extension.
    NoServer { extension: String },
    /// The table's binary is not on `PATH`.
    NotFound { language: Language },
    /// It was started and did not get through `initialize` (now, or earlier in the session).
    FailedToStart {
        language: Language,
        program: String,
        reason: String,
        earlier: bool,
    },
    /// It was running and ended by itself; `restarted` says the one restart was already spent.
    Crashed {
        language: Language,
        program: String,
        exit: String,
        restarted: bool,
    },
    /// The session is ending; its servers were stopped.
    Stopped,
}

impl Unavailable {
    /// The sentence the planner is told.
    pub fn describe(&self) -> String {
        let tail = "Nothing was asked, so this is not an empty answer; do not read it as \"no references\".";
        match self {
            Unavailable::NoServer { extension } => format!(
                "no language server for {}: bravebot has none for that kind of file (it has servers for {}). {tail}",
                if extension.is_empty() {
                    "a file without an extension".to_string()
                } else {
                    format!(".{extension} files")
                },
                covered_extensions()
            ),
            Unavailable::NotFound { language } => format!(
                "the {} language server is not installed: `{}` was not found on PATH. {tail}",
                language.name(),
                language.binary()
            ),
            Unavailable::FailedToStart {
                language,
                program,
                reason,
                earlier,
            } => format!(
                "the {} language server ({program}) failed to start{}: {reason}. It is not started again in this session. {tail}",
                language.name(),
                if *earlier {
                    " earlier in this session"
                } else {
                    ""
                }
            ),
            Unavailable::Crashed {
                language,
                program,
                exit,
                restarted,
            } => format!(
                "the {} language server ({program}) crashed ({exit}){}. {tail}",
                language.name(),
                if *restarted {
                    " after its one restart of this session, so it is not started again"
                } else {
                    ""
                }
            ),
            Unavailable::Stopped => {
                format!("the session is ending and its language servers were stopped. {tail}")
            }
        }
    }
}

/// One language's place in the session.
#[derive(Default)]
struct Slot {
    approval: Option<Approval>,
    server: Option<Arc<Server>>,
    /// Restarts after a crash spent (at most one).
    restarts: u32,
    /// Why the last start failed: a failed server stays stopped for the session.
    failed: Option<String>,
}

/// What a language's server is doing now.
pub enum State {
    NotStarted,
    Running(Arc<Server>),
    /// Its output ended after `initialize`: it crashed, and may be restarted once.
    Crashed {
        server: Arc<Server>,
        restarts: u32,
    },
    FailedToStart(String),
}

/// A line of `bravebot/session/status`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ServerStatus {
    pub language: &'static str,
    pub server: String,
    pub pid: u32,
    /// `indexing`, `ready` or `crashed`.
    pub state: &'static str,
    /// Whether it runs confined (LSP-20).
    pub confined: bool,
}

/// The language servers of one session.
pub struct LanguageServers {
    workspace: PathBuf,
    cache_root: Option<PathBuf>,
    search_path: Option<OsString>,
    limits: Limits,
    withheld: Withheld,
    /// Servers start confined (`run.confined: unasked`, LSP-20): the workspace read-only, their
    /// cache writable, no socket, only listed variables.
    confined: bool,
    slots: Mutex<HashMap<Language, Slot>>,
    /// One approval-and-start at a time, so two questions never start two servers or ask twice.
    starting: tokio::sync::Mutex<()>,
    stopped: AtomicBool,
}

impl LanguageServers {
    /// The servers of a session working in `workspace`. `home` is where `~/.bravebot` lives (no
    /// cache when `None`); `search_path` is the `PATH` binaries are looked for on.
    pub fn new(
        workspace: PathBuf,
        home: Option<PathBuf>,
        search_path: Option<OsString>,
        limits: Limits,
    ) -> LanguageServers {
        let cache_root = home.map(|h| {
            h.join(".bravebot")
                .join("lsp")
                .join(workspace_key(&workspace))
        });
        LanguageServers {
            workspace,
            cache_root,
            search_path,
            limits,
            withheld: Withheld::default(),
            confined: false,
            slots: Mutex::new(HashMap::new()),
            starting: tokio::sync::Mutex::new(()),
            stopped: AtomicBool::new(false),
        }
    }

    /// The servers of a session, from the process's own `HOME` and `PATH`, each started without
    /// the variables the session withholds from its programs.
    pub fn for_session(workspace: &Path, withheld: Withheld) -> LanguageServers {
        LanguageServers::new(
            workspace.to_path_buf(),
            std::env::var_os("HOME").map(PathBuf::from),
            std::env::var_os("PATH"),
            Limits::default(),
        )
        .withholding(withheld)
    }

    /// The same servers, started confined where `confined` says (LSP-20).
    pub fn confining(mut self, confined: bool) -> LanguageServers {
        self.confined = confined;
        self
    }

    /// Whether servers start confined.
    pub fn confined(&self) -> bool {
        self.confined
    }

    /// The same servers, started without `withheld` (the fixed list alone by default).
    pub fn withholding(mut self, withheld: Withheld) -> LanguageServers {
        self.withheld = withheld;
        self
    }

    pub fn limits(&self) -> &Limits {
        &self.limits
    }

    pub fn workspace(&self) -> &Path {
        &self.workspace
    }

    fn slots(&self) -> std::sync::MutexGuard<'_, HashMap<Language, Slot>> {
        self.slots.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Where a language's server keeps its index, if this session keeps one.
    pub fn cache_dir(&self, language: Language) -> Option<PathBuf> {
        self.cache_root.as_ref().map(|r| r.join(language.id()))
    }

    /// What starting this language's server would run, or why there is nothing to run.
    pub fn launch(&self, language: Language) -> Result<Launch, Unavailable> {
        let on_path = |name: &str| find_on_path(self.search_path.as_deref(), name);
        let cache = self.cache_dir(language);
        let mut launch = Launch {
            language,
            program: PathBuf::new(),
            args: Vec::new(),
            shown: String::new(),
            env: Vec::new(),
            withheld: self.withheld.clone(),
            initialization_options: Value::Null,
            cache: None,
        };
        match language {
            Language::TypeScript => {
                if let Some(tsc) = typescript_7(&self.workspace) {
                    launch.program = tsc;
                    launch.args = vec!["--lsp".into(), "--stdio".into()];
                } else {
                    launch.program =
                        on_path(language.binary()).ok_or(Unavailable::NotFound { language })?;
                    launch.args = vec!["--stdio".into()];
                    // Requests go to the server that loaded the project, so a definition asked
                    // while it loads waits for the declaration instead of answering with the
                    // import binding; and nothing downloads type packages from the network.
                    launch.initialization_options = json!({
                        "disableAutomaticTypingAcquisition": true,
                        "tsserver": {"useSyntaxServer": "never"},
                    });
                }
            }
            Language::Python => {
                launch.program =
                    on_path(language.binary()).ok_or(Unavailable::NotFound { language })?;
                launch.args = vec!["--stdio".into()];
            }
            Language::Rust => {
                launch.program =
                    on_path(language.binary()).ok_or(Unavailable::NotFound { language })?;
                if let Some(cache) = &cache {
                    launch.initialization_options =
                        json!({"cargo": {"targetDir": cache.join("target")}});
                    launch.cache = Some(cache.clone());
                }
            }
            Language::Go => {
                launch.program =
                    on_path(language.binary()).ok_or(Unavailable::NotFound { language })?;
                if let Some(cache) = &cache {
                    launch
                        .env
                        .push(("GOPLSCACHE".into(), cache.display().to_string()));
                    launch.cache = Some(cache.clone());
                }
            }
            Language::C => {
                launch.program =
                    on_path(language.binary()).ok_or(Unavailable::NotFound { language })?;
                // clangd's background index can only be written inside the tree, next to the
                // compilation database: it runs without one and knows the files it was shown.
                launch.args = vec!["--background-index=false".into()];
            }
        }
        launch.shown = std::iter::once(launch.program.display().to_string())
            .chain(launch.args.iter().cloned())
            .collect::<Vec<_>>()
            .join(" ");
        Ok(launch)
    }

    pub fn approval(&self, language: Language) -> Approval {
        self.slots()
            .get(&language)
            .and_then(|s| s.approval)
            .unwrap_or(Approval::Unasked)
    }

    /// The person allowed this language's server for the session.
    pub fn approve(&self, language: Language) {
        self.slots().entry(language).or_default().approval = Some(Approval::Approved);
    }

    /// The person refused this language's server for the rest of the session.
    pub fn decline(&self, language: Language) {
        self.slots().entry(language).or_default().approval = Some(Approval::Declined);
    }

    /// Held while a question asks and starts, so only one does at a time.
    pub async fn start_lock(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.starting.lock().await
    }

    pub fn stopped(&self) -> bool {
        self.stopped.load(Ordering::SeqCst)
    }

    pub fn state(&self, language: Language) -> State {
        let slots = self.slots();
        let Some(slot) = slots.get(&language) else {
            return State::NotStarted;
        };
        match (&slot.server, &slot.failed) {
            (Some(s), _) if s.ended() => State::Crashed {
                server: s.clone(),
                restarts: slot.restarts,
            },
            (Some(s), _) => State::Running(s.clone()),
            (None, Some(why)) => State::FailedToStart(why.clone()),
            (None, None) => State::NotStarted,
        }
    }

    /// Every server running now.
    pub fn running(&self) -> Vec<Arc<Server>> {
        self.slots()
            .values()
            .filter_map(|s| s.server.clone())
            .filter(|s| !s.ended())
            .collect()
    }

    /// Starts a language's server (which the person approved) and keeps it for the session. A
    /// crashed server it replaces counts as the one restart. A failure is remembered: the server
    /// stays stopped for the session.
    pub async fn start(&self, launch: &Launch) -> Result<Arc<Server>, Unavailable> {
        if self.stopped() {
            return Err(Unavailable::Stopped);
        }
        let language = launch.language;
        let started = Server::start(launch, &self.workspace, &self.limits, self.confined).await;
        let mut slots = self.slots();
        let slot = slots.entry(language).or_default();
        if slot.server.take().is_some() {
            slot.restarts += 1;
        }
        match started {
            Ok(server) => {
                let server = Arc::new(server);
                if self.stopped() {
                    // The session ended while it started: it does not outlive the session.
                    server.kill();
                    return Err(Unavailable::Stopped);
                }
                slot.server = Some(server.clone());
                Ok(server)
            }
            Err(reason) => {
                slot.failed = Some(reason.clone());
                Err(Unavailable::FailedToStart {
                    language,
                    program: launch.shown.clone(),
                    reason,
                    earlier: false,
                })
            }
        }
    }

    /// `bravebot/session/status`: every server this session started and has not stopped.
    pub fn status(&self) -> Vec<ServerStatus> {
        let slots = self.slots();
        let mut out: Vec<ServerStatus> = slots
            .iter()
            .filter_map(|(language, slot)| {
                let s = slot.server.as_ref()?;
                Some(ServerStatus {
                    language: language.id(),
                    server: s.program.clone(),
                    pid: s.pid(),
                    confined: s.confined(),
                    state: if s.ended() {
                        "crashed"
                    } else if s.busy() {
                        "indexing"
                    } else {
                        "ready"
                    },
                })
            })
            .collect();
        out.sort_by(|a, b| a.language.cmp(b.language));
        out
    }

    /// Stops every server: `shutdown` and `exit` politely, in the background, and a kill of its
    /// process group once that is answered, refused or [`Limits::shutdown`] twice has passed.
    /// A server dropped before that (the process is ending) is killed by its drop. No server
    /// starts in this session afterwards.
    pub fn stop_all(&self) {
        self.stopped.store(true, Ordering::SeqCst);
        let servers: Vec<Arc<Server>> = self
            .slots()
            .values_mut()
            .filter_map(|s| s.server.take())
            .collect();
        for server in servers {
            match tokio::runtime::Handle::try_current() {
                Ok(runtime) => {
                    let limits = self.limits.clone();
                    runtime.spawn(async move { server.shutdown(&limits).await });
                }
                Err(_) => server.kill(),
            }
        }
    }
}

impl Drop for LanguageServers {
    fn drop(&mut self) {
        for slot in self.slots().values() {
            if let Some(s) = &slot.server {
                s.kill();
            }
        }
    }
}

/// The workspace's directory name under `~/.bravebot/lsp/`: its last component (for people) and
/// an FNV-1a hash of its whole path (so two `app` directories differ), stable across builds.
pub fn workspace_key(workspace: &Path) -> String {
    let mut hash: u64 = 0xcbf2_9ce4_8422_2325;
    for byte in workspace.as_os_str().as_encoded_bytes() {
        hash ^= u64::from(*byte);
        hash = hash.wrapping_mul(0x0000_0100_0000_01b3);
    }
    let name: String = workspace
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '_'
            }
        })
        .take(40)
        .collect();
    format!("{name}-{hash:016x}")
}

fn find_on_path(search_path: Option<&std::ffi::OsStr>, binary: &str) -> Option<PathBuf> {
    std::env::split_paths(search_path?)
        .filter(|d| d.is_absolute())
        .map(|d| d.join(binary))
        .find(|p| is_executable(p))
}

fn is_executable(p: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// The project's own TypeScript 7 `tsc`, where the nearest `node_modules/typescript` (in the
/// workspace or a directory above it, as typescript-language-server looks) has no `tsserver.js`
/// and a `tsc` beside it. Decided from which files exist, never from what a file says.
pub fn typescript_7(workspace: &Path) -> Option<PathBuf> {
    for dir in workspace.ancestors() {
        let package = dir.join("node_modules").join("typescript");
        if !package.is_dir() {
            continue;
        }
        if package.join("lib").join("tsserver.js").is_file() {
            return None;
        }
        let tsc = dir.join("node_modules").join(".bin").join("tsc");
        return is_executable(&tsc).then_some(tsc);
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    // Verifies: LSP-3
    #[test]
    fn the_table_chooses_by_extension_and_names_no_server_for_the_rest() {
        let of = |p: &str| Language::of(Path::new(p));
        assert_eq!(of("src/main.rs"), Some(Language::Rust));
        assert_eq!(of("web/App.TSX"), Some(Language::TypeScript));
        assert_eq!(of("lib/x.mjs"), Some(Language::TypeScript));
        assert_eq!(of("app.py"), Some(Language::Python));
        assert_eq!(of("cmd/main.go"), Some(Language::Go));
        assert_eq!(of("include/util.h"), Some(Language::C));
        assert_eq!(of("src/x.cpp"), Some(Language::C));
        assert_eq!(of("README.md"), None);
        assert_eq!(of("Makefile"), None);
        assert_eq!(Language::document_id(Path::new("a.tsx")), "typescriptreact");
        assert_eq!(Language::document_id(Path::new("a.hpp")), "cpp");
    }

    // Verifies: LSP-3
    #[test]
    fn typescript_7_is_chosen_by_which_files_exist() {
        let root = tempfile::tempdir().expect("tempdir");
        let project = root.path().join("app");
        std::fs::create_dir_all(project.join("src")).expect("mkdir");
        assert_eq!(typescript_7(&project), None);
        // TypeScript 7 one directory up: no tsserver.js, a tsc beside it.
        let ts = root.path().join("node_modules/typescript");
        std::fs::create_dir_all(ts.join("bin")).expect("mkdir");
        let bin = root.path().join("node_modules/.bin");
        std::fs::create_dir_all(&bin).expect("mkdir");
        std::fs::write(bin.join("tsc"), "#!/bin/sh\n").expect("write");
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(bin.join("tsc"), std::fs::Permissions::from_mode(0o755))
            .expect("chmod");
        assert_eq!(typescript_7(&project), Some(bin.join("tsc")));
        let servers =
            LanguageServers::new(project.clone(), None, Some("".into()), Limits::default());
        let launch = servers
            .launch(Language::TypeScript)
            .expect("the project's tsc");
        assert_eq!(launch.args, ["--lsp", "--stdio"]);
        // A TypeScript with tsserver.js (5.x or 6.x) is typescript-language-server's to run.
        std::fs::create_dir_all(ts.join("lib")).expect("mkdir");
        std::fs::write(ts.join("lib/tsserver.js"), "").expect("write");
        assert_eq!(typescript_7(&project), None);
        assert!(matches!(
            servers.launch(Language::TypeScript),
            Err(Unavailable::NotFound {
                language: Language::TypeScript
            })
        ));
    }

    // Verifies: LSP-10
    #[test]
    fn the_cache_is_keyed_by_the_workspace_and_lives_under_home() {
        let a = workspace_key(Path::new("/w/one/app"));
        let b = workspace_key(Path::new("/w/two/app"));
        assert!(a.starts_with("app-") && b.starts_with("app-") && a != b);
        assert_eq!(a, workspace_key(Path::new("/w/one/app")));
        let servers = LanguageServers::new(
            "/w/one/app".into(),
            Some("/home/p".into()),
            None,
            Limits::default(),
        );
        let dir = servers.cache_dir(Language::Rust).expect("a cache");
        assert!(dir.starts_with("/home/p/.bravebot/lsp/"));
        assert!(!dir.starts_with("/w/one/app"));
    }
}
