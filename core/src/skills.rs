//! Skills: named standing instructions the planner may load by name.
//!
//! A skill is a folder holding a `SKILL.md` whose front matter names it and says in one line when
//! to use it. They are found in the workspace's `.bravebot/skills/` and in `~/.bravebot/skills/`
//! at the start of every turn; the planner is listed each one's name and description, and
//! `load_skill` selects from exactly that set by exact name, so a name never becomes a path.
//!
//! A workspace skill is content somebody wrote, so it is used only where the trust map trusts its
//! `SKILL.md` (by default `.bravebot/skills/` is trusted, TRUST-6), read as a regular file inside
//! the workspace once links are resolved and within [`workspace_file::INSTRUCTIONS_LIMIT`]. A
//! skill under `~/.bravebot` is trusted by provenance, as the person's own configuration, and is
//! read as a regular file with no link in its last component, within the same bound. A skill that
//! fails either is left out and counted, never named (SKILL-3).

use std::path::{Path, PathBuf};

use crate::kernel::label::Integrity;
use crate::workspace_file;
use crate::workspace_file::ReadScope;

/// Most characters of a description the planner is listed.
pub const DESCRIPTION_CHARS: usize = 300;
/// Most characters of a name.
pub const NAME_CHARS: usize = 64;
/// Most skills listed from one place.
pub const MAX_SKILLS: usize = 64;

/// Where a skill was found.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Place {
    Workspace,
    Home,
}

/// One skill as listed: its name, its one-line description and where its `SKILL.md` is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skill {
    pub name: String,
    pub description: String,
    pub path: PathBuf,
    pub place: Place,
}

/// What a turn found: the skills it lists, and how many files were left out.
#[derive(Clone, Debug, Default)]
pub struct Found {
    pub skills: Vec<Skill>,
    pub left_out: usize,
}

/// A file's front matter (the `key: value` lines between two `---` lines at its top) and the body
/// after it. `None` when the file does not begin with front matter or never closes it.
pub fn front_matter(text: &str) -> Option<(Vec<(String, String)>, &str)> {
    let rest = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))?;
    let mut keys = Vec::new();
    let mut offset = 0;
    for line in rest.split_inclusive('\n') {
        offset += line.len();
        let bare = line.trim_end_matches(['\n', '\r']);
        if bare == "---" {
            return Some((keys, &rest[offset..]));
        }
        if let Some((key, value)) = bare.split_once(':') {
            let key = key.trim();
            if !key.is_empty() && !key.starts_with(' ') && !bare.starts_with([' ', '\t']) {
                keys.push((key.to_string(), unquote(value.trim()).to_string()));
            }
        }
    }
    None
}

fn unquote(value: &str) -> &str {
    for q in ['"', '\''] {
        if let Some(inner) = value.strip_prefix(q).and_then(|v| v.strip_suffix(q)) {
            return inner;
        }
    }
    value
}

/// The value of `key` in front matter, if it has a non-empty one.
pub fn value<'a>(keys: &'a [(String, String)], key: &str) -> Option<&'a str> {
    keys.iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
        .filter(|v| !v.is_empty())
}

/// Whether `name` may name a skill or a definition: letters, digits, `-`, `_` and `.`, starting
/// with a letter or digit, at most [`NAME_CHARS`]. So no name holds a `/` or is `..`.
pub fn is_name(name: &str) -> bool {
    name.len() <= NAME_CHARS
        && name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphanumeric())
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
}

/// The person's own directory under `~/.bravebot`, where `HOME` names one.
pub fn home_dir(under: &str) -> Option<PathBuf> {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map(|h| PathBuf::from(h).join(".bravebot").join(under))
}

/// The entries of a directory, sorted by name, at most `cap`; nothing when it cannot be listed.
/// Runs on the blocking pool.
pub async fn entries(dir: PathBuf, cap: usize) -> Vec<String> {
    tokio::task::spawn_blocking(move || {
        let Ok(read) = std::fs::read_dir(&dir) else {
            return Vec::new();
        };
        let mut names: Vec<String> = read
            .filter_map(Result::ok)
            .filter_map(|e| e.file_name().into_string().ok())
            .collect();
        names.sort();
        names.truncate(cap);
        names
    })
    .await
    .unwrap_or_default()
}

/// Reads a file the session trusts as configuration: in the workspace, only where the trust map
/// trusts it (through every link) and as a regular file inside the workspace within the bound; in
/// `~/.bravebot`, as a regular file with no link in its last component within the same bound.
/// `None` for anything else.
pub async fn read_trusted(session: &dyn ReadScope, path: &Path, place: Place) -> Option<String> {
    match place {
        Place::Workspace => {
            if session.trust().lock().integrity_of(path) != Some(Integrity::Trusted) {
                return None;
            }
            let file = workspace_file::read_instructions(session, path)
                .await
                .ok()?;
            let through = workspace_file::integrity_through_links(
                &session.trust().lock(),
                path,
                &file.real,
                file.file,
            );
            if through != Some(Integrity::Trusted) {
                return None;
            }
            String::from_utf8(file.bytes).ok()
        }
        Place::Home => {
            let path = path.to_path_buf();
            let read = tokio::task::spawn_blocking(move || {
                workspace_file::read_regular(&path, workspace_file::INSTRUCTIONS_LIMIT)
            })
            .await
            .ok()?
            .ok()?;
            String::from_utf8(read.bytes).ok()
        }
    }
}

/// The skills a turn lists, found afresh: the workspace's first, then the person's own; a name
/// found in both is the workspace's, the more specific of the two.
pub async fn find(session: &dyn ReadScope) -> Found {
    let mut found = Found::default();
    let mut places = vec![(
        session.cwd().join(".bravebot").join("skills"),
        Place::Workspace,
    )];
    if let Some(home) = home_dir("skills") {
        places.push((home, Place::Home));
    }
    for (dir, place) in places {
        for entry in entries(dir.clone(), MAX_SKILLS).await {
            let path = dir.join(&entry).join("SKILL.md");
            match read_skill(session, &path, place).await {
                Some(skill) if !found.skills.iter().any(|s| s.name == skill.name) => {
                    found.skills.push(skill);
                }
                Some(_) => {}
                None => found.left_out += 1,
            }
        }
    }
    found
}

async fn read_skill(session: &dyn ReadScope, path: &Path, place: Place) -> Option<Skill> {
    let text = read_trusted(session, path, place).await?;
    let (keys, _) = front_matter(&text)?;
    let name = value(&keys, "name")?;
    let description = value(&keys, "description")?;
    if !is_name(name) {
        return None;
    }
    let description: String = crate::paths::control_pictures(description)
        .chars()
        .take(DESCRIPTION_CHARS)
        .collect();
    Some(Skill {
        name: name.to_string(),
        description,
        path: path.to_path_buf(),
        place,
    })
}

/// The body of a listed skill, read again through the same rules it was listed by: everything
/// after its front matter. `None` when it no longer passes them.
pub async fn body(session: &dyn ReadScope, skill: &Skill) -> Option<String> {
    let text = read_trusted(session, &skill.path, skill.place).await?;
    let (keys, body) = front_matter(&text)?;
    // Still the skill that was listed under this name.
    (value(&keys, "name") == Some(skill.name.as_str())).then(|| body.trim().to_string())
}

/// The lines of the system prompt that list the skills, if there are any.
pub fn listing(skills: &[Skill]) -> Option<String> {
    if skills.is_empty() {
        return None;
    }
    let mut text = String::from(
        "Skills: standing instructions for one kind of task. Load one with load_skill, naming it exactly as listed, when the task is the kind it says:\n",
    );
    for skill in skills {
        text.push_str(&format!("- {}: {}\n", skill.name, skill.description));
    }
    Some(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    // Verifies: SKILL-1
    #[test]
    fn front_matter_gives_the_keys_and_the_body_after_the_closing_line() {
        let (keys, body) =
            front_matter("---\nname: commit-style\ndescription: \"How commits are written\"\n---\nUse the imperative.\n")
                .expect("front matter");
        assert_eq!(value(&keys, "name"), Some("commit-style"));
        assert_eq!(value(&keys, "description"), Some("How commits are written"));
        assert_eq!(body, "Use the imperative.\n");
        assert!(front_matter("name: x\n").is_none(), "no opening line");
        assert!(front_matter("---\nname: x\n").is_none(), "never closed");
    }

    // Verifies: SKILL-3
    #[test]
    fn a_name_is_a_plain_token_never_a_path() {
        assert!(is_name("commit-style"));
        assert!(is_name("v1.2_x"));
        for bad in ["", "../x", "a/b", "..", ".hidden", "a b", "x\n"] {
            assert!(!is_name(bad), "{bad:?}");
        }
    }
}
