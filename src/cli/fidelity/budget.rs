//! How many ZooKeeper servers (JVMs) the real runs made at once may have: a run holds as
//! many as it starts (one for a standalone server, N for an ensemble of N) for as long as it
//! runs. Runs are let in first come, first served, so a run waiting for an ensemble's
//! servers is not passed again and again by standalone runs.

use std::sync::{Condvar, Mutex, MutexGuard};

/// At most `capacity` servers at once.
#[derive(Debug)]
pub struct Budget {
    capacity: usize,
    state: Mutex<State>,
    changed: Condvar,
}

/// The servers free and the queue of runs waiting for theirs (tickets in arrival order).
#[derive(Debug)]
struct State {
    free: usize,
    /// The ticket the next run to ask gets.
    next_ticket: u64,
    /// The ticket whose run is let in next.
    turn: u64,
}

/// Servers held by one run; given back when dropped.
#[derive(Debug)]
pub struct Held<'a> {
    budget: &'a Budget,
    servers: usize,
}

impl Budget {
    /// A budget of `capacity` servers (at least one).
    pub fn new(capacity: usize) -> Budget {
        let capacity = capacity.max(1);
        Budget {
            capacity,
            state: Mutex::new(State {
                free: capacity,
                next_ticket: 0,
                turn: 0,
            }),
            changed: Condvar::new(),
        }
    }

    /// Waits for every run that asked before, then until `servers` are free, and holds them;
    /// a run of more servers than the budget holds the whole budget (it runs alone).
    pub fn hold(&self, servers: usize) -> Held<'_> {
        let servers = servers.clamp(1, self.capacity);
        let mut state = self.lock();
        let ticket = state.next_ticket;
        state.next_ticket += 1;
        while state.turn != ticket || state.free < servers {
            state = (self.changed.wait(state)).unwrap_or_else(|poisoned| poisoned.into_inner());
        }
        state.free -= servers;
        state.turn += 1;
        drop(state);
        self.changed.notify_all();
        Held {
            budget: self,
            servers,
        }
    }

    fn lock(&self) -> MutexGuard<'_, State> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Drop for Held<'_> {
    fn drop(&mut self) {
        self.budget.lock().free += self.servers;
        self.budget.changed.notify_all();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Waits (without a timeout: the condition is certain to come) until `check` holds of
    /// the budget's state.
    fn until(budget: &Budget, check: impl Fn(&State) -> bool) {
        while !check(&budget.lock()) {
            std::thread::yield_now();
        }
    }

    #[test]
    fn a_run_holds_its_servers_until_it_ends() {
        let budget = Budget::new(3);
        let ensemble = budget.hold(3);
        assert_eq!(budget.lock().free, 0);
        drop(ensemble);
        let (one, two) = (budget.hold(1), budget.hold(1));
        assert_eq!(budget.lock().free, 1);
        drop((one, two));
        assert_eq!(budget.lock().free, 3);
    }

    #[test]
    fn a_run_larger_than_the_budget_holds_all_of_it() {
        let budget = Budget::new(2);
        let five = budget.hold(5);
        assert_eq!((five.servers, budget.lock().free), (2, 0));
        drop(five);
        assert_eq!(budget.lock().free, 2);
        assert_eq!(Budget::new(0).hold(1).servers, 1);
    }

    #[test]
    fn a_run_waiting_for_an_ensemble_is_not_passed_by_a_standalone_run() {
        let budget = Budget::new(3);
        let order = Mutex::new(Vec::new());
        let held = budget.hold(2);
        std::thread::scope(|scope| {
            let run = |name: &'static str, servers: usize| {
                let (budget, order) = (&budget, &order);
                move || {
                    let _held = budget.hold(servers);
                    order.lock().unwrap().push(name);
                }
            };
            scope.spawn(run("ensemble", 3));
            until(&budget, |s| s.next_ticket == 2);
            // One server is free, but the ensemble asked first.
            scope.spawn(run("standalone", 1));
            until(&budget, |s| s.next_ticket == 3);
            drop(held);
        });
        assert_eq!(*order.lock().unwrap(), ["ensemble", "standalone"]);
    }
}
