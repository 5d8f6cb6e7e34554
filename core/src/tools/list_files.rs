//! `list_files`: the names under a directory of a place the person opened.
//!
//! Names in a place the person opened reach the planner, with control characters shown as
//! pictures (CONTRACT §4.3; seed 002). Where any path at or under the directory was deliberately
//! marked untrusted, the whole listing is withheld and the planner gets one reference per entry
//! instead, each saying whether it stands for a file or a directory. The walk is sorted, bounded
//! by `depth`, by an entry cap, and like `search` by the files it may meet (`search.maxFiles`) and
//! its time (`search.maxSeconds`), runs off the runtime's workers, never follows a link, and says
//! when it stopped early.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use globset::{Glob, GlobMatcher};
use serde_json::json;

use super::args::tool_args;
use super::{Call, ToolOutput, ToolSpec, confine};
use crate::kernel::audit::{Decision, Gate};
use crate::kernel::label::Label;
use crate::kernel::labelled::Labelled;
use crate::kernel::policy::{self, PlannerText};
use crate::kernel::slot::Origin;
use crate::paths::{control_pictures, display_path};
use crate::screen::Update;
use crate::search::directory::{Cut, Kept, read_sorted};
use crate::settings::Settings;

/// Most entries one listing returns.
pub const MAX_ENTRIES: usize = 1000;

tool_args! {
    /// The arguments of `list_files`, as the planner is shown them and as a call is read.
    pub struct Args {
        directory: optional String as Routing = json!({"type": "string", "description": "workspace-relative directory; . for the root"});
        pattern: optional String as Routing = json!({"type": "string", "description": "optional glob selecting which files are wanted"});
        depth: optional u64 as Routing = json!({"type": "integer", "minimum": 1, "description": "directory levels to walk; 1 is the directory itself"});
    }
}

/// What the planner calls this tool.
pub const NAME: &str = "list_files";

pub fn spec() -> ToolSpec {
    ToolSpec {
        name: NAME,
        description: "List files under a workspace directory. Set a depth: without one the walk reaches every file \
underneath. Directories the walk did not descend into are listed with a trailing slash. `pattern` is a glob \
(*, ?, ** and braces like **/*.{rs,toml}); one without a slash matches file names at any depth, one with a slash \
is read from the directory or from the workspace root.",
        args: Args::specs(),
    }
}

/// One thing the walk found.
struct Entry {
    path: PathBuf,
    is_dir: bool,
}

struct Walk {
    entries: Vec<Entry>,
    truncated: bool,
    unreadable: usize,
    /// Why the walk stopped before the end of the tree, when a file or time cap stopped it.
    stop: Option<Stop>,
}

/// What bounds a walk besides its depth and [`MAX_ENTRIES`].
#[derive(Clone, Copy)]
struct Limits {
    /// Files met (matching the pattern or not) before the walk stops.
    max_files: u64,
    deadline: Option<Instant>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Stop {
    FileCap,
    Time,
}

impl Walk {
    /// The sentence saying the listing is partial, if it is.
    fn partial(&self, limits: &Settings) -> Option<String> {
        self.stop.map(|stop| match stop {
            Stop::FileCap => format!(
                "[partial: stopped after meeting {} files (search.maxFiles) before the walk was done; narrow the directory or the depth]",
                limits.search_max_files
            ),
            Stop::Time => format!(
                "[partial: ran out of time (search.maxSeconds is {}) before the walk was done; narrow the directory or the depth]",
                limits.search_max_seconds
            ),
        })
    }
}

pub async fn run(call: &Call<'_>) -> ToolOutput {
    let Args {
        directory,
        pattern,
        depth,
    } = match Args::read(call) {
        Ok(args) => args,
        Err(e) => return ToolOutput::error(e),
    };
    let directory = directory.as_deref().unwrap_or(".");
    let pattern = pattern.as_deref();
    let session = call.session;
    let Ok(dir) = confine(session, directory) else {
        call.record(
            Gate::Promote,
            Decision::Refused,
            format!("list_files.directory {directory} is outside the places the person opened"),
        );
        return ToolOutput::refused(format!(
            "{directory} is outside the workspace and the directories the person added"
        ));
    };
    let shown = display_path(&session.cwd, &dir);
    // Inside a denied place nothing is walked at all; a listing that would hold a denied path is
    // withheld below like one holding a path marked untrusted (seed 002, TRUST-9).
    let denied = session.trust.lock().denied(&dir).is_some();
    if denied {
        call.record(
            Gate::FileRead,
            Decision::Refused,
            format!("list_files {shown}: a deny rule covers it"),
        );
        return ToolOutput::refused(format!(
            "{shown} was not listed: the person's deny rule covers it, so nothing there is read or listed"
        ));
    }
    if !dir.is_dir() {
        return ToolOutput::error(format!("{shown} is not a directory"));
    }
    call.record(
        Gate::Promote,
        Decision::Allowed,
        format!("list_files.directory {shown} proposed by the model, confined and non-destructive"),
    );
    let matcher = match pattern.map(compile).transpose() {
        Ok(m) => m,
        Err(e) => return ToolOutput::error(e),
    };
    let max_depth = depth.map_or(usize::MAX, |d| {
        usize::try_from(d.max(1)).unwrap_or(usize::MAX)
    });
    let limits = Limits {
        max_files: session.settings.search_max_files,
        deadline: Instant::now()
            .checked_add(Duration::from_secs(session.settings.search_max_seconds)),
    };
    let walk = {
        let (dir, cwd, pattern) = (dir.clone(), session.cwd.clone(), pattern.map(str::to_owned));
        // The walk reads directories; it does so on a blocking thread, not a runtime worker.
        let walked = tokio::task::spawn_blocking(move || {
            walk(&dir, max_depth, limits, |p| {
                matcher.as_ref().is_none_or(|m| {
                    matches(m, pattern.as_deref().unwrap_or_default(), p, &dir, &cwd)
                })
            })
        })
        .await;
        match walked {
            Ok(walk) => walk,
            Err(_) => return ToolOutput::error("internal: the listing's walk did not finish"),
        }
    };
    let withheld = session.trust.lock().untrusted_within(&dir);
    if withheld {
        return withheld_listing(call, &shown, walk);
    }
    let mut out = String::new();
    let files = walk.entries.iter().filter(|e| !e.is_dir).count();
    out.push_str(&format!(
        "{shown}: {files} files, {} directories not descended{}\n",
        walk.entries.len() - files,
        pattern
            .map(|p| format!(" (pattern {p})"))
            .unwrap_or_default()
    ));
    for e in &walk.entries {
        let name = control_pictures(&display_path(&session.cwd, &e.path));
        out.push_str(&name);
        out.push_str(if e.is_dir { "/\n" } else { "\n" });
    }
    if walk.entries.is_empty() {
        out.push_str(if pattern.is_some() {
            "(no file matched the pattern)\n"
        } else {
            "(empty)\n"
        });
    }
    if walk.unreadable > 0 {
        out.push_str(&format!(
            "[{} directories could not be read]\n",
            walk.unreadable
        ));
    }
    if walk.truncated {
        out.push_str(&format!(
            "[truncated at {MAX_ENTRIES} entries: narrow the directory, the pattern or the depth]\n"
        ));
    }
    if let Some(partial) = walk.partial(&session.settings) {
        out.push_str(&partial);
        out.push('\n');
    }
    let mut state = session.state();
    let state = &mut *state;
    // Names in a place the person opened come with the place (seed 002): trusted, and private.
    let Ok(opened) = policy::open(Labelled::new(out, Label::TRUSTED_PRIVATE)) else {
        return ToolOutput::error("internal: a listing did not open");
    };
    let text = policy::present(
        opened,
        &format!("list_files {shown}"),
        &mut state.context,
        &mut state.audit,
    );
    ToolOutput::ok(
        text,
        format!(
            "{shown}: {} entries{}",
            walk.entries.len(),
            if walk.truncated || walk.stop.is_some() {
                " (truncated)"
            } else {
                ""
            }
        ),
    )
}

fn withheld_listing(call: &Call<'_>, shown: &str, walk: Walk) -> ToolOutput {
    let session = call.session;
    let partial = walk.partial(&session.settings);
    let mut lines = vec![format!(
        "{shown} holds a path marked untrusted or denied, so its names are withheld: one reference per entry ({} entries)",
        walk.entries.len()
    )];
    let mut references = Vec::new();
    {
        let mut state = session.state();
        for e in walk.entries {
            let name = display_path(&session.cwd, &e.path).into_bytes();
            let origin = Origin::ListingEntry {
                directory: shown.to_string(),
                is_directory: e.is_dir,
            };
            let reference = state.quarantine.put_entry(
                Labelled::new(name, Label::UNTRUSTED_PRIVATE),
                origin,
                Labelled::new(e.path, Label::UNTRUSTED_PRIVATE),
            );
            lines.push(reference.to_string());
            references.push(reference);
        }
        policy::withhold(
            &format!("list_files {shown}"),
            Label::UNTRUSTED_PRIVATE,
            "one slot per entry",
            &mut state.audit,
        );
    }
    for reference in references {
        session.screen.update(Update::Quarantined {
            origin: format!("an entry of the listing of {shown}"),
            reference,
        });
    }
    if walk.truncated {
        lines.push(format!("[truncated at {MAX_ENTRIES} entries]"));
    }
    if let Some(partial) = partial {
        lines.push(partial);
    }
    ToolOutput::ok(
        PlannerText::driver(lines.join("\n")),
        format!("{shown}: names withheld"),
    )
}

fn compile(pattern: &str) -> Result<GlobMatcher, String> {
    Glob::new(pattern)
        .map(|g| g.compile_matcher())
        .map_err(|e| {
            format!(
                "pattern `{}` is not a glob this matcher reads: {e}",
                control_pictures(pattern)
            )
        })
}

/// A pattern with a slash is tried from the listed directory and from the workspace root; one
/// without is matched against the file name.
fn matches(matcher: &GlobMatcher, pattern: &str, path: &Path, dir: &Path, root: &Path) -> bool {
    if !pattern.contains('/') {
        return path.file_name().is_some_and(|n| matcher.is_match(n));
    }
    [dir, root].iter().any(|base| {
        path.strip_prefix(base)
            .is_ok_and(|rel| matcher.is_match(rel))
    })
}

/// A breadth-first, sorted walk (it looks at names even when they will be withheld: COST-2): each directory's own entries before anything deeper, so a
/// truncated walk is the shallow part of the tree on every machine.
fn walk(root: &Path, max_depth: usize, limits: Limits, wanted: impl Fn(&Path) -> bool) -> Walk {
    let mut out = Walk {
        entries: Vec::new(),
        truncated: false,
        unreadable: 0,
        stop: None,
    };
    let mut files_met: u64 = 0;
    let mut level = vec![root.to_path_buf()];
    let mut depth = 1;
    while !level.is_empty() {
        let mut next = Vec::new();
        for dir in level {
            if limits.deadline.is_some_and(|d| Instant::now() >= d) {
                out.stop = Some(Stop::Time);
                return out;
            }
            let out_of_time = || limits.deadline.is_some_and(|d| Instant::now() >= d);
            let read = read_sorted(
                &dir,
                limits.max_files.saturating_sub(files_met),
                out_of_time,
                |e| {
                    let is_dir = e.file_type().is_ok_and(|t| t.is_dir());
                    Some(Kept {
                        name: e.file_name(),
                        value: (e.path(), is_dir),
                        counts: !is_dir,
                    })
                },
            );
            let (children, cut) = match read {
                Ok(read) => read,
                Err(_) => {
                    out.unreadable += 1;
                    continue;
                }
            };
            if cut == Some(Cut::Time) {
                out.stop = Some(Stop::Time);
                return out;
            }
            for (path, is_dir) in children.into_iter().map(|c| c.value) {
                // Version control internals are never walked: listed, not descended.
                let descend =
                    is_dir && depth < max_depth && path.file_name().is_none_or(|n| n != ".git");
                if !is_dir {
                    if files_met >= limits.max_files {
                        out.stop = Some(Stop::FileCap);
                        return out;
                    }
                    files_met += 1;
                }
                if descend {
                    next.push(path);
                } else if is_dir || wanted(&path) {
                    if out.entries.len() >= MAX_ENTRIES {
                        out.truncated = true;
                        return out;
                    }
                    out.entries.push(Entry { path, is_dir });
                }
            }
            // The directory held more files than the walk could still meet: the walk ends here,
            // whether or not the cap was met above.
            if cut == Some(Cut::Files) {
                out.stop = Some(Stop::FileCap);
                return out;
            }
        }
        level = next;
        depth += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    // Verifies: LIST-2
    #[test]
    fn list_files_glob_with_braces_and_globstar() {
        let m = compile("**/*.{rs,toml}")
            .map_err(|e| e.to_string())
            .expect("glob compiles");
        let root = Path::new("/w");
        assert!(matches(
            &m,
            "**/*.{rs,toml}",
            Path::new("/w/a/b/c.rs"),
            root,
            root
        ));
        assert!(matches(
            &m,
            "**/*.{rs,toml}",
            Path::new("/w/Cargo.toml"),
            root,
            root
        ));
        assert!(!matches(
            &m,
            "**/*.{rs,toml}",
            Path::new("/w/a/b.md"),
            root,
            root
        ));
        let m = compile("*.md")
            .map_err(|e| e.to_string())
            .expect("glob compiles");
        assert!(matches(
            &m,
            "*.md",
            Path::new("/w/deep/x/readme.md"),
            root,
            root
        ));
    }

    const UNBOUNDED: Limits = Limits {
        max_files: u64::MAX,
        deadline: None,
    };

    // Verifies: LIST-4
    #[test]
    fn a_walk_stops_at_the_file_cap_and_at_the_deadline_and_says_which() {
        let tmp = tempfile::tempdir().expect("tempdir");
        for i in 0..30 {
            std::fs::write(tmp.path().join(format!("f{i:02}.txt")), "x").expect("write");
        }
        let capped = Limits {
            max_files: 10,
            deadline: None,
        };
        let w = walk(tmp.path(), usize::MAX, capped, |_| false);
        assert_eq!(w.stop, Some(Stop::FileCap));
        assert!(w.entries.is_empty());
        let past = Limits {
            max_files: u64::MAX,
            deadline: Some(Instant::now()),
        };
        assert_eq!(
            walk(tmp.path(), usize::MAX, past, |_| true).stop,
            Some(Stop::Time)
        );
        let whole = walk(tmp.path(), usize::MAX, UNBOUNDED, |_| true);
        assert_eq!((whole.stop, whole.entries.len()), (None, 30));
    }

    // Verifies: LIST-1
    #[test]
    fn list_files_walk_is_bounded_by_depth_and_names_what_it_stopped_at() {
        let tmp = tempfile::tempdir().expect("tempdir");
        std::fs::create_dir_all(tmp.path().join("a/b")).expect("mkdir");
        std::fs::write(tmp.path().join("top.txt"), "x").expect("write");
        std::fs::write(tmp.path().join("a/inner.txt"), "x").expect("write");
        std::fs::write(tmp.path().join("a/b/deep.txt"), "x").expect("write");
        let w = walk(tmp.path(), 2, UNBOUNDED, |_| true);
        let names: Vec<String> = w
            .entries
            .iter()
            .map(|e| display_path(tmp.path(), &e.path) + if e.is_dir { "/" } else { "" })
            .collect();
        assert_eq!(names, ["top.txt", "a/b/", "a/inner.txt"]);
    }
}
