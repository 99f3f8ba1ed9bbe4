package dev.pysandbox;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * README.md and docs/*.md render as meant on GitHub (issue 23, item 17: a tools table row lost its
 * leading pipe and its description was rendered away): markdownlint-cli2 with
 * src/test/node/markdownlint.jsonc checks well-formed tables (MD055, MD056, MD058), links to
 * headings (MD051) and to files of the repository (local-links.cjs), and nothing of style.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
@Sandboxed
class MarkdownLintTest {
  @Test
  void readmeAndDocs_haveWellFormedTablesAndNoBrokenLocalLinks() throws Exception {
    NodeScript.Result r =
        NodeScript.markdownlint(Duration.ofSeconds(100), List.of("README.md", "docs/*.md"));

    assertThat(r.exit()).as(r.describe()).isZero();
    assertThat(r.stdout() + r.stderr()).contains("Linting: 3 files").contains("0 issues");
  }
}
