//! What the session's model calls cost: the counts each endpoint reported, summed per turn and per
//! session, split between the planner's work and protection's, and priced where the person gave a
//! price (USAGE-4 to USAGE-6).
//!
//! The counts are metadata about calls, for the person's screen and `session/status` only: no
//! planner request, route or file is made from them (COST-44).

use crate::model::{Role, Usage};
use crate::screen::{CallTokens, Meter, Tally, UsageTotals};
use crate::settings::Price;

/// The session's account of its model calls, shared by the session and every delegate it starts.
#[derive(Debug, Default)]
pub struct Ledger {
    meter: Meter,
}

impl Ledger {
    /// A turn begins: its totals start again from nothing.
    pub fn begin_turn(&mut self) {
        self.meter.turn = UsageTotals::default();
    }

    /// Counts one finished call by `role`, whose endpoint reported `usage` (`None`: nothing),
    /// made with a model priced at `price`; `context_limit` is the planner's budget as now known.
    /// Gives back what the call is shown as and the meter after it.
    pub fn record(
        &mut self,
        role: Role,
        usage: Option<Usage>,
        price: Option<Price>,
        context_limit: Option<u64>,
    ) -> (Option<CallTokens>, Meter) {
        let call = usage.map(|u| CallTokens {
            input: u.input_tokens,
            output: u.output_tokens,
            cached_input: u.cached_input_tokens,
            cache_write_input: u.cache_write_input_tokens,
        });
        let cost = usage.zip(price).map(|(u, p)| cost(u, p));
        for totals in [&mut self.meter.turn, &mut self.meter.session] {
            let tally = match role {
                Role::Planner | Role::Delegate => &mut totals.planner,
                Role::Check | Role::Processor => &mut totals.protection,
            };
            add(tally, call, cost);
        }
        // The context meter is the planner's own: a delegate's conversation is another.
        if role == Role::Planner {
            self.meter.context_tokens = call.map(|c| c.input + c.output);
        }
        self.meter.context_limit = context_limit.or(self.meter.context_limit);
        (call, self.meter)
    }

    /// The session's totals and compactions, as its record keeps them (USAGE-14).
    pub fn kept(&self) -> (UsageTotals, u64) {
        (self.meter.session, self.meter.compactions)
    }

    /// A resumed session's meter goes on from what its record kept (USAGE-14).
    pub fn restore(&mut self, (session, compactions): (UsageTotals, u64)) {
        self.meter.session = session;
        self.meter.compactions = compactions;
    }

    /// The planner's conversation was compacted (MODEL-11).
    pub fn compacted(&mut self) {
        self.meter.compactions += 1;
    }

    /// The meter as it stands, with the planner's budget as now known.
    pub fn meter(&self, context_limit: Option<u64>) -> Meter {
        Meter {
            context_limit: context_limit.or(self.meter.context_limit),
            ..self.meter
        }
    }
}

fn add(tally: &mut Tally, call: Option<CallTokens>, cost: Option<u128>) {
    tally.calls += 1;
    match call {
        None => tally.unreported += 1,
        Some(c) => {
            tally.input += c.input;
            tally.output += c.output;
            tally.cached_input += c.cached_input.unwrap_or(0);
            tally.cache_write_input += c.cache_write_input.unwrap_or(0);
        }
    }
    if let Some(cost) = cost {
        tally.priced += 1;
        tally.cost_micros_per_million += cost;
    }
}

/// One call's cost in millionths of a dollar times a million tokens: the uncached input at the
/// input price, the cached at the cached price, the reply at the output price.
fn cost(usage: Usage, price: Price) -> u128 {
    let cached = usage
        .cached_input_tokens
        .unwrap_or(0)
        .min(usage.input_tokens);
    let uncached = usage.input_tokens - cached;
    u128::from(uncached) * u128::from(price.input)
        + u128::from(cached) * u128::from(price.cached_input)
        + u128::from(usage.output_tokens) * u128::from(price.output)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn usage(input: u64, output: u64, cached: Option<u64>) -> Option<Usage> {
        Some(Usage {
            input_tokens: input,
            output_tokens: output,
            cached_input_tokens: cached,
            cache_write_input_tokens: None,
        })
    }

    // Verifies: USAGE-4, USAGE-5
    #[test]
    fn the_ledger_splits_planner_from_protection_and_turn_from_session() {
        let mut ledger = Ledger::default();
        ledger.record(
            Role::Planner,
            usage(1000, 50, Some(800)),
            None,
            Some(32_000),
        );
        ledger.record(Role::Check, usage(300, 10, None), None, None);
        ledger.begin_turn();
        ledger.record(Role::Delegate, usage(200, 20, None), None, None);
        let (call, meter) = ledger.record(Role::Processor, None, None, None);
        assert_eq!(call, None);
        // The delegate's call does not move the planner's context meter.
        assert_eq!(meter.context_tokens, Some(1050));
        assert_eq!(meter.context_limit, Some(32_000));
        assert_eq!(
            (meter.session.planner.calls, meter.session.planner.input),
            (2, 1200)
        );
        assert_eq!(meter.session.planner.cached_input, 800);
        assert_eq!(
            (
                meter.session.protection.calls,
                meter.session.protection.unreported,
                meter.session.protection.input
            ),
            (2, 1, 300)
        );
        assert_eq!(
            (meter.turn.planner.calls, meter.turn.planner.output),
            (1, 20)
        );
        assert_eq!(
            (
                meter.turn.protection.calls,
                meter.turn.protection.unreported
            ),
            (1, 1)
        );
        // A planner call that reports nothing leaves the context unknown, not the old number.
        let (_, meter) = ledger.record(Role::Planner, None, None, None);
        assert_eq!(meter.context_tokens, None);
    }

    // Verifies: USAGE-8
    #[test]
    fn cache_writes_are_carried_per_call_and_summed_apart_from_cache_reads() {
        let mut ledger = Ledger::default();
        let wrote = Some(Usage {
            input_tokens: 6000,
            output_tokens: 10,
            cached_input_tokens: Some(0),
            cache_write_input_tokens: Some(5000),
        });
        let (call, _) = ledger.record(Role::Planner, wrote, None, None);
        assert_eq!(call.and_then(|c| c.cache_write_input), Some(5000));
        let read = Some(Usage {
            input_tokens: 6200,
            output_tokens: 10,
            cached_input_tokens: Some(5000),
            cache_write_input_tokens: Some(150),
        });
        let (_, meter) = ledger.record(Role::Planner, read, None, None);
        let planner = meter.session.planner;
        assert_eq!(
            (
                planner.input,
                planner.cached_input,
                planner.cache_write_input
            ),
            (12_200, 5000, 5150)
        );
        // An endpoint that says nothing of writes adds none.
        let (call, meter) = ledger.record(Role::Check, usage(100, 1, None), None, None);
        assert_eq!(call.and_then(|c| c.cache_write_input), None);
        assert_eq!(meter.session.protection.cache_write_input, 0);
    }

    // Verifies: USAGE-6
    #[test]
    fn money_is_estimated_only_where_every_reported_call_had_a_price() {
        let price = Price {
            input: 3_000_000,
            cached_input: 300_000,
            output: 15_000_000,
        };
        let mut ledger = Ledger::default();
        let (_, meter) = ledger.record(
            Role::Planner,
            usage(1_000_000, 0, Some(500_000)),
            Some(price),
            None,
        );
        // 500k uncached at $3/M, 500k cached at $0.30/M.
        assert_eq!(meter.session.planner.cost_usd(), Some(1.65));
        assert_eq!(meter.session.protection.cost_usd(), None);
        let (_, meter) = ledger.record(Role::Planner, usage(0, 1_000_000, None), Some(price), None);
        assert_eq!(meter.session.planner.cost_usd(), Some(16.65));
        // A call with no price makes the sum unknown, not smaller.
        let (_, meter) = ledger.record(Role::Planner, usage(10, 10, None), None, None);
        assert_eq!(meter.session.planner.cost_usd(), None);
    }
}
