package dev.pysandbox.packages;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.pysandbox.Fast;
import dev.pysandbox.api.ErrorCode;
import dev.pysandbox.api.PysandboxException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

/** A caller's list of packages: bounded, deduplicated, sorted; merged; as a requirements file. */
@Fast
class RequirementsTest {
  private static List<String> names(int n, String prefix) {
    return IntStream.range(0, n).mapToObj(i -> prefix + i).toList();
  }

  private static List<String> canonical(List<Requirement> list) {
    return list.stream().map(Requirement::canonical).toList();
  }

  @Test
  void parse_nullOrEmpty_isNoPackages() {
    assertThat(Requirements.parse(null)).isEmpty();
    assertThat(Requirements.parse(List.of())).isEmpty();
  }

  @Test
  void parse_takesFiftyAndRefusesFiftyOne() {
    assertThat(Requirements.parse(names(Requirements.MAX, "p"))).hasSize(50);
    assertThatThrownBy(() -> Requirements.parse(names(51, "p")))
        .isInstanceOfSatisfying(
            PysandboxException.class,
            e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT))
        .hasMessageContaining("at most 50 packages")
        .hasMessageContaining("51");
  }

  @Test
  void parse_countsTheEntriesGivenNotTheDistinctOnes() {
    assertThatThrownBy(() -> Requirements.parse(Collections.nCopies(51, "numpy")))
        .hasMessageContaining("at most 50");
    assertThat(Requirements.parse(Collections.nCopies(50, "numpy"))).hasSize(1);
  }

  @Test
  void parse_dropsDuplicateSpellingsAndSortsByCanonicalText() {
    List<Requirement> list =
        Requirements.parse(
            List.of("zeta", "NumPy >= 1.0", "numpy>=1.0", "Alpha", "numpy (>=1.0)", "numpy<2"));
    assertThat(canonical(list)).containsExactly("alpha", "numpy<2", "numpy>=1.0", "zeta");
    assertThat(list.get(1).name()).isEqualTo("numpy");
    assertThat(list.get(2).name()).as("the first spelling is kept").isEqualTo("NumPy");
    assertThatThrownBy(() -> list.add(Requirement.parse("x")))
        .isInstanceOf(UnsupportedOperationException.class);
  }

  @Test
  void parse_refusesNamingTheEntry() {
    assertThatThrownBy(() -> Requirements.parse(List.of("numpy", "--index-url=http://evil")))
        .isInstanceOf(PysandboxException.class)
        .hasMessageContaining("'--index-url=http://evil'")
        .hasMessageContaining("option");
    List<String> withNull = new ArrayList<>(List.of("numpy"));
    withNull.add(null);
    assertThatThrownBy(() -> Requirements.parse(withNull))
        .isInstanceOf(PysandboxException.class)
        .hasMessageContaining("empty");
  }

  @Test
  void merge_isTheSortedUnionWithoutDuplicates() {
    List<Requirement> a = Requirements.parse(List.of("requests", "numpy>=1.0"));
    List<Requirement> b = Requirements.parse(List.of("NumPy >= 1.0", "attrs"));
    assertThat(canonical(Requirements.merge(a, b)))
        .containsExactly("attrs", "numpy>=1.0", "requests");
    assertThat(Requirements.merge(null, b)).isEqualTo(b);
    assertThat(Requirements.merge(a, null)).isEqualTo(a);
    assertThat(Requirements.merge(null, null)).isEmpty();
  }

  @Test
  void merge_refusesAUnionOverFifty() {
    List<Requirement> a = Requirements.parse(names(30, "a"));
    List<Requirement> b = Requirements.parse(names(30, "b"));
    assertThatThrownBy(() -> Requirements.merge(a, b))
        .isInstanceOfSatisfying(
            PysandboxException.class,
            e -> assertThat(e.code()).isEqualTo(ErrorCode.INVALID_ARGUMENT))
        .hasMessageContaining("at most 50 packages")
        .hasMessageContaining("60");
    assertThat(Requirements.merge(a, Requirements.parse(names(20, "a")))).hasSize(30);
  }

  @Test
  void requirementsFile_isOneCanonicalLinePerRequirement() {
    List<Requirement> list =
        Requirements.parse(
            List.of("Requests [Socks]", "tomli; python_version < '3.11'", "numpy (>=1,<2)"));
    assertThat(Requirements.requirementsFile(list))
        .isEqualTo("numpy<2,>=1\nrequests[socks]\ntomli; python_version < \"3.11\"\n");
    assertThat(Requirements.requirementsFile(List.of())).isEmpty();
    assertThat(Requirements.requirementsFile(null)).isEmpty();
  }
}
