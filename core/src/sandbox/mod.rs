//! Confinement for processes that run code bravebot did not write: the MCP servers a person names,
//! and the command lines that run unasked under `run.confined: unasked` ([`run`]). It fails closed: a policy that cannot be applied in full is refused and nothing runs.
//!
//! [`policy`] decides (pure); this module looks at the disk for it ([`layout`]), and the backend
//! (Landlock on Linux, in `linux`) builds the ruleset the child puts itself under before `exec`.
//! Other platforms have no backend and refuse everything that must be confined.
//!
//! The environment of a confined process is its caller's: this module neither adds nor removes a
//! variable. (The MCP client, its caller, starts its servers without bravebot's credential
//! variables.)

pub mod policy;
pub mod run;

#[cfg(target_os = "linux")]
mod linux;

use std::path::{Path, PathBuf};

pub use policy::{Access, Kind, Layout, Plan, Policy, Refusal};

/// The most entries one write grant's directory is looked through for a `.git`.
pub const WALK_LIMIT: usize = 200_000;

/// What this machine offers for confining a process.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Level {
    /// Landlock's ABI version on Linux; 0 where there is none, or on another platform.
    pub abi: u32,
    pub backend: bool,
}

impl Level {
    /// Whether anything can be confined here.
    pub fn available(&self) -> bool {
        self.backend && self.abi >= policy::MIN_ABI
    }

    /// Whether the kernel can deny the network to a confined process.
    pub fn network_denial(&self) -> bool {
        self.available() && self.abi >= policy::NETWORK_ABI
    }

    /// One line, for `doctor`, `session/status` and a start question.
    pub fn describe(&self) -> String {
        match (self.backend, self.abi) {
            (false, _) => "no confinement backend on this platform: nothing that must be confined is started".into(),
            (true, 0) => "Landlock unavailable on this kernel: nothing that must be confined is started".into(),
            (true, 1) => "Landlock ABI 1 only: too old to allow renames inside a grant, so nothing that must be confined is started".into(),
            (true, v) if v < policy::NETWORK_ABI => format!(
                "Landlock ABI {v}: files confined; the network cannot be denied on this kernel, so a server that does not ask for it is not started"
            ),
            (true, v) => format!("Landlock ABI {v}: files confined, network denial enforced"),
        }
    }
}

/// Caps the Landlock ABI bravebot uses at its value (`0`: as if the kernel had none), to see what
/// a person on an older kernel sees. It can only lower what is used: confinement fails closed.
pub const ABI_CAP_VARIABLE: &str = "BRAVEBOT_LANDLOCK_ABI_AT_MOST";

/// What this machine offers, asked of the kernel (and lowered by [`ABI_CAP_VARIABLE`]).
pub fn level() -> Level {
    #[cfg(target_os = "linux")]
    {
        let cap = std::env::var(ABI_CAP_VARIABLE)
            .ok()
            .and_then(|v| v.trim().parse::<u32>().ok())
            .unwrap_or(u32::MAX);
        Level {
            abi: linux::abi().min(cap),
            backend: true,
        }
    }
    #[cfg(not(target_os = "linux"))]
    {
        Level {
            abi: 0,
            backend: false,
        }
    }
}

/// A policy ready to be put on a child: its plan and the ruleset built for it.
pub struct Confined {
    pub plan: Plan,
    #[cfg(target_os = "linux")]
    ruleset: std::os::fd::OwnedFd,
    /// The seccomp filter of a plan that denies sockets.
    #[cfg(target_os = "linux")]
    filter: Option<seccompiler::BpfProgram>,
}

impl std::fmt::Debug for Confined {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Confined")
            .field("plan", &self.plan)
            .finish()
    }
}

/// Looks at the disk for `policy`, plans it for this kernel and builds its ruleset. Blocking: run
/// it off the runtime's workers.
pub fn prepare(policy: &Policy) -> Result<Confined, Refusal> {
    let level = level();
    if !level.backend {
        return Err(Refusal::NoBackend);
    }
    // Refused before anything is looked at.
    policy::plan(policy, &Layout::default(), level.abi)?;
    let layout = layout(policy)?;
    let plan = policy::plan(policy, &layout, level.abi)?;
    #[cfg(target_os = "linux")]
    {
        let ruleset = linux::ruleset(&plan)?;
        let filter = if plan.sockets_denied {
            Some(linux::no_sockets()?)
        } else {
            None
        };
        Ok(Confined {
            plan,
            ruleset,
            filter,
        })
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = plan;
        Err(Refusal::NoBackend)
    }
}

impl Confined {
    /// Puts the child `command` will start under this confinement before its program runs. The
    /// `Confined` must outlive the spawn.
    pub fn apply(&self, command: &mut std::process::Command) {
        #[cfg(target_os = "linux")]
        linux::apply(command, &self.ruleset, self.filter.as_ref());
        #[cfg(not(target_os = "linux"))]
        let _ = command;
    }
}

/// What the disk holds under a policy's paths: each path's kind (links followed), and for each
/// write grant on a directory the `.git` entries beneath it (links not followed, nothing inside a
/// `.git` looked at) with the entries of every directory on the way to one.
pub fn layout(policy: &Policy) -> Result<Layout, Refusal> {
    let mut out = Layout::default();
    for (path, access) in policy.grants() {
        let path = policy::lexical(path);
        let kind = match std::fs::metadata(&path) {
            Ok(m) if m.is_dir() => Kind::Directory,
            Ok(_) => Kind::File,
            Err(_) => Kind::Absent,
        };
        out.kinds.insert(path.clone(), kind);
        if *access == Access::Write && kind == Kind::Directory {
            let gits = find_held_back(&path, policy)?;
            for git in &gits {
                let mut at = git.parent();
                while let Some(dir) = at.filter(|d| d.starts_with(&path)) {
                    if !out.entries.contains_key(dir) {
                        out.entries.insert(dir.to_path_buf(), entries(dir));
                    }
                    if dir == path {
                        break;
                    }
                    at = dir.parent();
                }
            }
            out.repositories.insert(path, gits);
        }
    }
    Ok(out)
}

/// Every entry `policy` holds back (each `.git`, and each name it adds) beneath `dir`, looked for
/// without following a link or entering one held back.
fn find_held_back(dir: &Path, policy: &Policy) -> Result<Vec<PathBuf>, Refusal> {
    let mut found = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    let mut seen = 0usize;
    while let Some(at) = pending.pop() {
        let Ok(read) = std::fs::read_dir(&at) else {
            continue;
        };
        for entry in read.flatten() {
            seen += 1;
            if seen > WALK_LIMIT {
                return Err(Refusal::TooLarge(dir.to_path_buf(), WALK_LIMIT));
            }
            let path = entry.path();
            let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
            if policy.holds_back(&entry.file_name()) {
                found.push(path);
            } else if is_dir {
                pending.push(path);
            }
        }
    }
    found.sort();
    Ok(found)
}

/// The entries of a directory that are files or directories; a link is left out, so nothing is
/// granted through it.
fn entries(dir: &Path) -> Vec<(PathBuf, Kind)> {
    let mut out: Vec<(PathBuf, Kind)> = std::fs::read_dir(dir)
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| {
            let t = e.file_type().ok()?;
            match () {
                () if t.is_symlink() => None,
                () if t.is_dir() => Some((e.path(), Kind::Directory)),
                () => Some((e.path(), Kind::File)),
            }
        })
        .collect();
    out.sort();
    out
}

/// The read grants every program needs to start: the system's programs, libraries and
/// configuration, and the few devices everybody writes to. A path this machine lacks is left out
/// and named like any other.
pub fn system_policy() -> Policy {
    let mut policy = Policy::deny_all();
    for dir in [
        "/usr", "/bin", "/sbin", "/lib", "/lib64", "/lib32", "/etc", "/opt", "/proc", "/sys",
    ] {
        policy = policy.read(dir);
    }
    for device in ["/dev/null", "/dev/zero", "/dev/full", "/dev/tty"] {
        policy = policy.write(device);
    }
    for device in ["/dev/urandom", "/dev/random"] {
        policy = policy.read(device);
    }
    policy
}

#[cfg(test)]
mod tests {
    use super::*;

    // Verifies: SANDBOX-6
    #[test]
    fn the_layout_finds_every_git_and_leaves_links_out() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        for d in [".git/hooks", "src", "vendor/lib/.git", "vendor/lib/x"] {
            std::fs::create_dir_all(root.join(d)).expect("mkdir");
        }
        std::fs::write(root.join("README"), "r").expect("write");
        std::os::unix::fs::symlink("/etc", root.join("etc-link")).expect("link");
        let policy = Policy::deny_all().write(root);
        let layout = layout(&policy).expect("layout");
        assert_eq!(
            layout.repositories[root],
            vec![root.join(".git"), root.join("vendor/lib/.git")]
        );
        let top = &layout.entries[root];
        assert!(top.iter().all(|(p, _)| !p.ends_with("etc-link")), "{top:?}");
        assert!(layout.entries.contains_key(&root.join("vendor")));
        let plan = policy::plan(&policy, &layout, 7).expect("plans");
        assert!(plan.rules.iter().any(|r| r.path == root.join("src")));
        assert!(
            plan.rules
                .iter()
                .any(|r| r.path == root.join("vendor/lib/x"))
        );
        assert!(
            plan.rules
                .iter()
                .all(|r| !r.path.starts_with(root.join(".git")))
        );
    }
}
