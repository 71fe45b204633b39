package securemirror.metrics;

import java.util.List;

/** What an MBean and the Spark source read of one named set of figures: its attributes, and each one's value now. */
interface Figures {
    /** The attributes, MirrorMaker 2's names, in its order. */
    List<String> attributes();

    /** The attribute's value now (one of {@link #attributes}). */
    double value(String attribute, long now);
}
