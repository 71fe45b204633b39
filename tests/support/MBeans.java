import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import javax.management.Attribute;
import javax.management.AttributeList;
import javax.management.DynamicMBean;
import javax.management.MBeanAttributeInfo;
import javax.management.MBeanInfo;
import javax.management.ObjectName;

/**
 * Registers MBeans with fixed double attributes on the platform MBean server, as Kafka's JmxReporter registers
 * MirrorMaker 2's figures (attribute names such as record-count), so that a Java agent loaded into this JVM (the
 * Prometheus JMX exporter, tests/integration/test_monitoring_configs.py) reads them. Standard input: one line per
 * attribute, {@code <object name> TAB <attribute> TAB <value>}, then an empty line; it prints "ready" once they are
 * registered and exits when standard input closes.
 */
public final class MBeans {
    private MBeans() {}

    private static final class Fixed implements DynamicMBean {
        private final Map<String, Double> values = new LinkedHashMap<>();

        @Override
        public Object getAttribute(String name) {
            return values.get(name);
        }

        @Override
        public void setAttribute(Attribute attribute) {
            throw new UnsupportedOperationException("read-only");
        }

        @Override
        public AttributeList getAttributes(String[] names) {
            AttributeList list = new AttributeList();
            for (String name : names) {
                list.add(new Attribute(name, values.get(name)));
            }
            return list;
        }

        @Override
        public AttributeList setAttributes(AttributeList attributes) {
            return new AttributeList();
        }

        @Override
        public Object invoke(String action, Object[] params, String[] signature) {
            throw new UnsupportedOperationException(action);
        }

        @Override
        public MBeanInfo getMBeanInfo() {
            MBeanAttributeInfo[] infos = values.keySet().stream()
                    .map(name -> new MBeanAttributeInfo(name, "double", name, true, false, false))
                    .toArray(MBeanAttributeInfo[]::new);
            return new MBeanInfo(Fixed.class.getName(), "fixed figures", infos, null, null, null);
        }
    }

    public static void main(String[] args) throws Exception {
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        Map<String, Fixed> beans = new LinkedHashMap<>();
        for (String line = in.readLine(); line != null && !line.isEmpty(); line = in.readLine()) {
            String[] parts = line.split("\t");
            beans.computeIfAbsent(parts[0], name -> new Fixed()).values.put(parts[1], Double.valueOf(parts[2]));
        }
        for (Map.Entry<String, Fixed> bean : beans.entrySet()) {
            ManagementFactory.getPlatformMBeanServer().registerMBean(bean.getValue(), new ObjectName(bean.getKey()));
        }
        System.out.println("ready");
        System.out.flush();
        while (in.read() >= 0) {
            // until standard input closes
        }
    }
}
