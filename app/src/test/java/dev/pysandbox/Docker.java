package dev.pysandbox;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.Tag;

/**
 * Test lane {@code docker}: Needs the container engine (Podman's Docker API and the default image,
 * from {@link dev.pysandbox.TestEngine}): the docker and gVisor backends.
 *
 * <p>Every test class carries exactly one lane ({@link LaneTagsTest}); see docs/DESIGN.md, "Test
 * lanes".
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@Tag("docker")
public @interface Docker {}
