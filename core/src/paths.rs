//! Path and name words shared by the session, the tools, the language client and the server: a
//! path as written made absolute, a path as shown, a file's URI, and names with their control
//! characters drawn as pictures.

use std::path::{Component, Path, PathBuf};

/// Turns a path as a person, an editor or the planner wrote it (absolute, relative to `cwd`, or a
/// `file://` URI) into an absolute path with `.` and `..` resolved lexically.
pub fn absolute(cwd: &Path, path: &Path) -> PathBuf {
    let text = path.to_string_lossy();
    let path = match url::Url::parse(&text) {
        Ok(u) if u.scheme() == "file" => u.to_file_path().unwrap_or_else(|()| path.to_path_buf()),
        _ => path.to_path_buf(),
    };
    let joined = if path.is_absolute() {
        path
    } else {
        cwd.join(path)
    };
    normalize(&joined)
}

fn normalize(path: &Path) -> PathBuf {
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

/// A path as shown to the planner and in questions: workspace-relative inside the workspace,
/// absolute elsewhere.
pub fn display_path(cwd: &Path, path: &Path) -> String {
    match path.strip_prefix(cwd) {
        Ok(rel) if rel.as_os_str().is_empty() => ".".to_string(),
        Ok(rel) => rel.display().to_string(),
        Err(_) => path.display().to_string(),
    }
}

/// The `file://` URI of an absolute path.
pub fn file_uri(path: &Path) -> String {
    url::Url::from_file_path(path)
        .map(|u| u.to_string())
        .unwrap_or_else(|()| path.display().to_string())
}

/// Shows control characters as their Unicode pictures, so a name cannot move the cursor, clear a
/// line or start a new one in what the planner or the person reads.
pub fn control_pictures(text: &str) -> String {
    text.chars()
        .map(|c| match c {
            '\u{0}'..='\u{1f}' => char::from_u32(0x2400 + c as u32).unwrap_or('\u{fffd}'),
            '\u{7f}' => '\u{2421}',
            other => other,
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    // Verifies: TOOL-3
    #[test]
    fn paths_resolve_relative_absolute_and_file_uris() {
        let cwd = Path::new("/w/proj");
        assert_eq!(
            absolute(cwd, Path::new("src/../a.rs")),
            PathBuf::from("/w/proj/a.rs")
        );
        assert_eq!(absolute(cwd, Path::new("/etc/x")), PathBuf::from("/etc/x"));
        assert_eq!(
            absolute(cwd, Path::new("file:///w/proj/my%20file.md")),
            PathBuf::from("/w/proj/my file.md")
        );
        assert_eq!(display_path(cwd, Path::new("/w/proj/a/b.rs")), "a/b.rs");
        assert_eq!(display_path(cwd, Path::new("/w/other")), "/w/other");
    }

    // Verifies: LIST-1
    #[test]
    fn control_characters_are_shown_as_pictures() {
        assert_eq!(
            control_pictures("a\nb\x1b[2J\x7f"),
            "a\u{240a}b\u{241b}[2J\u{2421}"
        );
    }
}
