//! The facts a command line is compiled against, behind one trait: the directory, the home
//! directory, which programs exist, and what a directory holds.
//!
//! The compiler asks these questions and does nothing else with the outside world, so it is
//! tested against [`FixedEnvironment`] (facts written down as data) and run against
//! [`SystemEnvironment`] (the process's `PATH` and `HOME`, and the disk).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// One name in a directory listing.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DirectoryEntry {
    /// The file name, never `.` or `..`.
    pub name: String,
    /// Whether it is a directory (a link to a directory counts).
    pub is_dir: bool,
    /// Whether it is a symbolic link; a walk through `**` does not descend into one.
    pub is_link: bool,
}

/// What the compiler may know about the machine.
pub trait Environment {
    /// The directory the line runs in; absolute.
    fn directory(&self) -> &Path;
    /// The person's home directory, for a leading `~`; `None` refuses the `~`.
    fn home(&self) -> Option<&Path>;
    /// The absolute path a bare program name (no `/`) resolves to, if any.
    fn find_program(&self, name: &str) -> Option<PathBuf>;
    /// Whether `path` (absolute) is an executable file.
    fn is_executable(&self, path: &Path) -> bool;
    /// The entries of the directory at `path` (absolute), in any order, without `.` and `..`;
    /// `None` when it is not a directory that can be read. Names that are not UTF-8 are left out.
    fn list_directory(&self, path: &Path) -> Option<Vec<DirectoryEntry>>;
}

/// The real machine: `PATH` and `HOME` as the process has them, and the disk.
#[derive(Clone, Debug)]
pub struct SystemEnvironment {
    directory: PathBuf,
    home: Option<PathBuf>,
    path: Vec<PathBuf>,
}

impl SystemEnvironment {
    /// The environment for a line run in `directory` (absolute), with this process's `PATH` and
    /// `HOME`.
    pub fn new(directory: PathBuf) -> Self {
        let home = std::env::var_os("HOME")
            .map(PathBuf::from)
            .filter(|home| home.is_absolute());
        let path = std::env::var_os("PATH")
            .map(|value| std::env::split_paths(&value).collect())
            .unwrap_or_default();
        Self::with(directory, home, path)
    }

    /// The environment with the home directory and program search path given. Entries of `path`
    /// that are not absolute are skipped: a relative one would make a name mean a different
    /// program in each directory.
    pub fn with(directory: PathBuf, home: Option<PathBuf>, path: Vec<PathBuf>) -> Self {
        let path = path.into_iter().filter(|dir| dir.is_absolute()).collect();
        Self {
            directory,
            home,
            path,
        }
    }
}

impl Environment for SystemEnvironment {
    fn directory(&self) -> &Path {
        &self.directory
    }

    fn home(&self) -> Option<&Path> {
        self.home.as_deref()
    }

    fn find_program(&self, name: &str) -> Option<PathBuf> {
        if name.is_empty() || name.contains('/') {
            return None;
        }
        self.path
            .iter()
            .map(|dir| dir.join(name))
            .find(|candidate| self.is_executable(candidate))
    }

    fn is_executable(&self, path: &Path) -> bool {
        let Ok(meta) = std::fs::metadata(path) else {
            return false;
        };
        if !meta.is_file() {
            return false;
        }
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            meta.permissions().mode() & 0o111 != 0
        }
        #[cfg(not(unix))]
        {
            true
        }
    }

    fn list_directory(&self, path: &Path) -> Option<Vec<DirectoryEntry>> {
        let entries = std::fs::read_dir(path).ok()?;
        let mut out = Vec::new();
        for entry in entries.filter_map(Result::ok) {
            let Ok(name) = entry.file_name().into_string() else {
                continue;
            };
            let is_link = entry.file_type().is_ok_and(|kind| kind.is_symlink());
            let is_dir = if is_link {
                std::fs::metadata(entry.path()).is_ok_and(|meta| meta.is_dir())
            } else {
                entry.file_type().is_ok_and(|kind| kind.is_dir())
            };
            out.push(DirectoryEntry {
                name,
                is_dir,
                is_link,
            });
        }
        Some(out)
    }
}

/// An environment written down as data: for tests, and for callers that already hold the facts.
/// Programs are found by name, files and directories by absolute path; a directory exists when
/// it was added or holds something that was.
#[derive(Clone, Debug, Default)]
pub struct FixedEnvironment {
    directory: PathBuf,
    home: Option<PathBuf>,
    programs: BTreeMap<String, PathBuf>,
    executables: BTreeSet<PathBuf>,
    /// Every path known, mapped to whether it is a directory.
    paths: BTreeMap<PathBuf, bool>,
    links: BTreeSet<PathBuf>,
}

impl FixedEnvironment {
    /// An environment whose line runs in `directory` (absolute), with no home and no programs.
    pub fn new(directory: impl Into<PathBuf>) -> Self {
        let directory = directory.into();
        let mut environment = Self {
            directory: directory.clone(),
            ..Self::default()
        };
        environment.add_dir(directory);
        environment
    }

    /// Sets the home directory.
    pub fn home(mut self, home: impl Into<PathBuf>) -> Self {
        self.home = Some(home.into());
        self
    }

    /// Adds programs found on the search path as `/usr/bin/<name>`.
    pub fn programs(mut self, names: &[&str]) -> Self {
        for name in names {
            self = self.program(name, Path::new("/usr/bin").join(name));
        }
        self
    }

    /// Adds a program found on the search path at `path`.
    pub fn program(mut self, name: &str, path: impl Into<PathBuf>) -> Self {
        let path = path.into();
        self.programs.insert(name.to_owned(), path.clone());
        self.executables.insert(path.clone());
        self.add_file(path);
        self
    }

    /// Adds an executable file at `path` (absolute), reachable by a name with a `/`.
    pub fn executable(mut self, path: impl Into<PathBuf>) -> Self {
        let path = path.into();
        self.executables.insert(path.clone());
        self.add_file(path);
        self
    }

    /// Adds files; a path ending in `/` is a directory. Relative paths are taken from the
    /// directory the line runs in.
    pub fn files(mut self, paths: &[&str]) -> Self {
        for path in paths {
            let absolute = self.directory.join(path);
            if path.ends_with('/') {
                self.add_dir(absolute);
            } else {
                self.add_file(absolute);
            }
        }
        self
    }

    /// Adds a symbolic link to a directory; a walk through `**` does not descend into it.
    pub fn linked_dir(mut self, path: &str) -> Self {
        let absolute = self.directory.join(path);
        self.add_dir(absolute.clone());
        self.links.insert(absolute);
        self
    }

    fn add_file(&mut self, path: PathBuf) {
        if let Some(parent) = path.parent() {
            self.add_dir(parent.to_path_buf());
        }
        self.paths.entry(path).or_insert(false);
    }

    fn add_dir(&mut self, path: PathBuf) {
        let mut current = Some(path.as_path());
        while let Some(dir) = current {
            self.paths.insert(dir.to_path_buf(), true);
            current = dir.parent();
        }
    }
}

/// `path` with `.` dropped and `..` taken back a segment: right for a tree written down as data,
/// which has no links to make the two differ.
fn lexical(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for component in path.components() {
        match component {
            std::path::Component::CurDir => {}
            std::path::Component::ParentDir => {
                out.pop();
            }
            other => out.push(other.as_os_str()),
        }
    }
    out
}

impl Environment for FixedEnvironment {
    fn directory(&self) -> &Path {
        &self.directory
    }

    fn home(&self) -> Option<&Path> {
        self.home.as_deref()
    }

    fn find_program(&self, name: &str) -> Option<PathBuf> {
        self.programs.get(name).cloned()
    }

    fn is_executable(&self, path: &Path) -> bool {
        self.executables.contains(&lexical(path))
    }

    fn list_directory(&self, path: &Path) -> Option<Vec<DirectoryEntry>> {
        let path = lexical(path);
        let path = path.as_path();
        if self.paths.get(path) != Some(&true) {
            return None;
        }
        let entries = self
            .paths
            .iter()
            .filter(|(candidate, _)| candidate.parent() == Some(path))
            .filter_map(|(candidate, &is_dir)| {
                let name = candidate.file_name()?.to_str()?.to_owned();
                let is_link = self.links.contains(candidate);
                Some(DirectoryEntry {
                    name,
                    is_dir,
                    is_link,
                })
            })
            .collect();
        Some(entries)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Verifies: RUN-12
    #[test]
    fn run_system_environment_finds_programs_on_path_and_lists_directories() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        let tool = bin.join("tool");
        std::fs::write(&tool, "#!/bin/sh\n").unwrap();
        let plain = bin.join("plain");
        std::fs::write(&plain, "not a program").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&tool, std::fs::Permissions::from_mode(0o755)).unwrap();
            std::fs::set_permissions(&plain, std::fs::Permissions::from_mode(0o644)).unwrap();
        }
        let env = SystemEnvironment::with(
            dir.path().to_path_buf(),
            None,
            vec![PathBuf::from("relative"), bin.clone()],
        );
        assert_eq!(env.find_program("tool"), Some(tool.clone()));
        assert_eq!(env.find_program("plain"), None);
        assert_eq!(env.find_program("bin/tool"), None);
        assert!(env.is_executable(&tool));
        let mut names: Vec<(String, bool)> = env
            .list_directory(dir.path())
            .unwrap()
            .into_iter()
            .map(|entry| (entry.name, entry.is_dir))
            .collect();
        names.sort();
        assert_eq!(names, [("bin".to_owned(), true)]);
        assert_eq!(env.list_directory(&tool), None);
    }
}
