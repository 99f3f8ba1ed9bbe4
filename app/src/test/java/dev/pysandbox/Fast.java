package dev.pysandbox;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.Tag;

/**
 * Test lane {@code fast}: Pure JVM: no sandbox, no child process, no server of pysandbox's core. It
 * may use SQLite in a temporary directory, sockets of its own on loopback and threads. The inner
 * loop runs only these ({@code scripts/test.sh --fast}).
 *
 * <p>Every test class carries exactly one lane ({@link LaneTagsTest}); see docs/DESIGN.md, "Test
 * lanes".
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@Tag("fast")
public @interface Fast {}
