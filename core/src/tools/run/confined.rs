//! Whether a line can run confined (RUN-17), and the confinement it runs under. The kernel
//! proves what the line cannot do; what is looked at here is only whether the line, as the
//! planner wrote it, could work inside the confinement at all, so that one that could not is put
//! to the person with the reason instead of failing: its directory, its programs and the paths
//! its words name.

use std::path::{Component, Path, PathBuf};
use std::sync::Arc;

use crate::cmdline::Plan;
use crate::sandbox::run::{self as confinement, Homes, RunConfinement};

/// What the person is told a confined run could touch (the run card's words, RUN-18).
pub const TOUCHES: &str = "confined: it could write only inside the workspace (no .git, no file that configures your tools) and reach no network";
/// What the person is told an unconfined run could touch.
pub const UNCONFINED: &str = "not confined: it ran with your access";

/// Why the line cannot run confined in `workspace` (its links resolved), holding back the names
/// in `held_back`, or nothing when it can.
pub fn assess(workspace: &Path, plan: &Plan, held_back: &[&str]) -> Result<(), String> {
    let level = crate::sandbox::level();
    if !level.network_denial() {
        return Err(format!(
            "confinement is unavailable here ({})",
            level.describe()
        ));
    }
    let directory = plan.directory();
    if !directory.starts_with(workspace) {
        return Err(format!(
            "it runs in {}, outside the workspace",
            directory.display()
        ));
    }
    let policy = confinement::policy(workspace, &Homes::from_env(), workspace, held_back);
    for command in plan.commands() {
        let program = crate::workspace_file::real_path(command.program());
        if !confinement::reaches(&policy, &program) {
            return Err(format!(
                "it runs {}, which a confined run may not read",
                program.display()
            ));
        }
        for word in command.arguments() {
            if let Some(path) = named_path(directory, word)
                && !confinement::reaches(&policy, &path)
            {
                return Err(format!(
                    "it names {}, outside what a confined run may reach",
                    path.display()
                ));
            }
        }
    }
    Ok(())
}

/// The path an argument names where it leaves the directory it runs in: an absolute path (or an
/// option's `=` value that is one), or a relative one that climbs with `..`.
fn named_path(directory: &Path, word: &str) -> Option<PathBuf> {
    let value = match word.split_once('=') {
        Some((flag, value)) if flag.starts_with('-') => value,
        _ => word,
    };
    let path = Path::new(value);
    if path.is_absolute() {
        return Some(crate::sandbox::policy::lexical(path));
    }
    path.components()
        .any(|c| c == Component::ParentDir)
        .then(|| crate::sandbox::policy::lexical(&directory.join(path)))
}

/// The confinement of one run of `plan` in `workspace` (its links resolved), holding back the
/// names in `held_back`, built off the runtime's workers.
pub async fn prepare(
    workspace: PathBuf,
    plan: &Plan,
    held_back: Vec<&'static str>,
) -> Result<Arc<RunConfinement>, String> {
    let directory = plan.directory().to_path_buf();
    let built = tokio::task::spawn_blocking(move || {
        confinement::prepare(
            &workspace,
            &directory,
            &Homes::from_env(),
            &held_back,
            std::env::vars_os(),
        )
    })
    .await;
    match built {
        Ok(Ok(c)) => Ok(Arc::new(c)),
        Ok(Err(refusal)) => Err(refusal.to_string()),
        Err(e) => Err(format!("the confinement could not be built: {e}")),
    }
}

/// The most entries looked at after a confined run for what it changed; past it the whole
/// workspace is marked instead.
pub const CHANGED_MAX_ENTRIES: usize = 200_000;

/// What a confined run may have written, found after it by status-change time, which a program
/// cannot set back (it can set a file's modification time, not its `ctime`).
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Changed {
    /// Regular files (and links) whose status changed since the run started.
    pub files: Vec<PathBuf>,
    /// The look was cut at [`CHANGED_MAX_ENTRIES`]: anything may have changed.
    pub cut: bool,
}

/// Everything under `workspace` whose status changed at or after `since` (seconds and
/// nanoseconds since the epoch), without following a link or entering a `.git` (which the run
/// could not write). Iterative and bounded; blocking: call it off the runtime's workers.
pub fn changed_since(workspace: &Path, since: (i64, i64)) -> Changed {
    use std::os::unix::fs::MetadataExt;
    let mut out = Changed::default();
    let mut pending = vec![workspace.to_path_buf()];
    let mut seen = 0usize;
    while let Some(dir) = pending.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            seen += 1;
            if seen > CHANGED_MAX_ENTRIES {
                out.cut = true;
                return out;
            }
            let Ok(meta) = std::fs::symlink_metadata(entry.path()) else {
                continue;
            };
            if meta.is_dir() {
                if entry.file_name() != ".git" {
                    pending.push(entry.path());
                }
            } else if (meta.ctime(), meta.ctime_nsec()) >= since {
                out.files.push(entry.path());
            }
        }
    }
    out.files.sort();
    out
}

/// The most files under one top-level directory of the workspace marked one by one; past it the
/// directory is marked instead, so a build that rewrote `target/` adds one rule, not thousands.
pub const MARKED_ONE_BY_ONE: usize = 64;

/// What to mark for the files a confined run changed: the files themselves, except where more
/// than [`MARKED_ONE_BY_ONE`] sit under one top-level directory of `workspace`, which is marked
/// whole. Pure.
pub fn marks(workspace: &Path, files: &[PathBuf]) -> (Vec<PathBuf>, Vec<PathBuf>) {
    let mut by_top: std::collections::BTreeMap<PathBuf, Vec<PathBuf>> = Default::default();
    let mut alone = Vec::new();
    for file in files {
        let mut parts = file
            .strip_prefix(workspace)
            .map(Path::components)
            .into_iter()
            .flatten();
        match (parts.next(), parts.next()) {
            (Some(top), Some(_)) => by_top
                .entry(workspace.join(top))
                .or_default()
                .push(file.clone()),
            _ => alone.push(file.clone()),
        }
    }
    let mut directories = Vec::new();
    for (top, under) in by_top {
        if under.len() > MARKED_ONE_BY_ONE {
            directories.push(top);
        } else {
            alone.extend(under);
        }
    }
    alone.sort();
    (alone, directories)
}

/// Now, as [`changed_since`] compares it: the coarse clock the filesystem stamps status times
/// with, which may lag the precise one by a tick, so a write in the same tick as the start is
/// still at or after it.
pub fn now() -> (i64, i64) {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec we own.
    let got = unsafe { libc::clock_gettime(libc::CLOCK_REALTIME_COARSE, &mut ts) };
    if got != 0 {
        // No coarse clock: a second early is early enough for any tick.
        let d = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap_or_default();
        return (i64::try_from(d.as_secs()).unwrap_or(i64::MAX) - 1, 0);
    }
    (ts.tv_sec, ts.tv_nsec)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Verifies: RUN-19
    #[test]
    fn a_change_is_found_by_status_time_even_where_its_modification_time_was_set_back() {
        let dir = tempfile::tempdir().expect("tempdir");
        let root = dir.path();
        std::fs::create_dir_all(root.join("src")).expect("src");
        std::fs::create_dir_all(root.join(".git")).expect(".git");
        std::fs::write(root.join("src/old.rs"), "old").expect("old");
        // Status times are kept to the kernel's tick: wait past it.
        std::thread::sleep(std::time::Duration::from_millis(20));
        let since = now();
        std::thread::sleep(std::time::Duration::from_millis(20));
        std::fs::write(root.join("src/new.rs"), "new").expect("new");
        let file = std::fs::File::options()
            .write(true)
            .open(root.join("src/new.rs"))
            .expect("open");
        file.set_modified(std::time::UNIX_EPOCH + std::time::Duration::from_secs(1))
            .expect("set back");
        std::fs::write(root.join(".git/config"), "x").expect("config");
        let changed = changed_since(root, since);
        assert_eq!(changed.files, vec![root.join("src/new.rs")]);
        assert!(!changed.cut);
    }

    // Verifies: RUN-19
    #[test]
    fn many_changes_under_one_top_directory_mark_the_directory_and_few_mark_each_file() {
        let w = Path::new("/w");
        let mut files: Vec<PathBuf> = (0..=MARKED_ONE_BY_ONE)
            .map(|i| w.join(format!("target/debug/f{i}")))
            .collect();
        files.push(w.join("src/lib.rs"));
        files.push(w.join("Cargo.lock"));
        let (one_by_one, directories) = marks(w, &files);
        assert_eq!(directories, vec![w.join("target")]);
        assert_eq!(one_by_one, vec![w.join("Cargo.lock"), w.join("src/lib.rs")]);
    }
}
