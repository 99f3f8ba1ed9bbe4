package dev.pysandbox;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Inherited;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import org.junit.jupiter.api.Tag;

/**
 * Test lane {@code client}: A real server process ({@code bin/pysandbox}) and a real client talking
 * to it: the end-to-end tests (failsafe's {@code *IT}).
 *
 * <p>Every test class carries exactly one lane ({@link LaneTagsTest}); see docs/DESIGN.md, "Test
 * lanes".
 */
@Target(ElementType.TYPE)
@Retention(RetentionPolicy.RUNTIME)
@Documented
@Inherited
@Tag("client")
public @interface Client {}
