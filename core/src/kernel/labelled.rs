//! A value that carries its label.
//!
//! [`Labelled`] deliberately implements none of `Display`, `PartialEq`, `Deref`, `AsRef` or
//! `Serialize`, and its `Debug` prints the label and never the value: the only way to look at
//! what it holds is a gate in the policy module (`kernel/policy.rs`), which records that it did. Code elsewhere can
//! carry a labelled value, taint it further and hand it to a gate, and nothing else.

use std::fmt;

use super::label::Label;

pub struct Labelled<T> {
    value: T,
    label: Label,
}

impl<T> Labelled<T> {
    /// Gives a value its first label, from provenance the caller tracked (where the bytes were
    /// read from, which context produced them). This is not a relabelling: a value that already
    /// has a label only ever gets a worse one, through [`Labelled::taint`].
    pub fn new(value: T, label: Label) -> Labelled<T> {
        Labelled { value, label }
    }

    pub fn label(&self) -> Label {
        self.label
    }

    /// Degrades the label by joining another one in. There is no way to improve it.
    pub fn taint(self, with: Label) -> Labelled<T> {
        Labelled {
            value: self.value,
            label: self.label.join(with),
        }
    }

    /// The value, for the gates only.
    pub(super) fn value(&self) -> &T {
        &self.value
    }

    pub(super) fn into_value(self) -> T {
        self.value
    }
}

impl<T: Clone> Clone for Labelled<T> {
    fn clone(&self) -> Labelled<T> {
        Labelled {
            value: self.value.clone(),
            label: self.label,
        }
    }
}

impl<T> fmt::Debug for Labelled<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "Labelled(<withheld> {})", self.label)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // Verifies: LABEL-3
    #[test]
    fn labelled_debug_never_prints_the_value() {
        let v = Labelled::new("canary-8841".to_string(), Label::UNTRUSTED_PRIVATE);
        let shown = format!("{v:?}");
        assert!(!shown.contains("canary"), "{shown}");
        assert!(shown.contains("(U,priv)"));
    }

    // Verifies: LABEL-2
    #[test]
    fn labelled_taint_never_improves() {
        let v = Labelled::new(1, Label::UNTRUSTED_PUBLIC).taint(Label::TRUSTED_PUBLIC);
        assert_eq!(v.label(), Label::UNTRUSTED_PUBLIC);
        let v = v.taint(Label::TRUSTED_PRIVATE);
        assert_eq!(v.label(), Label::UNTRUSTED_PRIVATE);
    }
}
