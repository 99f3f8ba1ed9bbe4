package dev.pysandbox.packages;

import static dev.pysandbox.api.PysandboxException.quote;

import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * A PEP 508 environment marker, read by recursive descent over the PEP's grammar and re-rendered
 * canonically: single spaces, double quotes, {@code and} binding tighter than {@code or} (as pip
 * evaluates it), parentheses only where an {@code or} sits inside an {@code and}. So {@code
 * (python_version>'3.8')} and {@code python_version > "3.8"} render the same.
 *
 * <p>Narrower than the PEP, on purpose: only the marker variables of {@link #VARIABLES} (not the
 * legacy dotted ones such as {@code os.name}); a comparison must name a variable on one side;
 * quoted strings hold letters, digits, space and {@code . _ - * + ! ~} only (no quotes, so the
 * double-quoted rendering is always faithful, and nothing a shell or a requirements file reads
 * specially). Whitespace is spaces; tabs never get here (the requirement is refused first).
 */
final class MarkerParser extends TextCursor {
  static final List<String> VARIABLES =
      List.of(
          "python_version",
          "python_full_version",
          "os_name",
          "sys_platform",
          "platform_release",
          "platform_system",
          "platform_version",
          "platform_machine",
          "platform_python_implementation",
          "implementation_name",
          "implementation_version",
          "extra");

  /** Longest first, so {@code ===} is not read as {@code ==} followed by {@code =}. */
  private static final List<String> COMPARISONS =
      List.of("===", "==", "!=", "<=", ">=", "~=", "<", ">");

  private static final Pattern STRING_CONTENT = Pattern.compile("[A-Za-z0-9 ._*+!~-]*");

  /** A rendered sub-expression and whether it is an {@code or} (needs parentheses in an and). */
  private record Node(String text, boolean isOr) {}

  private MarkerParser(String text) {
    super(text);
  }

  /**
   * The canonical text of {@code marker} (what follows the {@code ;}).
   *
   * @throws Refusal naming the marker and what is wrong in it
   */
  static String canonical(String marker) throws Refusal {
    MarkerParser p = new MarkerParser(marker);
    try {
      Node n = p.or();
      p.spaces();
      if (p.pos < p.text.length()) {
        throw p.expected("'and', 'or' or the end of the marker");
      }
      return n.text();
    } catch (Refusal r) {
      throw new Refusal(
          "its environment marker " + quote(marker.strip()) + " is invalid: " + r.getMessage());
    }
  }

  private Node or() throws Refusal {
    List<Node> nodes = joined(this::and, "or");
    if (nodes.size() == 1) {
      return nodes.get(0); // keeps whether it is an or, for the and around it
    }
    return new Node(String.join(" or ", nodes.stream().map(Node::text).toList()), true);
  }

  private Node and() throws Refusal {
    List<Node> nodes = joined(this::atom, "and");
    if (nodes.size() == 1) {
      return nodes.get(0); // a parenthesised or stays an or: a or (b or c) is a or b or c
    }
    List<String> parts = new ArrayList<>();
    for (Node n : nodes) {
      parts.add(n.isOr() ? "(" + n.text() + ")" : n.text());
    }
    return new Node(String.join(" and ", parts), false);
  }

  /** One sub-expression or more, {@code keyword} between each two. */
  private List<Node> joined(Part part, String keyword) throws Refusal {
    List<Node> nodes = new ArrayList<>();
    do {
      nodes.add(part.parse());
    } while (keyword(keyword));
    return nodes;
  }

  /** A rule of the grammar below the one joining it. */
  @FunctionalInterface
  private interface Part {
    Node parse() throws Refusal;
  }

  private Node atom() throws Refusal {
    spaces();
    if (peek() == '(') {
      pos++;
      Node inner = or();
      spaces();
      if (peek() != ')') {
        throw expected("')' closing the '('");
      }
      pos++;
      return inner;
    }
    int leftAt = pos;
    String left = value();
    String op = comparison();
    String right = value();
    if (left.startsWith("\"") && right.startsWith("\"")) {
      throw new Refusal(
          quote(text.substring(leftAt, pos).strip())
              + " compares two strings; one side must be a marker variable");
    }
    return new Node(left + " " + op + " " + right, false);
  }

  /** A marker variable or a quoted string, rendered with double quotes. */
  private String value() throws Refusal {
    spaces();
    char c = peek();
    if (c == '"' || c == '\'') {
      int close = text.indexOf(c, pos + 1);
      if (close < 0) {
        throw new Refusal(
            "the string starting at " + quote(text.substring(pos)) + " is not closed");
      }
      String content = text.substring(pos + 1, close);
      if (!STRING_CONTENT.matcher(content).matches()) {
        throw new Refusal(
            "the string "
                + quote(content)
                + " holds a character a marker string may not (letters, digits, space and"
                + " . _ - * + ! ~ only)");
      }
      if (content.contains(" -")) {
        throw new Refusal(
            "the string " + quote(content) + " holds ' -', which pip would read as an option");
      }
      pos = close + 1;
      return "\"" + content + "\"";
    }
    String word = takeWhile(MarkerParser::isWordChar);
    if (word.isEmpty()) {
      throw expected("a marker variable or a quoted string");
    }
    if (!VARIABLES.contains(word)) {
      throw new Refusal(
          quote(word) + " is not a marker variable (" + String.join(", ", VARIABLES) + ")");
    }
    return word;
  }

  private String comparison() throws Refusal {
    spaces();
    String op = takeFirstOf(COMPARISONS);
    if (op != null) {
      return op;
    }
    if (keyword("in")) {
      return "in";
    }
    if (keyword("not")) {
      // One space exactly: pip's packaging (21.3, in pip 23.0) reads "not in" as one literal.
      if (text.startsWith(" in", pos) && keyword("in")) {
        return "not in";
      }
      throw expected("' in' after 'not' (one space between)");
    }
    throw expected("a comparison (" + String.join(" ", COMPARISONS) + " in, not in)");
  }

  /** Consumes {@code word} when it is the next whole word (not the start of a longer one). */
  private boolean keyword(String word) {
    spaces();
    int end = pos + word.length();
    if (text.startsWith(word, pos) && (end == text.length() || !isWordChar(text.charAt(end)))) {
      pos = end;
      return true;
    }
    return false;
  }

  private static boolean isWordChar(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
  }

  private Refusal expected(String what) {
    String rest = text.substring(pos);
    return new Refusal(
        "expected " + what + (rest.isEmpty() ? " at the end" : " at " + quote(rest)));
  }
}
