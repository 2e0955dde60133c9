//! The arithmetic of the number operators (`$add`, `$mul`) and how a result is made a whole
//! number (`$round`, or the field's integer type).
//!
//! Whole numbers are exact across the whole `i64` and `u64` ranges (worked in `i128`): `$add 0`
//! on `u64::MAX` is `u64::MAX`. A whole number multiplied by a fraction and then made whole is
//! exact too, the fraction taken as the decimal written (`65 × 0.3` is 19.5, which rounds to
//! 20 and truncates to 19, whatever the size of the whole number). Anything else with a
//! fraction is worked in `f64`.

use serde_json::Number;

pub(crate) use crate::component::Rounding;

impl Rounding {
    fn of_float(self, x: f64) -> f64 {
        match self {
            Rounding::Nearest => x.round(),
            Rounding::Even => x.round_ties_even(),
            Rounding::Trunc => x.trunc(),
            Rounding::Floor => x.floor(),
            Rounding::Ceil => x.ceil(),
        }
    }

    /// `floor + rem / denominator` (with `0 <= rem < denominator`) made whole.
    fn of_fraction(self, floor: i128, rem: i128, denominator: i128) -> i128 {
        if rem == 0 {
            return floor;
        }
        let twice = rem * 2;
        let up = match self {
            Rounding::Floor => false,
            Rounding::Ceil => true,
            // The value is negative exactly when `floor` is: toward zero is up then.
            Rounding::Trunc => floor < 0,
            Rounding::Nearest if twice == denominator => floor >= 0,
            Rounding::Even if twice == denominator => floor % 2 != 0,
            Rounding::Nearest | Rounding::Even => twice > denominator,
        };
        floor + i128::from(up)
    }
}

/// A number being worked on.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) enum Num {
    /// A whole number, exact.
    Whole(i128),
    /// A whole number times a fraction, worked out exactly when it is made whole.
    Scaled(i128, f64),
    Float(f64),
}

impl Num {
    /// A JSON number as it is: whole numbers exact.
    pub fn of(number: &Number) -> Num {
        if let Some(whole) = number.as_i64() {
            return Num::Whole(i128::from(whole));
        }
        if let Some(whole) = number.as_u64() {
            return Num::Whole(i128::from(whole));
        }
        Num::Float(number.as_f64().unwrap_or(0.0))
    }

    fn float(self) -> f64 {
        match self {
            // Precision is lost only past 2^53, as any float of it.
            #[allow(clippy::cast_precision_loss)]
            Num::Whole(whole) => whole as f64,
            #[allow(clippy::cast_precision_loss)]
            Num::Scaled(whole, factor) => whole as f64 * factor,
            Num::Float(x) => x,
        }
    }

    /// `self + other`; `None` when it overflows.
    pub fn add(self, other: Num) -> Option<Num> {
        match (self, other) {
            (Num::Whole(a), Num::Whole(b)) => a.checked_add(b).map(Num::Whole),
            _ => finite(self.float() + other.float()),
        }
    }

    /// `self × other`; `None` when it overflows.
    pub fn mul(self, other: Num) -> Option<Num> {
        match (self, other) {
            (Num::Whole(a), Num::Whole(b)) => a.checked_mul(b).map(Num::Whole),
            (Num::Whole(a), Num::Float(b)) | (Num::Float(b), Num::Whole(a)) => {
                b.is_finite().then_some(Num::Scaled(a, b))
            }
            _ => finite(self.float() * other.float()),
        }
    }

    /// The JSON number it is, made whole by `rounding` if given; `None` when it does not fit an
    /// `i64` or a `u64` (or is not finite).
    pub fn finish(self, rounding: Option<Rounding>) -> Option<Number> {
        let whole = match (self, rounding) {
            (Num::Whole(whole), _) => whole,
            (Num::Scaled(whole, factor), Some(rounding)) => scaled(whole, factor, rounding)?,
            (_, Some(rounding)) => whole_of(rounding.of_float(self.float()))?,
            (_, None) => return Number::from_f64(self.float()),
        };
        if let Ok(whole) = i64::try_from(whole) {
            return Some(Number::from(whole));
        }
        u64::try_from(whole).ok().map(Number::from)
    }
}

fn finite(x: f64) -> Option<Num> {
    x.is_finite().then_some(Num::Float(x))
}

/// A float already whole, as an integer, if it is in range.
fn whole_of(x: f64) -> Option<i128> {
    // Past ±2^64 nothing fits anyway; below it the cast is exact.
    #[allow(clippy::cast_possible_truncation)]
    (x.is_finite() && x.abs() < 2f64.powi(65)).then_some(x as i128)
}

/// `whole × factor` made whole by `rounding`, exactly: `factor` is taken as the decimal it
/// was written as (`0.3` is 3/10, not the binary fraction just below it, so 65 × 0.3 is 19.5).
fn scaled(whole: i128, factor: f64, rounding: Rounding) -> Option<i128> {
    let Some((digits, scale)) = decimal(factor) else {
        #[allow(clippy::cast_precision_loss)]
        return whole_of(rounding.of_float(whole as f64 * factor));
    };
    // |whole| < 2^66 and |digits| < 10^17 < 2^57: the product fits an i128.
    let product = whole.checked_mul(digits)?;
    let denominator = 10i128.checked_pow(scale)?;
    let floor = product.div_euclid(denominator);
    let rem = product.rem_euclid(denominator);
    Some(rounding.of_fraction(floor, rem, denominator))
}

/// `factor` as the shortest decimal that reads back as it: its digits and how many of them
/// follow the point (`-0.25` is `(-25, 2)`); `None` past 17 digits or 10^-38.
fn decimal(factor: f64) -> Option<(i128, u32)> {
    let text = factor.to_string();
    let (negative, text) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text.as_str()),
    };
    let (whole, fraction) = text.split_once('.').unwrap_or((text, ""));
    let written = format!("{whole}{fraction}");
    let significant = written.trim_start_matches('0');
    if significant.len() > 17 || fraction.len() > 38 {
        return None;
    }
    let digits: i128 = match significant {
        "" => 0,
        digits => digits.parse().ok()?,
    };
    let scale = u32::try_from(fraction.len()).ok()?;
    Some((if negative { -digits } else { digits }, scale))
}

#[cfg(test)]
// A test fails by panicking; `unwrap` says so most plainly.
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn rounded(whole: i128, factor: f64, rounding: Rounding) -> Number {
        Num::Whole(whole)
            .mul(Num::Float(factor))
            .unwrap()
            .finish(Some(rounding))
            .unwrap()
    }

    #[test]
    fn each_mode_rounds_halves_and_fractions_as_documented() {
        // (value × 2, then nearest, even, trunc, floor, ceil) for ±2.5, ±3.5, ±0.5, 1 and 0.
        let table: [(i128, [i64; 5]); 8] = [
            (5, [3, 2, 2, 2, 3]),
            (-5, [-3, -2, -2, -3, -2]),
            (7, [4, 4, 3, 3, 4]),
            (-7, [-4, -4, -3, -4, -3]),
            (1, [1, 0, 0, 0, 1]),
            (-1, [-1, 0, 0, -1, 0]),
            (2, [1; 5]),
            (0, [0; 5]),
        ];
        let modes = Rounding::NAMES.map(|name| Rounding::from_name(name).unwrap());
        for (twice, expected) in table {
            for (mode, want) in modes.iter().zip(expected) {
                // Exact (a whole number times one half) and in floating point alike.
                assert_eq!(
                    rounded(twice, 0.5, *mode),
                    Number::from(want),
                    "{twice}/2 {mode:?}"
                );
                #[allow(clippy::cast_precision_loss)]
                let float = Num::Float(twice as f64 / 2.0).finish(Some(*mode)).unwrap();
                assert_eq!(float, Number::from(want), "{twice}/2 {mode:?} as a float");
            }
        }
        assert_eq!(rounded(130, 0.25, Rounding::Trunc), Number::from(32));
        assert_eq!(rounded(130, 0.25, Rounding::Nearest), Number::from(33));
        // As written, not as the binary fraction just below 0.3 (which gives 19.4999…).
        assert_eq!(rounded(65, 0.3, Rounding::Nearest), Number::from(20));
        assert_eq!(rounded(65, 0.3, Rounding::Trunc), Number::from(19));
        assert_eq!(rounded(-65, 0.3, Rounding::Even), Number::from(-20));
        assert_eq!(
            rounded(3, 1e18, Rounding::Trunc),
            Number::from(3 * 10u64.pow(18))
        );
    }

    #[test]
    fn whole_numbers_are_exact_across_i64_and_u64() {
        let max = Num::of(&Number::from(u64::MAX));
        assert_eq!(
            max.add(Num::Whole(0)).unwrap().finish(None),
            Some(Number::from(u64::MAX))
        );
        assert_eq!(
            max.mul(Num::Whole(1)).unwrap().finish(None),
            Some(Number::from(u64::MAX))
        );
        assert_eq!(max.add(Num::Whole(1)).unwrap().finish(None), None);
        let min = Num::of(&Number::from(i64::MIN));
        assert_eq!(
            min.add(Num::Whole(-1)).unwrap().finish(None),
            None,
            "below i64::MIN"
        );
        // Odd past 2^53, which a float cannot hold: still exact when halved and truncated.
        let odd = (1i128 << 60) + 3;
        assert_eq!(
            rounded(odd, 0.5, Rounding::Trunc),
            Number::from(((1u64 << 60) + 3) / 2)
        );
        assert_eq!(rounded(5, 1e-300, Rounding::Ceil), Number::from(1));
        assert_eq!(rounded(-5, 1e-300, Rounding::Floor), Number::from(-1));
        assert_eq!(rounded(-5, 1e-300, Rounding::Nearest), Number::from(0));
        assert_eq!(
            Num::Whole(3)
                .mul(Num::Float(1e300))
                .unwrap()
                .finish(Some(Rounding::Trunc)),
            None
        );
        assert_eq!(
            Num::Whole(3).mul(Num::Float(0.5)).unwrap().finish(None),
            Number::from_f64(1.5)
        );
    }
}
