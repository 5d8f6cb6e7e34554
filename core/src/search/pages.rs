//! Where a session's capped searches stopped, so the next page starts there.

use std::path::PathBuf;

use super::Resume;

/// How many places where a capped search stopped a session keeps, the newest first.
const KEPT_PAGES: usize = 8;

/// The places where a session's capped searches stopped, each under the search it belongs to, so
/// that asking for the offset one named starts there instead of reading every file before it
/// again (SEARCH-30). A place is only a hint: the walk checks it and reads from the start when
/// the files before it are not the ones it was left with.
#[derive(Default)]
pub struct Pages(std::sync::Mutex<Vec<(PageKey, Resume)>>);

/// Which search a place belongs to: everything that decides the walk and the matches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PageKey {
    pub(crate) root: PathBuf,
    pub(crate) patterns: Vec<String>,
    pub(crate) case_sensitive: bool,
    pub(crate) include: Option<String>,
    pub(crate) max_files: u64,
}

impl Pages {
    pub(crate) fn find(&self, key: &PageKey, offset: usize) -> Option<Resume> {
        let pages = self.0.lock().unwrap_or_else(|p| p.into_inner());
        pages
            .iter()
            .find(|(k, r)| k == key && r.next_offset == offset && offset > 0)
            .map(|(_, r)| r.clone())
    }

    pub(crate) fn keep(&self, key: PageKey, resume: Resume) {
        let mut pages = self.0.lock().unwrap_or_else(|p| p.into_inner());
        pages.retain(|(k, r)| !(k == &key && r.next_offset == resume.next_offset));
        pages.insert(0, (key, resume));
        pages.truncate(KEPT_PAGES);
    }
}
