//! JSON text exactly as JavaScript's `JSON.stringify(JSON.parse(text))` would print it: the
//! contract defines a structured result's `output` that way. It differs from serde_json's
//! printing in numbers (`6.0` is `6`, `1e21` is `1e+21`, `1e20` is `100000000000000000000`)
//! and in key order (keys that are array indices come first, in ascending order).

use serde_json::{Map, Value};

pub fn stringify(value: &Value) -> String {
    let mut out = String::new();
    write_value(&mut out, value);
    out
}

fn write_value(out: &mut String, value: &Value) {
    match value {
        Value::Null => out.push_str("null"),
        Value::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        // Every JSON number is a double to JavaScript, big integers included.
        Value::Number(n) => match n.as_f64() {
            Some(x) => write_number(out, x),
            None => out.push_str("null"),
        },
        Value::String(s) => write_string(out, s),
        Value::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_value(out, item);
            }
            out.push(']');
        }
        Value::Object(map) => write_object(out, map),
    }
}

/// serde_json escapes strings as `JSON.stringify` does (the short escapes, other control
/// characters as lowercase `\u00xx`, nothing else).
fn write_string(out: &mut String, s: &str) {
    // Serialising a string cannot fail.
    out.push_str(&serde_json::to_string(s).unwrap_or_default());
}

fn write_object(out: &mut String, map: &Map<String, Value>) {
    let mut indices: Vec<(u32, &String, &Value)> = map
        .iter()
        .filter_map(|(key, value)| array_index(key).map(|i| (i, key, value)))
        .collect();
    indices.sort_unstable_by_key(|(i, _, _)| *i);
    let others = map.iter().filter(|(key, _)| array_index(key).is_none());
    let entries = indices.into_iter().map(|(_, k, v)| (k, v)).chain(others);
    out.push('{');
    for (i, (key, value)) in entries.enumerate() {
        if i > 0 {
            out.push(',');
        }
        write_string(out, key);
        out.push(':');
        write_value(out, value);
    }
    out.push('}');
}

/// A key JavaScript orders first: the canonical decimal text of 0 ..= 2^32 - 2.
fn array_index(key: &str) -> Option<u32> {
    let canonical = key == "0" || (!key.starts_with('0') && key.len() <= 10);
    if !canonical || !key.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    key.parse::<u32>().ok().filter(|i| *i != u32::MAX)
}

/// `Number.prototype.toString()` (ECMA-262 Number::toString, radix 10), for a finite `x`.
fn write_number(out: &mut String, x: f64) {
    if x == 0.0 {
        return out.push('0');
    }
    // JSON numbers are finite; JavaScript prints a non-finite one as null.
    if !x.is_finite() {
        return out.push_str("null");
    }
    if x < 0.0 {
        out.push('-');
    }
    // serde_json prints the shortest digits that read back as `x`, the closest of them,
    // and the even one on a tie, as JavaScript picks them; only the layout differs.
    let (digits, n) = decimal_digits(&Value::from(x.abs()).to_string());
    // x = 0.d1d2...dk × 10^n
    let k = digits.len() as i32;
    if k <= n && n <= 21 {
        out.push_str(&digits);
        out.extend(std::iter::repeat_n('0', (n - k) as usize));
    } else if 0 < n && n <= 21 {
        out.push_str(&digits[..n as usize]);
        out.push('.');
        out.push_str(&digits[n as usize..]);
    } else if -6 < n && n <= 0 {
        out.push_str("0.");
        out.extend(std::iter::repeat_n('0', (-n) as usize));
        out.push_str(&digits);
    } else {
        out.push_str(&digits[..1]);
        if k > 1 {
            out.push('.');
            out.push_str(&digits[1..]);
        }
        out.push('e');
        out.push(if n > 0 { '+' } else { '-' });
        out.push_str(&(n - 1).abs().to_string());
    }
}

/// The significant digits of a positive decimal text (`6.0`, `1.5e-7`, `1e21`) and `n`
/// such that its value is 0.digits × 10^n.
fn decimal_digits(text: &str) -> (String, i32) {
    let (mantissa, exponent) = text.split_once(['e', 'E']).unwrap_or((text, "0"));
    let (whole, fraction) = mantissa.split_once('.').unwrap_or((mantissa, ""));
    let all = format!("{whole}{fraction}");
    let significant = all.trim_start_matches('0');
    let leading_zeros = (all.len() - significant.len()) as i32;
    let exponent: i32 = exponent.trim_start_matches('+').parse().unwrap_or(0);
    let n = whole.len() as i32 - leading_zeros + exponent;
    (significant.trim_end_matches('0').to_owned(), n)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn js(text: &str) -> String {
        stringify(&serde_json::from_str(text).expect("JSON"))
    }

    #[test]
    fn numbers_print_as_javascript_prints_them() {
        let cases = [
            ("6.0", "6"),
            ("-6.50", "-6.5"),
            ("-0.0", "0"),
            ("-0", "0"),
            ("1e21", "1e+21"),
            ("1e20", "100000000000000000000"),
            ("123456789012345678901", "123456789012345680000"),
            ("12345678901234567890", "12345678901234567000"),
            ("1.5e-7", "1.5e-7"),
            ("0.000001", "0.000001"),
            ("1e-7", "1e-7"),
            ("0.1", "0.1"),
            ("0.30000000000000004", "0.30000000000000004"),
            ("123.456", "123.456"),
            ("1.7976931348623157e308", "1.7976931348623157e+308"),
            ("5e-324", "5e-324"),
            ("2.5E+3", "2500"),
            ("9007199254740993", "9007199254740992"),
            // Two shortest candidates, equally close: the even one.
            ("84418043664819.125", "84418043664819.12"),
            ("3091651018847.03125", "3091651018847.0312"),
        ];
        for (wire, expected) in cases {
            assert_eq!(js(wire), expected, "{wire}");
        }
    }

    #[test]
    fn array_index_keys_come_first_in_order() {
        assert_eq!(
            js(r#"{"b":1,"10":2,"a":3,"2":4,"01":5,"-1":6,"4294967295":7,"4294967294":8}"#),
            r#"{"2":4,"10":2,"4294967294":8,"b":1,"a":3,"01":5,"-1":6,"4294967295":7}"#
        );
    }

    #[test]
    fn strings_and_nesting_match_json_stringify() {
        assert_eq!(
            js(r#"{"s":"a\"b\\c\n\u0001\u007f/é","l":[1.0,true,null,{"x":[]}]}"#),
            "{\"s\":\"a\\\"b\\\\c\\n\\u0001\u{7f}/é\",\"l\":[1,true,null,{\"x\":[]}]}"
        );
    }
}
