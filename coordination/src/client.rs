//! A client: one recipe composed with its framework layer. This is the unit every executor
//! drives (the model checker, the async driver on the simulator and on a real ZooKeeper).

use crate::framework::{Delivery, Framework};
use crate::ids::TimerId;
use crate::recipe::{Ctx, Effect, Input, Recipe};
use crate::relabel::Relabel;
use crate::session::RawEvent;

/// What an executor feeds a client.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum ClientInput<C> {
    /// A user call.
    Call(C),
    /// The next event of the current session's stream.
    Event(RawEvent),
    /// A timer set by an `Effect::SetTimer` fired.
    Timer(TimerId),
}

/// A recipe with its framework layer.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Relabel)]
pub struct Client<R> {
    framework: Framework,
    recipe: R,
}

impl<R: Recipe> Client<R> {
    /// Composes `recipe` with `framework`.
    pub fn new(framework: Framework, recipe: R) -> Client<R> {
        Client { framework, recipe }
    }

    /// The framework layer's state.
    pub fn framework(&self) -> &Framework {
        &self.framework
    }

    /// The recipe's state.
    pub fn recipe(&self) -> &R {
        &self.recipe
    }

    /// Handles one input, appending the effects to `out` in the order they must be carried out.
    pub fn handle(&mut self, input: ClientInput<R::Call>, out: &mut Vec<Effect<R::Notice>>) {
        match input {
            ClientInput::Call(call) => self.deliver(Input::Call(call), out),
            ClientInput::Event(event) => {
                for delivery in self.framework.on_event(event, out) {
                    self.deliver(delivery.into(), out);
                }
            }
            ClientInput::Timer(timer) => match self.framework.on_timer(timer, out) {
                Ok(deliveries) => {
                    for delivery in deliveries {
                        self.deliver(delivery.into(), out);
                    }
                }
                Err(timer) => self.deliver(Input::Timer(timer), out),
            },
        }
    }

    /// Whether `timer` is the recipe's (the timeout of an acquire, or of a leader latch's
    /// await) rather than the framework layer's own (the LOST timer, a retry's sleep).
    pub fn is_recipe_timer(&self, timer: TimerId) -> bool {
        self.framework.own_timer(timer).is_none()
    }

    fn deliver(&mut self, input: Input<R::Call>, out: &mut Vec<Effect<R::Notice>>) {
        let mut cx = Ctx {
            framework: &mut self.framework,
            out,
        };
        self.recipe.handle(input, &mut cx);
    }
}

impl<C> From<Delivery> for Input<C> {
    fn from(delivery: Delivery) -> Input<C> {
        match delivery {
            Delivery::Reply { op, result } => Input::Reply { op, result },
            Delivery::Watch(event) => Input::Watch(event),
            Delivery::Session(event) => Input::Session(event),
        }
    }
}
