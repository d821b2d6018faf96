//! `tcpnc link`: the path emulator, a UDP relay through seeded channel models in real time
//! (wiring only: the arguments are `tcpnc_gateway::relay::RelayArgs`, whose doc lists which
//! flags apply to which direction).

use anyhow::Result;
use tcpnc_gateway::relay::{Relay, RelayArgs};

/// Arguments of `tcpnc link`.
pub type LinkArgs = RelayArgs;

/// Runs `tcpnc link` until SIGINT/SIGTERM, then prints the counters.
pub fn run(args: &LinkArgs) -> Result<()> {
    let opts = args.options()?;
    let stop = tcpnc_gateway::shutdown::shutdown_flag()?;
    let relay = Relay::bind(&opts)?;
    eprintln!(
        "tcpnc link: A {} <-> B {}\n  a->b {:?}\n  b->a {:?}",
        args.a_listen, args.b_listen, opts.ab, opts.ba
    );
    let stats = relay.run(stop)?;
    println!("{}", serde_json::to_string_pretty(&stats)?);
    Ok(())
}
