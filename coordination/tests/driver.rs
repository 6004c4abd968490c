//! The lock recipes through the async driver over the in-memory `Coordination`, with several
//! concurrent client tasks on tokio's paused clock (time advances only when every task waits).

use std::sync::{Arc, Mutex as StdMutex};
use std::time::Duration;

use coordination::client::Client;
use coordination::driver::{Driver, Handle};
use coordination::fencing::{FencedResource, Token};
use coordination::framework::{Framework, FrameworkConfig};
use coordination::ids::{ClientSlot, Owner};
use coordination::memory::{MemoryServer, Sleeper};
use coordination::recipe::Recipe;
use coordination::recipes::{Call, Mode, Mutex, NaiveHerdMutex, Notice, SemaphoreMutex};
use coordination::zk::Path;

const OWNER: Owner = Owner(0);

fn server() -> MemoryServer {
    let sleeper: Sleeper = Arc::new(|d| Box::pin(tokio::time::sleep(d)));
    MemoryServer::new(sleeper)
}

fn lock_path() -> Path {
    Path::new("/locks/driver").unwrap()
}

/// Starts a driver task for client `slot` running `recipe`; returns its handle and the task.
fn spawn<R: Recipe + 'static>(
    server: &MemoryServer,
    slot: u16,
    recipe: R,
) -> (Handle<R>, tokio::task::JoinHandle<Client<R>>) {
    let framework = Framework::new(FrameworkConfig::default(), ClientSlot(slot), 1);
    let (driver, handle) = Driver::new(Client::new(framework, recipe));
    let server = server.clone();
    let task = tokio::spawn(async move { driver.run(&server, &mut ()).await });
    (handle, task)
}

async fn next_acquired<R: Recipe<Call = Call, Notice = Notice>>(handle: &mut Handle<R>) -> Token {
    match handle.next_notice().await {
        Some(Notice::Acquired { token, .. }) => token,
        other => panic!("expected Acquired, got {other:?}"),
    }
}

/// Each of `clients` tasks acquires `rounds` times, increments the fenced counter while
/// holding, and releases. Returns the counter and the tokens in acquisition order.
async fn contend<R>(
    recipe: impl Fn() -> R,
    clients: u16,
    rounds: u32,
) -> (u64, Vec<Token>, MemoryServer)
where
    R: Recipe<Call = Call, Notice = Notice> + 'static,
{
    let server = server();
    let resource = Arc::new(StdMutex::new(FencedResource::new(true)));
    let tokens = Arc::new(StdMutex::new(Vec::new()));
    let mut workers = Vec::new();
    for slot in 0..clients {
        let (mut handle, task) = spawn(&server, slot, recipe());
        let resource = resource.clone();
        let tokens = tokens.clone();
        workers.push(tokio::spawn(async move {
            for _ in 0..rounds {
                handle.call(Call::acquire(OWNER, None)).unwrap();
                let token = next_acquired(&mut handle).await;
                tokens.lock().unwrap().push(token);
                let value = resource.lock().unwrap().read(token).expect("fresh token");
                tokio::time::sleep(Duration::from_millis(10 + u64::from(slot))).await;
                resource
                    .lock()
                    .unwrap()
                    .write(token, value + 1)
                    .expect("fresh token");
                handle.call(Call::release(OWNER)).unwrap();
                assert!(matches!(
                    handle.next_notice().await,
                    Some(Notice::Released { remaining: 0, .. })
                ));
                tokio::time::sleep(Duration::from_millis(3)).await;
            }
            drop(handle);
            task.await.unwrap();
        }));
    }
    for worker in workers {
        worker.await.unwrap();
    }
    let value = resource.lock().unwrap().value();
    let tokens = tokens.lock().unwrap().clone();
    (value, tokens, server)
}

/// Every session has closed: no ephemeral node may be left.
fn assert_no_ephemerals(server: &MemoryServer) {
    let tree = server.tree();
    let left: Vec<_> = tree
        .nodes()
        .filter(|(_, n)| n.stat.ephemeral_owner.is_some())
        .collect();
    assert!(left.is_empty(), "orphans: {left:?}");
}

#[tokio::test(start_paused = true)]
async fn concurrent_mutex_clients_never_lose_an_update_and_tokens_increase() {
    let (value, tokens, server) = contend(|| Mutex::new(lock_path()), 5, 4).await;
    assert_eq!(value, 20);
    assert_eq!(tokens.len(), 20);
    assert!(tokens.windows(2).all(|w| w[0] < w[1]), "{tokens:?}");
    assert_no_ephemerals(&server);
}

#[tokio::test(start_paused = true)]
async fn concurrent_naive_clients_exclude_too() {
    let (value, tokens, _) = contend(|| NaiveHerdMutex::new(lock_path()), 4, 3).await;
    assert_eq!(value, 12);
    assert!(tokens.windows(2).all(|w| w[0] < w[1]), "{tokens:?}");
}

#[tokio::test(start_paused = true)]
async fn concurrent_semaphore_mutex_clients_exclude_and_leave_no_lease() {
    let (value, tokens, server) = contend(|| SemaphoreMutex::new(lock_path()), 4, 3).await;
    assert_eq!(value, 12);
    assert!(tokens.windows(2).all(|w| w[0] < w[1]), "{tokens:?}");
    assert_no_ephemerals(&server);
}

#[tokio::test(start_paused = true)]
async fn a_waiter_times_out_through_the_driver_and_leaves_no_node() {
    let server = server();
    let (mut holder, holder_task) = spawn(&server, 0, Mutex::new(lock_path()));
    holder.call(Call::acquire(OWNER, None)).unwrap();
    next_acquired(&mut holder).await;
    let (mut waiter, waiter_task) = spawn(&server, 1, Mutex::new(lock_path()));
    let timeout = Some(Duration::from_secs(2));
    waiter.call(Call::acquire(OWNER, timeout)).unwrap();
    assert_eq!(
        waiter.next_notice().await,
        Some(Notice::TimedOut { owner: OWNER })
    );
    let children = server.tree().get(&lock_path()).unwrap().children().count();
    assert_eq!(children, 1, "only the holder's node");
    drop((holder, waiter));
    holder_task.await.unwrap();
    waiter_task.await.unwrap();
}

#[tokio::test(start_paused = true)]
async fn reentrancy_and_a_second_owner_through_the_driver() {
    let server = server();
    let (mut handle, task) = spawn(&server, 0, Mutex::new(lock_path()));
    let (a, b) = (Owner(1), Owner(2));
    handle.call(Call::acquire(a, None)).unwrap();
    let first = next_acquired(&mut handle).await;
    handle.call(Call::acquire(a, None)).unwrap();
    assert_eq!(
        next_acquired(&mut handle).await,
        first,
        "reentrant: same token"
    );
    handle.call(Call::acquire(b, None)).unwrap();
    handle.call(Call::release(a)).unwrap();
    assert_eq!(
        handle.next_notice().await,
        Some(Notice::Released {
            owner: a,
            remaining: 1,
            mode: Mode::Exclusive,
        })
    );
    handle.call(Call::release(a)).unwrap();
    assert_eq!(
        handle.next_notice().await,
        Some(Notice::Released {
            owner: a,
            remaining: 0,
            mode: Mode::Exclusive,
        })
    );
    assert!(
        next_acquired(&mut handle).await > first,
        "b acquires after a's last release"
    );
    drop(handle);
    let client = task.await.unwrap();
    assert!(client.recipe().holding(b).is_some());
    assert!(
        server
            .tree()
            .get(&lock_path())
            .unwrap()
            .children()
            .next()
            .is_none(),
        "closed session's node is gone"
    );
}
