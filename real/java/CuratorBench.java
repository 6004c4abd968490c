// One Apache Curator 5 contender of `splitbrain bench --real` (real/src/bench/ starts it with
// the classes real/src/curator/mod.rs compiles with plain javac against Debian's jars).
//
// Usage: CuratorBench <mutex|latch> <connect> <session-timeout-ms> <lock-path> <cycles>
//
// It connects, prints "<System.nanoTime()> ready", waits for a line "go" on stdin, then runs
// <cycles> cycles on <lock-path> with no hold or think time: InterProcessMutex (mutex:
// acquire, release) or a new LeaderLatch per cycle (latch: start, await leadership, close in
// Curator's default SILENT mode). It keeps each call's and outcome's System.nanoTime() in
// memory (printing while measuring would add to the client's CPU), and once every cycle is
// done prints them, one "<nanos> <word>" line each:
//   mutex: acquire | acquired | released        latch: start | leader | close | closed
// then "<nanos> done" (the time the last cycle ended), and waits for stdin to end before it
// closes its session, so that the harness reads its CPU time before the close. The Rust
// contender (real/src/bench/contender.rs) prints the same lines. Any failure: a message on
// stderr and exit status 1.

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import org.apache.curator.framework.CuratorFramework;
import org.apache.curator.framework.recipes.leader.LeaderLatch;
import org.apache.curator.framework.recipes.locks.InterProcessMutex;

public final class CuratorBench {
    /** The times of one run's calls and outcomes, in order. */
    static final class Times {
        private final long[] nanos;
        private final String[] words;
        private int next;

        Times(int capacity) {
            nanos = new long[capacity];
            words = new String[capacity];
        }

        void mark(String word) {
            nanos[next] = System.nanoTime();
            words[next] = word;
            next++;
        }

        void print(StringBuilder out) {
            for (int i = 0; i < next; i++) {
                out.append(nanos[i]).append(' ').append(words[i]).append('\n');
            }
        }
    }

    public static void main(String[] args) throws Exception {
        if (args.length != 5 || !(args[0].equals("mutex") || args[0].equals("latch"))) {
            System.err.println("usage: CuratorBench <mutex|latch> <connect> <session-timeout-ms>"
                + " <lock-path> <cycles>");
            System.exit(2);
        }
        boolean isLatch = args[0].equals("latch");
        String connect = args[1];
        int sessionTimeout = Integer.parseInt(args[2]);
        String path = args[3];
        int cycles = Integer.parseInt(args[4]);
        try (CuratorFramework client = CuratorContender.connect(connect, sessionTimeout)) {
            InterProcessMutex mutex = new InterProcessMutex(client, path);
            System.out.println(System.nanoTime() + " ready");
            System.out.flush();
            BufferedReader stdin = new BufferedReader(
                new InputStreamReader(System.in, StandardCharsets.UTF_8));
            if (!"go".equals(stdin.readLine())) {
                throw new IllegalStateException("expected \"go\" on stdin");
            }
            Times times = new Times(cycles * 4);
            for (int n = 0; n < cycles; n++) {
                if (isLatch) {
                    LeaderLatch latch = new LeaderLatch(client, path);
                    times.mark("start");
                    latch.start();
                    latch.await();
                    times.mark("leader");
                    times.mark("close");
                    latch.close();
                    times.mark("closed");
                } else {
                    times.mark("acquire");
                    mutex.acquire();
                    times.mark("acquired");
                    mutex.release();
                    times.mark("released");
                }
            }
            long done = System.nanoTime();
            StringBuilder out = new StringBuilder();
            times.print(out);
            out.append(done).append(" done\n");
            System.out.print(out);
            System.out.flush();
            while (stdin.readLine() != null) {
                // The harness closes stdin once it has read this process's CPU time.
            }
        } catch (Exception e) {
            System.err.println("curator bench contender: " + e);
            System.exit(1);
        }
    }
}
