//! Standing watches on files (`watch_file`, seed 004): what a session is told about, and when.
//!
//! A watch names one existing regular file the session may reach. The file's parent directory is
//! watched through `notify` (editors replace a file by renaming over it, which a watch on the file
//! itself would lose), events for other names are passed over, and an event for the file is a
//! firing only where the file's change token (size, modification time, inode) moved since the last
//! look, so an event that changed nothing, or a second event for one write, fires nothing; the
//! events of one save are let settle ([`SETTLE`]) before the file is looked at. A
//! firing carries the watched path and nothing read off the filesystem; the session turns it into
//! a fixed sentence of the driver's and a turn. Watches end with the session.

use std::path::{Path, PathBuf};

use notify::{EventKind, RecommendedWatcher, RecursiveMode, Watcher};
use tokio::sync::mpsc::{UnboundedReceiver, UnboundedSender, unbounded_channel};

/// The most watches one session keeps.
pub const MAX_WATCHES: usize = 8;

/// Why a watch was not armed.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum WatchRefusal {
    #[error("this session already keeps {MAX_WATCHES} watches, as many as it keeps")]
    Full,
    #[error(
        "this session is running a loop, which is how it looks again; a watch would start turns beside it"
    )]
    Looping,
    #[error("{0} is watched already")]
    Already(String),
    #[error("the file could not be watched: {0}")]
    Watcher(String),
}

struct Watch {
    path: PathBuf,
    shown: String,
    token: String,
    fired: u64,
    _watcher: RecommendedWatcher,
}

/// A watch as `session/status` lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WatchStatus {
    pub path: String,
    pub fired: u64,
}

/// The watches of one session, and the channel their events arrive on.
pub struct Watches {
    list: Vec<Watch>,
    sender: UnboundedSender<PathBuf>,
    receiver: Option<UnboundedReceiver<PathBuf>>,
}

impl Default for Watches {
    fn default() -> Watches {
        let (sender, receiver) = unbounded_channel();
        Watches {
            list: Vec::new(),
            sender,
            receiver: Some(receiver),
        }
    }
}

/// How long a watched file must be left alone before it is looked at: one save is often several
/// events (a truncation, then the bytes; a temporary file renamed over it), and a look taken
/// between them would fire twice for one write.
pub const SETTLE: std::time::Duration = std::time::Duration::from_millis(250);

/// Gathers the events that follow `first` until none has come for [`SETTLE`], and answers each
/// path named, once, in the order first named. `None` once the channel is closed.
pub async fn settle(
    firings: &mut UnboundedReceiver<PathBuf>,
    first: PathBuf,
) -> Option<Vec<PathBuf>> {
    let mut paths = vec![first];
    loop {
        match tokio::time::timeout(SETTLE, firings.recv()).await {
            Ok(Some(path)) => {
                if !paths.contains(&path) {
                    paths.push(path);
                }
            }
            Ok(None) => return None,
            Err(_) => return Some(paths),
        }
    }
}

/// The change token of a path on disk, as `read_file` gives it.
pub fn token_of(path: &Path) -> String {
    crate::workspace_file::metadata_token(std::fs::metadata(path).ok().as_ref())
}

impl Watches {
    /// Arms a watch on `real` (an existing regular file the caller confined), shown as `shown`.
    /// `token` is the first look, taken by the caller off the runtime's workers.
    pub fn arm(&mut self, real: PathBuf, shown: String, token: String) -> Result<(), WatchRefusal> {
        if self.list.iter().any(|w| w.path == real) {
            return Err(WatchRefusal::Already(shown));
        }
        if self.list.len() >= MAX_WATCHES {
            return Err(WatchRefusal::Full);
        }
        let sender = self.sender.clone();
        let target = real.clone();
        let mut watcher =
            notify::recommended_watcher(move |event: notify::Result<notify::Event>| {
                let Ok(event) = event else { return };
                if matches!(event.kind, EventKind::Access(_)) {
                    return;
                }
                if event.paths.iter().any(|p| p == &target) {
                    let _ = sender.send(target.clone());
                }
            })
            .map_err(|e| WatchRefusal::Watcher(e.to_string()))?;
        let parent = real.parent().unwrap_or(Path::new("/"));
        watcher
            .watch(parent, RecursiveMode::NonRecursive)
            .map_err(|e| WatchRefusal::Watcher(e.to_string()))?;
        self.list.push(Watch {
            path: real,
            shown,
            token,
            fired: 0,
            _watcher: watcher,
        });
        Ok(())
    }

    /// Whether an event for `path` is a change: its token moved since the last look (`now`, taken
    /// by the caller). A change is counted and its look kept; the path as shown is returned.
    pub fn changed(&mut self, path: &Path, now: String) -> Option<String> {
        let watch = self.list.iter_mut().find(|w| w.path == path)?;
        if watch.token == now {
            return None;
        }
        watch.token = now;
        watch.fired += 1;
        Some(watch.shown.clone())
    }

    /// The channel firings arrive on, taken once by whoever turns them into turns.
    pub fn take_receiver(&mut self) -> Option<UnboundedReceiver<PathBuf>> {
        self.receiver.take()
    }

    pub fn status(&self) -> Vec<WatchStatus> {
        self.list
            .iter()
            .map(|w| WatchStatus {
                path: w.shown.clone(),
                fired: w.fired,
            })
            .collect()
    }

    pub fn is_empty(&self) -> bool {
        self.list.is_empty()
    }

    /// Ends every watch (the session is ending).
    pub fn clear(&mut self) {
        self.list.clear();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Verifies: LOOP-7
    #[tokio::test]
    async fn a_watch_fires_for_its_file_and_not_for_a_neighbour_or_an_unchanged_look() {
        let dir = tempfile::tempdir().expect("tempdir");
        let dir = std::fs::canonicalize(dir.path()).expect("real");
        let file = dir.join("build.log");
        std::fs::write(&file, "one\n").expect("write");
        let mut watches = Watches::default();
        let mut firings = watches.take_receiver().expect("receiver");
        watches
            .arm(file.clone(), "build.log".into(), token_of(&file))
            .expect("armed");
        assert_eq!(
            watches.arm(file.clone(), "build.log".into(), token_of(&file)),
            Err(WatchRefusal::Already("build.log".into()))
        );
        // A neighbour's write is no event for the watch; the watched file's write is.
        std::fs::write(dir.join("other.txt"), "x").expect("write");
        std::fs::write(&file, "one\ntwo\n").expect("write");
        let first = firings.recv().await.expect("an event");
        let settled = settle(&mut firings, first).await.expect("open");
        assert_eq!(settled, vec![file.clone()], "one path, however many events");
        assert_eq!(
            watches.changed(&file, token_of(&file)),
            Some("build.log".into())
        );
        assert_eq!(
            watches.changed(&file, token_of(&file)),
            None,
            "a second event for the same write is no change"
        );
        assert_eq!(watches.status()[0].fired, 1);
        watches.clear();
        assert!(watches.is_empty());
    }
}
