"""A contender of splitbrain's contender protocol: Kazoo's Lock (kazoo.recipe.lock.Lock)."""
import json, sys, threading, time
from kazoo.client import KazooClient
from kazoo.exceptions import LockTimeout
ERRORS = {"ConnectionLoss": "connection_loss", "SessionExpiredError": "session_expired",
          "NoNodeError": "no_node", "LookupError": "no_node"}  # Kazoo's, in splitbrain's words
STATES = {"SUSPENDED": "suspended", "LOST": "lost", "CONNECTED": "reconnected"}
out = threading.Lock()  # reports come from this thread and from Kazoo's listener's
def say(kind, **fields):
    with out: print(json.dumps(dict(type=kind, t=time.monotonic_ns(), **fields)), flush=True)
hello = json.loads(sys.stdin.readline())
zk = KazooClient(hosts=hello["connect"], timeout=hello["session_timeout_ms"] / 1000)
zk.start(timeout=max(hello["connection_timeout_ms"] / 1000, 10))
lock, holding = zk.Lock(hello["lock_path"]), False
zk.add_listener(lambda state: holding and say(STATES[state]))
def connected(session=list(zk.client_id)):  # a new session (the last expired) is reported
    if zk.client_id and zk.client_id[0] != session[0]:
        session[:] = zk.client_id
        say("session", session_id=session[0], password=session[1].hex())
zk.add_listener(lambda state: state == "CONNECTED" and connected())
say("ready", session_id=zk.client_id[0], password=zk.client_id[1].hex())
for line in sys.stdin:
    command = json.loads(line)
    kind, ms = command["type"], command.get("timeout_ms")
    try:
        if kind == "acquire":
            lock.acquire(timeout=ms and ms / 1000)
            stat = zk.exists(lock.path + "/" + lock.node)
            if stat is None:  # its session ended at the grant: given back, the take fails
                lock.release()
                raise LookupError("the lock node is gone")
            holding = True
            say("acquired", token=stat.czxid)
        elif kind == "release":
            holding = False
            say("released") if lock.release() else say("failed", error="not_held")
        elif kind in ("read", "write"):
            say(kind, **{k: v for k, v in command.items() if k != "type"})
    except LockTimeout:
        say("timed_out")
    except Exception as e:
        say("failed", error=ERRORS.get(type(e).__name__, type(e).__name__), message=repr(e))
holding = False  # stopping, Kazoo says LOST
zk.stop()
