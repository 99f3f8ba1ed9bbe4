package dev.pysandbox.packages;

import static dev.pysandbox.api.PysandboxException.quote;

import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Pattern;

/**
 * Reads one PEP 508 requirement, fail closed. First a screen over the characters, so the common
 * attacks are refused with a reason a caller understands (a URL, a path, a pip option, shell text)
 * rather than "unexpected character"; then the grammar: name, extras, version specifiers, marker.
 *
 * <p>What pip is finally given is {@link Requirement#canonical()}, one line of a requirements file,
 * so the screen also refuses what pip's requirements-file reader treats specially: {@code #}
 * (comment), {@code \} (line continuation), {@code $} ({@code ${VAR}} expansion), a token after a
 * space starting with {@code -} (an option), and a name or version ending like an archive ({@code
 * x.whl}, {@code x.tar.gz}: pip installs a local file of that name).
 */
final class RequirementParser extends TextCursor {
  static final int MAX_LENGTH = 200;

  static final Pattern NAME = Pattern.compile("[A-Za-z0-9]|[A-Za-z0-9][A-Za-z0-9._-]*[A-Za-z0-9]");

  /** Longest first, so {@code ===} is not read as {@code ==} followed by {@code =}. */
  private static final List<String> OPERATORS =
      List.of("===", "~=", "==", "!=", "<=", ">=", "<", ">");

  /** What pip's {@code is_archive_file} treats as a local archive to install. */
  private static final List<String> ARCHIVES =
      List.of(
          ".whl",
          ".zip",
          ".tar",
          ".tar.gz",
          ".tgz",
          ".tar.bz2",
          ".tbz",
          ".tar.xz",
          ".txz",
          ".tlz",
          ".tar.lz",
          ".tar.lzma");

  private static final Pattern OPTION = Pattern.compile("(^|\\s)-");
  private static final Pattern VCS_URL = Pattern.compile("(?i)^\\s*(git|hg|svn|bzr)\\+");
  private static final String SHELL = "`$|&";

  /** Everything else (outside these) is refused by the screen before the grammar runs. */
  private static final Pattern ALLOWED = Pattern.compile("[A-Za-z0-9 ._\\-\\[\\],()<>=!~*+;'\"]*");

  private static final String VERSION_CHARS =
      "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._+!*-";

  /**
   * pip 23.0's parser (packaging 21.3) reads everything after {@code ===} up to whitespace as the
   * version, {@code ,} and {@code ;} included, so in canonical text nothing may follow it.
   */
  private static final String ARBITRARY_ALONE =
      "'===' (arbitrary equality) must be the only version specifier, without a marker";

  private RequirementParser(String text) {
    super(text);
  }

  /** {@code spec} read into a requirement in canonical form. */
  static Requirement parse(String spec) throws Refusal {
    screen(spec);
    return new RequirementParser(spec.strip()).requirement();
  }

  /** PEP 503: runs of {@code - _ .} become one {@code -}, all lower case. */
  static String normalize(String name) {
    return name.replaceAll("[-_.]+", "-").toLowerCase(Locale.ROOT);
  }

  /**
   * The canonical text of a specifier list such as {@code >=1.0,<2} (no parentheses); {@code ""}
   * for {@code ""}.
   */
  static String canonicalSpecifier(String specifier) throws Refusal {
    if (specifier.isEmpty()) {
      return "";
    }
    RequirementParser p = new RequirementParser(specifier);
    String canonical = p.specifiers(false);
    if (p.pos < specifier.length()) {
      throw new Refusal("unexpected " + quote(specifier.substring(p.pos)) + " in the specifiers");
    }
    return canonical;
  }

  /** Refuses a name or specifier pip would take for a local archive file. */
  static void checkNotArchive(String name, String specifier) throws Refusal {
    for (String part : List.of(name, specifier)) {
      String lower = part.toLowerCase(Locale.ROOT);
      for (String ext : ARCHIVES) {
        if (lower.endsWith(ext)) {
          throw new Refusal(
              "it ends in '" + ext + "' like an archive file name, which pip installs from disk");
        }
      }
    }
  }

  /** Character-level refusals, each with the reason a caller needs. */
  private static void screen(String spec) throws Refusal {
    if (spec == null || spec.isBlank()) {
      throw new Refusal("it is empty");
    }
    if (spec.length() > MAX_LENGTH) {
      throw new Refusal("it is longer than " + MAX_LENGTH + " characters (" + spec.length() + ")");
    }
    for (int i = 0; i < spec.length(); i++) {
      char c = spec.charAt(i);
      if (c == '\n' || c == '\r') {
        throw new Refusal("it contains a line break; give one requirement per list entry");
      }
      if (c < 0x20 || c == 0x7f) {
        throw new Refusal(String.format("it contains a control character (U+%04X)", (int) c));
      }
      if (c > 0x7e) {
        throw new Refusal(
            String.format("it contains a non-ASCII character (U+%04X); names are ASCII", (int) c));
      }
    }
    for (char c : SHELL.toCharArray()) {
      if (spec.indexOf(c) >= 0) {
        throw new Refusal("it contains shell text ('" + c + "'); only a requirement is allowed");
      }
    }
    if (spec.strip().startsWith("-")) {
      throw new Refusal("it is a pip option, not a requirement");
    }
    if (OPTION.matcher(spec).find()) {
      throw new Refusal("it carries a pip option (' -'); only a requirement is allowed");
    }
    if (spec.indexOf('@') >= 0) {
      throw new Refusal(
          "it is a direct reference ('name @ URL'); only packages from the index are allowed");
    }
    if (spec.contains("://") || VCS_URL.matcher(spec).find()) {
      throw new Refusal("it is a URL; only packages from the index are allowed");
    }
    String t = spec.strip();
    if (spec.indexOf('/') >= 0
        || spec.indexOf('\\') >= 0
        || t.startsWith(".")
        || t.startsWith("~")) {
      throw new Refusal("it is a path; only packages from the index are allowed");
    }
    if (spec.indexOf('#') >= 0) {
      throw new Refusal("it contains '#', which starts a comment in a requirements file");
    }
    if (!ALLOWED.matcher(spec).matches()) {
      for (char c : spec.toCharArray()) {
        if (!ALLOWED.matcher(String.valueOf(c)).matches()) {
          throw new Refusal("it contains '" + c + "', which no requirement has");
        }
      }
    }
  }

  private Requirement requirement() throws Refusal {
    String name = name();
    spaces();
    if (pos < text.length() && isNameChar(peek())) {
      throw new Refusal(
          "there is whitespace inside the name, or two requirements in one entry"
              + " (give one per list entry)");
    }
    List<String> extras = List.of();
    if (peek() == '[') {
      extras = extras();
      spaces();
    }
    String specifier = "";
    if (peek() == '(') {
      pos++;
      specifier = specifiers(true);
    } else if ("<>=!~".indexOf(peek()) >= 0) {
      specifier = specifiers(false);
    }
    spaces();
    String marker = "";
    if (peek() == ';') {
      String raw = text.substring(pos + 1);
      if (raw.isBlank()) {
        throw new Refusal("the environment marker after ';' is empty");
      }
      if (specifier.startsWith("===")) {
        throw new Refusal(ARBITRARY_ALONE);
      }
      marker = MarkerParser.canonical(raw);
      pos = text.length();
    }
    if (pos < text.length()) {
      throw new Refusal(
          "unexpected " + quote(text.substring(pos)) + " after the name and version specifiers");
    }
    checkNotArchive(name, specifier);
    return new Requirement(name, normalize(name), extras, specifier, marker);
  }

  private String name() throws Refusal {
    String name = takeWhile(RequirementParser::isNameChar);
    if (name.isEmpty()) {
      throw new Refusal("it does not start with a package name");
    }
    if (!NAME.matcher(name).matches()) {
      throw new Refusal("the name " + quote(name) + " must start and end with a letter or a digit");
    }
    return name;
  }

  /** {@code [a, b]}: normalised like names (PEP 685), sorted, without duplicates. */
  private List<String> extras() throws Refusal {
    pos++;
    spaces();
    Set<String> extras = new TreeSet<>();
    if (peek() == ']') {
      pos++;
      return List.of();
    }
    while (true) {
      spaces();
      int start = pos;
      String extra = takeWhile(RequirementParser::isNameChar);
      if (!NAME.matcher(extra).matches()) {
        throw new Refusal(
            "the extras are malformed: expected an extra's name at " + quote(rest(start)));
      }
      extras.add(normalize(extra));
      spaces();
      if (consume(']')) {
        return List.copyOf(extras);
      }
      if (!consume(',')) {
        throw new Refusal(
            "the extras are malformed: expected ',' or ']' at "
                + (pos < text.length() ? quote(rest(pos)) : "the end"));
      }
    }
  }

  /** Comma-separated clauses, canonical each, sorted, without duplicates, joined by {@code ,}. */
  private String specifiers(boolean parenthesised) throws Refusal {
    Set<String> clauses = new TreeSet<>();
    do {
      spaces();
      String op = operator();
      spaces();
      String version = takeWhile(c -> VERSION_CHARS.indexOf(c) >= 0);
      if (version.isEmpty()) {
        throw new Refusal("the operator '" + op + "' has no version after it");
      }
      clauses.add(clause(op, version));
      spaces();
    } while (consume(','));
    if (parenthesised && !consume(')')) {
      throw new Refusal("the version specifiers opened with '(' are not closed with ')'");
    }
    if (clauses.size() > 1 && clauses.stream().anyMatch(c -> c.startsWith("==="))) {
      throw new Refusal(ARBITRARY_ALONE);
    }
    return String.join(",", clauses);
  }

  private String operator() throws Refusal {
    String op = takeFirstOf(OPERATORS);
    if (op != null) {
      return op;
    }
    throw new Refusal(
        "expected a version operator ("
            + String.join(" ", OPERATORS)
            + ") at "
            + (pos < text.length() ? quote(rest(pos)) : "the end"));
  }

  /** One clause, checked by PEP 440's rules for its operator, in canonical form. */
  private static String clause(String op, String version) throws Refusal {
    String said = "the version specifier " + quote(op + version);
    boolean wildcard = version.endsWith(".*");
    String base = wildcard ? version.substring(0, version.length() - 2) : version;
    if (base.indexOf('*') >= 0) {
      throw new Refusal(said + " has a '*' that is not a final '.*'");
    }
    Pep440Version v =
        Pep440Version.parse(base)
            .orElseThrow(
                () -> new Refusal(said + ": " + quote(base) + " is not a PEP 440 version"));
    switch (op) {
      case "==", "!=" -> {
        if (wildcard && !v.isPlainRelease()) {
          throw new Refusal(said + ": '.*' may follow only a plain release such as 1.2.*");
        }
        return op + v.normalized() + (wildcard ? ".*" : "");
      }
      case "===" -> {
        if (wildcard) {
          throw new Refusal(said + ": '.*' is allowed only after == or !=");
        }
        // Arbitrary equality compares text (case-insensitively), so the text is kept.
        return op + version.toLowerCase(Locale.ROOT);
      }
      default -> {
        if (wildcard) {
          throw new Refusal(said + ": '.*' is allowed only after == or !=");
        }
        if (v.hasLocal()) {
          throw new Refusal(
              said + ": a local version label ('+...') is allowed only with == or !=");
        }
        if (op.equals("~=") && v.release().size() < 2) {
          throw new Refusal(said + ": ~= needs a version of two parts or more (~=1.4)");
        }
        return op + v.normalized();
      }
    }
  }

  private static boolean isNameChar(char c) {
    return (c >= 'a' && c <= 'z')
        || (c >= 'A' && c <= 'Z')
        || (c >= '0' && c <= '9')
        || c == '.'
        || c == '_'
        || c == '-';
  }

  private String rest(int from) {
    return text.substring(Math.min(from, text.length()));
  }
}
