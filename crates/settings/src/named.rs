//! [`named_enum!`]: a setting whose values are words, each word written once.
//!
//! The macro gives the enum its words (`name`, `Display`, `FromStr`), serde (the word, as in the
//! gateway config, experiment plans and result JSON) and, with the `clap` feature, a
//! `clap::ValueEnum` whose possible values carry the variants' doc comments (as in `--help`).
//! A config key, a flag and a JSON value of the same setting can therefore never disagree.

/// A word that names no value of a setting.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("'{given}' is not one of {expected}")]
pub struct UnknownName {
    /// What was given.
    pub given: String,
    /// The accepted words, quoted and separated by commas.
    pub expected: String,
}

impl UnknownName {
    /// `given` is not among `names`.
    pub fn new(given: &str, names: &[&str]) -> Self {
        let expected = names
            .iter()
            .map(|n| format!("\"{n}\""))
            .collect::<Vec<_>>()
            .join(", ");
        UnknownName {
            given: given.to_string(),
            expected,
        }
    }
}

/// Declares a setting enum whose variants are written as the given words.
///
/// ```ignore
/// named_enum! {
///     /// Doc of the setting.
///     pub enum Scheme { /// Doc of the value.
///         Dense = "dense", ... }
/// }
/// ```
#[macro_export]
macro_rules! named_enum {
    (
        $(#[$meta:meta])*
        pub enum $name:ident {
            $( $(#[doc = $doc:literal])* $variant:ident = $word:literal ),+ $(,)?
        }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $( $(#[doc = $doc])* $variant ),+
        }

        impl $name {
            /// Every value, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$variant),+];
            /// Every value's word, in declaration order.
            pub const NAMES: &'static [&'static str] = &[$($word),+];

            /// The word for this value (config files, flags, plans, JSON).
            pub const fn name(self) -> &'static str {
                match self {
                    $($name::$variant => $word),+
                }
            }
        }

        impl ::std::fmt::Display for $name {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.write_str(self.name())
            }
        }

        impl ::std::str::FromStr for $name {
            type Err = $crate::named::UnknownName;
            fn from_str(s: &str) -> Result<Self, Self::Err> {
                $name::ALL
                    .iter()
                    .copied()
                    .find(|v| v.name() == s)
                    .ok_or_else(|| $crate::named::UnknownName::new(s, $name::NAMES))
            }
        }

        impl ::serde::Serialize for $name {
            fn serialize<S: ::serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
                s.serialize_str(self.name())
            }
        }

        impl<'de> ::serde::Deserialize<'de> for $name {
            fn deserialize<D: ::serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                let s = <::std::borrow::Cow<'de, str> as ::serde::Deserialize>::deserialize(d)?;
                s.parse().map_err(::serde::de::Error::custom)
            }
        }

        #[cfg(feature = "clap")]
        impl ::clap::ValueEnum for $name {
            fn value_variants<'a>() -> &'a [Self] {
                $name::ALL
            }
            fn to_possible_value(&self) -> Option<::clap::builder::PossibleValue> {
                let help: &'static str = match self {
                    $($name::$variant => concat!($($doc),*)),+
                };
                Some(::clap::builder::PossibleValue::new(self.name()).help(help.trim()))
            }
        }
    };
}
