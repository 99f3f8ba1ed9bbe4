package dev.pysandbox;

import static org.assertj.core.api.Assertions.assertThat;

import java.lang.annotation.Annotation;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * Every test class Maven runs ({@code *Test} by surefire, {@code *IT} by failsafe) says which lane
 * it is in, with exactly one of {@link Fast}, {@link Sandboxed}, {@link Client} or {@link Docker}:
 * a class without one would silently drop out of {@code scripts/test.sh --fast} or be counted in it
 * by mistake. An {@code *IT} is never fast: the fast lane skips failsafe.
 */
@Fast
class LaneTagsTest {
  private static final List<Class<? extends Annotation>> LANES =
      List.of(Fast.class, Sandboxed.class, Client.class, Docker.class);

  @Test
  void everyTestClass_hasExactlyOneLane_andNoItIsFast() throws Exception {
    List<String> wrong = new ArrayList<>();
    List<Class<?>> classes = testClasses();
    for (Class<?> c : classes) {
      List<String> lanes =
          LANES.stream().filter(c::isAnnotationPresent).map(a -> "@" + a.getSimpleName()).toList();
      if (lanes.size() != 1) {
        wrong.add(c.getName() + " has " + (lanes.isEmpty() ? "no lane" : lanes));
      } else if (c.getSimpleName().endsWith("IT") && c.isAnnotationPresent(Fast.class)) {
        wrong.add(c.getName() + " is an IT (failsafe) but @Fast");
      }
    }
    assertThat(classes).as("test classes found").hasSizeGreaterThan(100);
    assertThat(wrong).as("test classes without exactly one lane").isEmpty();
  }

  /** The concrete top-level classes named *Test or *IT in this build's test classes. */
  private static List<Class<?>> testClasses() throws Exception {
    Path root =
        Path.of(LaneTagsTest.class.getProtectionDomain().getCodeSource().getLocation().toURI());
    List<Class<?>> out = new ArrayList<>();
    try (Stream<Path> files = Files.walk(root)) {
      for (Path f : files.filter(p -> p.toString().endsWith(".class")).toList()) {
        String name = root.relativize(f).toString().replace('/', '.');
        name = name.substring(0, name.length() - ".class".length());
        if (name.contains("$") || !(name.endsWith("Test") || name.endsWith("IT"))) {
          continue;
        }
        Class<?> c = Class.forName(name, false, LaneTagsTest.class.getClassLoader());
        if (!Modifier.isAbstract(c.getModifiers()) && !c.isInterface()) {
          out.add(c);
        }
      }
    }
    return out;
  }
}
