//! MSF-RS's configuration: every constant of MOA and WRC with the thesis' default (003 Ch. 4).
//!
//! The defaults are the simulation of 003 §4.5.1: three classes weighted 4 : 2 : 1 behind a
//! 2 Mb/s access downlink (the capacity is stated only indirectly, in §4.6: "40 % of link
//! capacity, i.e. 0.8 Mbps"), U+ = 98 %, K = 2, T = 5 s, W+_0 = 1. A real proxy sets
//! [`MsfrsConfig::capacity`] to its downlink rate and [`MsfrsConfig::weights`] to its classes.

use serde::Deserialize;
use thiserror::Error;

use crate::time::Dur;
use crate::units::Rate;

/// How the real-valued product of Eq. 4.3 becomes the window that limits releases.
///
/// 003 §4.3.2 does not say (spec 003 §4.4 \[AMBIGUITY\]); its one example, W+ = 6, U = 60 %,
/// U+ = 99 % giving 9.9 → "10", fits both readings below.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum WindowRounding {
    /// Keep W+ real across updates (Eq. 4.3 multiplies the previous W+, not a rounded one) and
    /// release while `W < W+`, so the effective limit is `⌈W+⌉` (9.9 → 10). The default:
    /// rounding each update to the nearest integer can trap the controller at W+ = 1 whenever
    /// one response fills more than U+/1.5 ≈ 65 % of the link (1·0.98/0.7 = 1.4 rounds back to
    /// 1 for ever), which the thesis' runs from W+_0 = 1 never show.
    #[default]
    Continuous,
    /// Round W+ to the nearest integer at every update (9.9 → 10; 1.4 → 1).
    Nearest,
}

/// When a finished update interval may change W+ (003 §4.3.2: "W+ should be recomputed only
/// when W = W+").
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum BindingRule {
    /// The window binds at the update instant: `W ≥ ⌈W+⌉` (`≥` because a shrinking W+ can
    /// leave more responses outstanding than the new limit). The thesis' words, read literally.
    #[default]
    AtUpdate,
    /// The window bound at some moment of the interval with a request left waiting: a request
    /// found the window full. Insensitive to where in a transaction the update falls.
    DuringInterval,
}

/// When an arriving request may leave at once.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum ReleaseRule {
    /// Whenever `W < W+` (spec 003 §4.3 implementation note): Theorem 4.1's Case 1 ("b_k = a_k
    /// if W < W+") and §4.5.5 ("requests are forwarded immediately once they arrive, since
    /// there are always free sub-links") assume it.
    #[default]
    BelowWindow,
    /// Only when no response is outstanding, `W = 0`, as Fig. 4.3's `Request_Receiver` is
    /// printed; otherwise the request waits for the next response data to run WRC's loop.
    WhenIdle,
}

/// MSF-RS (MOA + WRC) parameters. `Default` is the thesis' simulation (003 §4.5.1).
#[derive(Clone, Debug, PartialEq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct MsfrsConfig {
    /// Class weights `w_i`, one per class, class 0 first: 4, 2, 1 (003 §4.5.1, Fig. 4.8).
    pub weights: Vec<f64>,
    /// Downlink capacity `C` of Eq. 4.2: 2 Mb/s (003 §4.6, "0.8 Mbps" = 40 % of the link;
    /// the field trial of §4.7 likewise limits the access link to 2 Mb/s).
    pub capacity: Rate,
    /// The expected utilisation `U+` of Eq. 4.3: 98 % (003 §4.5.1, recommended in §4.5.6). Must
    /// be below 1: at 100 % a link exactly full cannot be told from one over-subscribed.
    pub target_utilization: f64,
    /// `K` of Eq. 4.3, the largest factor one update may grow W+ by: 2 (003 §4.3.2, "to avoid
    /// WRC from over-estimating the new W+ particularly when the old W+ is small"). Also the
    /// factor when nothing was received in the interval (`U_k = 0`).
    pub max_growth: f64,
    /// `T`, the interval between utilisation measurements and W+ updates: 5 s (003 §4.5.1;
    /// "the effects of different update intervals are insignificant").
    pub update_interval: Dur,
    /// `W+_0`, the window before the first update: 1 (003 Eq. 4.3).
    pub initial_window: f64,
    /// The floor under W+: 1. Not in the thesis; without it a long run of `U > U+` could
    /// shrink W+ below one outstanding response and stop all releases (spec 003 §4.4).
    pub min_window: f64,
    /// Normalise service by the class' active users, `L/(w_i·UC_i)` (Eq. 4.1): on. Off is the
    /// `L/w_i` of Fig. 4.4's pseudo-code, the class-based variant that §4.5.4 (Fig. 4.12(b))
    /// shows failing user-based fairness (spec 003 §4.3 [THESIS INCONSISTENCY]).
    pub per_user: bool,
    /// How Eq. 4.3's product becomes the release limit.
    pub window_rounding: WindowRounding,
    /// When an update may change W+.
    pub binding: BindingRule,
    /// When an arriving request may be released at once.
    pub release: ReleaseRule,
}

impl Default for MsfrsConfig {
    fn default() -> Self {
        MsfrsConfig {
            weights: vec![4.0, 2.0, 1.0],       // 003 §4.5.1
            capacity: Rate::from_mbps(2),       // 003 §4.6
            target_utilization: 0.98,           // 003 §4.5.1, §4.5.6
            max_growth: 2.0,                    // 003 §4.3.2, K
            update_interval: Dur::from_secs(5), // 003 §4.5.1, T
            initial_window: 1.0,                // 003 Eq. 4.3, W+_0
            min_window: 1.0,                    // spec 003 §4.4
            per_user: true,                     // 003 Eq. 4.1
            window_rounding: WindowRounding::Continuous,
            binding: BindingRule::AtUpdate,
            release: ReleaseRule::BelowWindow,
        }
    }
}

/// Why an [`MsfrsConfig`] cannot run.
#[derive(Debug, Clone, PartialEq, Error)]
pub enum MsfrsConfigError {
    /// No classes.
    #[error("msfrs: `weights` must name at least one class")]
    NoClasses,
    /// A weight is zero, negative or not finite.
    #[error("msfrs: weight of class {class} must be a positive finite number, got {weight}")]
    BadWeight { class: usize, weight: f64 },
    /// `U+` outside (0, 1).
    #[error("msfrs: `target_utilization` must be in (0, 1) (003 §4.3.2), got {0}")]
    BadTarget(f64),
    /// `K` below 1 or not finite.
    #[error("msfrs: `max_growth` must be a finite number >= 1, got {0}")]
    BadGrowth(f64),
    /// `T` of zero.
    #[error("msfrs: `update_interval` must be positive")]
    ZeroInterval,
    /// `C` of zero.
    #[error("msfrs: `capacity` must be positive")]
    ZeroCapacity,
    /// `W+_0` or the floor below 1, or the floor above `W+_0`.
    #[error("msfrs: need 1 <= min_window ({min}) <= initial_window ({initial}), both finite")]
    BadWindow { min: f64, initial: f64 },
}

impl MsfrsConfig {
    /// Checks every field; [`crate::msfrs::Msfrs::new`] calls it.
    pub fn validate(&self) -> Result<(), MsfrsConfigError> {
        if self.weights.is_empty() {
            return Err(MsfrsConfigError::NoClasses);
        }
        for (class, &weight) in self.weights.iter().enumerate() {
            if !(weight.is_finite() && weight > 0.0) {
                return Err(MsfrsConfigError::BadWeight { class, weight });
            }
        }
        let u = self.target_utilization;
        if !(u > 0.0 && u < 1.0) {
            return Err(MsfrsConfigError::BadTarget(u));
        }
        if !(self.max_growth.is_finite() && self.max_growth >= 1.0) {
            return Err(MsfrsConfigError::BadGrowth(self.max_growth));
        }
        if self.update_interval == Dur::ZERO {
            return Err(MsfrsConfigError::ZeroInterval);
        }
        if self.capacity == Rate::ZERO {
            return Err(MsfrsConfigError::ZeroCapacity);
        }
        let (min, initial) = (self.min_window, self.initial_window);
        if !(min.is_finite() && initial.is_finite() && min >= 1.0 && min <= initial) {
            return Err(MsfrsConfigError::BadWindow { min, initial });
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defaults_are_the_thesis_simulation() {
        let c = MsfrsConfig::default();
        assert_eq!(c.weights, vec![4.0, 2.0, 1.0]);
        assert_eq!(c.capacity, Rate::from_mbps(2));
        assert_eq!(c.target_utilization, 0.98);
        assert_eq!(c.max_growth, 2.0);
        assert_eq!(c.update_interval, Dur::from_secs(5));
        assert_eq!(c.initial_window, 1.0);
        assert!(c.per_user);
        assert_eq!(c.validate(), Ok(()));
    }

    #[test]
    fn reads_overrides_by_name_and_rejects_unknown_keys() {
        let c: MsfrsConfig = toml::from_str(
            "weights = [1, 1]\ncapacity = \"10Mbps\"\nupdate_interval = \"2s\"\n\
             per_user = false\nwindow_rounding = \"nearest\"",
        )
        .unwrap();
        assert_eq!(c.weights, vec![1.0, 1.0]);
        assert_eq!(c.capacity, Rate::from_mbps(10));
        assert_eq!(c.update_interval, Dur::from_secs(2));
        assert!(!c.per_user);
        assert_eq!(c.window_rounding, WindowRounding::Nearest);
        assert!(toml::from_str::<MsfrsConfig>("u_plus = 0.9").is_err());
    }

    #[test]
    fn rejects_what_cannot_run() {
        let bad = |f: fn(&mut MsfrsConfig)| {
            let mut c = MsfrsConfig::default();
            f(&mut c);
            c.validate().is_err()
        };
        assert!(bad(|c| c.weights.clear()));
        assert!(bad(|c| c.weights[1] = 0.0));
        assert!(bad(|c| c.weights[2] = f64::NAN));
        assert!(bad(|c| c.target_utilization = 1.0));
        assert!(bad(|c| c.max_growth = 0.5));
        assert!(bad(|c| c.update_interval = Dur::ZERO));
        assert!(bad(|c| c.capacity = Rate::ZERO));
        assert!(bad(|c| c.min_window = 0.5));
        assert!(bad(|c| c.initial_window = 0.0));
    }
}
