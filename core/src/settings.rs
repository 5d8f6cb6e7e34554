//! Settings: the layers of CONTRACT §2 and §5, resolved into one [`Settings`].
//!
//! Resolution is a pure function of the environment, the client's `initializationOptions` and the
//! text of the two settings files; the caller reads the files. Narrower layers win over wider
//! ones for the model (environment, then the client, then the home file). A workspace's own file
//! may only tune tools and the interface: a key there that could redirect requests, pick
//! credentials or turn questions off is reported and ignored, because a cloned repository must
//! not be able to do either.

use std::path::PathBuf;

use serde_json::{Map, Value};

use crate::model::Api;

pub const DEFAULT_BASE_URL: &str = "http://127.0.0.1:11434/v1";
pub const DEFAULT_MODEL_NAME: &str = "llama3.2";
pub const DEFAULT_MAX_ROUNDS: u32 = 50;
/// Bytes of one file a read check may be sent by default: 256 KiB, about 64k tokens, which fits
/// the context of every model this talks to with room for the instructions and the reply.
pub const DEFAULT_CHECK_BYTES: u64 = 256 * 1024;
/// How long a check may take by default: ten minutes, room for a model on this machine to read a
/// whole file of [`DEFAULT_CHECK_BYTES`] on a processor alone.
pub const DEFAULT_CHECK_SECONDS: u64 = 600;
/// The longest `vetting.timeoutSeconds`: a day.
const CHECK_TIMEOUT_MAX: u64 = 24 * 60 * 60;
/// The context a planner request is held to where neither a setting nor the endpoint says: small
/// enough for the models people run locally.
pub const DEFAULT_CONTEXT_TOKENS: u64 = 32_768;

/// Where the context budget a planner request is held to came from (MODEL-10), as `doctor` and
/// `session/status` name it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ContextSource {
    /// `model.contextTokens`.
    Setting,
    /// The endpoint's model listing.
    Endpoint,
    /// [`context_of_model_name`].
    ModelName,
    /// [`DEFAULT_CONTEXT_TOKENS`].
    Default,
}

impl ContextSource {
    pub fn as_str(self) -> &'static str {
        match self {
            ContextSource::Setting => "setting",
            ContextSource::Endpoint => "endpoint",
            ContextSource::ModelName => "model name",
            ContextSource::Default => "default",
        }
    }
}

/// Context windows of well-known model families, by the start of the model's name (after any
/// `provider/` prefix, as OpenRouter and other gateways write it), the more specific first. Each
/// is the provider's documented window, request and reply together:
/// - Anthropic, "Context windows" (docs.anthropic.com/en/docs/build-with-claude/context-windows):
///   200k tokens for every Claude model of the 3, 3.5, 3.7 and 4 generations.
/// - OpenAI model pages (platform.openai.com/docs/models): gpt-4.1 1,047,576; gpt-4o and
///   gpt-4-turbo 128,000; gpt-5 400,000; o1, o3 and o4-mini 200,000, o1-mini 128,000;
///   gpt-3.5-turbo 16,385.
/// - Google, Gemini models (ai.google.dev/gemini-api/docs/models): 1,048,576 for 1.5 and later.
/// - Mistral's model pages (docs.mistral.ai/getting-started/models): Mistral Large and Codestral
///   2501 131,072 and 256,000.
///
/// Families most often served locally (Llama, Qwen, Mistral's small models) are not listed: a
/// local server loads them with the window it is given (Ollama's `num_ctx`),
/// not the one the family takes, and a budget the server does not hold would let it cut the
/// conversation silently. Their listing, or `model.contextTokens`, says what they hold.
const MODEL_CONTEXTS: &[(&str, u64)] = &[
    ("claude-", 200_000),
    ("gpt-4.1", 1_047_576),
    ("gpt-4o", 128_000),
    ("gpt-4-turbo", 128_000),
    ("gpt-5", 400_000),
    ("gpt-3.5-turbo", 16_385),
    ("o1-mini", 128_000),
    ("o1", 200_000),
    ("o3", 200_000),
    ("o4-mini", 200_000),
    ("gemini-", 1_048_576),
    ("mistral-large", 131_072),
    ("codestral", 256_000),
];

/// The context window [`MODEL_CONTEXTS`] gives for a model's name, matched without regard to case
/// after any `provider/` prefix; `None` for a name no entry starts.
pub fn context_of_model_name(name: &str) -> Option<u64> {
    let name = name.to_ascii_lowercase();
    let name = name.rsplit('/').next().unwrap_or(&name);
    MODEL_CONTEXTS
        .iter()
        .find(|(start, _)| name.starts_with(start))
        .map(|(_, tokens)| *tokens)
}

/// The context budget and where it came from: `model.contextTokens`, else what the endpoint's
/// listing says (`listed`), else the model's name, else [`DEFAULT_CONTEXT_TOKENS`] (MODEL-10).
pub fn context_budget(
    setting: Option<u64>,
    listed: Option<u64>,
    name: &str,
) -> (u64, ContextSource) {
    if let Some(n) = setting {
        (n, ContextSource::Setting)
    } else if let Some(n) = listed {
        (n, ContextSource::Endpoint)
    } else if let Some(n) = context_of_model_name(name) {
        (n, ContextSource::ModelName)
    } else {
        (DEFAULT_CONTEXT_TOKENS, ContextSource::Default)
    }
}

/// The ranges a numeric limit set by a workspace's file is held to: a value outside is clamped to
/// the nearer end and reported ([`Note::Clamped`]). A cloned repository's settings may tune these,
/// so neither end may blind the agent (no search, no output, no rounds) or let one call run
/// without bound. The home file is the person's own and may set any number.
pub const RUN_MAX_OUTPUT_RANGE: (u64, u64) = (1024, 1024 * 1024);
pub const SEARCH_MAX_FILES_RANGE: (u64, u64) = (100, 1_000_000);
pub const SEARCH_MAX_SECONDS_RANGE: (u64, u64) = (1, 120);
pub const MAX_ROUNDS_RANGE: (u64, u64) = (5, 500);

/// The permission mode (CONTRACT §3 `setMode`). None of them skips a question.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    Ask,
    AcceptEdits,
    Plan,
}

impl Mode {
    pub fn parse(word: &str) -> Option<Mode> {
        match word {
            "ask" => Some(Mode::Ask),
            "acceptEdits" => Some(Mode::AcceptEdits),
            "plan" => Some(Mode::Plan),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Mode::Ask => "ask",
            Mode::AcceptEdits => "acceptEdits",
            Mode::Plan => "plan",
        }
    }
}

/// Where the model settings came from, for `doctor` and `status`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Source {
    Default,
    HomeFile,
    Client,
    Environment,
}

impl Source {
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Default => "default",
            Source::HomeFile => "~/.bravebot/settings.json",
            Source::Client => "initializationOptions",
            Source::Environment => "environment",
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ModelSettings {
    pub api: Api,
    pub base_url: String,
    pub name: String,
    /// The environment variable holding the credential; `BRAVEBOT_API_KEY` always wins.
    pub api_key_env: Option<String>,
    /// Every variable any layer named as `model.apiKeyEnv`, the one in force and any a narrower
    /// layer overrode: each may hold a credential, so none is handed to a program.
    pub credential_variables: Vec<String>,
    pub source: Source,
    /// The model's context in tokens (`model.contextTokens`), when a setting names it; otherwise
    /// the endpoint's model listing is asked, and [`DEFAULT_CONTEXT_TOKENS`] is the fallback.
    pub context_tokens: Option<u64>,
    /// What the model takes besides text (`model.inputs`), when a setting names it; otherwise
    /// the endpoint's model listing is asked, and text only is the fallback.
    pub inputs: Option<crate::model::Inputs>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Settings {
    pub model: ModelSettings,
    pub mode: Mode,
    pub vetting_auto: bool,
    /// Which of the three switches decided `vetting_auto` (seed 000): the settings key, the
    /// recorded choice in `~/.bravebot/vetting`, or `exec --vet`.
    pub vetting_auto_source: &'static str,
    pub vetting_reads: bool,
    /// Whether each turn keeps a checkpoint (`checkpoints.enabled`, on by default; the person's
    /// own settings only, never a workspace's).
    pub checkpoints: bool,
    /// `run.confined: unasked`: a line that is not read-only runs without a question, confined by
    /// the kernel (RUN-17); `never` (the default) asks as before. The person's own settings only.
    pub run_confined: bool,
    /// The most bytes of one file a read check is sent (`vetting.checkBytes`): a larger file is
    /// not checked at all, since a check reads the whole file or nothing.
    pub check_max_bytes: u64,
    /// How long one check may take as a whole (`vetting.timeoutSeconds`, 600 by default; the
    /// person's own settings only): past it the check is inconclusive (CHECK-31).
    pub check_timeout_seconds: u64,
    pub fetch_allow: Vec<String>,
    pub fetch_deny: Vec<String>,
    pub run_allow: Vec<String>,
    pub run_deny: Vec<String>,
    pub run_max_output: u64,
    /// Paths (relative to the workspace, or absolute) nothing may read, list, search or show
    /// (`read.deny`): the home file's and the workspace file's together, since a deny only takes
    /// away (TRUST-8).
    pub read_deny: Vec<String>,
    pub search_max_files: u64,
    pub search_max_seconds: u64,
    pub max_rounds: u32,
    /// The shortest wait between two ticks of a loop (`loop.minSeconds`, 60 by default; a test
    /// sets it lower).
    pub loop_min_seconds: u64,
    /// The MCP servers the person declared (`mcp.servers`, the home file only).
    pub mcp_servers: Vec<crate::mcp::ServerEntry>,
    /// MCP tools called unasked (`mcp.allow`) and never (`mcp.deny`), by full name or
    /// `mcp__<server>__*`; the home file only.
    pub mcp_allow: Vec<String>,
    pub mcp_deny: Vec<String>,
    /// A question nobody answers within this many seconds is refused
    /// (`questions.timeoutSeconds`, unset by default; the home file or the client only, ATTN-3).
    pub question_timeout_seconds: Option<u64>,
    /// What each model's tokens cost, by model name (`usage.prices`; the home file or
    /// `initializationOptions` only): money is estimated only for a model named here (USAGE-6).
    pub usage_prices: Vec<(String, Price)>,
    /// The check's own model (`vetting.model`; the home file or the client only): `None` sends
    /// checks to the planner's model (CHECK-12).
    pub check_model: Option<CheckModel>,
}

/// Where checks go when `vetting.model` names a model of their own: its name, and the endpoint
/// and wire format where they differ from the planner's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckModel {
    pub name: String,
    pub base_url: Option<String>,
    pub api: Option<Api>,
    /// The variable holding the check endpoint's credential, where it needs one of its own.
    pub api_key_env: Option<String>,
    /// Which of the person's layers named it, for `doctor` and status.
    pub source: Source,
}

/// `vetting.model`: a model name, or `{name, baseUrl?, api?, apiKeyEnv?}`.
fn parse_check_model(value: &Value, source: Source) -> Option<CheckModel> {
    if let Some(name) = value.as_str().filter(|n| !n.is_empty()) {
        return Some(CheckModel {
            name: name.to_string(),
            base_url: None,
            api: None,
            api_key_env: None,
            source,
        });
    }
    let object = value.as_object()?;
    if object
        .keys()
        .any(|k| !matches!(k.as_str(), "name" | "baseUrl" | "api" | "apiKeyEnv"))
    {
        return None;
    }
    let text = |key: &str| -> Option<Option<String>> {
        match object.get(key) {
            None => Some(None),
            Some(v) => v
                .as_str()
                .filter(|s| !s.is_empty())
                .map(|s| Some(s.to_string())),
        }
    };
    Some(CheckModel {
        name: text("name")??,
        base_url: text("baseUrl")?,
        api: match text("api")? {
            None => None,
            Some(word) => Some(Api::parse(&word)?),
        },
        api_key_env: text("apiKeyEnv")?,
        source,
    })
}

/// What a million tokens of one model cost, in millionths of a US dollar, so the sums are exact
/// and the settings stay comparable.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Price {
    pub input: u64,
    /// Tokens read from the endpoint's cache; the input price where the setting names none.
    pub cached_input: u64,
    pub output: u64,
}

impl Settings {
    /// The price the person gave for `model`, if any.
    pub fn price_of(&self, model: &str) -> Option<Price> {
        self.usage_prices
            .iter()
            .find(|(name, _)| name == model)
            .map(|(_, price)| *price)
    }
}

/// `usage.prices`: an object from model name to `{input, cachedInput?, output}` in US dollars per
/// million tokens, each a number of at least 0.
fn parse_prices(value: &Value) -> Option<Vec<(String, Price)>> {
    let micros = |v: &Value| {
        v.as_f64()
            .filter(|d| d.is_finite() && *d >= 0.0 && *d < 1e9)
            .map(|d| (d * 1e6).round() as u64)
    };
    let mut out = Vec::new();
    for (model, price) in value.as_object()? {
        let input = micros(price.get("input")?)?;
        let output = micros(price.get("output")?)?;
        let cached_input = match price.get("cachedInput") {
            Some(v) => micros(v)?,
            None => input,
        };
        out.push((
            model.clone(),
            Price {
                input,
                cached_input,
                output,
            },
        ));
    }
    Some(out)
}

impl Default for Settings {
    fn default() -> Settings {
        Settings {
            model: ModelSettings {
                api: Api::OpenAi,
                base_url: DEFAULT_BASE_URL.to_string(),
                name: DEFAULT_MODEL_NAME.to_string(),
                api_key_env: None,
                credential_variables: Vec::new(),
                source: Source::Default,
                context_tokens: None,
                inputs: None,
            },
            mode: Mode::Ask,
            vetting_auto: false,
            vetting_auto_source: "default",
            vetting_reads: true,
            checkpoints: true,
            run_confined: false,
            check_max_bytes: DEFAULT_CHECK_BYTES,
            check_timeout_seconds: DEFAULT_CHECK_SECONDS,
            fetch_allow: Vec::new(),
            fetch_deny: Vec::new(),
            run_allow: Vec::new(),
            run_deny: Vec::new(),
            run_max_output: 64 * 1024,
            read_deny: Vec::new(),
            search_max_files: 20_000,
            search_max_seconds: 10,
            max_rounds: DEFAULT_MAX_ROUNDS,
            loop_min_seconds: 60,
            mcp_servers: Vec::new(),
            mcp_allow: Vec::new(),
            mcp_deny: Vec::new(),
            question_timeout_seconds: None,
            usage_prices: Vec::new(),
            check_model: None,
        }
    }
}

/// One settings file as read by the caller.
pub struct SettingsFile<'a> {
    pub path: PathBuf,
    pub text: &'a str,
}

/// Something a person should know about how their settings were read.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Note {
    Read(PathBuf),
    Unreadable {
        path: PathBuf,
        error: String,
    },
    UnknownKey {
        path: PathBuf,
        key: String,
    },
    NotObeyedHere {
        path: PathBuf,
        key: String,
    },
    BadValue {
        origin: String,
        key: String,
        expected: &'static str,
    },
    /// A number outside its range, held to the nearer end.
    Clamped {
        origin: String,
        key: String,
        given: u64,
        used: u64,
        range: (u64, u64),
    },
    /// A workspace file's `read.deny` entry at or above the workspace root (or outside it), which
    /// would blind the agent to the project it was opened in: ignored.
    DenyNotInside {
        path: PathBuf,
        entry: String,
    },
}

impl std::fmt::Display for Note {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Note::Read(p) => write!(f, "settings read: {}", p.display()),
            Note::Unreadable { path, error } => {
                write!(f, "settings not read: {}: {error}", path.display())
            }
            Note::UnknownKey { path, key } => {
                write!(
                    f,
                    "settings key unknown and ignored: {key} in {}",
                    path.display()
                )
            }
            Note::NotObeyedHere { path, key } => write!(
                f,
                "settings key not obeyed: {key} may not be set by {} (a workspace may only tune tools and the interface)",
                path.display()
            ),
            Note::BadValue {
                origin,
                key,
                expected,
            } => {
                write!(
                    f,
                    "settings value ignored: {key} in {origin} should be {expected}"
                )
            }
            Note::Clamped {
                origin,
                key,
                given,
                used,
                range: (low, high),
            } => write!(
                f,
                "settings value clamped: {key} in {origin} is {given}, outside {low} to {high}; {used} is used"
            ),
            Note::DenyNotInside { path, entry } => write!(
                f,
                "settings value ignored: read.deny entry {entry:?} in {} is not strictly inside the workspace (a workspace file may deny only paths inside it)",
                path.display()
            ),
        }
    }
}

/// The longest `questions.timeoutSeconds`: a week.
const QUESTION_TIMEOUT_MAX: u64 = 7 * 24 * 60 * 60;

/// Keys a workspace's own settings file may set.
const WORKSPACE_KEYS: &[&str] = &[
    "read.deny",
    "run.maxOutput",
    "search.maxFiles",
    "search.maxSeconds",
    "maxRounds",
];

const KNOWN_KEYS: &[&str] = &[
    "model.api",
    "model.baseUrl",
    "model.name",
    "model.apiKeyEnv",
    "model.contextTokens",
    "model.inputs",
    "mode",
    "vetting.auto",
    "vetting.reads",
    "vetting.checkBytes",
    "vetting.model",
    "vetting.timeoutSeconds",
    "fetch.allow",
    "fetch.deny",
    "run.allow",
    "run.deny",
    "run.maxOutput",
    "read.deny",
    "search.maxFiles",
    "search.maxSeconds",
    "maxRounds",
    "loop.minSeconds",
    "mcp.servers",
    "mcp.allow",
    "mcp.deny",
    "checkpoints.enabled",
    "run.confined",
    "questions.timeoutSeconds",
    "usage.prices",
];

/// Flattens `{"vetting": {"auto": true}}` and `{"vetting.auto": true}` alike into dotted keys,
/// in the file's order. A file may come with a cloned repository, so its objects are walked on a
/// stack of this loop's own, not by recursion (SET-5).
fn flatten(prefix: &str, value: &Value, out: &mut Vec<(String, Value)>) {
    let mut stack = vec![(prefix.to_string(), value)];
    while let Some((prefix, value)) = stack.pop() {
        match value {
            Value::Object(map) if !KNOWN_KEYS.contains(&prefix.as_str()) => {
                for (k, v) in map.iter().rev() {
                    let key = if prefix.is_empty() {
                        k.clone()
                    } else {
                        format!("{prefix}.{k}")
                    };
                    stack.push((key, v));
                }
            }
            _ => out.push((prefix, value.clone())),
        }
    }
}

fn parse_file(file: &SettingsFile<'_>, notes: &mut Vec<Note>) -> Vec<(String, Value)> {
    match serde_json::from_str::<Value>(file.text) {
        Ok(Value::Object(map)) => {
            notes.push(Note::Read(file.path.clone()));
            let mut out = Vec::new();
            flatten("", &Value::Object(map), &mut out);
            out
        }
        Ok(_) => {
            notes.push(Note::Unreadable {
                path: file.path.clone(),
                error: "not a JSON object".into(),
            });
            Vec::new()
        }
        Err(e) => {
            notes.push(Note::Unreadable {
                path: file.path.clone(),
                error: e.to_string(),
            });
            Vec::new()
        }
    }
}

/// Applies the recorded choice in `~/.bravebot/vetting` (one word, `on` or `off`), which outranks
/// the settings key so that turning the mode off cannot be undone by a settings file. Anything
/// else in the file is reported and changes nothing.
pub fn apply_vetting_file(settings: &mut Settings, text: &str, notes: &mut Vec<Note>) {
    match text.trim() {
        "on" => settings.vetting_auto = true,
        "off" => settings.vetting_auto = false,
        _ => {
            notes.push(Note::BadValue {
                origin: "~/.bravebot/vetting".into(),
                key: "vetting".into(),
                expected: "on or off",
            });
            return;
        }
    }
    settings.vetting_auto_source = "~/.bravebot/vetting";
}

/// Applies the last two of auto-vetting's three switches over the settings key `settings` already
/// holds (seed 000, VET-5): the recorded word, `None` where there is none or the session reads
/// none (an incognito session), then `bravebot exec --vet`, the narrowest in time, which outranks
/// a recorded `off` too.
pub fn apply_vetting_switches(
    settings: &mut Settings,
    recorded: Option<&str>,
    vet: bool,
    notes: &mut Vec<Note>,
) {
    if let Some(text) = recorded {
        apply_vetting_file(settings, text, notes);
    }
    if vet {
        settings.vetting_auto = true;
        settings.vetting_auto_source = "--vet";
    }
}

/// Resolves every layer. `env` reads one environment variable.
pub fn resolve(
    env: &dyn Fn(&str) -> Option<String>,
    client: Option<&Value>,
    home: Option<SettingsFile<'_>>,
    workspace: Option<SettingsFile<'_>>,
) -> (Settings, Vec<Note>) {
    let mut notes = Vec::new();
    let mut s = Settings::default();
    if let Some(file) = &home {
        let origin = file.path.display().to_string();
        for (key, value) in parse_file(file, &mut notes) {
            if !KNOWN_KEYS.contains(&key.as_str()) {
                notes.push(Note::UnknownKey {
                    path: file.path.clone(),
                    key,
                });
                continue;
            }
            apply(
                &mut s,
                &key,
                &value,
                &origin,
                Layer::Person(Source::HomeFile),
                &mut notes,
            );
        }
    }
    if let Some(file) = &workspace {
        let origin = file.path.display().to_string();
        for (key, value) in parse_file(file, &mut notes) {
            if !KNOWN_KEYS.contains(&key.as_str()) {
                notes.push(Note::UnknownKey {
                    path: file.path.clone(),
                    key,
                });
            } else if !WORKSPACE_KEYS.contains(&key.as_str()) {
                notes.push(Note::NotObeyedHere {
                    path: file.path.clone(),
                    key,
                });
            } else if key == "read.deny" {
                let inside = workspace_denies(file, &value, &mut notes);
                apply(&mut s, &key, &inside, &origin, Layer::Workspace, &mut notes);
            } else {
                apply(&mut s, &key, &value, &origin, Layer::Workspace, &mut notes);
            }
        }
    }
    if let Some(Value::Object(model)) = client.and_then(|c| c.get("model")) {
        apply_model_object(
            &mut s,
            model,
            "initializationOptions",
            Source::Client,
            &mut notes,
        );
    }
    // The person's prices may come from their editor too; a workspace's file never names them.
    if let Some(prices) = client.and_then(|c| c.pointer("/usage/prices")) {
        apply(
            &mut s,
            "usage.prices",
            prices,
            "initializationOptions",
            Layer::Person(Source::Client),
            &mut notes,
        );
    }
    // The person's client may name the check's model, as the home file may (CHECK-12).
    if let Some(model) = client.and_then(|c| c.pointer("/vetting/model")) {
        apply(
            &mut s,
            "vetting.model",
            model,
            "initializationOptions",
            Layer::Person(Source::Client),
            &mut notes,
        );
    }
    // The person's client may set how long a check may take, as the home file may (CHECK-31).
    if let Some(seconds) = client.and_then(|c| c.pointer("/vetting/timeoutSeconds")) {
        apply(
            &mut s,
            "vetting.timeoutSeconds",
            seconds,
            "initializationOptions",
            Layer::Person(Source::Client),
            &mut notes,
        );
    }
    // The person's client may set how long a question waits, as the home file may (ATTN-3).
    if let Some(seconds) = client.and_then(|c| c.pointer("/questions/timeoutSeconds")) {
        apply(
            &mut s,
            "questions.timeoutSeconds",
            seconds,
            "initializationOptions",
            Layer::Person(Source::Client),
            &mut notes,
        );
    }
    let from_env = |name: &str| env(name).filter(|v| !v.is_empty());
    if let Some(url) = from_env("BRAVEBOT_MODEL_URL") {
        s.model.base_url = url;
        s.model.source = Source::Environment;
    }
    if let Some(name) = from_env("BRAVEBOT_MODEL") {
        s.model.name = name;
        s.model.source = Source::Environment;
    }
    if let Some(api) = from_env("BRAVEBOT_MODEL_API") {
        match Api::parse(&api) {
            Some(api) => {
                s.model.api = api;
                s.model.source = Source::Environment;
            }
            None => notes.push(Note::BadValue {
                origin: "environment".into(),
                key: "BRAVEBOT_MODEL_API".into(),
                expected: "openai or anthropic",
            }),
        }
    }
    (s, notes)
}

/// The entries of a workspace file's `read.deny` that name a path strictly inside the workspace
/// (the directory holding its `.bravebot/`), after `..` is resolved; every other entry (the root
/// itself, anything above or beside it, `/`) is left out with a note. Not a list: given back as
/// is, for [`apply`] to report.
fn workspace_denies(file: &SettingsFile<'_>, value: &Value, notes: &mut Vec<Note>) -> Value {
    let (Some(root), Some(items)) = (
        file.path.parent().and_then(std::path::Path::parent),
        value.as_array(),
    ) else {
        return value.clone();
    };
    let mut kept = Vec::new();
    for item in items {
        match item.as_str() {
            Some(entry) => {
                let path = crate::paths::absolute(root, std::path::Path::new(entry));
                if path.starts_with(root) && path != root {
                    kept.push(item.clone());
                } else {
                    notes.push(Note::DenyNotInside {
                        path: file.path.clone(),
                        entry: entry.to_string(),
                    });
                }
            }
            None => return value.clone(),
        }
    }
    Value::Array(kept)
}

fn apply_model_object(
    s: &mut Settings,
    model: &Map<String, Value>,
    origin: &str,
    source: Source,
    notes: &mut Vec<Note>,
) {
    for (k, v) in model {
        apply(
            s,
            &format!("model.{k}"),
            v,
            origin,
            Layer::Person(source),
            notes,
        );
    }
}

/// Which layer a setting comes from, for [`apply`]: one of the person's (the home file, the
/// client, with the model source it records), or a workspace's file, whose limits are clamped.
#[derive(Clone, Copy)]
enum Layer {
    Person(Source),
    Workspace,
}

fn apply(
    s: &mut Settings,
    key: &str,
    value: &Value,
    origin: &str,
    layer: Layer,
    notes: &mut Vec<Note>,
) {
    let bad = |expected| Note::BadValue {
        origin: origin.to_string(),
        key: key.to_string(),
        expected,
    };
    // A workspace's number outside its range is held to the nearer end, and the person told.
    let mut clamped = None;
    let mut clamp = |n: u64, range: (u64, u64)| {
        if matches!(layer, Layer::Person(_)) {
            return n;
        }
        let used = n.clamp(range.0, range.1);
        if used != n {
            clamped = Some(Note::Clamped {
                origin: origin.to_string(),
                key: key.to_string(),
                given: n,
                used,
                range,
            });
        }
        used
    };
    let string = || value.as_str().map(str::to_string);
    let list = || {
        value.as_array().and_then(|items| {
            items
                .iter()
                .map(|i| i.as_str().map(str::to_string))
                .collect()
        })
    };
    let ok = match key {
        "model.api" => value
            .as_str()
            .and_then(Api::parse)
            .map(|a| s.model.api = a)
            .ok_or(bad("openai or anthropic")),
        "model.baseUrl" => string().map(|u| s.model.base_url = u).ok_or(bad("a URL")),
        "model.name" => string().map(|n| s.model.name = n).ok_or(bad("a string")),
        "model.apiKeyEnv" => string()
            .map(|n| {
                s.model.credential_variables.push(n.clone());
                s.model.api_key_env = Some(n);
            })
            .ok_or(bad("a variable name")),
        "model.contextTokens" => value
            .as_u64()
            .filter(|n| *n >= 1024)
            .map(|n| s.model.context_tokens = Some(n))
            .ok_or(bad("a number of tokens of at least 1024")),
        "model.inputs" => list()
            .and_then(|words: Vec<String>| crate::model::Inputs::parse(&words))
            .map(|i| s.model.inputs = Some(i))
            .ok_or(bad("a list of image and pdf")),
        "mode" => value
            .as_str()
            .and_then(Mode::parse)
            .map(|m| s.mode = m)
            .ok_or(bad("ask, acceptEdits or plan")),
        "vetting.auto" => value
            .as_bool()
            .map(|b| {
                s.vetting_auto = b;
                s.vetting_auto_source = "~/.bravebot/settings.json";
            })
            .ok_or(bad("true or false")),
        "run.confined" => value
            .as_str()
            .and_then(|v| match v {
                "never" => Some(false),
                "unasked" => Some(true),
                _ => None,
            })
            .map(|on| s.run_confined = on)
            .ok_or(bad("never or unasked")),
        "questions.timeoutSeconds" => value
            .as_u64()
            .filter(|n| (1..=QUESTION_TIMEOUT_MAX).contains(n))
            .map(|n| s.question_timeout_seconds = Some(n))
            .ok_or(bad("a number of seconds from 1 to 604800")),
        "usage.prices" => parse_prices(value)
            .map(|p| s.usage_prices = p)
            .ok_or(bad(
                "an object from model name to {input, cachedInput?, output} in US dollars per million tokens",
            )),
        "checkpoints.enabled" => value
            .as_bool()
            .map(|b| s.checkpoints = b)
            .ok_or(bad("true or false")),
        "vetting.model" => match layer {
            Layer::Person(source) => parse_check_model(value, source)
                .map(|m| {
                    // Its credential's variable is withheld from programs like the planner's.
                    s.model.credential_variables.extend(m.api_key_env.clone());
                    s.check_model = Some(m);
                })
                .ok_or(bad(
                    "a model name, or {name, baseUrl, api, apiKeyEnv} with name required",
                )),
            Layer::Workspace => Err(bad("the person's own settings")),
        },
        "vetting.reads" => value
            .as_bool()
            .map(|b| s.vetting_reads = b)
            .ok_or(bad("true or false")),
        "vetting.timeoutSeconds" => value
            .as_u64()
            .filter(|n| (1..=CHECK_TIMEOUT_MAX).contains(n))
            .map(|n| s.check_timeout_seconds = n)
            .ok_or(bad("a number of seconds from 1 to 86400")),
        "vetting.checkBytes" => value
            .as_u64()
            .filter(|n| *n > 0)
            .map(|n| s.check_max_bytes = n)
            .ok_or(bad("a number of bytes above 0")),
        "fetch.allow" => list()
            .map(|l| s.fetch_allow = l)
            .ok_or(bad("a list of hosts")),
        "fetch.deny" => list()
            .map(|l| s.fetch_deny = l)
            .ok_or(bad("a list of hosts")),
        "mcp.servers" => crate::mcp::parse_servers(value)
            .map(|l| s.mcp_servers = l)
            .ok_or(bad(
                "an object from server name to { command, args, read, write, network }",
            )),
        "mcp.allow" => list()
            .map(|l| s.mcp_allow = l)
            .ok_or(bad("a list of MCP tool names")),
        "mcp.deny" => list()
            .map(|l| s.mcp_deny = l)
            .ok_or(bad("a list of MCP tool names")),
        "run.allow" => list()
            .map(|l| s.run_allow = l)
            .ok_or(bad("a list of command lines")),
        "run.deny" => list()
            .map(|l| s.run_deny = l)
            .ok_or(bad("a list of command lines")),
        // Each layer adds to the list and none takes from it: a workspace may deny more, never
        // less.
        "read.deny" => list()
            .map(|l| s.read_deny.extend(l))
            .ok_or(bad("a list of paths")),
        "run.maxOutput" => value
            .as_u64()
            .map(|n| s.run_max_output = clamp(n, RUN_MAX_OUTPUT_RANGE))
            .ok_or(bad("a number of bytes")),
        "search.maxFiles" => value
            .as_u64()
            .map(|n| s.search_max_files = clamp(n, SEARCH_MAX_FILES_RANGE))
            .ok_or(bad("a number")),
        "search.maxSeconds" => value
            .as_u64()
            .map(|n| s.search_max_seconds = clamp(n, SEARCH_MAX_SECONDS_RANGE))
            .ok_or(bad("a number")),
        "loop.minSeconds" => value
            .as_u64()
            .filter(|n| (1..=crate::looping::MAX_SECONDS).contains(n))
            .map(|n| s.loop_min_seconds = n)
            .ok_or(bad("a number of seconds from 1 to 3600")),
        "maxRounds" => value
            .as_u64()
            .map(|n| clamp(n, MAX_ROUNDS_RANGE))
            .and_then(|n| u32::try_from(n).ok())
            .filter(|n| *n > 0)
            .map(|n| s.max_rounds = n)
            .ok_or(bad("a positive number")),
        _ => Err(bad("a known key")),
    };
    notes.extend(clamped);
    match ok {
        Ok(()) if key.starts_with("model.") => {
            if let Layer::Person(source) = layer {
                s.model.source = source;
            }
        }
        Ok(()) => {}
        Err(note) => notes.push(note),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    // Verifies: MODEL-10
    #[test]
    fn the_context_budget_comes_from_the_setting_the_endpoint_the_model_s_name_or_the_default() {
        assert_eq!(
            context_budget(Some(50_000), Some(8192), "claude-sonnet-4-5"),
            (50_000, ContextSource::Setting)
        );
        assert_eq!(
            context_budget(None, Some(8192), "claude-sonnet-4-5"),
            (8192, ContextSource::Endpoint)
        );
        for (name, tokens) in [
            ("claude-sonnet-4-5", 200_000),
            ("anthropic/claude-3.5-haiku", 200_000),
            ("GPT-4o-mini", 128_000),
            ("gpt-4.1-nano", 1_047_576),
            ("gpt-5-mini", 400_000),
            ("o1-mini", 128_000),
            ("o3-mini", 200_000),
            ("mistralai/mistral-large-2411", 131_072),
        ] {
            assert_eq!(
                context_budget(None, None, name),
                (tokens, ContextSource::ModelName),
                "{name}"
            );
        }
        // A locally served family's window is the server's, not the family's.
        for name in ["my-finetune", "llama3.2:3b", "qwen2.5-coder:7b"] {
            assert_eq!(
                context_budget(None, None, name),
                (DEFAULT_CONTEXT_TOKENS, ContextSource::Default),
                "{name}"
            );
        }
        assert_eq!(
            [
                ContextSource::Setting,
                ContextSource::Endpoint,
                ContextSource::ModelName,
                ContextSource::Default
            ]
            .map(ContextSource::as_str),
            ["setting", "endpoint", "model name", "default"]
        );
    }

    fn no_env(_: &str) -> Option<String> {
        None
    }

    // Verifies: SET-1
    #[test]
    fn settings_environment_beats_client_beats_home() {
        let home = r#"{"model": {"baseUrl": "http://home/v1", "name": "home-model"}, "vetting": {"auto": true}}"#;
        let client = json!({"model": {"name": "client-model"}});
        let env = |k: &str| (k == "BRAVEBOT_MODEL_URL").then(|| "http://env/v1".to_string());
        let (s, notes) = resolve(
            &env,
            Some(&client),
            Some(SettingsFile {
                path: "/h/.bravebot/settings.json".into(),
                text: home,
            }),
            None,
        );
        assert_eq!(s.model.base_url, "http://env/v1");
        assert_eq!(s.model.name, "client-model");
        assert!(s.vetting_auto);
        assert_eq!(notes, vec![Note::Read("/h/.bravebot/settings.json".into())]);
    }

    // Verifies: USAGE-6
    #[test]
    fn usage_prices_are_read_from_the_person_s_layers_only() {
        let home =
            r#"{"usage": {"prices": {"big": {"input": 3, "cachedInput": 0.3, "output": 15}}}}"#;
        let ws = r#"{"usage.prices": {"big": {"input": 0, "output": 0}}}"#;
        let (s, notes) = resolve(
            &no_env,
            Some(
                &serde_json::json!({"usage": {"prices": {"small": {"input": 0.15, "output": 0.6}}}}),
            ),
            Some(SettingsFile {
                path: "/h/.bravebot/settings.json".into(),
                text: home,
            }),
            Some(SettingsFile {
                path: "/w/.bravebot/settings.json".into(),
                text: ws,
            }),
        );
        // The client's list replaces the home file's, as a narrower layer does; the workspace's is
        // reported and not obeyed.
        assert_eq!(s.price_of("big"), None);
        assert_eq!(
            s.price_of("small"),
            Some(Price {
                input: 150_000,
                cached_input: 150_000,
                output: 600_000,
            })
        );
        assert!(
            notes
                .iter()
                .any(|n| matches!(n, Note::NotObeyedHere { key, .. } if key == "usage.prices")),
            "{notes:?}"
        );
        let (s, notes) = resolve(
            &no_env,
            None,
            Some(SettingsFile {
                path: "/h/.bravebot/settings.json".into(),
                text: home,
            }),
            None,
        );
        assert_eq!(
            s.price_of("big"),
            Some(Price {
                input: 3_000_000,
                cached_input: 300_000,
                output: 15_000_000,
            })
        );
        assert!(
            notes.iter().all(|n| matches!(n, Note::Read(_))),
            "{notes:?}"
        );
        // A price that is not a number of dollars is reported, and nothing is priced.
        let (s, notes) = resolve(
            &no_env,
            None,
            Some(SettingsFile {
                path: "/h/.bravebot/settings.json".into(),
                text: r#"{"usage": {"prices": {"big": {"input": "3"}}}}"#,
            }),
            None,
        );
        assert!(s.usage_prices.is_empty());
        assert!(
            notes
                .iter()
                .any(|n| matches!(n, Note::BadValue { key, .. } if key == "usage.prices")),
            "{notes:?}"
        );
    }

    // Verifies: CHECK-31
    #[test]
    fn check_timeout_is_the_persons_setting_never_a_workspaces() {
        let file = |path: &str, text: &'static str| SettingsFile {
            path: path.into(),
            text,
        };
        let (s, _) = resolve(&no_env, None, None, None);
        assert_eq!(s.check_timeout_seconds, DEFAULT_CHECK_SECONDS);
        // A cloned repository's file could otherwise make every check time out at once.
        let (s, notes) = resolve(
            &no_env,
            None,
            Some(file(
                "/h/.bravebot/settings.json",
                r#"{"vetting": {"timeoutSeconds": 120}}"#,
            )),
            Some(file(
                "/w/.bravebot/settings.json",
                r#"{"vetting": {"timeoutSeconds": 1}}"#,
            )),
        );
        assert_eq!(s.check_timeout_seconds, 120);
        assert!(
            notes.contains(&Note::NotObeyedHere {
                path: "/w/.bravebot/settings.json".into(),
                key: "vetting.timeoutSeconds".into(),
            }),
            "{notes:?}"
        );
        let client = json!({"vetting": {"timeoutSeconds": 30}});
        let (s, _) = resolve(&no_env, Some(&client), None, None);
        assert_eq!(s.check_timeout_seconds, 30);
        for bad in [json!(0), json!("slow"), json!(86_401)] {
            let client = json!({"vetting": {"timeoutSeconds": bad}});
            let (s, notes) = resolve(&no_env, Some(&client), None, None);
            assert_eq!(s.check_timeout_seconds, DEFAULT_CHECK_SECONDS, "{bad}");
            assert!(
                notes.iter().any(
                    |n| matches!(n, Note::BadValue { key, .. } if key == "vetting.timeoutSeconds")
                ),
                "{bad}: {notes:?}"
            );
        }
    }

    // Verifies: ATTN-3
    #[test]
    fn question_timeout_is_the_persons_setting_never_a_workspaces() {
        let file = |path: &str, text: &'static str| SettingsFile {
            path: path.into(),
            text,
        };
        // Unset, nobody's question is refused for waiting.
        let (s, _) = resolve(&no_env, None, None, None);
        assert_eq!(s.question_timeout_seconds, None);
        // The home file sets it; a workspace's file cannot, and the person is told.
        let (s, notes) = resolve(
            &no_env,
            None,
            Some(file(
                "/h/.bravebot/settings.json",
                r#"{"questions": {"timeoutSeconds": 300}}"#,
            )),
            Some(file(
                "/w/.bravebot/settings.json",
                r#"{"questions": {"timeoutSeconds": 1}}"#,
            )),
        );
        assert_eq!(s.question_timeout_seconds, Some(300));
        assert!(
            notes.contains(&Note::NotObeyedHere {
                path: "/w/.bravebot/settings.json".into(),
                key: "questions.timeoutSeconds".into(),
            }),
            "{notes:?}"
        );
        // A workspace alone leaves it unset.
        let (s, _) = resolve(
            &no_env,
            None,
            None,
            Some(file(
                "/w/.bravebot/settings.json",
                r#"{"questions.timeoutSeconds": 1}"#,
            )),
        );
        assert_eq!(s.question_timeout_seconds, None);
        // The client's initializationOptions set it over the home file.
        let client = json!({"questions": {"timeoutSeconds": 5}});
        let (s, _) = resolve(
            &no_env,
            Some(&client),
            Some(file(
                "/h/.bravebot/settings.json",
                r#"{"questions": {"timeoutSeconds": 300}}"#,
            )),
            None,
        );
        assert_eq!(s.question_timeout_seconds, Some(5));
        // Zero, a negative number, a word or more than a week is reported and changes nothing.
        for bad in [json!(0), json!(-3), json!("soon"), json!(604_801)] {
            let client = json!({"questions": {"timeoutSeconds": bad}});
            let (s, notes) = resolve(&no_env, Some(&client), None, None);
            assert_eq!(s.question_timeout_seconds, None, "{bad}");
            assert!(
                notes.iter().any(
                    |n| matches!(n, Note::BadValue { key, .. } if key == "questions.timeoutSeconds")
                ),
                "{bad}: {notes:?}"
            );
        }
    }

    // Verifies: TRUST-8
    #[test]
    fn read_deny_is_the_home_list_and_the_workspace_list_together() {
        let home = r#"{"read": {"deny": [".env", "secrets/"]}}"#;
        let ws = r#"{"read.deny": ["keys"]}"#;
        let (s, notes) = resolve(
            &no_env,
            None,
            Some(SettingsFile {
                path: "/h/.bravebot/settings.json".into(),
                text: home,
            }),
            Some(SettingsFile {
                path: "/w/.bravebot/settings.json".into(),
                text: ws,
            }),
        );
        // A workspace adds to the list; nothing it writes takes a path off it.
        assert_eq!(s.read_deny, vec![".env", "secrets/", "keys"]);
        assert!(
            notes.iter().all(|n| matches!(n, Note::Read(_))),
            "{notes:?}"
        );
        let (s, _) = resolve(
            &no_env,
            None,
            Some(SettingsFile {
                path: "/h/.bravebot/settings.json".into(),
                text: home,
            }),
            Some(SettingsFile {
                path: "/w/.bravebot/settings.json".into(),
                text: r#"{"read": {"deny": []}}"#,
            }),
        );
        assert_eq!(s.read_deny, vec![".env", "secrets/"]);
    }

    // Verifies: CHECK-12
    #[test]
    fn vetting_model_is_a_name_or_an_object_from_the_persons_settings_only() {
        let home = |text: &'static str| {
            Some(SettingsFile {
                path: "/h/.bravebot/settings.json".into(),
                text,
            })
        };
        let (s, notes) = resolve(
            &no_env,
            None,
            home(r#"{"vetting": {"model": "small"}}"#),
            None,
        );
        let about = |notes: &[Note]| {
            notes
                .iter()
                .filter(|n| n.to_string().contains("vetting.model"))
                .count()
        };
        assert_eq!(about(&notes), 0, "{notes:?}");
        let m = s.check_model.expect("named");
        assert_eq!(
            (m.name.as_str(), m.base_url, m.api, m.source),
            ("small", None, None, Source::HomeFile)
        );
        let (s, _) = resolve(
            &no_env,
            None,
            home(
                r#"{"vetting.model": {"name": "local", "baseUrl": "http://127.0.0.1:1/v1", "api": "anthropic", "apiKeyEnv": "CHECK_KEY"}}"#,
            ),
            None,
        );
        let m = s.check_model.expect("named");
        assert_eq!(m.base_url.as_deref(), Some("http://127.0.0.1:1/v1"));
        assert_eq!(m.api, Some(Api::Anthropic));
        assert!(
            s.model
                .credential_variables
                .contains(&"CHECK_KEY".to_string()),
            "its credential is withheld from programs too"
        );
        for bad in [
            r#"{"vetting": {"model": ""}}"#,
            r#"{"vetting": {"model": {"baseUrl": "http://x/v1"}}}"#,
            r#"{"vetting": {"model": {"name": "m", "api": "grpc"}}}"#,
            r#"{"vetting": {"model": {"name": "m", "colour": "red"}}}"#,
            r#"{"vetting": {"model": 3}}"#,
        ] {
            let (s, notes) = resolve(&no_env, None, home(bad), None);
            assert!(s.check_model.is_none(), "{bad}");
            assert_eq!(about(&notes), 1, "{bad}: {notes:?}");
        }
        let client = json!({"vetting": {"model": "from-editor"}});
        let (s, _) = resolve(&no_env, Some(&client), None, None);
        let m = s.check_model.expect("named");
        assert_eq!((m.name.as_str(), m.source), ("from-editor", Source::Client));
        let (s, notes) = resolve(
            &no_env,
            None,
            None,
            Some(SettingsFile {
                path: "/w/.bravebot/settings.json".into(),
                text: r#"{"vetting": {"model": {"name": "m", "baseUrl": "http://attacker/v1"}}}"#,
            }),
        );
        assert!(
            s.check_model.is_none(),
            "a workspace never chooses the judge"
        );
        assert_eq!(about(&notes), 1);
    }

    // Verifies: CHECK-5, SET-2, VET-5
    #[test]
    fn settings_workspace_file_cannot_redirect_or_unask() {
        let ws = r#"{"model.baseUrl": "http://attacker/v1", "vetting": {"auto": true, "reads": false},
                     "fetch": {"allow": ["evil.test"]}, "search": {"maxFiles": 150}, "colour": "red"}"#;
        let (s, notes) = resolve(
            &no_env,
            None,
            None,
            Some(SettingsFile {
                path: "/w/.bravebot/settings.json".into(),
                text: ws,
            }),
        );
        assert_eq!(s.model.base_url, DEFAULT_BASE_URL);
        assert!(!s.vetting_auto);
        assert!(s.vetting_reads);
        assert!(s.fetch_allow.is_empty());
        assert_eq!(s.search_max_files, 150);
        let shown: Vec<String> = notes.iter().map(ToString::to_string).collect();
        for key in [
            "model.baseUrl",
            "vetting.auto",
            "vetting.reads",
            "fetch.allow",
        ] {
            assert!(
                shown
                    .iter()
                    .any(|n| n.contains("not obeyed") && n.contains(key)),
                "{key}: {shown:?}"
            );
        }
        assert!(
            shown
                .iter()
                .any(|n| n.contains("unknown") && n.contains("colour"))
        );
    }

    // Verifies: PIC-2
    #[test]
    fn model_inputs_are_the_persons_to_name_and_only_image_and_pdf() {
        let home = |text: &'static str| {
            Some(SettingsFile {
                path: "/h/.bravebot/settings.json".into(),
                text,
            })
        };
        let (s, _) = resolve(
            &no_env,
            None,
            home(r#"{"model": {"inputs": ["image"]}}"#),
            None,
        );
        assert_eq!(
            s.model.inputs,
            Some(crate::model::Inputs {
                images: true,
                pdfs: false
            })
        );
        let client = json!({"model": {"inputs": []}});
        let (s, _) = resolve(
            &no_env,
            Some(&client),
            home(r#"{"model": {"inputs": ["image", "pdf"]}}"#),
            None,
        );
        assert_eq!(
            s.model.inputs,
            Some(crate::model::Inputs::default()),
            "the client's list wins, empty too"
        );
        let (s, notes) = resolve(
            &no_env,
            None,
            home(r#"{"model": {"inputs": ["image", "video"]}}"#),
            None,
        );
        assert_eq!(s.model.inputs, None, "a word it does not know sets nothing");
        assert!(
            notes.iter().any(|n| n.to_string().contains("model.inputs")),
            "{notes:?}"
        );
        let (s, notes) = resolve(
            &no_env,
            None,
            None,
            Some(SettingsFile {
                path: "/w/.bravebot/settings.json".into(),
                text: r#"{"model": {"inputs": ["image", "pdf"]}}"#,
            }),
        );
        assert_eq!(s.model.inputs, None, "a workspace names no model input");
        assert!(
            notes
                .iter()
                .any(|n| n.to_string().contains("not obeyed")
                    && n.to_string().contains("model.inputs")),
            "{notes:?}"
        );
    }

    // Verifies: SET-3
    #[test]
    fn a_workspaces_limits_are_clamped_to_their_ranges_and_the_person_told() {
        let ws = r#"{"run": {"maxOutput": 0}, "search": {"maxFiles": 0, "maxSeconds": 99999999999},
                     "maxRounds": 4294967297}"#;
        let (s, notes) = resolve(
            &no_env,
            None,
            None,
            Some(SettingsFile {
                path: "/w/.bravebot/settings.json".into(),
                text: ws,
            }),
        );
        assert_eq!(s.run_max_output, RUN_MAX_OUTPUT_RANGE.0);
        assert_eq!(s.search_max_files, SEARCH_MAX_FILES_RANGE.0);
        assert_eq!(s.search_max_seconds, SEARCH_MAX_SECONDS_RANGE.1);
        assert_eq!(u64::from(s.max_rounds), MAX_ROUNDS_RANGE.1);
        let shown: Vec<String> = notes.iter().map(ToString::to_string).collect();
        for key in [
            "run.maxOutput",
            "search.maxFiles",
            "search.maxSeconds",
            "maxRounds",
        ] {
            assert!(
                shown
                    .iter()
                    .any(|n| n.starts_with("settings value clamped") && n.contains(key)),
                "{key}: {shown:?}"
            );
        }
        // A value inside its range is taken as it is, with nothing said.
        let (s, notes) = resolve(
            &no_env,
            None,
            None,
            Some(SettingsFile {
                path: "/w/.bravebot/settings.json".into(),
                text: r#"{"run.maxOutput": 2048, "maxRounds": 7}"#,
            }),
        );
        assert_eq!((s.run_max_output, s.max_rounds), (2048, 7));
        assert!(
            notes.iter().all(|n| matches!(n, Note::Read(_))),
            "{notes:?}"
        );
        // The home file is the person's own: its numbers are taken as they are.
        let (s, notes) = resolve(
            &no_env,
            None,
            Some(SettingsFile {
                path: "/h/.bravebot/settings.json".into(),
                text: r#"{"search.maxFiles": 100000000, "maxRounds": 1000}"#,
            }),
            None,
        );
        assert_eq!((s.search_max_files, s.max_rounds), (100_000_000, 1000));
        assert!(
            notes.iter().all(|n| matches!(n, Note::Read(_))),
            "{notes:?}"
        );
    }

    // Verifies: TRUST-8, SET-4
    #[test]
    fn a_workspace_may_deny_only_paths_strictly_inside_it_and_the_home_file_anything() {
        let ws = r#"{"read.deny": ["/", "/w", ".", "", "..", "src/..", "../other", "/etc/passwd",
                                    "keys", "src/secret", "/w/build"]}"#;
        let (s, notes) = resolve(
            &no_env,
            None,
            Some(SettingsFile {
                path: "/h/.bravebot/settings.json".into(),
                text: r#"{"read.deny": ["/", "/etc"]}"#,
            }),
            Some(SettingsFile {
                path: "/w/.bravebot/settings.json".into(),
                text: ws,
            }),
        );
        assert_eq!(
            s.read_deny,
            vec!["/", "/etc", "keys", "src/secret", "/w/build"]
        );
        let ignored: Vec<&str> = notes
            .iter()
            .filter_map(|n| match n {
                Note::DenyNotInside { entry, .. } => Some(entry.as_str()),
                _ => None,
            })
            .collect();
        assert_eq!(
            ignored,
            [
                "/",
                "/w",
                ".",
                "",
                "..",
                "src/..",
                "../other",
                "/etc/passwd"
            ]
        );
        assert!(
            notes
                .iter()
                .any(|n| n.to_string().contains("not strictly inside the workspace"))
        );
    }

    // Verifies: VET-5
    #[test]
    fn the_recorded_vetting_choice_outranks_the_settings_key() {
        let home = r#"{"vetting": {"auto": true}}"#;
        let (mut s, mut notes) = resolve(
            &no_env,
            None,
            Some(SettingsFile {
                path: "/h/s.json".into(),
                text: home,
            }),
            None,
        );
        assert!(s.vetting_auto);
        apply_vetting_file(&mut s, "off\n", &mut notes);
        assert!(!s.vetting_auto);
        assert_eq!(s.vetting_auto_source, "~/.bravebot/vetting");
        apply_vetting_file(&mut s, "maybe", &mut notes);
        assert!(!s.vetting_auto, "an unreadable word changes nothing");
    }

    // Verifies: VET-25
    #[test]
    fn vet_outranks_a_recorded_off_which_outranks_the_settings_key() {
        let home = |auto: bool| {
            resolve(
                &no_env,
                None,
                Some(SettingsFile {
                    path: "/h/s.json".into(),
                    text: if auto {
                        r#"{"vetting": {"auto": true}}"#
                    } else {
                        "{}"
                    },
                }),
                None,
            )
        };
        let decide = |auto: bool, recorded: Option<&str>, vet: bool| {
            let (mut s, mut notes) = home(auto);
            apply_vetting_switches(&mut s, recorded, vet, &mut notes);
            (s.vetting_auto, s.vetting_auto_source)
        };
        assert_eq!(decide(false, None, false), (false, "default"));
        assert_eq!(
            decide(true, None, false),
            (true, "~/.bravebot/settings.json")
        );
        assert_eq!(
            decide(true, Some("off\n"), false),
            (false, "~/.bravebot/vetting"),
            "a recorded off holds over the settings key"
        );
        assert_eq!(
            decide(false, Some("on"), false),
            (true, "~/.bravebot/vetting")
        );
        assert_eq!(
            decide(true, Some("off"), true),
            (true, "--vet"),
            "--vet outranks a recorded off"
        );
        assert_eq!(decide(false, None, true), (true, "--vet"));
        assert_eq!(
            decide(true, Some("garbage"), false),
            (true, "~/.bravebot/settings.json"),
            "an unreadable record changes nothing"
        );
    }

    // Verifies: SET-5
    #[test]
    fn settings_nested_any_depth_flatten_in_a_loop_and_past_the_parsers_limit_are_unreadable() {
        // A value 50,000 objects deep, flattened on a thread with a runtime worker's 2 MiB stack:
        // by recursion it overflowed. (Built and taken apart by hand: `json!` and drop recurse.)
        let key = std::thread::Builder::new()
            .stack_size(2 << 20)
            .spawn(|| {
                let mut value = Value::from(1);
                for _ in 0..50_000 {
                    let mut map = serde_json::Map::new();
                    map.insert("a".into(), value);
                    value = Value::Object(map);
                }
                let mut out = Vec::new();
                flatten("", &value, &mut out);
                let mut pending = vec![value];
                while let Some(mut v) = pending.pop() {
                    if let Value::Object(map) = &mut v {
                        pending.extend(map.remove("a"));
                    }
                }
                out
            })
            .unwrap()
            .join()
            .unwrap();
        assert_eq!(key.len(), 1);
        assert_eq!(key[0].0.len(), 50_000 * 2 - 1);
        assert_eq!(key[0].1, Value::from(1));
        // The parser's own limit of 128 nested levels stands: nothing here lifts it.
        let deep = format!("{}1{}", "{\"a\":".repeat(200), "}".repeat(200));
        let (s, notes) = resolve(
            &no_env,
            None,
            None,
            Some(SettingsFile {
                path: "/w/.bravebot/settings.json".into(),
                text: &deep,
            }),
        );
        assert_eq!(s, Settings::default());
        assert!(
            matches!(notes.as_slice(), [Note::Unreadable { error, .. }] if error.contains("recursion limit")),
            "{notes:?}"
        );
    }

    // Verifies: SET-1
    #[test]
    fn settings_bad_json_is_reported_not_fatal() {
        let (s, notes) = resolve(
            &no_env,
            None,
            Some(SettingsFile {
                path: "/h/s.json".into(),
                text: "{nope",
            }),
            None,
        );
        assert_eq!(s, Settings::default());
        assert!(matches!(notes.as_slice(), [Note::Unreadable { .. }]));
    }
}
