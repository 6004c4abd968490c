// An Apache Curator 5 contender of splitbrain's contender protocol (book:
// reference/contender-protocol.md). real/src/curator/mod.rs compiles it with plain javac
// against Debian's Curator jars and runs it as its own process, one per contender.
//
// It reads one JSON command a line on stdin and prints one JSON report a line on stdout,
// each stamped "t": System.nanoTime() (CLOCK_MONOTONIC on Linux, the clock the executor reads).
// The first command is the hello: recipe (mutex: InterProcessMutex; semaphore-mutex:
// InterProcessSemaphoreMutex as it is built, the InterProcessSemaphoreV2 of one lease, so that
// the lease node is known; leader-latch: a new LeaderLatch per start), connect, lock_path,
// session_timeout_ms, connection_timeout_ms and retry (exponential-backoff:<base>:<max>,
// n-times:<sleep>:<n> or forever:<sleep>). It connects with them, takes and gives back a lock
// of the recipe once on <lock_path>-warm-up/<client> (so that its first acquire of the run is
// not a cold JVM's) and reports ready with its session id and password (and session with the
// new ones when Curator connects on a new session). Then, until stdin ends (it then closes its
// session and exits 0):
//   acquire -> acquired {token: the lock or lease node's czxid} | timed_out | failed
//   release -> released | failed
//   start (is_leader {token: the latch node's czxid} and not_leader follow, from the latch's
//   listener) | close -> closed | failed | await -> awaited | has_leadership -> leadership
//   read {token} -> read {token} | write {token, value} -> write {token, value}
// A holder of a lock reports the connection states Curator's listener hears while it holds
// (suspended, lost, reconnected). A node gone before its token is read (its session ended at
// the grant, which a loaded machine makes likely) voids the grant: it is given back untold,
// and the take fails with no_node, as one that found its own node gone does. A failure is
// reported with the ZooKeeper error's name (connection_loss, ...) and the exception's text.
// A malformed command: a message on stderr and exit status 2.

import java.io.BufferedReader;
import java.io.EOFException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.apache.curator.RetryPolicy;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.leader.LeaderLatchListener;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.framework.state.ConnectionState;
import org.apache.curator.retry.ExponentialBackoffRetry;
import org.apache.curator.retry.RetryForever;
import org.apache.curator.retry.RetryNTimes;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;

public final class CuratorContender {
    /** InterProcessMutex with its current lock node made visible (getLockPath is protected). */
    static final class Mutex extends InterProcessMutex {
        Mutex(CuratorFramework client, String path) {
            super(client, path);
        }

        String node() {
            return getLockPath();
        }
    }

    /** A lock's way to take and give back a hold. */
    interface Hold {
        /** Takes it within timeoutMs (null: no limit); the node that holds it, or null when
         * the time ran out. */
        String take(Long timeoutMs) throws Exception;

        void giveBack() throws Exception;
    }

    /** InterProcessMutex: acquire, release. */
    static Hold mutex(CuratorFramework client, String path) {
        Mutex mutex = new Mutex(client, path);
        return new Hold() {
            public String take(Long timeoutMs) throws Exception {
                if (timeoutMs == null) {
                    mutex.acquire();
                } else if (!mutex.acquire(timeoutMs, TimeUnit.MILLISECONDS)) {
                    return null;
                }
                return mutex.node();
            }

            public void giveBack() throws Exception {
                mutex.release();
            }
        };
    }

    /** InterProcessSemaphoreMutex as it is built: an InterProcessSemaphoreV2 of one lease on
     * the same path (its internal lock under "locks", its leases under "leases"); acquire takes
     * the lease, release closes it. */
    static Hold semaphoreMutex(CuratorFramework client, String path) {
        InterProcessSemaphoreV2 semaphore = new InterProcessSemaphoreV2(client, path, 1);
        Lease[] lease = new Lease[1];
        return new Hold() {
            public String take(Long timeoutMs) throws Exception {
                lease[0] = timeoutMs == null ? semaphore.acquire()
                    : semaphore.acquire(timeoutMs, TimeUnit.MILLISECONDS);
                if (lease[0] == null) {
                    return null;
                }
                return ZKPaths.makePath(ZKPaths.makePath(path, "leases"), lease[0].getNodeName());
            }

            public void giveBack() throws Exception {
                if (lease[0] == null) {
                    throw new IllegalMonitorStateException("no lease held");
                }
                Lease held = lease[0];
                lease[0] = null;
                held.close();
            }
        };
    }

    /** The fields of a ready or session report: zk's session id and password (hex). */
    static String sessionFields(ZooKeeper zk) {
        StringBuilder password = new StringBuilder();
        for (byte b : zk.getSessionPasswd()) {
            password.append(String.format("%02x", b));
        }
        return ",\"session_id\":" + zk.getSessionId() + ",\"password\":\"" + password + "\"";
    }

    /** Prints one report: {"type":type,"t":nanos<fields>}. */
    static synchronized void report(long nanos, String type, String fields) {
        System.out.println("{\"type\":\"" + type + "\",\"t\":" + nanos + fields + "}");
        System.out.flush();
    }

    static void report(String type, String fields) {
        report(System.nanoTime(), type, fields);
    }

    static String quoted(String text) {
        return "\"" + text.replace("\\", "\\\\").replace("\"", "\\\"").replaceAll("[\\x00-\\x1f]", " ")
            + "\"";
    }

    /** Reports a failure: the ZooKeeper error's name when a KeeperException caused it,
     * not_held for a release of a lock not held, not_started for a latch not started,
     * unsupported for a call the recipe does not serve. */
    static void failed(Throwable e) {
        String error = "unknown";
        for (Throwable cause = e; cause != null; cause = cause.getCause()) {
            if (cause instanceof KeeperException) {
                error = zkError((KeeperException) cause);
                break;
            }
            if (cause instanceof UnsupportedOperationException) {
                error = "unsupported";
            } else if (cause instanceof IllegalMonitorStateException) {
                error = "not_held";
            } else if (cause instanceof IllegalStateException) {
                error = "not_started";
            }
        }
        report("failed", ",\"error\":\"" + error + "\",\"message\":" + quoted(String.valueOf(e)));
    }

    /** splitbrain's name of a ZooKeeper error (its code in snake case for others). */
    static String zkError(KeeperException e) {
        switch (e.code()) {
            case CONNECTIONLOSS: return "connection_loss";
            case SESSIONEXPIRED: return "session_expired";
            case NONODE: return "no_node";
            case NODEEXISTS: return "node_exists";
            case BADVERSION: return "bad_version";
            case NOTEMPTY: return "not_empty";
            case NOCHILDRENFOREPHEMERALS: return "no_children_for_ephemerals";
            case NOWATCHER: return "no_watcher";
            default: return e.code().name().toLowerCase();
        }
    }

    /** The commands' flat JSON objects: string, number, boolean and null values. */
    private static final Pattern FIELD =
        Pattern.compile("\"(\\w+)\"\\s*:\\s*(?:\"((?:[^\"\\\\]|\\\\.)*)\"|([^,}\\s]+))");

    static Map<String, String> parse(String line) {
        Map<String, String> fields = new HashMap<>();
        Matcher m = FIELD.matcher(line);
        while (m.find()) {
            fields.put(m.group(1), m.group(2) != null ? m.group(2) : m.group(3));
        }
        if (!fields.containsKey("type")) {
            throw new IllegalArgumentException("expected a command, found " + line);
        }
        return fields;
    }

    static Long optionalLong(Map<String, String> command, String name) {
        String value = command.get(name);
        return value == null || value.equals("null") ? null : Long.valueOf(value);
    }

    /** The retry policy a spec names: exponential-backoff:<base>:<max>, n-times:<sleep>:<n>,
     * forever:<sleep>. */
    static RetryPolicy retryPolicy(String spec) {
        String[] parts = spec.split(":");
        int sleep = Integer.parseInt(parts[1]);
        switch (parts[0]) {
            case "exponential-backoff":
                return new ExponentialBackoffRetry(sleep, Integer.parseInt(parts[2]));
            case "n-times":
                return new RetryNTimes(Integer.parseInt(parts[2]), sleep);
            case "forever":
                return new RetryForever(sleep);
            default:
                throw new IllegalArgumentException("unknown retry policy " + spec);
        }
    }

    /** A started client with its session (CuratorBench connects the same way). */
    static CuratorFramework connect(String connect, int sessionTimeout) throws Exception {
        return connect(connect, sessionTimeout, Math.max(sessionTimeout, 1000),
            new ExponentialBackoffRetry(100, 10));
    }

    /** A started client with its session, under the given connection timeout and retry policy. */
    static CuratorFramework connect(String connect, int sessionTimeout, int connectionTimeout,
            RetryPolicy retryPolicy) throws Exception {
        CuratorFramework client = CuratorFrameworkFactory.builder()
            .connectString(connect)
            .sessionTimeoutMs(sessionTimeout)
            .connectionTimeoutMs(connectionTimeout)
            .retryPolicy(retryPolicy)
            .build();
        client.start();
        if (!client.blockUntilConnected(Math.max(sessionTimeout, 10_000), TimeUnit.MILLISECONDS)) {
            client.close();
            throw new IllegalStateException("no session with " + connect);
        }
        return client;
    }

    private final CuratorFramework client;
    private final String path;
    /** The lock's hold (null for a latch). */
    private final Hold hold;
    /** Whether the contender holds the lock: connection states are reported then. */
    private volatile boolean holding;
    /** The current latch (null before the first start); guarded by this. */
    private LeaderLatch latch;
    /** Runs the latches' listeners, off Curator's threads (they read the token). */
    private final ExecutorService listeners = Executors.newSingleThreadExecutor();

    CuratorContender(CuratorFramework client, String recipe, String path) {
        this.client = client;
        this.path = path;
        switch (recipe) {
            case "mutex":
                hold = mutex(client, path);
                break;
            case "semaphore-mutex":
                hold = semaphoreMutex(client, path);
                break;
            case "leader-latch":
                hold = null;
                break;
            default:
                throw new IllegalArgumentException("Curator has no counterpart here of " + recipe);
        }
        client.getConnectionStateListenable().addListener((c, state) -> {
            if (holding && state != ConnectionState.CONNECTED && state != ConnectionState.READ_ONLY) {
                report(state.name().toLowerCase(), "");
            }
        });
    }

    /** The czxid of node, or null when it is gone. */
    Long tokenOf(String node) throws Exception {
        Stat stat = client.checkExists().forPath(node);
        return stat == null ? null : stat.getCzxid();
    }

    /** The lock's hold; a latch has none. */
    Hold lock() {
        if (hold == null) {
            throw new UnsupportedOperationException("a leader latch is not a lock");
        }
        return hold;
    }

    /** The current latch; a lock has none. */
    synchronized LeaderLatch latch() {
        if (hold != null) {
            throw new UnsupportedOperationException("a lock is not a leader latch");
        }
        if (latch == null) {
            throw new IllegalStateException("no latch started");
        }
        return latch;
    }

    /** Takes and gives back a hold of the recipe once on a path of its own (a lock's: a
     * latch has no warm-up), so that the JVM has loaded and initialized the library's lock
     * code before the run's timeline starts: a cold JVM's first acquire takes a few hundred ms
     * on a loaded machine, which the scenario's stagger between clients does not allow for. */
    void warmUp(String recipe, String path) throws Exception {
        Hold warm;
        switch (recipe) {
            case "mutex": warm = mutex(client, path); break;
            case "semaphore-mutex": warm = semaphoreMutex(client, path); break;
            default: return;
        }
        warm.take(null);
        warm.giveBack();
    }

    void acquire(Long timeoutMs) throws Exception {
        Hold hold = lock();
        String node = hold.take(timeoutMs);
        long at = System.nanoTime();
        if (node == null) {
            report(at, "timed_out", "");
            return;
        }
        Long token = tokenOf(node);
        if (token == null) {
            hold.giveBack();
            throw new KeeperException.NoNodeException(node);
        }
        holding = true;
        report(at, "acquired", ",\"token\":" + token);
    }

    void release() throws Exception {
        Hold hold = lock();
        holding = false;
        hold.giveBack();
        report("released", "");
    }

    synchronized void start() throws Exception {
        if (hold != null) {
            throw new UnsupportedOperationException("a lock is not a leader latch");
        }
        LeaderLatch started = new LeaderLatch(client, path);
        started.addListener(new LeaderLatchListener() {
            public void isLeader() {
                long at = System.nanoTime();
                try {
                    leads(started, at);
                } catch (Exception e) {
                    failed(e);
                }
            }

            public void notLeader() {
                report("not_leader", "");
            }
        }, listeners);
        latch = started;
        started.start();
    }

    /** Reports that started leads, at the time at; a node gone first voids the leadership:
     * the latch is closed untold and the start fails with no_node. */
    synchronized void leads(LeaderLatch started, long at) throws Exception {
        if (started != latch || started.getState() != LeaderLatch.State.STARTED) {
            return;
        }
        String node = started.getOurPath();
        Long token = node == null ? null : tokenOf(node);
        if (token == null) {
            started.close();
            throw new KeeperException.NoNodeException(String.valueOf(node));
        }
        report(at, "is_leader", ",\"token\":" + token);
    }

    synchronized void close(boolean notify) throws Exception {
        latch().close(notify ? LeaderLatch.CloseMode.NOTIFY_LEADER : LeaderLatch.CloseMode.SILENT);
        report("closed", "");
    }

    /** Waits to lead (outside the lock: the listener reports meanwhile). */
    void await(Long timeoutMs) throws Exception {
        LeaderLatch current = latch();
        boolean leader;
        try {
            if (timeoutMs == null) {
                current.await();
                leader = true;
            } else {
                leader = current.await(timeoutMs, TimeUnit.MILLISECONDS);
            }
        } catch (EOFException closed) {
            leader = false;
        }
        report("awaited", ",\"leader\":" + leader);
    }

    void hasLeadership() {
        report("leadership", ",\"leader\":" + latch().hasLeadership());
    }

    /** Carries out one command; false for a command it does not know. */
    boolean handle(Map<String, String> command) {
        try {
            switch (command.get("type")) {
                case "acquire": acquire(optionalLong(command, "timeout_ms")); break;
                case "release": release(); break;
                case "start": start(); break;
                case "close": close("true".equals(command.get("notify"))); break;
                case "await": await(optionalLong(command, "timeout_ms")); break;
                case "has_leadership": hasLeadership(); break;
                case "read":
                    report("read", ",\"token\":" + Long.parseLong(command.get("token")));
                    break;
                case "write":
                    report("write", ",\"token\":" + Long.parseLong(command.get("token"))
                        + ",\"value\":" + Long.parseLong(command.get("value")));
                    break;
                default: return false;
            }
        } catch (NumberFormatException e) {
            return false;
        } catch (Exception e) {
            failed(e);
        }
        return true;
    }

    public static void main(String[] args) throws Exception {
        BufferedReader stdin = new BufferedReader(
            new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String first = stdin.readLine();
        Map<String, String> hello = first == null ? Map.of("type", "") : parse(first);
        if (!hello.get("type").equals("hello")) {
            System.err.println("curator contender: expected a hello first, found " + first);
            System.exit(2);
        }
        String slot = hello.get("client");
        int sessionTimeout = Integer.parseInt(hello.get("session_timeout_ms"));
        int connectionTimeout = Integer.parseInt(hello.get("connection_timeout_ms"));
        try (CuratorFramework client = connect(hello.get("connect"), sessionTimeout,
                connectionTimeout, retryPolicy(hello.get("retry")))) {
            CuratorContender contender =
                new CuratorContender(client, hello.get("recipe"), hello.get("lock_path"));
            contender.warmUp(hello.get("recipe"), hello.get("lock_path") + "-warm-up/" + slot);
            long[] session = {client.getZookeeperClient().getZooKeeper().getSessionId()};
            report("ready", sessionFields(client.getZookeeperClient().getZooKeeper()));
            // A new session (the last one expired): reported as Curator connects on it.
            client.getConnectionStateListenable().addListener((c, state) -> {
                if (state != ConnectionState.RECONNECTED && state != ConnectionState.CONNECTED) {
                    return;
                }
                try {
                    ZooKeeper zk = c.getZookeeperClient().getZooKeeper();
                    synchronized (session) {
                        if (zk.getSessionId() != session[0]) {
                            session[0] = zk.getSessionId();
                            report("session", sessionFields(zk));
                        }
                    }
                } catch (Exception e) {
                    // No handle now: the next connection state tells.
                }
            });
            String line;
            while ((line = stdin.readLine()) != null) {
                if (!contender.handle(parse(line))) {
                    System.err.println("curator contender " + slot + ": unknown command " + line);
                    System.exit(2);
                }
            }
            contender.listeners.shutdownNow();
        } catch (Exception e) {
            System.err.println("curator contender " + slot + ": " + e);
            System.exit(1);
        }
    }
}
