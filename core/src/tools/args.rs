//! A tool's arguments declared once, as a typed struct: each field's role (routing or content),
//! whether the planner must give it, its schema as the planner is shown it, and its type. From one
//! [`tool_args!`] declaration come the tool's [`ArgSpec`](super::ArgSpec)s and a `read` that takes
//! the fields off a [`Call`].
//!
//! Not serde's `Deserialize`: a call whose argument has the wrong type is answered with the
//! tool's own words (`argument `path` of read_file must be a string`), which the planner has
//! always been given, and the schema stays the hand-written one the planner is shown.

use serde_json::{Map, Value};

use super::Call;

/// A type an argument may be read as.
pub trait ArgValue: Sized {
    /// The argument `name` of the call: `None` where it is absent or `null`, an error naming it
    /// where it is of another type.
    fn read(call: &Call<'_>, name: &str) -> Result<Option<Self>, String>;
}

impl ArgValue for String {
    fn read(call: &Call<'_>, name: &str) -> Result<Option<Self>, String> {
        call.str_arg(name).map(|s| s.map(str::to_string))
    }
}

/// A whole number, given as a number or as a string of digits.
impl ArgValue for u64 {
    fn read(call: &Call<'_>, name: &str) -> Result<Option<Self>, String> {
        call.uint_arg(name)
    }
}

impl ArgValue for bool {
    fn read(call: &Call<'_>, name: &str) -> Result<Option<Self>, String> {
        match call.args.get(name) {
            None | Some(Value::Null) => Ok(None),
            Some(Value::Bool(b)) => Ok(Some(*b)),
            Some(_) => Err(format!(
                "argument `{name}` of {} must be true or false",
                call.tool
            )),
        }
    }
}

/// An argument the tool's spec requires: dispatch has already answered a call that left it out.
pub fn required<T: ArgValue>(call: &Call<'_>, name: &str) -> Result<T, String> {
    T::read(call, name)?.ok_or_else(|| format!("{} needs the argument `{name}`", call.tool))
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
        <$ty as $crate::tools::args::ArgValue>::read($call, $arg)?
    };
    (@read lenient $ty:ty, $call:ident, $arg:expr) => {
        <$ty as $crate::tools::args::ArgValue>::read($call, $arg).ok().flatten()
    };
    (@read switch $ty:ty, $call:ident, $arg:expr) => {
        $crate::tools::args::switch(&$call.args, $arg)
    };
}

pub(crate) use tool_args;
