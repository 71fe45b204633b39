import java.io.FileInputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.concurrent.TimeUnit;

import org.apache.kafka.clients.admin.Admin;
import org.apache.kafka.clients.admin.DescribeTransactionsResult;
import org.apache.kafka.clients.admin.TransactionDescription;
import org.apache.kafka.clients.admin.TransactionState;

/**
 * The kill -9 of a transaction coordinator while a transaction it coordinates is open (tests/reliability/
 * open_transaction.py runs it with the source launcher: {@code java -cp <kafka's jars> TransactionWatch.java}).
 *
 * <p>Arguments: the admin's client properties file, the bootstrap servers, the pid of the coordinator's broker, the
 * seconds to watch at most, then the transactional ids it coordinates. Asks the coordinator to describe them
 * (Admin.describeTransactions, DescribeTransactions) again and again; the moment one answers Ongoing, SIGKILLs the
 * pid (ProcessHandle.destroyForcibly) and prints one line: {@code killed <pid> at <ms> <id> ongoing since <ms>
 * partitions <n> after <asks> asks}. Exit 2 when none was Ongoing in time (nothing killed). Whether the transaction
 * was still open at the kill is judged afterwards from the coordinator's own log (open_transaction.py).
 */
public final class TransactionWatch {
    public static void main(String[] args) throws Exception {
        Properties props = new Properties();
        try (FileInputStream in = new FileInputStream(args[0])) {
            props.load(in);
        }
        props.put("bootstrap.servers", args[1]);
        props.put("request.timeout.ms", "5000");
        props.put("default.api.timeout.ms", "5000");
        long pid = Long.parseLong(args[2]);
        long deadline = System.currentTimeMillis() + 1000L * Long.parseLong(args[3]);
        List<String> ids = new ArrayList<>(List.of(args).subList(4, args.length));
        int asks = 0;
        try (Admin admin = Admin.create(props)) {
            System.out.println("watching " + ids);
            System.out.flush();
            while (System.currentTimeMillis() < deadline) {
                asks++;
                DescribeTransactionsResult answers = admin.describeTransactions(ids);
                for (String id : ids) {
                    TransactionDescription found;
                    try {
                        found = answers.description(id).get(5, TimeUnit.SECONDS);
                    } catch (Exception e) {
                        continue; // not known yet, or the coordinator moved: asked again
                    }
                    if (found.state() == TransactionState.ONGOING) {
                        long now = System.currentTimeMillis();
                        ProcessHandle.of(pid).ifPresent(ProcessHandle::destroyForcibly);
                        System.out.println("killed " + pid + " at " + now + " " + id + " ongoing since "
                                + found.transactionStartTimeMs().orElse(-1L) + " partitions "
                                + found.topicPartitions().size() + " after " + asks + " asks");
                        System.out.flush();
                        return;
                    }
                }
                Thread.sleep(10);
            }
        }
        System.out.println("none ongoing after " + asks + " asks");
        System.exit(2);
    }
}
