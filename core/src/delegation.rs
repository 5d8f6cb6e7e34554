//! The data of delegation: the kinds a delegate may be and the definitions a workspace adds, a
//! delegate's seat in its turn's tree, the tree itself, a run's children and what a delegate
//! reports. Pure data below the session, which holds it; `delegate.rs` starts and runs
//! delegates over it.

use std::sync::{Arc, Mutex, MutexGuard};

use crate::kernel::audit::AuditRecord;
use crate::kernel::labelled::Labelled;
use crate::model::ModelClient;
use crate::screen::{Screen, StopReason};
use tokio_util::sync::CancellationToken;

/// How deep a tree of delegates goes: a delegate this many levels below the turn is not offered
/// `spawn_agent`.
pub const MAX_DEPTH: u32 = 3;
/// Most delegates one turn starts, across its whole tree.
pub const CEILING: usize = 32;
/// Most entries of one call's `each`.
pub const MAX_EACH: usize = 8;
/// Most definitions read from one place.
pub(crate) const MAX_DEFINITIONS: usize = 64;

/// The three kinds of this program's own, each holding the tools of the one before it and more.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Kind {
    Reader,
    Checker,
    Worker,
}

/// Which delegates hold a tool, as the tool table declares it of each tool (DELEG-2). Which tools
/// a kind holds is read off the table by `tools::held_by`; this file names no tool.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Holders {
    /// This kind and every kind after it: what a reader holds, a checker and a worker hold too.
    From(Kind),
    /// Only a delegate its parent lets start delegates of its own, within [`MAX_DEPTH`].
    Delegating,
    /// No delegate.
    Nobody,
}

impl Kind {
    pub const ALL: [Kind; 3] = [Kind::Reader, Kind::Checker, Kind::Worker];

    pub fn parse(name: &str) -> Option<Kind> {
        Kind::ALL.into_iter().find(|k| k.as_str() == name)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Kind::Reader => "reader",
            Kind::Checker => "checker",
            Kind::Worker => "worker",
        }
    }

    /// Whether the kind calls MCP servers: a worker does, the servers its parent may call less
    /// what `mcp_servers` leaves out (seed 004's table); a reader and a checker call none.
    pub fn calls_servers(self) -> bool {
        self == Kind::Worker
    }

    /// Rounds a delegate of this kind may take.
    pub fn round_limit(self) -> u32 {
        match self {
            Kind::Reader => 40,
            Kind::Checker => 60,
            Kind::Worker => 80,
        }
    }

    /// What a delegate of this kind is told it is for: a constant, so nothing the planner
    /// writes changes what a delegate is.
    pub(crate) fn purpose(self) -> &'static str {
        match self {
            Kind::Reader => {
                "You are a reader: you find something out by reading, and report what you found."
            }
            Kind::Checker => {
                "You are a checker: you find out whether something works, by reading, running programs and asking a language server, and report what you found."
            }
            Kind::Worker => {
                "You are a worker: you finish a sub-task, by reading, running programs and writing files, and report what you did."
            }
        }
    }
}

/// A delegate definition: `.bravebot/agents/<name>.md` or `~/.bravebot/agents/<name>.md`, with
/// front matter naming a description, optionally the tools it keeps (a comma-separated list) and
/// a model, and a body that is what its delegate is told it is for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Definition {
    pub name: String,
    pub description: String,
    /// The tools it keeps, when it names them; else a worker's.
    pub tools: Option<Vec<String>>,
    /// The model its delegate talks to, where a definition in `~/.bravebot/agents` names one.
    pub model: Option<String>,
    /// A model a workspace definition named and was refused (DELEG-80): which model receives a
    /// delegate's context is the person's choice, so only the home layer makes it; the delegate
    /// talks to the session's model and the person is told.
    pub refused_model: Option<String>,
    pub body: String,
}

impl Definition {
    /// Whether a definition's delegate keeps an MCP server its parent may call: every one where
    /// `tools` is absent, else only a server `tools` names as `mcp__<server>__*`.
    pub(crate) fn keeps_server(&self, server: &str) -> bool {
        match &self.tools {
            None => true,
            Some(named) => {
                let whole = format!("{}{server}__*", crate::mcp::PREFIX);
                named.contains(&whole)
            }
        }
    }
}

/// Where a delegate's session sits in its tree.
#[derive(Clone, Debug)]
pub struct Seat {
    /// Its number in the turn, in start order from 1.
    pub number: u32,
    /// Its kind, or the definition it was started from.
    pub name: String,
    /// Levels below the turn: 1 for one the turn started.
    pub depth: u32,
    /// The tools it is offered.
    pub tools: Vec<&'static str>,
    /// The MCP servers whose tools it is offered: the session's own, running ones, out of those
    /// its parent could call (DELEG-20).
    pub mcp: Vec<String>,
    pub tree: Arc<Tree>,
}

impl Seat {
    /// How the delegate is named in the audit trail and on the screen.
    pub fn label(&self) -> String {
        format!("delegate {} ({})", self.number, self.name)
    }
}

/// One delegate as `session/status` lists it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Running {
    pub number: u32,
    pub name: String,
    pub depth: u32,
    /// `running` or `done`.
    pub state: &'static str,
}

/// The delegates of one turn.
#[derive(Debug, Default)]
pub struct Tree {
    pub(crate) inner: Mutex<TreeInner>,
}

#[derive(Debug, Default)]
pub(crate) struct TreeInner {
    pub(crate) started: usize,
    /// Records of the delegates' gates not yet carried into the session's trail.
    pub(crate) audit: Vec<AuditRecord>,
    pub(crate) delegates: Vec<Running>,
}

impl Tree {
    pub(crate) fn lock(&self) -> MutexGuard<'_, TreeInner> {
        self.inner.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Takes the next number, unless the turn's ceiling is reached.
    pub(crate) fn take_number(&self) -> Option<u32> {
        let mut inner = self.lock();
        (inner.started < CEILING).then(|| {
            inner.started += 1;
            inner.started as u32
        })
    }

    /// How many more delegates this turn may start.
    pub fn room(&self) -> usize {
        CEILING - self.lock().started.min(CEILING)
    }

    pub fn delegates(&self) -> Vec<Running> {
        self.lock().delegates.clone()
    }

    pub(crate) fn set_state(&self, number: u32, state: &'static str) {
        if let Some(d) = self
            .lock()
            .delegates
            .iter_mut()
            .find(|d| d.number == number)
        {
            d.state = state;
        }
    }
}

/// A run's delegates: the tree they count against and the ones it started itself, in order.
#[derive(Debug, Default)]
pub struct Delegation {
    pub(crate) tree: Option<Arc<Tree>>,
    pub(crate) children: Vec<Child>,
    /// Delegates `spawn_agent` started in the call running now, for the turn to run the moment
    /// the call returns.
    pub(crate) queued: Vec<Queued>,
    /// The definitions this turn may name, fixed at its start.
    pub definitions: Vec<Definition>,
}

/// A delegate seated and announced, not yet running: everything its session and its turn are
/// made from.
pub(crate) struct Queued {
    pub(crate) seat: Seat,
    pub(crate) name: String,
    pub(crate) screen: Arc<dyn Screen>,
    pub(crate) model: ModelClient,
    pub(crate) round_limit: u32,
    pub(crate) told: String,
    pub(crate) task: Labelled<String>,
    pub(crate) about: String,
    pub(crate) cancel: CancellationToken,
}

impl std::fmt::Debug for Queued {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Queued")
            .field("number", &self.seat.number)
            .field("name", &self.name)
            .finish_non_exhaustive()
    }
}

#[derive(Debug)]
pub(crate) struct Child {
    pub(crate) number: u32,
    pub(crate) name: String,
    pub(crate) handle: tokio::task::JoinHandle<Report>,
}

impl Delegation {
    /// A delegate's own: the tree of the turn it belongs to.
    pub fn within(tree: Arc<Tree>) -> Delegation {
        Delegation {
            tree: Some(tree),
            children: Vec::new(),
            queued: Vec::new(),
            definitions: Vec::new(),
        }
    }

    /// A new turn of a session the person opened: a tree of its own.
    pub fn begin_turn(&mut self, definitions: Vec<Definition>) {
        for child in self.children.drain(..) {
            child.handle.abort();
        }
        self.queued.clear();
        self.tree = Some(Arc::new(Tree::default()));
        self.definitions = definitions;
    }

    pub fn tree(&self) -> Option<&Arc<Tree>> {
        self.tree.as_ref()
    }
}

/// What a delegate came back with.
#[derive(Debug)]
pub struct Report {
    pub(crate) number: u32,
    pub(crate) name: String,
    /// What it was started on, as the planner wrote the entry (or the task).
    pub(crate) about: String,
    /// Its last answer, labelled by its own context.
    pub(crate) text: Said,
    pub(crate) stop: StopReason,
}

/// A report's words: text for the planner where the delegate's context stayed trusted, bytes
/// for a slot where it did not. Which is decided by the context's label alone.
#[derive(Debug)]
pub(crate) enum Said {
    Trusted(Labelled<String>),
    Untrusted(Labelled<Vec<u8>>),
}

/// What the parent resolved a call's `kind` to.
pub struct Chosen {
    pub name: String,
    pub kind: Kind,
    pub tools: Vec<&'static str>,
    pub may_delegate: bool,
    /// The MCP servers it keeps, before `mcp_servers` narrows them.
    pub mcp: Vec<String>,
    pub model: Option<String>,
    /// A model its workspace definition named and was refused, for the question to say.
    pub refused_model: Option<String>,
    pub body: Option<String>,
}
