//! The path emulator of a lab session: the relay (`tcpnc link`) configured from the shared path
//! settings ([`PathSettings`]) as its typed command line ([`RelayArgs`]).

use std::net::SocketAddr;
use std::path::Path;

use tcpnc_link::LossModel;
use tcpnc_relay::RelayArgs;
use tcpnc_settings::LossPosition;

use crate::session::{GATEWAY_PORT, RELAY_A_PORT, RELAY_B_PORT};
use crate::settings::PathSettings;
use crate::topo;

/// The relay's arguments for `path`: A faces the client gateway, B the server gateway; the
/// loss applies to the data direction (a→b) only.
pub fn relay_args(settings: &PathSettings, stats: &Path) -> RelayArgs {
    let path = &settings.spec;
    let mut r = RelayArgs::new(
        SocketAddr::from((topo::EMU_CLI_ADDR, RELAY_A_PORT)),
        SocketAddr::from((topo::EMU_SRV_ADDR, RELAY_B_PORT)),
    );
    r.a_peer = Some(SocketAddr::from((topo::CLI_ADDR, GATEWAY_PORT)));
    r.b_peer = Some(SocketAddr::from((topo::SRV_ADDR, GATEWAY_PORT)));
    r.rate_mbit = Some(path.rate_mbit);
    r.delay_ms = Some(path.delay_ms);
    r.queue_packets = Some(path.queue());
    if path.burst > 1.0 {
        r.ge = Some(ge_of(path.loss, path.burst));
    } else {
        r.loss = Some(path.loss);
    }
    if path.jitter_ms > 0.0 {
        r.jitter_ms = Some(path.jitter_ms);
        r.reorder = path.reorder;
    }
    if path.delay_switch_ms > 0.0 {
        r.delay_switch_ms = Some(path.delay_switch_ms);
        r.delay_sd_ms = Some(path.delay_sd_ms);
        r.reorder = path.reorder;
    }
    if path.reverse_loss > 0.0 {
        r.ba = vec![format!("loss={}", path.reverse_loss)];
    }
    r.loss_before_queue = path.loss_position == LossPosition::BeforeQueue;
    r.seed = settings.seed;
    r.stats_file = Some(stats.to_path_buf());
    r
}

/// The relay's `--ge p,r` for a mean loss and mean burst length (the link's simple Gilbert
/// model: no loss in the good state, every packet lost in the bad one).
fn ge_of(loss: f64, burst: f64) -> String {
    match LossModel::gilbert_elliott_from_mean(loss, burst) {
        Ok(LossModel::GilbertElliott {
            p_good_to_bad,
            p_bad_to_good,
            ..
        }) => format!("{p_good_to_bad},{p_bad_to_good}"),
        // PathSettings::validate keeps loss in [0, 1) and burst >= 1.
        _ => format!("0,{}", 1.0 / burst),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::settings::PathSpec;

    fn path() -> PathSettings {
        PathSettings::new(PathSpec::lab(), 5)
    }

    /// The relay gets the path's rate, delay, queue and seed on both directions and the loss on
    /// the data direction only.
    #[test]
    fn relay_models_the_path() {
        let o = relay_args(&path(), Path::new("/tmp/l.json"))
            .options()
            .unwrap();
        assert_eq!(o.seed, 5);
        assert_eq!(o.ab.rate, o.ba.rate);
        assert!(o.ab.rate.is_some());
        assert_eq!(o.ab.delay, o.ba.delay);
        assert_ne!(o.ab.loss, o.ba.loss);
        assert_eq!(
            o.a_peer,
            Some(SocketAddr::from((topo::CLI_ADDR, GATEWAY_PORT)))
        );
        assert!(matches!(o.ab.loss, LossModel::Bernoulli { .. }));
        assert_eq!(o.ba.loss.mean_loss(), 0.0);
    }

    /// Bursts, jitter with reordering and reverse loss reach the relay's models.
    #[test]
    fn relay_models_real_link_impairments() {
        let mut p = path();
        p.spec.burst = 4.0;
        p.spec.jitter_ms = 5.0;
        p.spec.reorder = true;
        p.spec.delay_sd_ms = 30.0;
        p.spec.delay_switch_ms = 250.0;
        p.spec.reverse_loss = 0.02;
        let o = relay_args(&p, Path::new("/tmp/l.json")).options().unwrap();
        assert!(matches!(o.ab.loss, LossModel::GilbertElliott { .. }));
        assert!(
            (o.ab.loss.mean_loss() - 0.1).abs() < 1e-9,
            "{:?}",
            o.ab.loss
        );
        assert!((o.ba.loss.mean_loss() - 0.02).abs() < 1e-12);
        assert_eq!(o.ab.jitter, o.ba.jitter);
        assert!(o.ab.jitter.allow_reordering);
        assert_eq!(o.ab.jitter.max, std::time::Duration::from_millis(5));
        let switch =
            o.ab.delay_switch
                .expect("delay switching reaches the relay");
        assert_eq!(Some(switch), o.ba.delay_switch);
        assert_eq!(switch.every, std::time::Duration::from_millis(250));
        assert_eq!(switch.sd, std::time::Duration::from_millis(30));
    }
}
