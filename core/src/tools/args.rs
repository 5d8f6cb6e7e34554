//! A tool's arguments declared once, as a typed struct: each field's role (routing or content),
//! whether the planner must give it, its schema as the planner is shown it, and its type. From one
//! [`tool_args!`] declaration come the tool's [`ArgSpec`](super::ArgSpec)s and a `read` that takes
//! the fields off a [`Call`]. Every tool reads its arguments this way and no other: a type reads
//! the one value it is given ([`Arg`]), never the call, so no tool reads an argument by its name.
//!
//! Not serde's `Deserialize`: a call whose argument has the wrong type is answered with the
//! tool's own words (`argument `path` of read_file must be a string`), which the planner has
//! always been given, and the schema stays the hand-written one the planner is shown.

use serde_json::{Map, Value};

use super::Call;

/// One argument of a call as its type reads it: the value the planner gave (`None` where it left
/// the argument out) and the names an error about it uses. A type sees its own argument and no
/// other.
pub struct Arg<'a> {
    pub tool: &'a str,
    pub name: &'a str,
    pub value: Option<&'a Value>,
}

impl Arg<'_> {
    /// The value, `None` where the argument is absent or `null`.
    pub fn given(&self) -> Option<&Value> {
        self.value.filter(|v| !v.is_null())
    }

    /// The error an argument of the wrong type gets: `argument `path` of read_file must be a
    /// string`.
    pub fn must_be(&self, what: &str) -> String {
        format!("argument `{}` of {} must be {what}", self.name, self.tool)
    }
}

/// A type an argument may be read as.
pub trait ArgValue: Sized {
    /// The argument: `None` where it is absent or `null`, an error naming it where it is of
    /// another type.
    fn read(arg: &Arg<'_>) -> Result<Option<Self>, String>;
}

impl ArgValue for String {
    fn read(arg: &Arg<'_>) -> Result<Option<Self>, String> {
        match arg.given() {
            None => Ok(None),
            Some(Value::String(s)) => Ok(Some(s.clone())),
            Some(_) => Err(arg.must_be("a string")),
        }
    }
}

/// A whole number, given as a number or as a string of digits.
impl ArgValue for u64 {
    fn read(arg: &Arg<'_>) -> Result<Option<Self>, String> {
        match arg.given() {
            None => Ok(None),
            Some(v) => v
                .as_u64()
                .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
                .map(Some)
                .ok_or_else(|| arg.must_be("a whole number")),
        }
    }
}

impl ArgValue for bool {
    fn read(arg: &Arg<'_>) -> Result<Option<Self>, String> {
        match arg.given() {
            None => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(_) => Err(arg.must_be("true or false")),
        }
    }
}

/// Why a value is not a list of strings.
pub enum NotStrings {
    /// It is not a list.
    NotAList,
    /// It is a list, and an entry is not a string.
    Entry,
}

/// The entries of a list of strings, for a type that reads one and says in its own words what is
/// wrong with a value that is not.
pub fn strings(value: &Value) -> Result<Vec<String>, NotStrings> {
    let Value::Array(items) = value else {
        return Err(NotStrings::NotAList);
    };
    items
        .iter()
        .map(|v| v.as_str().map(str::to_string).ok_or(NotStrings::Entry))
        .collect()
}

/// The argument `name` of a call, as its type reads it.
pub fn read<T: ArgValue>(call: &Call<'_>, name: &str) -> Result<Option<T>, String> {
    T::read(&Arg {
        tool: call.tool,
        name,
        value: call.args.get(name),
    })
}

/// An argument the tool's spec requires: dispatch has already answered a call that left it out.
pub fn required<T: ArgValue>(call: &Call<'_>, name: &str) -> Result<T, String> {
    read(call, name)?.ok_or_else(|| format!("{} needs the argument `{name}`", call.tool))
}

/// A switch: on only where the planner gave `true`; anything else, absent or not, is off.
pub fn switch(args: &Map<String, Value>, name: &str) -> bool {
    args.get(name).and_then(Value::as_bool).unwrap_or(false)
}

/// Declares a tool's arguments:
///
/// ```text
/// tool_args! {
///     pub struct Args {
///         path: optional String as Routing = json!({"type": "string"});
///         limit: optional u64 as Routing = json!({"type": "integer"});
///         replace_all: switch bool as Routing = json!({"type": "boolean"});
///     }
/// }
/// ```
///
/// A `required` field has its type, an `optional` one an `Option`, a `lenient` one an `Option`
/// that a value of the wrong type leaves `None` rather than failing the call, and a `switch` is a
/// `bool` that is on only where the planner gave `true`. The fields are shown to the planner, and read, in the
/// order declared: the first that does not read is the call's error. A field named for a keyword
/// (`r#ref`) is the argument without its `r#`.
macro_rules! tool_args {
    (
        $(#[$meta:meta])*
        $vis:vis struct $name:ident {
            $(
                $(#[$field_meta:meta])*
                $field:ident: $presence:ident $ty:ty as $role:ident = $schema:expr;
            )*
        }
    ) => {
        $(#[$meta])*
        $vis struct $name {
            $(
                $(#[$field_meta])*
                pub $field: $crate::tools::args::tool_args!(@type $presence $ty),
            )*
        }

        impl $name {
            /// The arguments as the planner is shown them, in order.
            pub fn specs() -> Vec<$crate::tools::ArgSpec> {
                vec![$(
                    $crate::tools::ArgSpec {
                        name: stringify!($field).trim_start_matches("r#"),
                        role: $crate::tools::ArgRole::$role,
                        required: $crate::tools::args::tool_args!(@required $presence),
                        schema: $schema,
                    },
                )*]
            }

            /// The arguments of a call, read in the order declared.
            pub fn read(call: &$crate::tools::Call<'_>) -> Result<Self, String> {
                Ok($name {
                    $(
                        $field: $crate::tools::args::tool_args!(
                            @read $presence $ty, call, stringify!($field).trim_start_matches("r#")
                        ),
                    )*
                })
            }
        }
    };
    (@type required $ty:ty) => { $ty };
    (@type optional $ty:ty) => { Option<$ty> };
    (@type switch $ty:ty) => { $ty };
    (@type lenient $ty:ty) => { Option<$ty> };
    (@required required) => { true };
    (@required optional) => { false };
    (@required switch) => { false };
    (@required lenient) => { false };
    (@read required $ty:ty, $call:ident, $arg:expr) => {
        $crate::tools::args::required::<$ty>($call, $arg)?
    };
    (@read optional $ty:ty, $call:ident, $arg:expr) => {
        $crate::tools::args::read::<$ty>($call, $arg)?
    };
    (@read lenient $ty:ty, $call:ident, $arg:expr) => {
        $crate::tools::args::read::<$ty>($call, $arg).ok().flatten()
    };
    (@read switch $ty:ty, $call:ident, $arg:expr) => {
        $crate::tools::args::switch(&$call.args, $arg)
    };
}

pub(crate) use tool_args;
