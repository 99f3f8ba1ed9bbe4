package dev.pysandbox;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.Tag;

/**
 * Test lane {@code sandbox}: Needs this host's real parts but no server process: bubblewrap
 * sandboxes (a core in the test's JVM), Python, Node, mounts or the host's tools as child
 * processes.
 *
 * <p>Every test class carries exactly one lane ({@link LaneTagsTest}); see docs/DESIGN.md, "Test
 * lanes".
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@Tag("sandbox")
public @interface Sandboxed {}
