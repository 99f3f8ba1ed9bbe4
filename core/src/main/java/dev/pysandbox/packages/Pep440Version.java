package dev.pysandbox.packages;

import java.math.BigInteger;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A PEP 440 version as a specifier clause names it. Its own class because the specifier rules need
 * the version's parts (a local label only with {@code ==} and {@code !=}, {@code .*} only after a
 * plain release, {@code ~=} with two release segments at least) and the canonical text needs PEP
 * 440's normalisation ({@code V1.0-RC.1} is {@code 1.0rc1}), the spelling {@code
 * packaging.version.Version} prints.
 */
record Pep440Version(
    String epoch, List<String> release, String pre, String post, String dev, String local) {

  /** PEP 440 appendix B, the pattern {@code packaging} accepts, with its permitted spellings. */
  private static final Pattern VERSION =
      Pattern.compile(
          "v?(?:(?<epoch>[0-9]+)!)?(?<release>[0-9]+(?:\\.[0-9]+)*)"
              + "(?:[-_.]?(?<preL>alpha|a|beta|b|preview|pre|c|rc)[-_.]?(?<preN>[0-9]+)?)?"
              + "(?:-(?<postN1>[0-9]+)|[-_.]?(?<postL>post|rev|r)[-_.]?(?<postN2>[0-9]+)?)?"
              + "(?:[-_.]?(?<devL>dev)[-_.]?(?<devN>[0-9]+)?)?"
              + "(?:\\+(?<local>[a-z0-9]+(?:[-_.][a-z0-9]+)*))?",
          Pattern.CASE_INSENSITIVE);

  /** The version {@code text} spells, or empty when it is not a PEP 440 version. */
  static Optional<Pep440Version> parse(String text) {
    Matcher m = VERSION.matcher(text);
    if (!m.matches()) {
      return Optional.empty();
    }
    List<String> release = new ArrayList<>();
    for (String part : m.group("release").split("\\.")) {
      release.add(number(part));
    }
    String pre = null;
    if (m.group("preL") != null) {
      String label =
          switch (m.group("preL").toLowerCase(Locale.ROOT)) {
            case "alpha", "a" -> "a";
            case "beta", "b" -> "b";
            default -> "rc";
          };
      pre = label + number(m.group("preN"));
    }
    String post = null;
    if (m.group("postN1") != null) {
      post = number(m.group("postN1"));
    } else if (m.group("postL") != null) {
      post = number(m.group("postN2"));
    }
    String dev = m.group("devL") == null ? null : number(m.group("devN"));
    String local = null;
    if (m.group("local") != null) {
      List<String> parts = new ArrayList<>();
      for (String part : m.group("local").toLowerCase(Locale.ROOT).split("[-_.]")) {
        parts.add(part.chars().allMatch(Character::isDigit) ? number(part) : part);
      }
      local = String.join(".", parts);
    }
    String epoch = m.group("epoch") == null ? "0" : number(m.group("epoch"));
    return Optional.of(new Pep440Version(epoch, List.copyOf(release), pre, post, dev, local));
  }

  /** No pre, post or dev release and no local label: what may come before {@code .*}. */
  boolean isPlainRelease() {
    return pre == null && post == null && dev == null && local == null;
  }

  boolean hasLocal() {
    return local != null;
  }

  /** The normalised spelling, as {@code str(packaging.version.Version(text))} prints it. */
  String normalized() {
    StringBuilder s = new StringBuilder();
    if (!epoch.equals("0")) {
      s.append(epoch).append('!');
    }
    s.append(String.join(".", release));
    if (pre != null) {
      s.append(pre);
    }
    if (post != null) {
      s.append(".post").append(post);
    }
    if (dev != null) {
      s.append(".dev").append(dev);
    }
    if (local != null) {
      s.append('+').append(local);
    }
    return s.toString();
  }

  /** Digits without their leading zeros; an absent number is 0 (PEP 440: {@code 1.0rc} is rc0). */
  private static String number(String digits) {
    return digits == null ? "0" : new BigInteger(digits).toString();
  }
}
