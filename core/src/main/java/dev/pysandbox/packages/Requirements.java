package dev.pysandbox.packages;

import dev.pysandbox.api.PysandboxException;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A caller's list of packages: at most {@value #MAX}, each a {@link Requirement}, without
 * duplicates (by canonical text), sorted by canonical text, so two lists that say the same thing in
 * another order or spelling come out equal; and the requirements file pip is given for it.
 * Requirements on one project with different specifiers ({@code numpy>=1}, {@code numpy<2}) are
 * kept apart: pip combines them.
 */
public final class Requirements {
  /** The most packages one run, session or script may ask for. */
  public static final int MAX = 50;

  private Requirements() {}

  /**
   * Reads the {@code packages} a caller passed.
   *
   * @param specs the caller's strings; {@code null} or empty for none
   * @return the requirements, deduplicated and sorted by {@link Requirement#canonical()};
   *     unmodifiable
   * @throws PysandboxException {@code invalid_argument} for more than {@value #MAX} entries, or
   *     naming the first entry refused (see {@link Requirement#parse})
   */
  public static List<Requirement> parse(List<String> specs) {
    if (specs == null || specs.isEmpty()) {
      return List.of();
    }
    if (specs.size() > MAX) {
      throw PysandboxException.invalid(
          "packages: at most " + MAX + " packages, got " + specs.size());
    }
    Map<String, Requirement> byCanonical = new TreeMap<>();
    for (String spec : specs) {
      Requirement r = Requirement.parse(spec);
      byCanonical.putIfAbsent(r.canonical(), r);
    }
    return List.copyOf(byCanonical.values());
  }

  /**
   * The union of two lists (say, the {@code packages} argument and a script's inline metadata).
   *
   * @param a requirements; {@code null} for none
   * @param b requirements; {@code null} for none
   * @return the union, deduplicated and sorted by {@link Requirement#canonical()}; unmodifiable
   * @throws PysandboxException {@code invalid_argument} when the union holds more than {@value
   *     #MAX}
   */
  public static List<Requirement> merge(List<Requirement> a, List<Requirement> b) {
    Map<String, Requirement> byCanonical = new TreeMap<>();
    for (Requirement r : orEmpty(a)) {
      byCanonical.putIfAbsent(r.canonical(), r);
    }
    for (Requirement r : orEmpty(b)) {
      byCanonical.putIfAbsent(r.canonical(), r);
    }
    if (byCanonical.size() > MAX) {
      throw PysandboxException.invalid(
          "packages: at most "
              + MAX
              + " packages, got "
              + byCanonical.size()
              + " once the two lists are merged");
    }
    return List.copyOf(byCanonical.values());
  }

  /**
   * The requirements file for {@code requirements}: one {@link Requirement#canonical()} line each,
   * in the order given, each ending with a newline; {@code ""} for none.
   */
  public static String requirementsFile(List<Requirement> requirements) {
    StringBuilder s = new StringBuilder();
    for (Requirement r : orEmpty(requirements)) {
      s.append(r.canonical()).append('\n');
    }
    return s.toString();
  }

  private static List<Requirement> orEmpty(List<Requirement> list) {
    return list == null ? List.of() : list;
  }
}
