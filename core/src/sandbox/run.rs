//! The confinement of a command line that runs without a question under `run.confined: unasked`
//! (RUN-17): what its programs may read and write, and the environment they get, as data.
//!
//! - **Written:** the workspace, except every `.git` and every name the caller holds back (the
//!   files that configure the person's tools), wherever they are beneath it (SANDBOX-6); and a
//!   private directory made for the run, which is its `HOME` and its `TMPDIR`, removed after.
//! - **Read:** the system's directories ([`super::system_policy`]), and of the person's home only
//!   the toolchains' own caches in [`TOOLCHAIN_READS`], which hold no credential.
//! - **Written beside them:** only the lock files cargo takes on its caches ([`TOOLCHAIN_LOCKS`]),
//!   where they exist.
//! - **Network:** none. The kernel denies TCP (Landlock), and no socket of any kind can be made
//!   (seccomp), so neither UDP nor a local service's socket is in reach.
//! - **Environment:** only the variables in [`PASSED_VARIABLES`] (and `LC_*`) are handed on, so no
//!   credential variable is; `HOME` and `TMPDIR` name the private directory, `CARGO_HOME` and
//!   `RUSTUP_HOME` the real caches, and `CARGO_NET_OFFLINE` says there is no network.
//!
//! It fails closed: a policy the kernel cannot hold in full refuses ([`super::prepare`]).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::{Confined, Policy, Refusal};

/// The toolchains' caches under the person's home a confined run may read: programs and the
/// sources and packages they were given, never a file that holds a credential (cargo's
/// `credentials.toml`, `~/.npmrc`, maven's `settings.xml`, gradle's `gradle.properties` sit
/// beside these, not in them).
pub const TOOLCHAIN_READS: &[&str] = &[
    ".cargo/bin",
    ".cargo/registry",
    ".cargo/git",
    ".rustup",
    ".npm/_cacache",
    ".cache/pip",
    ".pyenv",
    ".nvm",
    ".local/bin",
    ".local/lib",
    "go/pkg/mod",
    ".m2/repository",
    ".gradle/caches",
    ".gradle/wrapper",
];

/// The files beside those caches a confined run may write, where they exist: the locks cargo
/// takes on its cache, without which it does not build.
pub const TOOLCHAIN_LOCKS: &[&str] = &[
    ".cargo/.package-cache",
    ".cargo/.package-cache-mutate",
    ".cargo/.global-cache",
];

/// The inherited variables a confined run is handed (beside every `LC_*`): the locale, the
/// terminal, who the person is, and how their toolchains are set up. Every other variable, a
/// credential among them, is not.
pub const PASSED_VARIABLES: &[&str] = &[
    "PATH",
    "LANG",
    "LANGUAGE",
    "TERM",
    "COLORTERM",
    "NO_COLOR",
    "TZ",
    "USER",
    "LOGNAME",
    "SHELL",
    "RUSTUP_TOOLCHAIN",
    "RUSTFLAGS",
    "RUSTDOCFLAGS",
    "RUST_BACKTRACE",
    "CARGO_TARGET_DIR",
    "CARGO_BUILD_JOBS",
    "CC",
    "CXX",
    "CFLAGS",
    "CXXFLAGS",
    "LDFLAGS",
    "PKG_CONFIG_PATH",
    "VIRTUAL_ENV",
    "PYTHONPATH",
    "PYENV_ROOT",
    "PYENV_VERSION",
    "GOPATH",
    "GOROOT",
    "GOFLAGS",
    "JAVA_HOME",
    "NODE_PATH",
    "NVM_DIR",
];

/// What each kind of project writes at its top when it builds, by the file that declares the
/// project: a directory where the name ends in `/`, else a file. Landlock cannot let a run make new
/// entries in a directory that holds a `.git` (the workspace's top, usually) without letting it
/// make them inside the `.git` too, so where a project declares one of these and it is missing,
/// it is made, empty, before the run: the one change bravebot makes in the workspace for a
/// confined run, and only these names.
pub const BUILD_OUTPUTS: &[(&str, &[&str])] = &[
    ("Cargo.toml", &["target/", "Cargo.lock"]),
    ("pyproject.toml", &[".pytest_cache/", "__pycache__/"]),
    ("setup.py", &[".pytest_cache/", "__pycache__/"]),
    ("setup.cfg", &[".pytest_cache/", "__pycache__/"]),
    ("pytest.ini", &[".pytest_cache/", "__pycache__/"]),
    ("tox.ini", &[".pytest_cache/", "__pycache__/"]),
    ("package.json", &["node_modules/"]),
    ("pom.xml", &["target/"]),
    ("build.gradle", &["build/"]),
    ("build.gradle.kts", &["build/"]),
    ("CMakeLists.txt", &["build/"]),
];

/// Makes what the projects at `dirs` declare they write ([`BUILD_OUTPUTS`]) where it is missing.
/// A name that exists in any form (a file, a link) is left as it is.
pub fn make_build_outputs(dirs: &[&Path]) {
    for dir in dirs {
        for (manifest, names) in BUILD_OUTPUTS {
            if !dir.join(manifest).is_file() {
                continue;
            }
            for name in *names {
                let at = dir.join(name.trim_end_matches('/'));
                if std::fs::symlink_metadata(&at).is_ok() {
                    continue;
                }
                let _ = if name.ends_with('/') {
                    std::fs::create_dir(&at)
                } else {
                    std::fs::OpenOptions::new()
                        .write(true)
                        .create_new(true)
                        .open(&at)
                        .map(drop)
                };
            }
        }
    }
}

/// Where the person's toolchains keep their caches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Homes {
    /// The person's home, if known.
    pub home: Option<PathBuf>,
    /// `CARGO_HOME`, or `~/.cargo`.
    pub cargo: Option<PathBuf>,
    /// `RUSTUP_HOME`, or `~/.rustup`.
    pub rustup: Option<PathBuf>,
}

impl Homes {
    /// Read from the environment bravebot runs in.
    pub fn from_env() -> Homes {
        let var = |name: &str| {
            std::env::var_os(name)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
                .filter(|p| p.is_absolute())
        };
        let home = var("HOME");
        Homes {
            cargo: var("CARGO_HOME").or_else(|| home.as_ref().map(|h| h.join(".cargo"))),
            rustup: var("RUSTUP_HOME").or_else(|| home.as_ref().map(|h| h.join(".rustup"))),
            home,
        }
    }
}

/// What a confined run may reach in `workspace`, holding back every entry named in `held_back`
/// beside each `.git`, with `private` as its own home and temporary directory. Pure.
pub fn policy(workspace: &Path, homes: &Homes, private: &Path, held_back: &[&str]) -> Policy {
    let mut policy = super::system_policy()
        .write(workspace)
        .write(private)
        .network(false)
        .without_sockets();
    for name in held_back {
        policy = policy.hold_back(name);
    }
    for (path, access) in policy_toolchains(homes).grants() {
        policy = match access {
            super::Access::Read => policy.read(path),
            super::Access::Write => policy.write(path),
        };
    }
    policy
}

/// What a language server started confined may reach (LSP-20): the workspace, the toolchains'
/// caches and the directory its own program sits in (links resolved) to read, its own index
/// `cache` and `private` (its `HOME` and `TMPDIR`) to write, no socket. It reads the project; it
/// changes nothing in it.
pub fn language_server_policy(
    workspace: &Path,
    homes: &Homes,
    private: &Path,
    cache: Option<&Path>,
    program_dir: Option<&Path>,
) -> Policy {
    let mut policy = super::system_policy();
    if let Some(dir) = program_dir {
        policy = policy.read(dir);
    }
    let mut policy = policy
        .read(workspace)
        .write(private)
        .network(false)
        .without_sockets();
    if let Some(cache) = cache {
        policy = policy.write(cache);
    }
    for (path, access) in policy_toolchains(homes).grants() {
        policy = match access {
            super::Access::Read => policy.read(path),
            super::Access::Write => policy.write(path),
        };
    }
    policy
}

/// The toolchains' grants alone: their caches to read, cargo's locks to write.
fn policy_toolchains(homes: &Homes) -> Policy {
    let mut policy = Policy::deny_all();
    if let Some(cargo) = &homes.cargo {
        for dir in ["bin", "registry", "git"] {
            policy = policy.read(cargo.join(dir));
        }
        for lock in TOOLCHAIN_LOCKS {
            if let Some(name) = lock.strip_prefix(".cargo/") {
                policy = policy.write(cargo.join(name));
            }
        }
    }
    if let Some(rustup) = &homes.rustup {
        policy = policy.read(rustup);
    }
    if let Some(home) = &homes.home {
        for dir in TOOLCHAIN_READS {
            if !dir.starts_with(".cargo/") && *dir != ".rustup" {
                policy = policy.read(home.join(dir));
            }
        }
    }
    policy
}

/// A language server's confinement, ready: the ruleset, its environment, its private directory.
/// Blocking: run it off the runtime's workers.
pub fn prepare_language_server(
    workspace: &Path,
    program: &Path,
    homes: &Homes,
    cache: Option<&Path>,
    inherited: impl IntoIterator<Item = (OsString, OsString)>,
) -> Result<RunConfinement, Refusal> {
    let (private, root) = private_directory("bravebot-lsp-")?;
    let real = std::fs::canonicalize(program).unwrap_or_else(|_| program.to_path_buf());
    let confined = super::prepare(&language_server_policy(
        workspace,
        homes,
        &root,
        cache,
        real.parent(),
    ))?;
    let env = environment(inherited, homes, &root);
    Ok(RunConfinement {
        confined,
        env,
        private,
    })
}

/// Whether a confined run under `policy` may read `path` at all (it lies beneath a grant).
/// `path` should be absolute and free of `..`.
pub fn reaches(policy: &Policy, path: &Path) -> bool {
    let path = super::policy::lexical(path);
    policy
        .grants()
        .iter()
        .any(|(grant, _)| path.starts_with(super::policy::lexical(grant)))
}

/// The environment of a confined run: the listed variables of `inherited`, then `HOME` and
/// `TMPDIR` naming `private`, the toolchains' homes, and that there is no network.
pub fn environment(
    inherited: impl IntoIterator<Item = (OsString, OsString)>,
    homes: &Homes,
    private: &Path,
) -> Vec<(OsString, OsString)> {
    let mut out: Vec<(OsString, OsString)> = inherited
        .into_iter()
        .filter(|(name, _)| {
            let name = name.to_string_lossy();
            PASSED_VARIABLES.contains(&name.as_ref()) || name.starts_with("LC_")
        })
        .collect();
    let mut set = |name: &str, value: OsString| {
        out.retain(|(n, _)| n != name);
        out.push((name.into(), value));
    };
    set("HOME", private.join("home").into_os_string());
    set("TMPDIR", private.join("tmp").into_os_string());
    if let Some(cargo) = &homes.cargo {
        set("CARGO_HOME", cargo.clone().into_os_string());
    }
    if let Some(rustup) = &homes.rustup {
        set("RUSTUP_HOME", rustup.clone().into_os_string());
    }
    set("CARGO_NET_OFFLINE", "true".into());
    out
}

/// A private directory with `home/` and `tmp/` in it, removed when the first is dropped, and its
/// real path, which is the one granted however `TMPDIR` is spelled.
fn private_directory(prefix: &str) -> Result<(tempfile::TempDir, PathBuf), Refusal> {
    let made = |e: std::io::Error| Refusal::Ruleset(format!("a private directory: {e}"));
    let private = tempfile::Builder::new()
        .prefix(prefix)
        .tempdir()
        .map_err(made)?;
    let root = std::fs::canonicalize(private.path()).map_err(made)?;
    for dir in ["home", "tmp"] {
        std::fs::create_dir(root.join(dir)).map_err(made)?;
    }
    Ok((private, root))
}

/// A confinement ready for one run: the ruleset, the environment, and the private directory,
/// removed when this is dropped.
pub struct RunConfinement {
    pub confined: Confined,
    pub env: Vec<(OsString, OsString)>,
    private: tempfile::TempDir,
}

impl std::fmt::Debug for RunConfinement {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RunConfinement")
            .field("confined", &self.confined)
            .field("private", &self.private.path())
            .finish_non_exhaustive()
    }
}

impl RunConfinement {
    /// The run's private home and temporary directory.
    pub fn private(&self) -> &Path {
        self.private.path()
    }
}

/// Makes the private directory and the declared build directories, and plans and builds the
/// confinement of a run in `directory` of `workspace`. Blocking (it looks through the workspace
/// for entries to hold back): run it off the runtime's workers.
pub fn prepare(
    workspace: &Path,
    directory: &Path,
    homes: &Homes,
    held_back: &[&str],
    inherited: impl IntoIterator<Item = (OsString, OsString)>,
) -> Result<RunConfinement, Refusal> {
    let (private, root) = private_directory("bravebot-run-")?;
    make_build_outputs(&[workspace, directory]);
    let confined = super::prepare(&policy(workspace, homes, &root, held_back))?;
    let env = environment(inherited, homes, &root);
    Ok(RunConfinement {
        confined,
        env,
        private,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn homes() -> Homes {
        Homes {
            home: Some("/home/p".into()),
            cargo: Some("/home/p/.cargo".into()),
            rustup: Some("/home/p/.rustup".into()),
        }
    }

    // Verifies: RUN-17, SANDBOX-8
    #[test]
    fn a_confined_run_reads_the_toolchains_caches_and_nothing_else_of_home() {
        let p = policy(Path::new("/w"), &homes(), Path::new("/tmp/r"), &[".vscode"]);
        for yes in [
            "/w/src/lib.rs",
            "/usr/bin/cargo",
            "/home/p/.cargo/bin/cargo",
            "/home/p/.cargo/registry/src/x/lib.rs",
            "/home/p/.rustup/toolchains/stable/bin/rustc",
            "/home/p/.cache/pip/http/x",
            "/tmp/r/home/.bashrc",
        ] {
            assert!(reaches(&p, Path::new(yes)), "{yes}");
        }
        for no in [
            "/home/p/.ssh/id_ed25519",
            "/home/p/.aws/credentials",
            "/home/p/.cargo/credentials.toml",
            "/home/p/.npmrc",
            "/home/p/.m2/settings.xml",
            "/home/p/notes.txt",
            "/tmp/other",
            "/w/../home/p/.ssh/id_ed25519",
        ] {
            assert!(!reaches(&p, Path::new(no)), "{no}");
        }
        assert!(!p.allows_network());
        assert!(p.holds_back(std::ffi::OsStr::new(".git")));
        assert!(p.holds_back(std::ffi::OsStr::new(".VSCode")));
        assert!(!p.holds_back(std::ffi::OsStr::new("src")));
    }

    // Verifies: RUN-17
    #[test]
    fn a_confined_run_is_handed_only_listed_variables_and_a_private_home() {
        let inherited = [
            ("PATH", "/usr/bin"),
            ("LC_ALL", "C.UTF-8"),
            ("AWS_SECRET_ACCESS_KEY", "secret"),
            ("GITHUB_TOKEN", "secret"),
            ("HOME", "/home/p"),
            ("TMPDIR", "/tmp"),
            ("SSH_AUTH_SOCK", "/run/agent"),
        ]
        .map(|(n, v)| (OsString::from(n), OsString::from(v)));
        let env = environment(inherited, &homes(), Path::new("/tmp/r"));
        let get = |name: &str| {
            env.iter()
                .find(|(n, _)| n == name)
                .map(|(_, v)| v.to_string_lossy().into_owned())
        };
        assert_eq!(get("PATH").as_deref(), Some("/usr/bin"));
        assert_eq!(get("LC_ALL").as_deref(), Some("C.UTF-8"));
        assert_eq!(get("HOME").as_deref(), Some("/tmp/r/home"));
        assert_eq!(get("TMPDIR").as_deref(), Some("/tmp/r/tmp"));
        assert_eq!(get("CARGO_HOME").as_deref(), Some("/home/p/.cargo"));
        assert_eq!(get("CARGO_NET_OFFLINE").as_deref(), Some("true"));
        for gone in ["AWS_SECRET_ACCESS_KEY", "GITHUB_TOKEN", "SSH_AUTH_SOCK"] {
            assert_eq!(get(gone), None, "{gone}");
        }
        assert_eq!(env.iter().filter(|(n, _)| n == "HOME").count(), 1);
    }
}
