//! Typed units: simulated time in nanoseconds, memory in 4 KiB pages, app identifiers.

use serde::{Deserialize, Serialize};
use std::fmt;
use std::ops::{Add, AddAssign, Sub, SubAssign};

/// Size of one page in bytes; floe models 4 KiB pages everywhere.
pub const PAGE_SIZE: u64 = 4096;

/// `x.round() as u64` (ties away from zero; saturating, NaN to 0), without
/// libm's `round`, a call on the baseline x86-64 target, which has no rounding
/// instruction: the system threads' bursts and gaps convert a draw each. The fraction
/// `x - trunc(x)` of a double is exact, so this is the library's result.
#[inline]
pub fn round_u64(x: f64) -> u64 {
    let t = x as u64;
    if t < u64::MAX && x - t as f64 >= 0.5 {
        t + 1
    } else {
        t
    }
}

/// A point in time or a duration, in nanoseconds since the start of a run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Nanos(pub u64);

impl Nanos {
    pub const ZERO: Nanos = Nanos(0);
    pub const fn from_us(us: u64) -> Nanos {
        Nanos(us * 1_000)
    }
    pub const fn from_ms(ms: u64) -> Nanos {
        Nanos(ms * 1_000_000)
    }
    pub const fn from_secs(s: u64) -> Nanos {
        Nanos(s * 1_000_000_000)
    }
    /// Converts a floating-point number of milliseconds, rounding to the nearest nanosecond.
    pub fn from_ms_f64(ms: f64) -> Nanos {
        Nanos(round_u64(ms.max(0.0) * 1e6))
    }
    pub fn from_secs_f64(s: f64) -> Nanos {
        Nanos((s.max(0.0) * 1e9).round() as u64)
    }
    pub fn as_ms_f64(self) -> f64 {
        self.0 as f64 / 1e6
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / 1e9
    }
    pub fn saturating_sub(self, o: Nanos) -> Nanos {
        Nanos(self.0.saturating_sub(o.0))
    }
}

impl Add for Nanos {
    type Output = Nanos;
    fn add(self, o: Nanos) -> Nanos {
        Nanos(self.0 + o.0)
    }
}
impl AddAssign for Nanos {
    fn add_assign(&mut self, o: Nanos) {
        self.0 += o.0;
    }
}
impl Sub for Nanos {
    type Output = Nanos;
    fn sub(self, o: Nanos) -> Nanos {
        Nanos(self.0 - o.0)
    }
}
impl SubAssign for Nanos {
    fn sub_assign(&mut self, o: Nanos) {
        self.0 -= o.0;
    }
}
impl fmt::Display for Nanos {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.3} ms", self.as_ms_f64())
    }
}

/// A number of 4 KiB pages.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Pages(pub u64);

impl Pages {
    /// Whole pages needed to hold `mib` MiB (rounded to the nearest page).
    pub fn from_mib_f64(mib: f64) -> Pages {
        Pages((mib.max(0.0) * 256.0).round() as u64)
    }
    pub fn from_kib(kib: u64) -> Pages {
        Pages(kib / 4)
    }
    pub fn kib(self) -> u64 {
        self.0 * 4
    }
    pub fn bytes(self) -> u64 {
        self.0 * PAGE_SIZE
    }
    pub fn mib_f64(self) -> f64 {
        self.0 as f64 / 256.0
    }
}

impl Add for Pages {
    type Output = Pages;
    fn add(self, o: Pages) -> Pages {
        Pages(self.0 + o.0)
    }
}
impl Sub for Pages {
    type Output = Pages;
    fn sub(self, o: Pages) -> Pages {
        Pages(self.0 - o.0)
    }
}

/// Identifies an app within one run (simulator) or one daemon instance (Linux).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct AppId(pub u16);

impl fmt::Display for AppId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "app#{}", self.0)
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn round_u64_is_the_librarys_round() {
        let mut x = 1.0f64;
        let mut seen = 0;
        for v in [
            0.0,
            -0.7,
            0.49999999999999994,
            0.5,
            1.5,
            2.5,
            4503599627370495.5,
            4503599627370497.0,
            1.8446744073709552e19,
            1e300,
            f64::INFINITY,
            f64::NAN,
        ] {
            assert_eq!(super::round_u64(v), v.round() as u64, "{v}");
        }
        // Values over every binade, and their neighbours around the halves.
        while x < 1e20 {
            for v in [x, x + 0.5, (x + 0.5).next_up(), (x + 0.5).next_down(), x * 1.37, x / 3.0] {
                assert_eq!(super::round_u64(v), v.round() as u64, "{v}");
                seen += 1;
            }
            x *= 1.618;
        }
        assert!(seen > 500);
    }

    use super::*;

    #[test]
    fn conversions_round_trip() {
        assert_eq!(Pages::from_mib_f64(1.0), Pages(256));
        assert_eq!(Pages(256).kib(), 1024);
        assert_eq!(Nanos::from_ms_f64(16.6).0, 16_600_000);
        assert_eq!(Nanos::from_secs(2).as_ms_f64(), 2000.0);
        assert_eq!(Nanos(5).saturating_sub(Nanos(9)), Nanos::ZERO);
    }
}
