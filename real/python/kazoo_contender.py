"""A contender of splitbrain's contender protocol running Kazoo's own recipes (kazoo.recipe):
Lock for `mutex`, Semaphore for `semaphore`, ReadLock/WriteLock for `read-write-lock` and
Election for `leader-selector` (Election.run calling its leader function is is_leader; the
function returning at relinquish, and run releasing the lock, is released)."""
import json, sys, threading, time
from kazoo.client import KazooClient
from kazoo.exceptions import LockTimeout
from kazoo.recipe.lock import Semaphore
ERRORS = {"ConnectionLoss": "connection_loss", "SessionExpiredError": "session_expired",
          "NoNodeError": "no_node", "LookupError": "no_node"}  # Kazoo's, in splitbrain's words
STATES = {"SUSPENDED": "suspended", "LOST": "lost", "CONNECTED": "reconnected"}
out = threading.Lock()  # reports come from this thread and from Kazoo's and the election's
def say(kind, **fields):
    with out: print(json.dumps(dict(type=kind, t=time.monotonic_ns(), **fields)), flush=True)
def failed(e):
    say("failed", error=ERRORS.get(type(e).__name__, type(e).__name__), message=repr(e))
hello = json.loads(sys.stdin.readline())
path = hello["lock_path"]
zk = KazooClient(hosts=hello["connect"], timeout=hello["session_timeout_ms"] / 1000)
zk.start(timeout=max(hello["connection_timeout_ms"] / 1000, 10))
holding = set()  # the modes held; a leader holds "leader"
zk.add_listener(lambda state: holding and say(STATES[state]))
def connected(session=list(zk.client_id)):  # a new session (the last expired) is reported
    if zk.client_id and zk.client_id[0] != session[0]:
        session[:] = zk.client_id
        say("session", session_id=session[0], password=session[1].hex())
zk.add_listener(lambda state: state == "CONNECTED" and connected())
RECIPES = {"exclusive": lambda: zk.Lock(path), "read": lambda: zk.ReadLock(path),
           "write": lambda: zk.WriteLock(path),
           "lease": lambda: zk.Semaphore(path, max_leases=hello["max_leases"])}
holds = {}  # one of Kazoo's locks per mode, made at its first acquire
def token(hold):  # the czxid of the node its grant made; gone: its session ended at the grant
    stat = zk.exists(hold.create_path if isinstance(hold, Semaphore) else hold.path + "/" + hold.node)
    if stat is None:
        hold.release()
        raise LookupError("the node of the grant is gone")
    return stat.czxid
election, relinquished, leading = zk.Election(path), threading.Event(), []
def leader():  # Election.run's leader function: it leads until told to relinquish
    try:
        is_leader = token(election.lock)
    except Exception as e:
        return failed(e)
    holding.add("leader")
    say("is_leader", token=is_leader)
    relinquished.wait()
def queue():  # Election.run, on a thread of its own: it blocks until elected and done
    def run():
        try: election.run(leader)
        except Exception as e: failed(e)
    relinquished.clear()
    leading[:] = [threading.Thread(target=run, daemon=True)]
    leading[0].start()
say("ready", session_id=zk.client_id[0], password=zk.client_id[1].hex())
for line in sys.stdin:
    command = json.loads(line)
    kind, ms, mode = command["type"], command.get("timeout_ms"), command.get("mode", "exclusive")
    try:
        if kind == "acquire":
            if mode not in holds:
                holds[mode] = RECIPES[mode]()
            hold = holds[mode]
            hold.acquire(timeout=ms and ms / 1000)
            acquired = token(hold)
            holding.add(mode)
            say("acquired", token=acquired, mode=mode)
        elif kind == "release":
            holding.discard(mode)
            held = mode in holds and holds[mode].release()
            say("released", mode=mode) if held else say("failed", error="not_held")
        elif kind in ("start", "requeue"):
            queue()
        elif kind == "relinquish":
            if "leader" not in holding:
                say("failed", error="not_held")
                continue
            holding.discard("leader")
            relinquished.set()
            leading[0].join()  # run has released the election's lock
            say("released")
        elif kind in ("read", "write"):
            say(kind, **{k: v for k, v in command.items() if k != "type"})
    except LockTimeout:
        say("timed_out")
    except Exception as e:
        failed(e)
holding.clear()  # stopping, Kazoo says LOST
zk.stop()
