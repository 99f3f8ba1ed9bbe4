package dev.pysandbox;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/**
 * README's "Where things live" names every package of the code (issue 23, item 17: egress/,
 * packages/ and backend/docker/ were missing), so a package added without a line fails here.
 */
@Fast
class ReadmeLayoutTest {

  @Test
  void whereThingsLive_namesEveryPackage() throws IOException {
    String readme = Files.readString(Path.of("README.md"));
    int from = readme.indexOf("## Where things live");
    assertThat(from).isPositive();
    String map = readme.substring(from, readme.indexOf("\n```\n", readme.indexOf("```", from) + 3));

    for (String module : FloorsTest.MODULES) {
      assertThat(map).as("README's layout map names module %s", module).contains(module + "/");
      Path root = Path.of(module, "src/main/java/dev/pysandbox");
      List<Path> packages;
      try (Stream<Path> s = Files.walk(root, 2)) {
        packages = s.filter(Files::isDirectory).filter(p -> !p.equals(root)).toList();
      }
      for (Path p : packages) {
        Path relative = root.relativize(p);
        // A top-level package by its own line ("  egress/"), a nested one by its name ("docker/").
        String named =
            relative.getNameCount() == 1 ? "\n  " + relative + "/" : relative.getFileName() + "/";
        assertThat(map).as("README's layout map names %s", relative).contains(named);
      }
    }
  }
}
