// One Apache Curator 5 contender of a splitbrain interop run (real/src/curator.rs compiles it
// with plain javac against Debian's Curator jars and runs it as its own process).
//
// Usage: CuratorContender <mutex|semaphore-mutex|latch> <connect> <session-timeout-ms> <lock-path>
//                         <acquisitions> <hold-min-ms> <hold-max-ms> <think-min-ms>
//                         <think-max-ms> <seed> <resource-port> <slot> <first-ask-ms>
//                         <retry-policy> <connection-timeout-ms>
//
// <retry-policy> is the scenario's framework.retry: exponential-backoff:<base-sleep-ms>:<max-retries>,
// n-times:<sleep-ms>:<n> or forever:<sleep-ms>; <connection-timeout-ms> its
// framework.connection_timeout_ms. It connects with them, prints "ready", waits for a line
// "go" on stdin, waits <first-ask-ms> (the workload's stagger for its slot), then runs <acquisitions>
// cycles on <lock-path> of InterProcessMutex (mutex: acquire ... release), of
// InterProcessSemaphoreMutex (semaphore-mutex: the InterProcessSemaphoreV2 of one lease it
// wraps, so that the lease node is known: acquire ... release) or LeaderLatch (latch: a new
// latch, start, await leadership ... close): read the shared fenced resource with the lock,
// lease or latch node's czxid as the token, hold, write the value read plus one, give it
// back, think. Every call and outcome is one line on stdout,
// "<System.nanoTime()> <word> [args]":
//   ready | acquire | acquired <czxid> <node> | release | released  (mutex, semaphore-mutex)
//         | start | leader <czxid> <node> | close | closed                    (latch)
//         | failed <error>   (the take threw connection_loss, session_expired or no_node: the
//                             cycle ends there and the contender thinks, as the workload does)
//         | done
// System.nanoTime() reads CLOCK_MONOTONIC on Linux, the clock the Rust harness stamps its
// own events with, so the harness merges both into one trace. The resource is served by
// the harness on 127.0.0.1:<resource-port>, one request a line:
//   read <slot> <token>          -> "ok <value>" | "stale"
//   write <slot> <token> <value> -> "ok" | "stale"
// Any failure: a message on stderr and exit status 1.

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;
import org.apache.curator.RetryPolicy;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.CuratorFrameworkFactory;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;
import org.apache.curator.framework.recipes.locks.InterProcessSemaphoreV2;
import org.apache.curator.framework.recipes.locks.Lease;
import org.apache.curator.retry.RetryForever;
import org.apache.curator.retry.RetryNTimes;
import org.apache.curator.utils.ZKPaths;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.data.Stat;
import org.apache.curator.retry.ExponentialBackoffRetry;

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

    /** The harness's fenced resource. */
    static final class Resource implements AutoCloseable {
        private final Socket socket;
        private final BufferedReader in;
        private final PrintWriter out;
        private final int slot;

        Resource(int port, int slot) throws Exception {
            this.socket = new Socket("127.0.0.1", port);
            this.socket.setTcpNoDelay(true);
            this.in = new BufferedReader(
                new InputStreamReader(socket.getInputStream(), StandardCharsets.UTF_8));
            this.out = new PrintWriter(socket.getOutputStream(), true, StandardCharsets.UTF_8);
            this.slot = slot;
        }

        /** The counter's value, or -1 when the token is stale. */
        long read(long token) throws Exception {
            String answer = ask("read " + slot + " " + token);
            return answer.startsWith("ok ") ? Long.parseLong(answer.substring(3)) : -1;
        }

        void write(long token, long value) throws Exception {
            ask("write " + slot + " " + token + " " + value);
        }

        private String ask(String request) throws Exception {
            out.println(request);
            String answer = in.readLine();
            if (answer == null) {
                throw new IllegalStateException("the resource closed the connection");
            }
            return answer;
        }

        @Override
        public void close() throws Exception {
            socket.close();
        }
    }

    /** One participant's way to take and give back the lock or the leadership. */
    interface Cycle {
        /** Takes it; the node that holds it. */
        String take() throws Exception;

        /** Gives it back; says so in the output when {@code told}. */
        void giveBack(boolean told) throws Exception;
    }

    /** InterProcessMutex: acquire, release. */
    static Cycle mutex(CuratorFramework client, String path) {
        Mutex mutex = new Mutex(client, path);
        return new Cycle() {
            public String take() throws Exception {
                log("acquire");
                mutex.acquire();
                return mutex.node();
            }

            public void giveBack(boolean told) throws Exception {
                if (told) {
                    log("release");
                }
                mutex.release();
                if (told) {
                    log("released");
                }
            }
        };
    }

    /** InterProcessSemaphoreMutex as it is built: an InterProcessSemaphoreV2 of one lease on
     * the same path (its internal lock under "locks", its leases under "leases"), acquire
     * takes the lease, release closes it. */
    static Cycle semaphoreMutex(CuratorFramework client, String path) {
        InterProcessSemaphoreV2 semaphore = new InterProcessSemaphoreV2(client, path, 1);
        Lease[] lease = new Lease[1];
        return new Cycle() {
            public String take() throws Exception {
                log("acquire");
                lease[0] = semaphore.acquire();
                return ZKPaths.makePath(ZKPaths.makePath(path, "leases"), lease[0].getNodeName());
            }

            public void giveBack(boolean told) throws Exception {
                if (told) {
                    log("release");
                }
                lease[0].close();
                if (told) {
                    log("released");
                }
            }
        };
    }

    /** LeaderLatch: a new latch per cycle (a closed latch cannot start again), start,
     * await, close (CloseMode.SILENT, Curator's default). */
    static Cycle latch(CuratorFramework client, String path) {
        LeaderLatch[] latch = new LeaderLatch[1];
        return new Cycle() {
            public String take() throws Exception {
                latch[0] = new LeaderLatch(client, path);
                log("start");
                latch[0].start();
                latch[0].await();
                return latch[0].getOurPath();
            }

            public void giveBack(boolean told) throws Exception {
                if (told) {
                    log("close");
                }
                latch[0].close();
                if (told) {
                    log("closed");
                }
            }
        };
    }

    private static final PrintStream LOG = System.out;

    private static void log(long nanos, String line) {
        LOG.println(nanos + " " + line);
        LOG.flush();
    }

    private static void log(String line) {
        log(System.nanoTime(), line);
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

    /** The fencing token of {@code node}, the node that holds it: its czxid. A node gone before
     * it is read (its session ended at the grant, which a loaded machine makes likely) voids the
     * grant: it is given back untold, and the take fails with NoNode as one that found its own
     * node gone does. */
    static long tokenOf(CuratorFramework client, Cycle cycle, String node) throws Exception {
        Stat stat = client.checkExists().forPath(node);
        if (stat == null) {
            cycle.giveBack(false);
            throw new KeeperException.NoNodeException(node);
        }
        return stat.getCzxid();
    }

    /** splitbrain's name of a failure a take may end with, or null for any other. */
    static String failure(KeeperException e) {
        switch (e.code()) {
            case CONNECTIONLOSS:
                return "connection_loss";
            case SESSIONEXPIRED:
                return "session_expired";
            case NONODE:
                return "no_node";
            default:
                return null;
        }
    }

    private static long draw(SplittableRandom random, long min, long max) {
        return max > min ? random.nextLong(min, max + 1) : min;
    }

    public static void main(String[] args) throws Exception {
        String recipe = args.length == 15 ? args[0] : "";
        if (!(recipe.equals("mutex") || recipe.equals("semaphore-mutex") || recipe.equals("latch"))) {
            System.err.println("usage: CuratorContender <mutex|semaphore-mutex|latch> <connect>"
                + " <session-timeout-ms> <lock-path> <acquisitions> <hold-min-ms> <hold-max-ms>"
                + " <think-min-ms> <think-max-ms> <seed> <resource-port> <slot> <first-ask-ms>"
                + " <retry-policy> <connection-timeout-ms>");
            System.exit(2);
        }
        boolean isLatch = recipe.equals("latch");
        String connect = args[1];
        int sessionTimeout = Integer.parseInt(args[2]);
        String path = args[3];
        int acquisitions = Integer.parseInt(args[4]);
        long holdMin = Long.parseLong(args[5]);
        long holdMax = Long.parseLong(args[6]);
        long thinkMin = Long.parseLong(args[7]);
        long thinkMax = Long.parseLong(args[8]);
        long seed = Long.parseLong(args[9]);
        int port = Integer.parseInt(args[10]);
        int slot = Integer.parseInt(args[11]);
        long firstAsk = Long.parseLong(args[12]);
        RetryPolicy retryPolicy = retryPolicy(args[13]);
        int connectionTimeout = Integer.parseInt(args[14]);
        SplittableRandom random = new SplittableRandom(seed * 31 + slot);
        try (CuratorFramework client = connect(connect, sessionTimeout, connectionTimeout, retryPolicy);
             Resource resource = new Resource(port, slot)) {
            Cycle cycle = isLatch ? latch(client, path)
                : recipe.equals("semaphore-mutex") ? semaphoreMutex(client, path)
                : mutex(client, path);
            String granted = isLatch ? "leader" : "acquired";
            log("ready");
            BufferedReader stdin = new BufferedReader(
                new InputStreamReader(System.in, StandardCharsets.UTF_8));
            if (!"go".equals(stdin.readLine())) {
                throw new IllegalStateException("expected \"go\" on stdin");
            }
            Thread.sleep(firstAsk);
            for (int n = 0; n < acquisitions; n++) {
                long at;
                String node;
                long token;
                try {
                    node = cycle.take();
                    at = System.nanoTime();
                    token = tokenOf(client, cycle, node);
                } catch (KeeperException e) {
                    String failure = failure(e);
                    if (failure == null) {
                        throw e;
                    }
                    log("failed " + failure);
                    Thread.sleep(draw(random, thinkMin, thinkMax));
                    continue;
                }
                log(at, granted + " " + token + " " + node);
                long value = resource.read(token);
                Thread.sleep(draw(random, holdMin, holdMax));
                if (value >= 0) {
                    resource.write(token, value + 1);
                }
                cycle.giveBack(true);
                Thread.sleep(draw(random, thinkMin, thinkMax));
            }
            log("done");
        } catch (Exception e) {
            System.err.println("curator contender " + slot + ": " + e);
            System.exit(1);
        }
    }
}
