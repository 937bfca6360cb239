//! Wall-clock time as the session files and listings show it: UTC, from Unix milliseconds,
//! without a date library.

use std::time::{SystemTime, UNIX_EPOCH};

/// Milliseconds since the Unix epoch, now (0 if the clock is before 1970).
pub fn now_unix_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// A UTC date and time of day.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Utc {
    pub(crate) year: i64,
    pub(crate) month: u32,
    pub(crate) day: u32,
    pub(crate) hour: u32,
    pub minute: u32,
    pub second: u32,
}

impl Utc {
    pub(crate) fn from_unix_ms(ms: u64) -> Utc {
        let secs = ms / 1000;
        let days = (secs / 86_400) as i64;
        let rem = secs % 86_400;
        let (year, month, day) = civil_from_days(days);
        Utc {
            year,
            month,
            day,
            hour: (rem / 3600) as u32,
            minute: (rem % 3600 / 60) as u32,
            second: (rem % 60) as u32,
        }
    }

    /// `2026-11-30 12:01`
    pub(crate) fn minute_text(&self) -> String {
        format!(
            "{:04}-{:02}-{:02} {:02}:{:02}",
            self.year, self.month, self.day, self.hour, self.minute
        )
    }

    /// `20261130-120102`: sorts like the time it names.
    pub(crate) fn compact(&self) -> String {
        format!(
            "{:04}{:02}{:02}-{:02}{:02}{:02}",
            self.year, self.month, self.day, self.hour, self.minute, self.second
        )
    }
}

/// `YYYY-MM-DD HH:MM` in UTC.
pub fn format_utc_minute(ms: u64) -> String {
    Utc::from_unix_ms(ms).minute_text()
}

/// Year, month (1-12) and day (1-31) of a count of days since 1970-01-01 (proleptic Gregorian;
/// Howard Hinnant's `civil_from_days`).
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = yoe + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_dates() {
        assert_eq!(format_utc_minute(0), "1970-01-01 00:00");
        // 2000-02-29T23:59:59Z, a leap day in a century leap year.
        assert_eq!(
            Utc::from_unix_ms(951_868_799_000),
            Utc {
                year: 2000,
                month: 2,
                day: 29,
                hour: 23,
                minute: 59,
                second: 59
            }
        );
        // 2026-11-30T12:01:02.345Z
        let t = Utc::from_unix_ms(1_796_040_062_345);
        assert_eq!(t.minute_text(), "2026-11-30 12:01");
        assert_eq!(t.compact(), "20261130-120102");
        // 2100-03-01: 2100 is not a leap year.
        assert_eq!(format_utc_minute(4_107_542_400_000), "2100-03-01 00:00");
    }
}
