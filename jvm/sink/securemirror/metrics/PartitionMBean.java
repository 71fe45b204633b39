package securemirror.metrics;

import javax.management.Attribute;
import javax.management.AttributeList;
import javax.management.AttributeNotFoundException;
import javax.management.DynamicMBean;
import javax.management.MBeanAttributeInfo;
import javax.management.MBeanException;
import javax.management.MBeanInfo;
import javax.management.ReflectionException;

/**
 * One topic-partition's figures (or a group's checkpoint figures for one, or the task's errors) as MirrorMaker 2
 * shows them in JMX: read-only {@code double} attributes named as MirrorMaker 2's ({@link PartitionFigures#ATTRIBUTES},
 * {@link CheckpointFigures#ATTRIBUTES}, {@link TaskFigures#ATTRIBUTES}), under the object name {@link Names#objectName}
 * gives (or Connect's task error metrics' name).
 */
final class PartitionMBean implements DynamicMBean {
    private static final String DESCRIPTION = "secure-mirror's figures under MirrorMaker 2's (and its task's) names";
    private final Figures figures;
    private final MBeanInfo info;

    PartitionMBean(Figures figures) {
        this.figures = figures;
        MBeanAttributeInfo[] attributes = figures.attributes().stream()
            .map(name -> new MBeanAttributeInfo(name, double.class.getName(), name, true, false, false))
            .toArray(MBeanAttributeInfo[]::new);
        this.info = new MBeanInfo(PartitionMBean.class.getName(), DESCRIPTION, attributes, null, null, null);
    }

    @Override
    public Object getAttribute(String name) throws AttributeNotFoundException {
        if (!figures.attributes().contains(name)) {
            throw new AttributeNotFoundException("no such attribute: " + name);
        }
        return figures.value(name, System.currentTimeMillis());
    }

    @Override
    public AttributeList getAttributes(String[] names) {
        AttributeList list = new AttributeList();
        for (String name : names) {
            if (figures.attributes().contains(name)) {
                list.add(new Attribute(name, figures.value(name, System.currentTimeMillis())));
            }
        }
        return list;
    }

    @Override
    public void setAttribute(Attribute attribute) throws AttributeNotFoundException {
        throw new AttributeNotFoundException("read-only: " + attribute.getName());
    }

    @Override
    public AttributeList setAttributes(AttributeList attributes) {
        return new AttributeList();
    }

    @Override
    public Object invoke(String action, Object[] params, String[] signature) throws MBeanException,
        ReflectionException {
        throw new UnsupportedOperationException("no operations");
    }

    @Override
    public MBeanInfo getMBeanInfo() {
        return info;
    }
}
