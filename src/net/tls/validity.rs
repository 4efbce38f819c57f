//! When a certificate is valid: the `validity` of its `tbsCertificate`, read from its DER
//! (RFC 5280: `notBefore` and `notAfter`, each a UTCTime or a GeneralizedTime). webpki
//! checks dates only on the way to an anchor, which a certificate trusted as itself never
//! takes, and exposes none of them.

/// The certificate's `notBefore` and `notAfter`, in seconds since the epoch; `None` when
/// its DER is not what RFC 5280 says.
pub fn validity(der: &[u8]) -> Option<(i64, i64)> {
    let (certificate, _) = element(der, SEQUENCE)?;
    let (mut tbs, _) = element(certificate, SEQUENCE)?;
    if tbs.first() == Some(&VERSION) {
        tbs = element(tbs, VERSION)?.1;
    }
    // serialNumber, signature, issuer: skipped whatever they hold.
    for _ in 0..3 {
        tbs = skip(tbs)?;
    }
    let (validity, _) = element(tbs, SEQUENCE)?;
    let (not_before, rest) = time(validity)?;
    let (not_after, _) = time(rest)?;
    Some((not_before, not_after))
}

const SEQUENCE: u8 = 0x30;
/// `[0] EXPLICIT Version`, present unless the certificate is a v1 one.
const VERSION: u8 = 0xa0;
const UTC_TIME: u8 = 0x17;
const GENERALIZED_TIME: u8 = 0x18;

/// The contents of the element at the start of `input` and what follows it, when its tag
/// is `tag`.
fn element(input: &[u8], tag: u8) -> Option<(&[u8], &[u8])> {
    let (found, contents, rest) = tlv(input)?;
    (found == tag).then_some((contents, rest))
}

fn skip(input: &[u8]) -> Option<&[u8]> {
    Some(tlv(input)?.2)
}

/// The tag, contents and rest of the element at the start of `input` (definite lengths
/// of up to four bytes, as DER has).
fn tlv(input: &[u8]) -> Option<(u8, &[u8], &[u8])> {
    let (&tag, input) = input.split_first()?;
    let (&first, mut input) = input.split_first()?;
    let length = match first {
        0..=0x7f => usize::from(first),
        0x81..=0x84 => {
            let (bytes, rest) = input.split_at_checked(usize::from(first & 0x7f))?;
            input = rest;
            bytes.iter().fold(0usize, |n, &b| (n << 8) | usize::from(b))
        }
        _ => return None,
    };
    let (contents, rest) = input.split_at_checked(length)?;
    Some((tag, contents, rest))
}

/// A `Time` at the start of `input`, in seconds since the epoch, and what follows it.
fn time(input: &[u8]) -> Option<(i64, &[u8])> {
    let (tag, contents, rest) = tlv(input)?;
    let text = std::str::from_utf8(contents).ok()?;
    let text = text.strip_suffix('Z')?;
    let (year, text) = match tag {
        // RFC 5280: a two-digit year of 50 or more is 19YY, below 50 is 20YY.
        UTC_TIME if text.len() == 12 => {
            let yy: i64 = text.get(..2)?.parse().ok()?;
            (if yy >= 50 { 1900 + yy } else { 2000 + yy }, &text[2..])
        }
        GENERALIZED_TIME if text.len() == 14 => (text.get(..4)?.parse().ok()?, &text[4..]),
        _ => return None,
    };
    let field = |at: usize| -> Option<i64> { text.get(at..at + 2)?.parse().ok() };
    let (month, day) = (field(0)?, field(2)?);
    let (hour, minute, second) = (field(4)?, field(6)?, field(8)?);
    if !(1..=12).contains(&month)
        || !(1..=31).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    let days = days_from_civil(year, month, day);
    Some((days * 86_400 + hour * 3_600 + minute * 60 + second, rest))
}

/// Days from 1970-01-01 to the proleptic Gregorian date (Howard Hinnant's algorithm).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let day_of_year = (153 * (month + if month > 2 { -3 } else { 9 }) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dates_are_counted_from_the_epoch() {
        assert_eq!(days_from_civil(1970, 1, 1), 0);
        assert_eq!(days_from_civil(2000, 3, 1), 11_017);
        assert_eq!(days_from_civil(2026, 12, 6), 20_793);
    }

    #[test]
    fn both_kinds_of_time_are_read() {
        let utc = [&[UTC_TIME, 13][..], b"261206120000Z"].concat();
        assert_eq!(time(&utc).map(|t| t.0), Some(20_793 * 86_400 + 12 * 3_600));
        let generalized = [&[GENERALIZED_TIME, 15][..], b"19691231235959Z"].concat();
        assert_eq!(time(&generalized).map(|t| t.0), Some(-1));
        let bad = [&[UTC_TIME, 13][..], b"261306120000Z"].concat();
        assert_eq!(time(&bad), None);
    }

    #[test]
    fn what_is_not_a_certificate_has_no_validity() {
        assert_eq!(validity(&[]), None);
        assert_eq!(validity(&[0x30, 0x84, 0xff, 0xff, 0xff, 0xff]), None);
        assert_eq!(validity(&[0x30, 0x02, 0x30, 0x00]), None);
    }
}
