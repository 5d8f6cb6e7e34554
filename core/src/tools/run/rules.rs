//! Which program a `run.allow` rule or a read-only table entry is about.
//!
//! A name is not a program: `git` on the line may resolve to `./git`, `node_modules/.bin/git` or a
//! virtual environment's `bin/git`, each of which the repository being worked on can supply. So
//! rules and the table are bound to resolved absolute programs. A program inside a place the
//! person opened (the workspace or an added directory) is never matched by any of them, whether
//! the path the line resolved to lies there or the file its links lead to does. A bare name matches
//! only a program found directly in one of the system's own program directories; a rule naming a
//! path matches that program exactly; a rule that is a line is compiled in the workspace root and
//! matches the plan it compiles to. `run.deny` keeps matching names anywhere, since refusing more
//! is always safe.

use std::path::{Path, PathBuf};

use super::readonly::Places;
use crate::cmdline::{Command, Plan, SystemEnvironment, compile};

/// The directories the system installs its own programs in.
pub const SYSTEM_DIRECTORIES: &[&str] = &[
    "/usr/bin",
    "/bin",
    "/usr/sbin",
    "/sbin",
    "/usr/local/bin",
    "/usr/local/sbin",
];

/// The program with every link resolved; the path itself when it cannot be resolved.
fn real(program: &Path) -> PathBuf {
    std::fs::canonicalize(program).unwrap_or_else(|_| program.to_path_buf())
}

/// Whether neither the program's path nor the file its links lead to lies in an opened place.
pub fn outside_opened(program: &Path, places: &Places) -> bool {
    !places.contain(program) && !places.contain(&real(program))
}

/// Whether the program sits directly in one of [`SYSTEM_DIRECTORIES`], comparing directories with
/// their links resolved (so `/usr/bin/../../tmp/x` is not in `/usr/bin`).
pub fn in_system_directory(program: &Path) -> bool {
    let Some(parent) = program.parent() else {
        return false;
    };
    let Ok(parent) = std::fs::canonicalize(parent) else {
        return false;
    };
    SYSTEM_DIRECTORIES
        .iter()
        .filter_map(|d| std::fs::canonicalize(d).ok())
        .any(|d| d == parent)
}

/// Whether a command is the system's own program, neither it nor its real file in an opened place:
/// what the read-only table and a bare-name rule require.
pub fn system_program(command: &Command, places: &Places) -> bool {
    in_system_directory(command.program()) && outside_opened(command.program(), places)
}

/// One `run.allow` rule, read once.
pub enum AllowRule {
    /// A program name with no `/`: the program of that name in a system directory.
    Name(String),
    /// An absolute path (or one under `~/`): exactly that program, links resolved.
    Program(PathBuf),
    /// A command line, compiled in the workspace root: the plan it compiles to.
    Line(Plan),
}

impl AllowRule {
    /// Reads a rule; `None` for an empty rule or a line that does not compile.
    pub fn read(rule: &str, workspace: &Path, home: Option<&Path>) -> Option<AllowRule> {
        let rule = rule.trim();
        if rule.is_empty() {
            return None;
        }
        let one_word = !rule.chars().any(char::is_whitespace);
        if one_word && !rule.contains('/') {
            return Some(AllowRule::Name(rule.to_string()));
        }
        if one_word && rule.starts_with('/') {
            return Some(AllowRule::Program(PathBuf::from(rule)));
        }
        if one_word && let (Some(rest), Some(home)) = (rule.strip_prefix("~/"), home) {
            return Some(AllowRule::Program(home.join(rest)));
        }
        compile(rule, &SystemEnvironment::new(workspace.to_path_buf()))
            .ok()
            .map(AllowRule::Line)
    }

    /// Whether this rule alone covers the whole plan (a line rule).
    fn covers_plan(&self, plan: &Plan, places: &Places) -> bool {
        match self {
            AllowRule::Line(rule) => {
                rule.identity() == plan.identity()
                    && plan
                        .commands()
                        .iter()
                        .all(|c| outside_opened(c.program(), places))
            }
            AllowRule::Name(_) | AllowRule::Program(_) => false,
        }
    }

    /// Whether this rule covers one command of a plan (a name or a program rule). Assignments
    /// before the program (`LD_PRELOAD=…`) change what it does, so a command with any is covered
    /// only by a line rule naming them.
    fn covers_command(&self, command: &Command, places: &Places) -> bool {
        if !command.environment().is_empty() {
            return false;
        }
        match self {
            AllowRule::Name(name) => command.name() == name && system_program(command, places),
            AllowRule::Program(path) => {
                outside_opened(command.program(), places) && real(path) == real(command.program())
            }
            AllowRule::Line(_) => false,
        }
    }
}

/// Whether the person's `run.allow` rules cover the plan: one line rule compiling to it, or every
/// command covered by a name or program rule.
pub fn allowed(rules: &[AllowRule], plan: &Plan, places: &Places) -> bool {
    rules.iter().any(|r| r.covers_plan(plan, places))
        || plan
            .commands()
            .iter()
            .all(|c| rules.iter().any(|r| r.covers_command(c, places)))
}

/// The first `run.deny` rule that refuses the plan: the line as written, a line compiling to the
/// same plan in its directory or the workspace root, or a program any step runs, by name (of the
/// path or of the file its links lead to) or by path.
pub fn denied<'r>(
    rules: &'r [String],
    line: &str,
    plan: &Plan,
    workspace: &Path,
) -> Option<&'r str> {
    let identity = plan.identity();
    let compiles_to_plan = |rule: &str, directory: &Path| {
        compile(rule, &SystemEnvironment::new(directory.to_path_buf()))
            .is_ok_and(|p| p.identity() == identity)
    };
    let names_a_program = |rule: &str| {
        plan.commands().iter().any(|c| {
            let resolved = real(c.program());
            c.name() == rule
                || resolved.file_name().and_then(|n| n.to_str()) == Some(rule)
                || (rule.starts_with('/') && real(Path::new(rule)) == resolved)
        })
    };
    rules.iter().map(String::as_str).find(|rule| {
        let rule = rule.trim();
        !rule.is_empty()
            && (rule == line.trim()
                || names_a_program(rule)
                || compiles_to_plan(rule, plan.directory())
                || compiles_to_plan(rule, workspace))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plan_in(line: &str, directory: &Path, path: &str) -> Plan {
        let env = SystemEnvironment::with(
            directory.to_path_buf(),
            None,
            std::env::split_paths(path).collect(),
        );
        compile(line, &env).expect("compiles")
    }

    // Verifies: RUNTOOL-9
    #[test]
    fn allow_rules_bind_to_resolved_programs_never_inside_an_opened_place() {
        let work = tempfile::tempdir().expect("workspace");
        let root = std::fs::canonicalize(work.path()).expect("root");
        let bin = root.join(".venv/bin");
        std::fs::create_dir_all(&bin).expect("mkdir");
        std::fs::create_dir_all(root.join("sub")).expect("mkdir");
        for script in [bin.join("uname"), root.join("uname"), root.join("build.sh")] {
            std::fs::write(&script, "#!/bin/sh\n").expect("write");
            let mut perms = std::fs::metadata(&script).expect("meta").permissions();
            std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
            std::fs::set_permissions(&script, perms).expect("chmod");
        }
        let places = Places::new([&root]);
        let system_path = "/usr/bin:/bin";
        let venv_path = format!("{}:/usr/bin:/bin", bin.display());
        let rules = |texts: &[&str]| -> Vec<AllowRule> {
            texts
                .iter()
                .filter_map(|t| AllowRule::read(t, &root, Some(Path::new("/home/nobody"))))
                .collect()
        };
        let uname = rules(&["uname"]);
        let cases = [
            (&uname, plan_in("uname -a", &root, system_path), true),
            (&uname, plan_in("uname -a", &root, &venv_path), false),
            (&uname, plan_in("./uname", &root, system_path), false),
            (
                &uname,
                plan_in("LD_PRELOAD=x uname", &root, system_path),
                false,
            ),
            (
                &rules(&["/usr/bin/uname"]),
                plan_in("uname", &root, system_path),
                true,
            ),
            (
                &rules(&[&format!("{}/uname", bin.display())]),
                plan_in("uname", &root, &venv_path),
                false,
            ),
            (
                &rules(&["./build.sh"]),
                plan_in("./build.sh", &root, system_path),
                false,
            ),
            (
                &rules(&["./build.sh"]),
                plan_in("../build.sh", &root.join("sub"), system_path),
                false,
            ),
            (
                &rules(&["uname -s"]),
                plan_in("uname -s", &root, system_path),
                true,
            ),
            (
                &rules(&["uname -s"]),
                plan_in("uname -s", &root.join("sub"), system_path),
                false,
            ),
            (
                &rules(&["uname -s"]),
                plan_in("uname -s", &root, &venv_path),
                false,
            ),
        ];
        let got: Vec<String> = cases
            .iter()
            .map(|(r, p, _)| format!("{:?} {}", p.describe(), allowed(r, p, &places)))
            .collect();
        let want: Vec<String> = cases
            .iter()
            .map(|(_, p, v)| format!("{:?} {v}", p.describe()))
            .collect();
        assert_eq!(got, want);
        // A deny rule still matches by name wherever the program is.
        let venv = plan_in("uname", &root, &venv_path);
        assert_eq!(
            denied(&["uname".into()], "uname", &venv, &root),
            Some("uname")
        );
        assert!(in_system_directory(Path::new("/usr/bin/env")));
        assert!(!in_system_directory(&bin.join("uname")));
    }
}
