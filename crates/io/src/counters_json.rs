//! Counters as JSON: the one rendering of [`tcpnc_proto::seam::Counters`] and `(name, value)`
//! pairs used by the gateway's stats file and the relay's counters.

use serde_json::{Map, Value};
use tcpnc_proto::seam::{Counter, Counters};

/// `(name, value)` pairs as a JSON object; a dotted name nests (`to_peer.packets` becomes
/// `{"to_peer": {"packets": ..}}`).
pub fn pairs_json(pairs: &[Counter]) -> Map<String, Value> {
    let mut root = Map::new();
    for &(name, value) in pairs {
        let mut obj = &mut root;
        let mut parts = name.split('.').peekable();
        while let Some(part) = parts.next() {
            if parts.peek().is_none() {
                obj.insert(part.to_string(), value.into());
                break;
            }
            let slot = obj
                .entry(part.to_string())
                .or_insert_with(|| Value::Object(Map::new()));
            if !slot.is_object() {
                *slot = Value::Object(Map::new());
            }
            let Value::Object(next) = slot else {
                unreachable!("just made an object")
            };
            obj = next;
        }
    }
    root
}

/// An engine's [`Counters`] as the stats file's `engine` object: `{"engine": name, "totals":
/// {..}, "flows": [{"flow": label, "counters": {..}}]}`. The one way counters become JSON.
pub fn counters_json(c: &Counters) -> Value {
    let flows: Vec<Value> = c
        .flows
        .iter()
        .map(|(flow, counters)| serde_json::json!({ "flow": flow, "counters": pairs_json(counters) }))
        .collect();
    serde_json::json!({ "engine": c.engine, "totals": pairs_json(&c.totals), "flows": flows })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counters_nest_on_dots() {
        let c = Counters {
            engine: "x",
            totals: vec![("a", 1), ("to_peer.packets", 2), ("to_peer.bytes", 3)],
            flows: vec![("f".into(), vec![("b.c.d", 4)])],
        };
        let j = counters_json(&c);
        assert_eq!(j["engine"], "x");
        assert_eq!(j["totals"]["a"], 1);
        assert_eq!(j["totals"]["to_peer"]["packets"], 2);
        assert_eq!(j["totals"]["to_peer"]["bytes"], 3);
        assert_eq!(j["flows"][0]["flow"], "f");
        assert_eq!(j["flows"][0]["counters"]["b"]["c"]["d"], 4);
    }
}
