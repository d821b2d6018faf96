//! Sizes as people write them (`20MB`, `512k`, `1MiB`, `1000000`): one parser for every
//! `--bytes` flag (`tcpnc sim`, `tcpnc lab`) and every other size a command takes.

/// Parses sizes like `20MB`, `512k`, `1MiB`, `1000000` (decimal units: k = 1000,
/// M = 10^6, G = 10^9; binary with an `i`: KiB, MiB, GiB).
pub fn parse_bytes(s: &str) -> std::result::Result<u64, String> {
    let t = s.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let x: f64 = num.parse().map_err(|_| format!("'{s}' is not a size"))?;
    let mult = match unit.trim().to_ascii_lowercase().as_str() {
        "" | "b" => 1.0,
        "k" | "kb" => 1e3,
        "m" | "mb" => 1e6,
        "g" | "gb" => 1e9,
        "ki" | "kib" => 1024.0,
        "mi" | "mib" => 1024.0 * 1024.0,
        "gi" | "gib" => 1024.0 * 1024.0 * 1024.0,
        u => return Err(format!("unknown size unit '{u}' in '{s}'")),
    };
    let v = (x * mult).round();
    if !(1.0..1e15).contains(&v) {
        return Err(format!("size '{s}' out of range"));
    }
    Ok(v as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_parse() {
        assert_eq!(parse_bytes("20MB"), Ok(20_000_000));
        assert_eq!(parse_bytes("1MiB"), Ok(1 << 20));
        assert_eq!(parse_bytes("512k"), Ok(512_000));
        assert_eq!(parse_bytes("1234"), Ok(1234));
        assert!(parse_bytes("x").is_err());
        assert!(parse_bytes("3 parsecs").is_err());
    }
}
