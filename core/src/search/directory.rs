//! Reading one directory for a walk, within the walk's bounds.
//!
//! A walk takes each directory's entries in name order, so that a walk stopped early has taken
//! the same entries on every machine. Sorting a directory of millions of entries would hold all
//! of them; [`read_sorted`] keeps only the files that sort among the first the walk may still
//! meet (one more, so the walk sees its cap met), drops later entries as it goes, and looks at
//! the clock every [`CLOCK_EVERY`] entries (LIST-5). What it returns is what sorting the whole
//! directory and stopping at the cap would have given.

use std::cmp::Ordering;
use std::collections::BinaryHeap;
use std::ffi::OsString;
use std::fs::DirEntry;
use std::path::Path;

/// Entries read between two looks at the clock.
const CLOCK_EVERY: usize = 1024;

/// Why a read did not return every entry of the directory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Cut {
    /// It held more files than the walk may still meet: those sorting after are left out.
    Files,
    /// The walk's time ran out (or it was cancelled) while reading it; nothing is returned.
    Time,
}

/// What a walk keeps of one entry: its name (the sort key), its value, and whether it counts as a
/// file against the walk's file cap.
pub(crate) struct Kept<T> {
    pub name: OsString,
    pub value: T,
    pub counts: bool,
}

/// A kept file, ordered by name alone (the heap's greatest is the file sorting last).
struct ByName<T>(Kept<T>);

impl<T> PartialEq for ByName<T> {
    fn eq(&self, other: &Self) -> bool {
        self.0.name == other.0.name
    }
}
impl<T> Eq for ByName<T> {}
impl<T> PartialOrd for ByName<T> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}
impl<T> Ord for ByName<T> {
    fn cmp(&self, other: &Self) -> Ordering {
        self.0.name.cmp(&other.0.name)
    }
}

/// The entries of `directory` that `take` keeps, sorted by name, up to and including the file
/// (an entry `take` says counts) that sorts `files_left + 1`th; and why it stopped short of the
/// whole directory, if it did. `out_of_time` is asked every [`CLOCK_EVERY`] entries; once it says
/// yes the read returns nothing but [`Cut::Time`]. Entries the system could not describe are
/// passed over, as the walks always did.
pub(crate) fn read_sorted<T>(
    directory: &Path,
    files_left: u64,
    out_of_time: impl Fn() -> bool,
    mut take: impl FnMut(DirEntry) -> Option<Kept<T>>,
) -> std::io::Result<(Vec<Kept<T>>, Option<Cut>)> {
    let room = usize::try_from(files_left.saturating_add(1)).unwrap_or(usize::MAX);
    let mut files: BinaryHeap<ByName<T>> = BinaryHeap::new();
    let mut others: Vec<Kept<T>> = Vec::new();
    let mut cut = None;
    let mut prune_at = CLOCK_EVERY;
    for (seen, entry) in std::fs::read_dir(directory)?.enumerate() {
        if seen % CLOCK_EVERY == CLOCK_EVERY - 1 && out_of_time() {
            return Ok((Vec::new(), Some(Cut::Time)));
        }
        let Some(kept) = entry.ok().and_then(&mut take) else {
            continue;
        };
        if kept.counts {
            files.push(ByName(kept));
            if files.len() > room {
                files.pop();
                cut = Some(Cut::Files);
            }
        } else {
            others.push(kept);
        }
        // Entries that are not files and sort after every file kept are past the cap: drop them
        // now and then, so that a directory of many of them does not hold them all.
        if cut.is_some() && others.len() >= prune_at {
            drop_past_the_cap(&files, &mut others);
            prune_at = others.len().saturating_mul(2).max(CLOCK_EVERY);
        }
    }
    if cut.is_some() {
        drop_past_the_cap(&files, &mut others);
    }
    let mut all: Vec<Kept<T>> = files.into_iter().map(|f| f.0).chain(others).collect();
    all.sort_unstable_by(|a, b| a.name.cmp(&b.name));
    Ok((all, cut))
}

/// Drops the entries that sort after the last file kept: the walk stops at that file.
fn drop_past_the_cap<T>(files: &BinaryHeap<ByName<T>>, others: &mut Vec<Kept<T>>) {
    if let Some(last) = files.peek() {
        others.retain(|o| o.name < last.0.name);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn flat(files: usize, dirs: usize) -> tempfile::TempDir {
        let tmp = tempfile::tempdir().expect("tempdir");
        for i in 0..files {
            std::fs::write(tmp.path().join(format!("f{i:05}")), "").expect("write");
        }
        for i in 0..dirs {
            std::fs::create_dir(tmp.path().join(format!("d{i:05}"))).expect("mkdir");
        }
        tmp
    }

    fn names(entry: DirEntry) -> Option<Kept<()>> {
        Some(Kept {
            counts: entry.file_type().ok()?.is_file(),
            name: entry.file_name(),
            value: (),
        })
    }

    fn shown(kept: &[Kept<()>]) -> Vec<String> {
        kept.iter()
            .map(|k| k.name.to_string_lossy().into_owned())
            .collect()
    }

    // Verifies: LIST-5
    #[test]
    fn a_directory_keeps_only_the_first_files_by_name_the_walk_may_still_meet() {
        let tmp = flat(5_000, 0);
        let (kept, cut) = read_sorted(tmp.path(), 10, || false, names).expect("read");
        let first: Vec<String> = (0..11).map(|i| format!("f{i:05}")).collect();
        assert_eq!((shown(&kept), cut), (first, Some(Cut::Files)));
        let (kept, cut) = read_sorted(tmp.path(), 5_000, || false, names).expect("read");
        assert_eq!((kept.len(), cut), (5_000, None));
        assert!(shown(&kept).is_sorted());
    }

    // Verifies: LIST-5
    #[test]
    fn directories_sorting_past_the_cap_are_dropped_and_the_clock_stops_a_read() {
        // d00000..d02999 sort before f00000..: with room for 3 files, every directory stays.
        let tmp = flat(100, 3_000);
        let (kept, cut) = read_sorted(tmp.path(), 2, || false, names).expect("read");
        assert_eq!((kept.len(), cut), (3_003, Some(Cut::Files)));
        assert_eq!(shown(&kept)[3_000..], ["f00000", "f00001", "f00002"]);
        // Files that sort first: the directories after the third are past the cap.
        let tmp = tempfile::tempdir().expect("tempdir");
        for i in 0..3_000 {
            std::fs::create_dir(tmp.path().join(format!("z{i:05}"))).expect("mkdir");
        }
        for i in 0..10 {
            std::fs::write(tmp.path().join(format!("a{i}")), "").expect("write");
        }
        let (kept, cut) = read_sorted(tmp.path(), 2, || false, names).expect("read");
        assert_eq!(
            (shown(&kept), cut),
            (
                vec!["a0".into(), "a1".into(), "a2".into()],
                Some(Cut::Files)
            )
        );
        let (kept, cut) = read_sorted(tmp.path(), u64::MAX, || true, names).expect("read");
        assert_eq!((kept.len(), cut), (0, Some(Cut::Time)));
    }
}
