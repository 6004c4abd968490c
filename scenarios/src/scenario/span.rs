//! [`Span`]: a number that is fixed (`500`) or drawn per seed from a closed range
//! (`{"min": 100, "max": 900}`).

use std::fmt;

use serde::de::{self, MapAccess, Unexpected, Visitor};
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::rng::SplitMix64;

/// A value in `[min, max]`; fixed when `min == max`. Written as a plain number when fixed,
/// `{"min": a, "max": b}` otherwise.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Span {
    /// Smallest value.
    pub min: u64,
    /// Largest value.
    pub max: u64,
}

impl Span {
    /// Always `value`.
    pub const fn fixed(value: u64) -> Span {
        Span {
            min: value,
            max: value,
        }
    }

    /// Draws a value in `[min, max]`.
    pub fn draw(&self, rng: &mut SplitMix64) -> u64 {
        rng.in_range(self.min, self.max)
    }
}

impl fmt::Display for Span {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.min == self.max {
            write!(f, "{}", self.min)
        } else {
            write!(f, "{}..={}", self.min, self.max)
        }
    }
}

impl Serialize for Span {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        if self.min == self.max {
            serializer.serialize_u64(self.min)
        } else {
            MinMax {
                min: self.min,
                max: self.max,
            }
            .serialize(serializer)
        }
    }
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct MinMax {
    min: u64,
    max: u64,
}

struct SpanVisitor;

impl<'de> Visitor<'de> for SpanVisitor {
    type Value = Span;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a non-negative integer or {\"min\": a, \"max\": b}")
    }

    fn visit_u64<E: de::Error>(self, value: u64) -> Result<Span, E> {
        Ok(Span::fixed(value))
    }

    fn visit_i64<E: de::Error>(self, value: i64) -> Result<Span, E> {
        u64::try_from(value)
            .map(Span::fixed)
            .map_err(|_| E::invalid_value(Unexpected::Signed(value), &self))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<Span, A::Error> {
        let MinMax { min, max } = MinMax::deserialize(de::value::MapAccessDeserializer::new(map))?;
        if min > max {
            let found = format!("min {min} above max {max}");
            return Err(de::Error::invalid_value(
                Unexpected::Other(&found),
                &"min <= max",
            ));
        }
        Ok(Span { min, max })
    }
}

impl<'de> Deserialize<'de> for Span {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Span, D::Error> {
        deserializer.deserialize_any(SpanVisitor)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_and_ranged_spans_round_trip() {
        for (text, span) in [
            ("500", Span::fixed(500)),
            (r#"{"min":1,"max":9}"#, Span { min: 1, max: 9 }),
        ] {
            assert_eq!(serde_json::from_str::<Span>(text).unwrap(), span);
            assert_eq!(serde_json::to_string(&span).unwrap(), text);
        }
    }

    #[test]
    fn bad_spans_say_what_was_expected() {
        for (text, wanted) in [
            ("-3", "expected a non-negative integer or"),
            (r#"{"min":9,"max":1}"#, "expected min <= max"),
            (r#""x""#, "expected a non-negative integer or"),
            (r#"{"min":1,"max":2,"mean":3}"#, "unknown field `mean`"),
        ] {
            let error = serde_json::from_str::<Span>(text).unwrap_err().to_string();
            assert!(error.contains(wanted), "{text}: {error}");
        }
    }

    #[test]
    fn draws_stay_inside_the_span() {
        let mut rng = SplitMix64::new(11);
        let span = Span { min: 3, max: 6 };
        assert!((0..100).all(|_| (3..=6).contains(&span.draw(&mut rng))));
        assert_eq!(Span::fixed(4).draw(&mut rng), 4);
    }
}
