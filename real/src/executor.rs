//! A one-thread executor that waits on `async-io`'s reactor, the one the `zookeeper-client`
//! crate's socket and timers are registered with.
//!
//! [`block_on`] runs a future and every task spawned meanwhile on the calling thread, and
//! when nothing is ready it waits in `async_io::block_on`, which then polls the reactor on
//! this thread: a reply read from the socket wakes the task that waits for it here, with no
//! other thread in between (a tokio runtime would wait on its own reactor, and `async-io`'s
//! would run on its `async-io` thread, one more wake-up per reply). Tasks are spawned with
//! [`spawn`], or by the crate through `asyncs::spawn`, which goes to the thread's spawner
//! that [`block_on`] installs.
//!
//! A task woken on this thread while the executor runs its tasks is only queued: the
//! executor runs every queued task before it waits again. Waking `async_io::block_on` then
//! would cost a needless look at the reactor (five system calls: its timer, its
//! notification descriptor and `epoll_wait`) for each such wake. Wakes from the reactor or
//! from other threads wake it.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::future::{Future, poll_fn};
use std::pin::{Pin, pin};
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use futures::future::{self, Either};
use futures::task::AtomicWaker;

/// A task: runs to its end on the thread that spawned it.
type Task<'a> = Pin<Box<dyn Future<Output = ()> + 'a>>;

/// Tasks spawned while the executor's tasks are being polled, taken in after that poll.
#[derive(Default)]
struct Spawned(RefCell<Vec<Task<'static>>>);

thread_local! {
    /// The tasks spawned on this thread's running [`block_on`], if one runs.
    static CURRENT: RefCell<Option<Rc<Spawned>>> = const { RefCell::new(None) };
    /// The run queue of the executor that is polling its tasks on this thread, if one is
    /// (its address): wakes of its tasks need not wake the thread.
    static POLLING: Cell<usize> = const { Cell::new(0) };
}

impl spawns_core::Spawn for Spawned {
    fn spawn(&self, task: spawns_core::Task) {
        self.0.borrow_mut().push(Box::into_pin(task.future));
    }
}

/// Spawns `task` on the [`block_on`] running on this thread; gives it back when none runs.
pub fn spawn<F: Future<Output = ()> + 'static>(task: F) -> Result<(), F> {
    CURRENT.with_borrow(|current| match current {
        Some(spawned) => {
            spawned.0.borrow_mut().push(Box::pin(task));
            Ok(())
        }
        None => Err(task),
    })
}

/// The tasks ready to be polled (their slots), and the waker of the thread that polls them.
#[derive(Default)]
struct RunQueue {
    slots: Mutex<VecDeque<usize>>,
    thread: AtomicWaker,
}

impl RunQueue {
    fn address(self: &Arc<Self>) -> usize {
        Arc::as_ptr(self) as usize
    }
}

/// A task's waker: queues its slot once until it is polled.
struct Wakeup {
    slot: usize,
    queued: AtomicBool,
    queue: Arc<RunQueue>,
}

impl Wake for Wakeup {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        if self.queued.swap(true, Ordering::AcqRel) {
            return;
        }
        self.queue
            .slots
            .lock()
            .expect("run queue")
            .push_back(self.slot);
        if POLLING.get() != self.queue.address() {
            self.queue.thread.wake();
        }
    }
}

/// The executor's tasks, by slot; a finished task's slot is reused.
struct Tasks<'a> {
    tasks: Vec<Option<(Task<'a>, Waker)>>,
    wakeups: Vec<Arc<Wakeup>>,
    free: Vec<usize>,
    queue: Arc<RunQueue>,
}

impl<'a> Tasks<'a> {
    /// Adds `task`, queued to be polled; returns its slot.
    fn add(&mut self, task: Task<'a>) -> usize {
        let slot = self.free.pop().unwrap_or(self.tasks.len());
        if slot == self.tasks.len() {
            self.tasks.push(None);
            self.wakeups.push(Arc::new(Wakeup {
                slot,
                queued: AtomicBool::new(false),
                queue: self.queue.clone(),
            }));
        }
        let wakeup = self.wakeups[slot].clone();
        self.tasks[slot] = Some((task, Waker::from(wakeup.clone())));
        wakeup.wake_by_ref();
        slot
    }

    /// Polls queued tasks until none is queued; true once the task in slot `main` ended.
    fn run(&mut self, main: usize, spawned: &Spawned, cx: &mut Context<'_>) -> bool {
        loop {
            for task in spawned.0.take() {
                self.add(task);
            }
            let next = self.queue.slots.lock().expect("run queue").pop_front();
            let Some(slot) = next else {
                self.queue.thread.register(cx.waker());
                let idle = self.queue.slots.lock().expect("run queue").is_empty();
                if idle && spawned.0.borrow().is_empty() {
                    return false;
                }
                continue;
            };
            self.wakeups[slot].queued.store(false, Ordering::Release);
            let Some((task, waker)) = self.tasks[slot].as_mut() else {
                continue;
            };
            if task
                .as_mut()
                .poll(&mut Context::from_waker(waker))
                .is_ready()
            {
                self.tasks[slot] = None;
                self.free.push(slot);
                if slot == main {
                    return true;
                }
            }
        }
    }
}

/// Runs `main` to its end on this thread with the tasks spawned meanwhile (see the module
/// documentation); those still running when `main` ends are dropped.
pub fn block_on<T>(main: impl Future<Output = T>) -> T {
    let spawned = Rc::new(Spawned::default());
    let previous = CURRENT.replace(Some(spawned.clone()));
    let _restore = Restore(previous);
    let _scope = spawns_core::enter(&*spawned);
    let output = RefCell::new(None);
    let mut tasks = Tasks {
        tasks: Vec::new(),
        wakeups: Vec::new(),
        free: Vec::new(),
        queue: Arc::default(),
    };
    let main = tasks.add(Box::pin(async {
        let value = main.await;
        *output.borrow_mut() = Some(value);
    }));
    async_io::block_on(poll_fn(|cx| {
        let outer = POLLING.replace(tasks.queue.address());
        let ended = tasks.run(main, &spawned, cx);
        POLLING.set(outer);
        if ended {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }));
    drop(tasks);
    output.into_inner().expect("the main task ended")
}

/// Puts back the executor that ran on this thread before a (nested) [`block_on`].
struct Restore(Option<Rc<Spawned>>);

impl Drop for Restore {
    fn drop(&mut self) {
        CURRENT.set(self.0.take());
    }
}

/// `future`'s output, or `None` when it is not done within `limit` (an `async-io` timer, so
/// on any executor).
pub async fn within<T>(limit: Duration, future: impl Future<Output = T>) -> Option<T> {
    let timer = async_io::Timer::after(limit);
    match future::select(pin!(future), timer).await {
        Either::Left((output, _)) => Some(output),
        Either::Right(_) => None,
    }
}
