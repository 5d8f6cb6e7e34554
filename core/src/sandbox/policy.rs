//! The confinement policy and the plan a backend installs for it. Pure: no filesystem, no process,
//! no kernel. What the disk holds arrives as [`Layout`], gathered by the caller, and what the kernel
//! offers as a Landlock ABI version, so every decision here can be tested without either.
//!
//! A [`Policy`] starts denying everything; grants accumulate onto it. [`plan`] turns a policy into
//! the rules to install, or refuses it whole, naming why:
//!
//! - a kernel below Landlock ABI 2 has no right governing renames, so nothing is confined there;
//! - a policy that would confine nothing (a write grant on `/`) is not a confinement;
//! - a policy denying the network on a kernel that cannot deny it (below ABI 4) is refused rather
//!   than run with a guarantee that is not in force;
//! - a path not on disk is left out and named, never replaced by its parent;
//! - a write grant on a directory holding a `.git` (anywhere beneath it) is installed around the
//!   `.git`: everything beside it writable, the `.git` and the directories leading to it readable.

use std::collections::BTreeMap;
use std::path::{Component, Path, PathBuf};

/// What a grant allows on a path and everything beneath it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Access {
    /// Read files, list directories, execute programs.
    Read,
    /// Everything reading allows, and create, write, truncate, remove and rename.
    Write,
}

/// What a confined process may reach: nothing but its grants, and the network only if asked.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Policy {
    grants: Vec<(PathBuf, Access)>,
    network: bool,
    /// Names (compared without case) held back from every write grant wherever they appear
    /// beneath it, beside `.git`, which always is.
    held_back: Vec<String>,
    /// No socket may be made at all (`socket(2)` fails), beside the network rights.
    no_sockets: bool,
}

impl Policy {
    /// Denies everything: no path, no network.
    pub fn deny_all() -> Policy {
        Policy::default()
    }

    /// Adds a grant to read `path` and what is beneath it.
    pub fn read(mut self, path: impl Into<PathBuf>) -> Policy {
        self.grants.push((path.into(), Access::Read));
        self
    }

    /// Adds a grant to write (and read) `path` and what is beneath it.
    pub fn write(mut self, path: impl Into<PathBuf>) -> Policy {
        self.grants.push((path.into(), Access::Write));
        self
    }

    /// Lets the process reach the network (it is denied otherwise).
    pub fn network(mut self, allowed: bool) -> Policy {
        self.network = allowed;
        self
    }

    /// Holds every entry named `name` (a file or a directory, compared without case) beneath a
    /// write grant back from writing, as a `.git` is.
    pub fn hold_back(mut self, name: &str) -> Policy {
        if !self.held_back.iter().any(|n| n.eq_ignore_ascii_case(name)) {
            self.held_back.push(name.to_string());
        }
        self
    }

    /// Whether an entry called `name` is held back from writing: `.git`, and the names added.
    pub fn holds_back(&self, name: &std::ffi::OsStr) -> bool {
        let name = name.to_string_lossy();
        name == ".git" || self.held_back.iter().any(|n| name.eq_ignore_ascii_case(n))
    }

    /// Makes no socket of any kind available: not a network one, not a local one that could
    /// reach a service on this machine.
    pub fn without_sockets(mut self) -> Policy {
        self.no_sockets = true;
        self
    }

    pub fn grants(&self) -> &[(PathBuf, Access)] {
        &self.grants
    }

    pub fn allows_network(&self) -> bool {
        self.network
    }

    /// Refuses a policy that is not a confinement: a relative or empty path (which would mean
    /// whatever the directory is at the time), or a write grant on the root of the filesystem,
    /// however it is spelled.
    pub fn check(&self) -> Result<(), Refusal> {
        for (path, access) in &self.grants {
            if !path.is_absolute() {
                return Err(Refusal::NotAbsolute(path.clone()));
            }
            if *access == Access::Write && lexical(path) == Path::new("/") {
                return Err(Refusal::ConfinesNothing);
            }
        }
        Ok(())
    }
}

/// `.` and `..` taken out lexically: `/..` is `/`.
pub fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}

/// What is at a granted path, as the caller found it on disk.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    Directory,
    /// A regular file, a device or anything else that is not a directory.
    File,
    Absent,
}

/// What the disk holds under the policy's paths, gathered by the caller: the kind of each path
/// (after links), each held-back entry (a `.git`, or a name the policy holds back) found beneath a
/// write grant, and the entries of every directory between a write grant and one under it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Layout {
    pub kinds: BTreeMap<PathBuf, Kind>,
    /// Per write-granted directory, the held-back entries (each `.git`, and each name the policy
    /// holds back) found beneath it.
    pub repositories: BTreeMap<PathBuf, Vec<PathBuf>>,
    /// The entries (full paths, with their kinds) of each directory on the way to a `.git`.
    pub entries: BTreeMap<PathBuf, Vec<(PathBuf, Kind)>>,
}

/// The rights one rule gives. Directory rights reach everything beneath; file rights only the
/// file.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Rights {
    ReadDirectory,
    WriteDirectory,
    ReadFile,
    WriteFile,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rule {
    pub path: PathBuf,
    pub rights: Rights,
}

/// The lowest Landlock ABI that confines anything: the second, the first with a right for
/// moving a file between directories.
pub const MIN_ABI: u32 = 2;
/// The first Landlock ABI that can deny TCP connections.
pub const NETWORK_ABI: u32 = 4;

/// What a backend installs for a policy, and what differs from the policy as written.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Plan {
    pub rules: Vec<Rule>,
    /// Paths the policy named that are not on disk: left out, never replaced by a parent.
    pub left_out: Vec<PathBuf>,
    /// Each held-back entry beneath a write grant (a `.git`, a name the policy holds back),
    /// readable but not writable.
    pub held_back: Vec<PathBuf>,
    /// Directories on the way to a held-back `.git`: readable, and what is beside the `.git` in
    /// them writable, but no new entry may be made directly in them.
    pub no_new_entries: Vec<PathBuf>,
    /// Whether the kernel denies the network to the process.
    pub network_denied: bool,
    /// Whether the process may make no socket at all (a seccomp filter says so).
    pub sockets_denied: bool,
    pub abi: u32,
}

/// Why a policy was not applied. Nothing runs after one.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Refusal {
    #[error("no confinement backend on this platform, so nothing that must be confined is started")]
    NoBackend,
    #[error(
        "Landlock is not available on this kernel, so nothing that must be confined is started"
    )]
    Unavailable,
    #[error(
        "this kernel offers Landlock ABI {0} only, which cannot allow a rename inside a grant (ABI 2, Linux 5.19, is needed), so nothing that must be confined is started"
    )]
    TooOld(u32),
    #[error(
        "the network is to be denied, and this kernel (Landlock ABI {0}) cannot deny it (ABI 4, Linux 6.7, is needed), so the process was not started"
    )]
    NetworkNotEnforceable(u32),
    #[error("the kernel refused the ruleset ({0}), so nothing was started")]
    Ruleset(String),
    #[error("a write grant on / confines nothing, so the policy was refused")]
    ConfinesNothing,
    #[error("the grant {} is not an absolute path, so the policy was refused", .0.display())]
    NotAbsolute(PathBuf),
    #[error("the grant {} could not be installed ({}), so the policy was refused", .0.display(), .1)]
    NotInstalled(PathBuf, String),
    #[error(
        "{} holds more than {} entries to look through for entries to hold back (a .git), so the write grant was refused",
        .0.display(), .1
    )]
    TooLarge(PathBuf, usize),
}

/// Plans the rules for a policy on a kernel offering Landlock ABI `abi` (0: none), given what the
/// disk holds.
pub fn plan(policy: &Policy, layout: &Layout, abi: u32) -> Result<Plan, Refusal> {
    match abi {
        0 => return Err(Refusal::Unavailable),
        1 => return Err(Refusal::TooOld(1)),
        _ => {}
    }
    policy.check()?;
    if !policy.network && abi < NETWORK_ABI {
        return Err(Refusal::NetworkNotEnforceable(abi));
    }
    // The widest access each path was granted.
    let mut wanted: BTreeMap<PathBuf, Access> = BTreeMap::new();
    for (path, access) in &policy.grants {
        let entry = wanted.entry(lexical(path)).or_insert(*access);
        *entry = (*entry).max(*access);
    }
    let mut out = Plan {
        rules: Vec::new(),
        left_out: Vec::new(),
        held_back: Vec::new(),
        no_new_entries: Vec::new(),
        network_denied: !policy.network,
        sockets_denied: policy.no_sockets,
        abi,
    };
    for (path, access) in wanted {
        let kind = layout.kinds.get(&path).copied().unwrap_or(Kind::Absent);
        match (kind, access) {
            (Kind::Absent, _) => out.left_out.push(path),
            (Kind::File, Access::Read) => out.rules.push(Rule {
                path,
                rights: Rights::ReadFile,
            }),
            (Kind::File, Access::Write) => out.rules.push(Rule {
                path,
                rights: Rights::WriteFile,
            }),
            (Kind::Directory, Access::Read) => out.rules.push(Rule {
                path,
                rights: Rights::ReadDirectory,
            }),
            (Kind::Directory, Access::Write) => {
                let gits = layout.repositories.get(&path).cloned().unwrap_or_default();
                write_around(&path, &gits, layout, &mut out);
            }
        }
    }
    Ok(out)
}

/// A write grant on `dir` that leaves every `.git` in `gits` unwritable. Landlock cannot take a
/// directory back out of a grant, so the grant is split: the directories on the way from `dir` to
/// each `.git` are readable, and every other entry in them is granted writing in full.
fn write_around(dir: &Path, gits: &[PathBuf], layout: &Layout, out: &mut Plan) {
    if gits.is_empty() {
        out.rules.push(Rule {
            path: dir.to_path_buf(),
            rights: Rights::WriteDirectory,
        });
        return;
    }
    // The directories between `dir` (included) and each `.git` (excluded).
    let mut spine: Vec<PathBuf> = Vec::new();
    for git in gits {
        let mut at = git.parent();
        while let Some(p) = at {
            if !p.starts_with(dir) {
                break;
            }
            if !spine.iter().any(|s| s == p) {
                spine.push(p.to_path_buf());
            }
            if p == dir {
                break;
            }
            at = p.parent();
        }
        out.held_back.push(git.clone());
    }
    spine.sort();
    out.rules.push(Rule {
        path: dir.to_path_buf(),
        rights: Rights::ReadDirectory,
    });
    for directory in &spine {
        out.no_new_entries.push(directory.clone());
        for (entry, kind) in layout.entries.get(directory).into_iter().flatten() {
            if spine.contains(entry) || gits.contains(entry) {
                continue;
            }
            out.rules.push(Rule {
                path: entry.clone(),
                rights: match kind {
                    Kind::Directory => Rights::WriteDirectory,
                    _ => Rights::WriteFile,
                },
            });
        }
    }
}

impl Plan {
    /// One line a fact, for a question, `doctor` and `status`: what differs from the policy as
    /// written, and the network.
    pub fn notes(&self) -> Vec<String> {
        let mut lines = Vec::new();
        for path in &self.left_out {
            lines.push(format!(
                "left out, not on disk: {} (nothing granted in its place)",
                path.display()
            ));
        }
        for git in &self.held_back {
            lines.push(format!("not writable: {}", git.display()));
        }
        for dir in &self.no_new_entries {
            lines.push(format!(
                "no new entries directly in {} (it leads to an entry held back)",
                dir.display()
            ));
        }
        lines.push(if self.network_denied {
            format!(
                "network: denied, enforced by the kernel (Landlock ABI {})",
                self.abi
            )
        } else {
            "network: allowed".to_string()
        });
        if self.sockets_denied {
            lines.push("sockets: none can be made (a seccomp filter)".to_string());
        }
        lines
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn layout(kinds: &[(&str, Kind)]) -> Layout {
        Layout {
            kinds: kinds.iter().map(|(p, k)| (PathBuf::from(p), *k)).collect(),
            ..Layout::default()
        }
    }

    // Verifies: SANDBOX-2
    #[test]
    fn a_policy_starts_denying_everything_and_grants_accumulate() {
        let none = plan(&Policy::deny_all(), &Layout::default(), 7).expect("plans");
        assert!(none.rules.is_empty() && none.network_denied);
        let policy = Policy::deny_all().read("/usr").write("/w").read("/w");
        let l = layout(&[("/usr", Kind::Directory), ("/w", Kind::Directory)]);
        let p = plan(&policy, &l, 7).expect("plans");
        assert_eq!(
            p.rules,
            vec![
                Rule {
                    path: "/usr".into(),
                    rights: Rights::ReadDirectory
                },
                Rule {
                    path: "/w".into(),
                    rights: Rights::WriteDirectory
                },
            ]
        );
    }

    // Verifies: SANDBOX-2
    #[test]
    fn a_write_grant_on_the_root_however_spelled_is_refused() {
        for root in ["/", "/..", "/usr/..", "/./"] {
            assert_eq!(
                plan(&Policy::deny_all().write(root), &Layout::default(), 7),
                Err(Refusal::ConfinesNothing),
                "{root}"
            );
        }
        assert_eq!(
            plan(&Policy::deny_all().write("rel"), &Layout::default(), 7),
            Err(Refusal::NotAbsolute("rel".into()))
        );
        // Reading the root still confines writes.
        assert!(
            plan(
                &Policy::deny_all().read("/"),
                &layout(&[("/", Kind::Directory)]),
                7
            )
            .is_ok()
        );
    }

    // Verifies: SANDBOX-1
    #[test]
    fn kernels_without_landlock_abi_2_are_refused_not_degraded() {
        let policy = Policy::deny_all().network(true);
        assert_eq!(
            plan(&policy, &Layout::default(), 0),
            Err(Refusal::Unavailable)
        );
        assert_eq!(
            plan(&policy, &Layout::default(), 1),
            Err(Refusal::TooOld(1))
        );
        assert!(plan(&policy, &Layout::default(), 2).is_ok());
    }

    // Verifies: SANDBOX-3
    #[test]
    fn network_denial_is_refused_where_the_kernel_cannot_enforce_it() {
        let denied = Policy::deny_all();
        assert_eq!(
            plan(&denied, &Layout::default(), 3),
            Err(Refusal::NetworkNotEnforceable(3))
        );
        assert!(plan(&denied, &Layout::default(), 4).is_ok_and(|p| p.network_denied));
        let allowed = Policy::deny_all().network(true);
        assert!(plan(&allowed, &Layout::default(), 3).is_ok_and(|p| !p.network_denied));
    }

    // Verifies: SANDBOX-5
    #[test]
    fn an_absent_path_is_left_out_and_named_never_its_parent() {
        let policy = Policy::deny_all().read("/home/a/.pyenv").read("/usr");
        let l = layout(&[("/usr", Kind::Directory), ("/home/a", Kind::Directory)]);
        let p = plan(&policy, &l, 7).expect("plans");
        assert_eq!(p.left_out, vec![PathBuf::from("/home/a/.pyenv")]);
        assert!(p.rules.iter().all(|r| r.path == Path::new("/usr")), "{p:?}");
        assert!(p.notes()[0].contains("/home/a/.pyenv"));
    }

    // Verifies: SANDBOX-6
    #[test]
    fn a_write_grant_holding_a_git_is_installed_around_it() {
        let mut l = layout(&[("/w", Kind::Directory)]);
        l.repositories
            .insert("/w".into(), vec!["/w/.git".into(), "/w/sub/.git".into()]);
        l.entries.insert(
            "/w".into(),
            vec![
                ("/w/.git".into(), Kind::Directory),
                ("/w/src".into(), Kind::Directory),
                ("/w/README".into(), Kind::File),
                ("/w/sub".into(), Kind::Directory),
            ],
        );
        l.entries.insert(
            "/w/sub".into(),
            vec![
                ("/w/sub/.git".into(), Kind::Directory),
                ("/w/sub/lib".into(), Kind::Directory),
            ],
        );
        let p = plan(&Policy::deny_all().write("/w"), &l, 7).expect("plans");
        let rule = |path: &str, rights| Rule {
            path: path.into(),
            rights,
        };
        assert_eq!(
            p.rules,
            vec![
                rule("/w", Rights::ReadDirectory),
                rule("/w/src", Rights::WriteDirectory),
                rule("/w/README", Rights::WriteFile),
                rule("/w/sub/lib", Rights::WriteDirectory),
            ]
        );
        assert_eq!(p.held_back.len(), 2);
        assert_eq!(
            p.no_new_entries,
            vec![PathBuf::from("/w"), PathBuf::from("/w/sub")]
        );
    }
}
