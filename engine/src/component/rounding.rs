//! [`Rounding`]: how the result of a number operator is made a whole number.

/// How the result of a number operator (`$add`, `$mul`) is made a whole number.
///
/// A designer writes it beside the operator (`{"$mul": 0.75, "$round": "trunc"}`); a programmer
/// can give a field its own default ([`ComponentOptions::rounding`](crate::ComponentOptions::rounding));
/// a field of an integer type without either gets [`Rounding::Nearest`].
///
/// | mode | 2.5 | -2.5 | 2.7 | -2.7 |
/// | --- | --- | --- | --- | --- |
/// | `Nearest` (`"nearest"`) | 3 | -3 | 3 | -3 |
/// | `Even` (`"even"`) | 2 | -2 | 3 | -3 |
/// | `Trunc` (`"trunc"`) | 2 | -2 | 2 | -2 |
/// | `Floor` (`"floor"`) | 2 | -3 | 2 | -3 |
/// | `Ceil` (`"ceil"`) | 3 | -2 | 3 | -2 |
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Rounding {
    /// To the nearest; halves away from zero (2.5 → 3, -2.5 → -3).
    Nearest,
    /// To the nearest; halves to the even neighbour (2.5 → 2, 3.5 → 4, -2.5 → -2).
    Even,
    /// Toward zero (2.7 → 2, -2.7 → -2).
    Trunc,
    /// Down (2.7 → 2, -2.2 → -3).
    Floor,
    /// Up (2.2 → 3, -2.7 → -2).
    Ceil,
}

impl Rounding {
    /// Every mode, as written after `$round`.
    pub const NAMES: [&'static str; 5] = ["nearest", "even", "trunc", "floor", "ceil"];

    /// The mode written `name` (`"trunc"`), if there is one.
    pub fn from_name(name: &str) -> Option<Rounding> {
        Some(match name {
            "nearest" => Rounding::Nearest,
            "even" => Rounding::Even,
            "trunc" => Rounding::Trunc,
            "floor" => Rounding::Floor,
            "ceil" => Rounding::Ceil,
            _ => return None,
        })
    }

    /// The mode as written after `$round`.
    pub fn name(self) -> &'static str {
        match self {
            Rounding::Nearest => "nearest",
            Rounding::Even => "even",
            Rounding::Trunc => "trunc",
            Rounding::Floor => "floor",
            Rounding::Ceil => "ceil",
        }
    }
}
