// An Apache Curator 5 contender of splitbrain's contender protocol (book:
// reference/contender-protocol.md). real/src/curator/mod.rs compiles it with plain javac
// against Debian's Curator jars and runs it as its own process, one per contender.
//
// It reads one JSON command a line on stdin and prints one JSON report a line on stdout,
// each stamped "t": System.nanoTime() (CLOCK_MONOTONIC on Linux, the clock the executor reads).
// The first command is the hello: recipe (mutex: InterProcessMutex; semaphore-mutex:
// InterProcessSemaphoreMutex as it is built, the InterProcessSemaphoreV2 of one lease, so that
// the lease node is known; semaphore: InterProcessSemaphoreV2 of max_leases; read-write-lock:
// InterProcessReadWriteLock, its side named by each acquire's mode; leader-latch: a new
// LeaderLatch per start; leader-selector: one LeaderSelector, without auto-requeue), connect,
// lock_path, session_timeout_ms, connection_timeout_ms and retry
// (exponential-backoff:<base>:<max>, n-times:<sleep>:<n> or forever:<sleep>). It connects with
// them, runs the recipe once on <lock_path>-warm-up/<client> (so that its first acquire or
// election of the run is not a cold JVM's) and reports ready with its session id
// and password (and session with the new ones when Curator connects on a new session). Then,
// until stdin ends (it then closes its session and exits 0):
//   acquire {mode} -> acquired {token: the lock or lease node's czxid, mode} | timed_out | failed
//   release {mode} -> released {mode} | failed
//   start (is_leader {token: the latch's or selector's node's czxid} and not_leader follow,
//   from the latch's listener or the selector's takeLeadership) | requeue (the same)
//   | relinquish -> released (takeLeadership has returned) | failed
//   | close -> closed | failed | await -> awaited | has_leadership -> leadership
//   read {token} -> read {token} | write {token, value} -> write {token, value}
// A selector's takeLeadership reports is_leader and holds until relinquish, or until Curator
// interrupts it (a suspended or lost connection, LeaderSelectorListenerAdapter's cancel; a
// close): then it reports not_leader.
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
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
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
import org.apache.curator.framework.recipes.leader.LeaderSelector;
import org.apache.curator.framework.recipes.leader.LeaderSelectorListenerAdapter;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessReadWriteLock;
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
    /** A lock's way to take and give back a hold. */
    interface Hold {
        /** Takes it within timeoutMs (null: no limit); the node that holds it, or null when
         * the time ran out. */
        String take(Long timeoutMs) throws Exception;

        void giveBack() throws Exception;
    }

    /** InterProcessMutex with its current lock node made visible (getLockPath is protected). */
    static final class Mutex extends InterProcessMutex {
        Mutex(CuratorFramework client, String path) {
            super(client, path);
        }

        String node() {
            return getLockPath();
        }
    }

    /** InterProcessReadWriteLock's write side, its lock node made visible. */
    static final class WriteSide extends InterProcessReadWriteLock.WriteLock {
        WriteSide(CuratorFramework client, String path) {
            super(client, path, null);
        }

        String node() {
            return getLockPath();
        }
    }

    /** InterProcessReadWriteLock's read side, its lock node made visible. */
    static final class ReadSide extends InterProcessReadWriteLock.ReadLock {
        ReadSide(CuratorFramework client, String path, WriteSide write) {
            super(client, path, null, write);
        }

        String node() {
            return getLockPath();
        }
    }

    /** A lock built on InterProcessMutex: acquire, release; node names its lock node. */
    static Hold lockHold(InterProcessMutex lock, java.util.function.Supplier<String> node) {
        return new Hold() {
            public String take(Long timeoutMs) throws Exception {
                if (timeoutMs == null) {
                    lock.acquire();
                } else if (!lock.acquire(timeoutMs, TimeUnit.MILLISECONDS)) {
                    return null;
                }
                return node.get();
            }

            public void giveBack() throws Exception {
                lock.release();
            }
        };
    }

    /** InterProcessSemaphoreV2 of maxLeases on path (its internal lock under "locks", its
     * leases under "leases"; InterProcessSemaphoreMutex is the one of one lease, as it is
     * built, so that the lease node is known): acquire takes a lease, release closes it. */
    static Hold semaphore(CuratorFramework client, String path, int maxLeases) {
        InterProcessSemaphoreV2 semaphore = new InterProcessSemaphoreV2(client, path, maxLeases);
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

    /** The holds of recipe on path by the acquire's mode (exclusive; lease; read and write);
     * none for an election. */
    static Map<String, Hold> holds(CuratorFramework client, String recipe, String path,
            int maxLeases) {
        switch (recipe) {
            case "mutex": {
                Mutex mutex = new Mutex(client, path);
                return Map.of("exclusive", lockHold(mutex, mutex::node));
            }
            case "semaphore-mutex":
                return Map.of("exclusive", semaphore(client, path, 1));
            case "semaphore":
                return Map.of("lease", semaphore(client, path, maxLeases));
            case "read-write-lock": {
                WriteSide write = new WriteSide(client, path);
                ReadSide read = new ReadSide(client, path, write);
                InterProcessReadWriteLock lock = new InterProcessReadWriteLock(write, read) { };
                return Map.of("read", lockHold(lock.readLock(), read::node),
                    "write", lockHold(lock.writeLock(), write::node));
            }
            case "leader-latch":
            case "leader-selector":
                return Map.of();
            default:
                throw new IllegalArgumentException("Curator has no counterpart here of " + recipe);
        }
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
    private final String recipe;
    private final String path;
    /** The lock's holds by mode (none for an election). */
    private final Map<String, Hold> holds;
    /** Whether the contender holds the lock: connection states are reported then. */
    private volatile boolean holding;
    /** The current latch (null before the first start); guarded by this. */
    private LeaderLatch latch;
    /** The selector (null before start); guarded by this. */
    private LeaderSelector selector;
    /** The selector's leadership under way (null while it does not lead); guarded by this. */
    private Leadership leadership;
    /** The selector's id, the data of its node (its token is read from the node that has it). */
    private final String id = "splitbrain-" + UUID.randomUUID();
    /** Runs the latches' listeners, off Curator's threads (they read the token). */
    private final ExecutorService listeners = Executors.newSingleThreadExecutor();

    CuratorContender(CuratorFramework client, String recipe, String path, int maxLeases) {
        this.client = client;
        this.recipe = recipe;
        this.path = path;
        this.holds = holds(client, recipe, path, maxLeases);
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

    /** The hold of mode; an election has none. */
    Hold lock(String mode) {
        Hold hold = holds.get(mode);
        if (hold == null) {
            throw new UnsupportedOperationException(recipe + " has no " + mode + " hold");
        }
        return hold;
    }

    /** The current latch; other recipes have none. */
    synchronized LeaderLatch latch() {
        if (!recipe.equals("leader-latch")) {
            throw new UnsupportedOperationException(recipe + " is not a leader latch");
        }
        if (latch == null) {
            throw new IllegalStateException("no latch started");
        }
        return latch;
    }

    /** The selector; other recipes have none. */
    synchronized LeaderSelector selector() {
        if (!recipe.equals("leader-selector")) {
            throw new UnsupportedOperationException(recipe + " is not a leader selector");
        }
        if (selector == null) {
            throw new IllegalStateException("no selector started");
        }
        return selector;
    }

    /** Runs the recipe once on a path of its own (each hold of a lock taken and given back;
     * a latch or a selector started, leading, closed), so that the JVM has loaded and
     * initialized the library's code before the run's timeline starts: a cold JVM's first
     * acquire or election takes a few hundred ms on a loaded machine, which the scenario's
     * stagger between clients does not allow for. */
    void warmUp(String path, int maxLeases) throws Exception {
        switch (recipe) {
            case "leader-latch": {
                LeaderLatch warm = new LeaderLatch(client, path);
                warm.start();
                warm.await();
                warm.close();
                return;
            }
            case "leader-selector": {
                CountDownLatch led = new CountDownLatch(1);
                LeaderSelector warm = new LeaderSelector(client, path,
                    new LeaderSelectorListenerAdapter() {
                        public void takeLeadership(CuratorFramework c) {
                            led.countDown();
                        }
                    });
                warm.start();
                led.await();
                warm.close();
                return;
            }
            default:
                for (Hold hold : holds(client, recipe, path, maxLeases).values()) {
                    hold.take(null);
                    hold.giveBack();
                }
        }
    }

    /** The mode field of a report: none for an exclusive hold. */
    static String modeField(String mode) {
        return mode.equals("exclusive") ? "" : ",\"mode\":\"" + mode + "\"";
    }

    void acquire(String mode, Long timeoutMs) throws Exception {
        Hold hold = lock(mode);
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
        report(at, "acquired", ",\"token\":" + token + modeField(mode));
    }

    void release(String mode) throws Exception {
        Hold hold = lock(mode);
        holding = false;
        hold.giveBack();
        report("released", modeField(mode));
    }

    synchronized void start() throws Exception {
        if (recipe.equals("leader-selector")) {
            if (selector != null) {
                throw new IllegalStateException("already started");
            }
            selector = new LeaderSelector(client, path, new Leader());
            selector.setId(id);
            selector.start();
            return;
        }
        if (!recipe.equals("leader-latch")) {
            throw new UnsupportedOperationException(recipe + " is not an election");
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

    /** One leadership of the selector: ended by relinquish, returned once takeLeadership has. */
    static final class Leadership {
        final CountDownLatch ended = new CountDownLatch(1);
        final CountDownLatch returned = new CountDownLatch(1);
    }

    /** The selector's listener: takeLeadership reports is_leader with its node's czxid and
     * holds until relinquish ends the leadership, or until Curator interrupts it (the
     * adapter's cancel at suspended or lost, a close), which reports not_leader. A node gone
     * before its token is read voids the leadership: takeLeadership returns untold, and the
     * attempt fails with no_node. */
    final class Leader extends LeaderSelectorListenerAdapter {
        public void takeLeadership(CuratorFramework c) throws Exception {
            long at = System.nanoTime();
            Long token;
            try {
                token = selectorToken();
            } catch (Exception e) {
                failed(e);
                return;
            }
            if (token == null) {
                failed(new KeeperException.NoNodeException(path + "/<" + id + ">"));
                return;
            }
            Leadership mine = new Leadership();
            synchronized (CuratorContender.this) {
                leadership = mine;
                report(at, "is_leader", ",\"token\":" + token);
            }
            try {
                mine.ended.await();
            } catch (InterruptedException e) {
                synchronized (CuratorContender.this) {
                    if (leadership == mine) {
                        leadership = null;
                        report("not_leader", "");
                    }
                }
                throw e;
            } finally {
                mine.returned.countDown();
            }
        }
    }

    /** The czxid of the selector's node (the first child of the path, by sequence, whose data
     * is its id), or null when it has none. */
    Long selectorToken() throws Exception {
        List<String> children = new ArrayList<>(client.getChildren().forPath(path));
        children.sort((a, b) -> sequence(a).compareTo(sequence(b)));
        for (String child : children) {
            Stat stat = new Stat();
            byte[] data;
            try {
                data = client.getData().storingStatIn(stat).forPath(ZKPaths.makePath(path, child));
            } catch (KeeperException.NoNodeException gone) {
                continue;
            }
            if (data != null && Arrays.equals(data, id.getBytes(StandardCharsets.UTF_8))) {
                return stat.getCzxid();
            }
        }
        return null;
    }

    /** A lock node's sequence number: its last ten characters. */
    static String sequence(String node) {
        return node.length() < 10 ? node : node.substring(node.length() - 10);
    }

    /** Queues the selector again (Curator's requeue: nothing when it is queued or leads). */
    void requeue() {
        selector().requeue();
    }

    /** Ends the selector's leadership: its takeLeadership returns, then released once
     * Curator says it leads no more. */
    void relinquish() throws Exception {
        selector();
        Leadership mine;
        synchronized (this) {
            mine = leadership;
            leadership = null;
        }
        if (mine == null) {
            throw new IllegalMonitorStateException("not leading");
        }
        mine.ended.countDown();
        mine.returned.await();
        // Curator marks the selector unqueued, then not leading, once takeLeadership has
        // returned: a requeue before that would be refused (it is still queued).
        while (selector().hasLeadership()) {
            Thread.sleep(1);
        }
        report("released", "");
    }

    synchronized void close(boolean notify) throws Exception {
        if (recipe.equals("leader-selector")) {
            selector().close();
        } else {
            latch().close(notify ? LeaderLatch.CloseMode.NOTIFY_LEADER : LeaderLatch.CloseMode.SILENT);
        }
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
        boolean leader = recipe.equals("leader-selector") ? selector().hasLeadership()
            : latch().hasLeadership();
        report("leadership", ",\"leader\":" + leader);
    }

    /** Stops the listeners' thread and leaves the election of a selector still started. */
    synchronized void end() {
        listeners.shutdownNow();
        if (selector != null) {
            try {
                selector.close();
            } catch (IllegalStateException closed) {
                // Closed by a close command already.
            }
        }
    }

    /** Carries out one command; false for a command it does not know. */
    boolean handle(Map<String, String> command) {
        String mode = command.getOrDefault("mode", "exclusive");
        try {
            switch (command.get("type")) {
                case "acquire": acquire(mode, optionalLong(command, "timeout_ms")); break;
                case "release": release(mode); break;
                case "start": start(); break;
                case "requeue": requeue(); break;
                case "relinquish": relinquish(); break;
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
            String leases = hello.get("max_leases");
            int maxLeases = leases == null ? 1 : Integer.parseInt(leases);
            CuratorContender contender = new CuratorContender(client, hello.get("recipe"),
                hello.get("lock_path"), maxLeases);
            contender.warmUp(hello.get("lock_path") + "-warm-up/" + slot, maxLeases);
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
            contender.end();
        } catch (Exception e) {
            System.err.println("curator contender " + slot + ": " + e);
            System.exit(1);
        }
    }
}
