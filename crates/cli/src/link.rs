//! `tcpnc link`: the path emulator, a UDP relay through seeded channel models in real time.
//! The flags and their rules are [`tcpnc_relay::RelayArgs`].

use anyhow::Result;
use tcpnc_relay::Relay;
pub use tcpnc_relay::RelayArgs as LinkArgs;

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
