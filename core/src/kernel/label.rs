//! Labels: integrity (trusted or untrusted) times confidentiality (public or private).
//!
//! Taint is the only way to combine labels: an untrusted input makes the result untrusted, a
//! private input makes it private, and the two axes move independently. Nothing here can produce
//! a label better than the labels it was given.

use std::cmp::Ordering;
use std::fmt;

/// Whether anybody vouched for a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Integrity {
    Trusted,
    Untrusted,
}

/// Whether a value may leave the machine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Confidentiality {
    Public,
    Private,
}

/// A point of the lattice `I x C`.
///
/// The order is "may flow to": `(T,pub)` is the bottom and `(U,priv)` the top. `(U,pub)` and
/// `(T,priv)` are incomparable, which is why [`PartialOrd`] is implemented by hand and `Ord` is not.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Label {
    pub integrity: Integrity,
    pub confidentiality: Confidentiality,
}

impl Label {
    pub const TRUSTED_PUBLIC: Label = Label::new(Integrity::Trusted, Confidentiality::Public);
    pub const TRUSTED_PRIVATE: Label = Label::new(Integrity::Trusted, Confidentiality::Private);
    pub const UNTRUSTED_PUBLIC: Label = Label::new(Integrity::Untrusted, Confidentiality::Public);
    pub const UNTRUSTED_PRIVATE: Label = Label::new(Integrity::Untrusted, Confidentiality::Private);

    pub const fn new(integrity: Integrity, confidentiality: Confidentiality) -> Label {
        Label {
            integrity,
            confidentiality,
        }
    }

    /// Taint: the least upper bound of two labels. Commutative, associative and idempotent, and
    /// never better than either input on either axis.
    pub const fn join(self, other: Label) -> Label {
        let integrity = match (self.integrity, other.integrity) {
            (Integrity::Trusted, Integrity::Trusted) => Integrity::Trusted,
            _ => Integrity::Untrusted,
        };
        let confidentiality = match (self.confidentiality, other.confidentiality) {
            (Confidentiality::Public, Confidentiality::Public) => Confidentiality::Public,
            _ => Confidentiality::Private,
        };
        Label {
            integrity,
            confidentiality,
        }
    }

    /// Taint over any number of inputs; the empty join is the bottom, `(T,pub)`.
    pub fn join_all(labels: impl IntoIterator<Item = Label>) -> Label {
        labels.into_iter().fold(Label::TRUSTED_PUBLIC, Label::join)
    }

    pub const fn is_trusted(self) -> bool {
        matches!(self.integrity, Integrity::Trusted)
    }

    pub const fn is_public(self) -> bool {
        matches!(self.confidentiality, Confidentiality::Public)
    }

    /// Whether a value labelled `self` may flow where `other` is expected.
    pub fn flows_to(self, other: Label) -> bool {
        self.join(other) == other
    }
}

impl PartialOrd for Label {
    fn partial_cmp(&self, other: &Label) -> Option<Ordering> {
        match (self.flows_to(*other), other.flows_to(*self)) {
            (true, true) => Some(Ordering::Equal),
            (true, false) => Some(Ordering::Less),
            (false, true) => Some(Ordering::Greater),
            (false, false) => None,
        }
    }
}

impl fmt::Display for Label {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let i = match self.integrity {
            Integrity::Trusted => "T",
            Integrity::Untrusted => "U",
        };
        let c = match self.confidentiality {
            Confidentiality::Public => "pub",
            Confidentiality::Private => "priv",
        };
        write!(f, "({i},{c})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const ALL: [Label; 4] = [
        Label::TRUSTED_PUBLIC,
        Label::TRUSTED_PRIVATE,
        Label::UNTRUSTED_PUBLIC,
        Label::UNTRUSTED_PRIVATE,
    ];

    // Verifies: LABEL-1
    #[test]
    fn lattice_incomparable_pairs() {
        assert_eq!(
            Label::UNTRUSTED_PUBLIC.partial_cmp(&Label::TRUSTED_PRIVATE),
            None
        );
        assert_eq!(
            Label::TRUSTED_PRIVATE.partial_cmp(&Label::UNTRUSTED_PUBLIC),
            None
        );
        assert!(Label::TRUSTED_PUBLIC < Label::UNTRUSTED_PRIVATE);
        assert!(Label::TRUSTED_PUBLIC < Label::TRUSTED_PRIVATE);
        assert!(Label::UNTRUSTED_PUBLIC < Label::UNTRUSTED_PRIVATE);
        let comparable = ALL
            .iter()
            .flat_map(|a| ALL.iter().map(move |b| (a, b)))
            .filter(|(a, b)| a.partial_cmp(b).is_none())
            .count();
        assert_eq!(
            comparable, 2,
            "exactly one incomparable pair, in both orders"
        );
    }

    // Verifies: LABEL-2
    #[test]
    fn lattice_taint_only_degrades() {
        for a in ALL {
            for b in ALL {
                let j = a.join(b);
                assert!(
                    a.flows_to(j) && b.flows_to(j),
                    "{a} ⊔ {b} = {j} is below an input"
                );
                assert_eq!(j, b.join(a), "join is commutative");
                for c in ALL {
                    assert_eq!(j.join(c), a.join(b.join(c)), "join is associative");
                }
            }
            assert_eq!(a.join(a), a, "join is idempotent");
        }
        assert_eq!(
            Label::UNTRUSTED_PUBLIC.join(Label::TRUSTED_PRIVATE),
            Label::UNTRUSTED_PRIVATE,
            "the axes degrade independently"
        );
        assert_eq!(Label::join_all([]), Label::TRUSTED_PUBLIC);
    }

    // Verifies: LABEL-1
    #[test]
    fn label_display_matches_the_reference_notation() {
        let shown: Vec<String> = ALL.iter().map(ToString::to_string).collect();
        assert_eq!(shown, ["(T,pub)", "(T,priv)", "(U,pub)", "(U,priv)"]);
    }
}
