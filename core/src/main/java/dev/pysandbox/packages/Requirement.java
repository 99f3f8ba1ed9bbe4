package dev.pysandbox.packages;

import dev.pysandbox.api.PysandboxException;
import java.util.List;
import java.util.Objects;

/**
 * One Python package a run asks for: a PEP 508 requirement from an index, parsed and validated,
 * fail closed. Only a name, extras, version specifiers and an environment marker are accepted; URLs
 * and direct references ({@code name @ url}), paths, pip options ({@code -e}, {@code
 * --index-url=...}), shell text and anything pip's requirements-file reader treats specially are
 * refused. Every component is held in canonical form, so {@link #canonical()} is safe to give pip
 * as one line of a requirements file and two spellings of one requirement ({@code NumPy >= 1.0},
 * {@code numpy>=1.0}) have the same canonical text; the constructor refuses components that are not
 * canonical, so a value built without {@link #parse} is held to the same rules.
 *
 * <p>Narrower than PEP 508 on purpose: whitespace is spaces (no tabs); version specifiers are PEP
 * 440 versions (also after {@code ===}, which must stand alone: no other clause, no marker, since
 * pip 23.0's parser reads everything after it up to whitespace as its version); {@code .*} follows
 * only a plain release after {@code ==} or {@code !=}; a local version label ({@code +local}) only
 * after {@code ==}, {@code !=} or {@code ===}; marker strings hold letters, digits, space and
 * {@code . _ - * + ! ~} only. Every requirement accepted here is accepted by pip's own parser
 * ({@code RequirementTest} checks a sample against it).
 *
 * <p>Equality is the record's: it includes {@link #name()}'s spelling. Compare {@link #canonical()}
 * to ask whether two requirements are the same.
 *
 * @param name the name as the caller spelled it
 * @param normalizedName the name normalised per PEP 503 ({@code Foo_Bar.baz} is {@code
 *     foo-bar-baz})
 * @param extras the extras, normalised like names, sorted, without duplicates; empty for none
 * @param specifier the version specifiers, each normalised per PEP 440, sorted, joined by {@code ,}
 *     without spaces ({@code <2.0,>=1.0}); {@code ""} for none
 * @param marker the environment marker re-rendered canonically (single spaces, double quotes:
 *     {@code python_version >= "3.8"}); {@code ""} for none
 */
public record Requirement(
    String name, String normalizedName, List<String> extras, String specifier, String marker) {

  /** The longest spec {@link #parse} reads. */
  public static final int MAX_LENGTH = RequirementParser.MAX_LENGTH;

  /**
   * Checks that every component is valid and canonical.
   *
   * @throws PysandboxException {@code invalid_argument} when one is not
   */
  public Requirement {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(normalizedName, "normalizedName");
    Objects.requireNonNull(specifier, "specifier");
    Objects.requireNonNull(marker, "marker");
    extras = List.copyOf(extras);
    try {
      checkCanonical(name, normalizedName, extras, specifier, marker);
    } catch (Refusal r) {
      throw PysandboxException.invalid(
          "requirement " + shown(name) + " is not in canonical form: " + r.getMessage());
    }
  }

  /**
   * Reads {@code spec}, such as {@code numpy>=1.26}, {@code requests[socks]} or {@code tomli;
   * python_version < "3.11"}.
   *
   * @param spec one requirement, at most {@value #MAX_LENGTH} characters
   * @throws PysandboxException {@code invalid_argument} naming {@code spec} (quoted) and why it is
   *     refused, for anything but a PEP 508 requirement on an index package
   */
  public static Requirement parse(String spec) {
    try {
      return RequirementParser.parse(spec);
    } catch (Refusal r) {
      throw PysandboxException.invalid("package " + shown(spec) + " is refused: " + r.getMessage());
    }
  }

  /**
   * The requirement in canonical text, e.g. {@code tinypkg[a,b]<2.0,>=1.0; python_version >=
   * "3.8"}: one line of the requirements file pip is given, and what an environment's key hashes.
   */
  public String canonical() {
    StringBuilder s = new StringBuilder(normalizedName);
    if (!extras.isEmpty()) {
      s.append('[').append(String.join(",", extras)).append(']');
    }
    s.append(specifier);
    if (!marker.isEmpty()) {
      s.append("; ").append(marker);
    }
    return s.toString();
  }

  @Override
  public String toString() {
    return canonical();
  }

  /**
   * A caller's value for a message: {@link PysandboxException#quote} after escaping control
   * characters, so a message never carries a NUL or a carriage return.
   */
  static String shown(String value) {
    if (value == null) {
      return PysandboxException.quote(null);
    }
    StringBuilder s = new StringBuilder();
    for (char c : value.toCharArray()) {
      if (c == '\n') {
        s.append(c); // quote() escapes it
      } else if (c == '\r') {
        s.append("\\r");
      } else if (c == '\t') {
        s.append("\\t");
      } else if (c < 0x20 || c == 0x7f) {
        s.append(String.format("\\u%04x", (int) c));
      } else {
        s.append(c);
      }
    }
    return PysandboxException.quote(s.toString());
  }

  private static void checkCanonical(
      String name, String normalizedName, List<String> extras, String specifier, String marker)
      throws Refusal {
    if (!RequirementParser.NAME.matcher(name).matches()) {
      throw new Refusal("the name must start and end with a letter or a digit");
    }
    if (!normalizedName.equals(RequirementParser.normalize(name))) {
      throw new Refusal("normalizedName " + shown(normalizedName) + " is not the normalised name");
    }
    String previous = null;
    for (String extra : extras) {
      if (!RequirementParser.NAME.matcher(extra).matches()
          || !extra.equals(RequirementParser.normalize(extra))
          || (previous != null && previous.compareTo(extra) >= 0)) {
        throw new Refusal("extras " + extras + " are not normalised names in sorted order");
      }
      previous = extra;
    }
    if (!specifier.equals(RequirementParser.canonicalSpecifier(specifier))) {
      throw new Refusal("specifier " + shown(specifier) + " is not canonical");
    }
    if (!marker.isEmpty() && !marker.equals(MarkerParser.canonical(marker))) {
      throw new Refusal("marker " + shown(marker) + " is not canonical");
    }
    if (!marker.isEmpty() && specifier.startsWith("===")) {
      throw new Refusal("'===' cannot be followed by a marker");
    }
    RequirementParser.checkNotArchive(name, specifier);
  }
}
